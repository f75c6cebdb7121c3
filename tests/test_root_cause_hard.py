"""Root cause in the hard cases, on dumps written by real TensorFlow (issue #15): the NaN born in the backward
pass, behind a benign -inf mask, in a function's input, in the data, by a float16 overflow, and behind a circular
buffer. Each program marks the line a person would fix with `# CULPRIT` (and the others it names with their own
marker); the analysis must name exactly those lines, and the report must print them."""

from __future__ import annotations

import os

import dumps
import pytest
from run_helpers import culprit_line, only_run

from tensorboard_plugin_dbg.__main__ import main as cli_main
from tensorboard_plugin_dbg.analysis import alerts
from tensorboard_plugin_dbg.analysis.classify import CONTAINED, EXPECTED, PRODUCER
from tensorboard_plugin_dbg.analysis.root_cause import analyze, classification


def _same_file(frame, program):
    return os.path.realpath(frame["path"]) == os.path.realpath(dumps.program_path(program))


def _found(program, *args):
    run = only_run(dumps.make_dump(program, *args))
    result = analyze(run)
    assert result["status"] == "found", result["message"]
    return run, result, result["producer"]


def test_backward_pass_names_the_forward_line_and_the_tape_line():
    _run, result, p = _found("nan_grad_norm")
    assert (p["op_name"], p["op_type"]) == ("gradient_tape/norm/SqrtGrad", "SqrtGrad")
    fwd = p["forward"]
    assert (fwd["op_name"], fwd["op_type"]) == ("norm/Sqrt", "Sqrt")
    assert _same_file(fwd["user_frame"], "nan_grad_norm")
    assert fwd["user_frame"]["line"] == culprit_line("nan_grad_norm")
    assert p["user_frame"]["line"] == culprit_line("nan_grad_norm", "# TAPE")
    assert "norm/Sqrt:0 — finite; 1 zero among 1 element" in [i["description"] for i in p["inputs"]]
    assert f"nan_grad_norm.py:{culprit_line('nan_grad_norm')}" in result["message"]
    assert "backward pass" in result["message"]


def test_benign_mask_is_skipped_and_softmax_is_the_producer():
    run, result, p = _found("nan_masked_softmax")
    assert p["op_type"] == "Softmax" and p["user_frame"]["line"] == culprit_line("nan_masked_softmax")
    assert p["run_number"] == 4  # the fifth step masks a whole row
    assert p["role"] == "producer" and p["inputs_known"]
    assert [i.get("expected") for i in p["inputs"]] == [True]
    (skip,) = result["skipped"]
    assert (skip["op_name"], skip["op_type"], skip["runs"]) == ("SelectV2/e", "Const", 4)
    assert skip["user_frame"]["line"] == culprit_line("nan_masked_softmax", "# MASK")
    # Steps 0-3: the mask's -inf chain is contained; step 4: it is expected; Softmax is the one producer.
    roles = classification(run).trace_role
    rows = run.graph_executions(0, 1000)["rows"]
    by_op = {}
    for i, row in enumerate(rows):
        by_op.setdefault(row["op_name"], []).append(int(roles[i]))
    assert by_op["SelectV2/e"] == [CONTAINED] * 4 + [EXPECTED] * 2
    assert by_op["add"] == [CONTAINED] * 4 + [EXPECTED] * 2
    assert by_op["Softmax"][4] == PRODUCER
    page = alerts.alerts(run, 0, 100)
    assert sum(a["role"] == "contained" for a in page["alerts"]) == 12
    assert result["contained"] == 18


def test_function_input_is_linked_to_what_the_caller_passed():
    run, _result, p = _found("nan_function_input")
    assert p["op_type"] == "Log" and p["user_frame"]["line"] == culprit_line("nan_function_input")
    (probs,) = p["inputs"]
    assert probs["op_name"] == "probs" and probs["traced"] and p["inputs_known"] and p["role"] == "producer"
    assert probs["health"]["zero"] >= 1 and probs["health"]["nan"] == 0  # the softmax underflowed to 0
    caller = run.execution(probs["execution_index"], max_elements=0)
    assert caller["op_type"].startswith("__inference_model_")
    assert "passed in by the caller from model:0" in probs["description"]


def test_function_input_of_a_nested_call_says_why_it_cannot_be_known():
    _run, _result, p = _found("nan_function_input", "FULL_HEALTH", "nested")
    (probs,) = p["inputs"]
    assert not probs["traced"] and p["role"] == "unknown" and p["alert"]["role"] == "unknown"
    assert "called from inside tf.function `step`" in probs["description"]
    assert "records no op for a call between tf.functions" in probs["description"]


@pytest.mark.parametrize("mode", ["FULL_HEALTH", "FULL_TENSOR"])
def test_the_data_carried_it(mode):
    _run, result, p = _found("nan_data", mode)
    data = p["data"]
    assert p["op_type"] == "IteratorGetNext" and data["batch"] == 2
    assert data["source_op"] == "TensorSliceDataset"
    assert _same_file(data["user_frame"], "nan_data") and data["user_frame"]["line"] == culprit_line("nan_data")
    assert data["positions"] == ([[1, 2]] if mode == "FULL_TENSOR" else None)
    assert "The data carried it: batch 2 " in result["message"]


def test_float16_overflow_is_named():
    _run, _result, p = _found("nan_float16")
    assert p["op_type"] == "Mul" and p["user_frame"]["line"] == culprit_line("nan_float16")
    assert p["overflow"] == "overflow of float16's range (its largest finite value is 65504)"
    assert p["inputs_known"]


def test_circular_buffer_answer_is_the_first_kept():
    _run, result, p = _found("nan_circular")
    assert result["first_kept"] is True
    assert p["op_type"] == "Log" and p["user_frame"]["line"] == culprit_line("nan_circular")
    assert "first non-finite tensor that was kept" in result["message"]
    # The same program streamed to disk keeps everything: the true first one, not a "first kept".
    _run, full, q = _found("nan_circular", "-1")
    assert full["first_kept"] is False and q["op_type"] == "Log"
    assert q["run_number"] == 2 and q["output_health"]["neg_inf"] == 1  # log(0) at step 2


@pytest.mark.parametrize("program", ["clean_mlp", "nan_sqrt", "nan_div"])
def test_no_false_caveats_on_plain_runs(program):
    result = analyze(only_run(dumps.make_dump(program)))
    assert result["skipped"] == [] and result["first_kept"] is False and result["contained"] == 0
    if result["producer"]:
        assert result["producer"]["forward"] is None and result["producer"]["data"] is None
        assert result["producer"]["overflow"] is None


def test_report_prints_both_lines_and_the_skip(capsys):
    code = cli_main(["report", dumps.make_dump("nan_grad_norm")])
    out = capsys.readouterr().out
    assert code == 1
    fix = f"fix {dumps.program_path('nan_grad_norm')}:{culprit_line('nan_grad_norm')}"
    during = f"during {dumps.program_path('nan_grad_norm')}:{culprit_line('nan_grad_norm', '# TAPE')}"
    assert fix in out and during in out and out.index(fix) < out.index(during)
    cli_main(["report", dumps.make_dump("nan_masked_softmax")])
    out = capsys.readouterr().out
    assert "skipped: the 1 −∞ among 1 element of SelectV2/e (Const)" in out
    # a graph op's k-th run is its k-th trace; "execution" is the timeline's word, for eager ops (#38 item 7)
    skip = next(x for x in out.splitlines() if x.startswith("  skipped: "))
    assert "in 4 trace(s) before" in skip and "execution" not in skip
    # the op type only where it differs from the name; the graph by its name (issue #19)
    line = next(x for x in out.splitlines() if "first producer:" in x)
    assert line.startswith("  first producer: op Softmax in attend (tf.function), ") and line.endswith(
        ", its 5th trace"
    )
