"""Root cause, third round (issue #29), on dumps written by real TensorFlow: a NaN born in a backward pass built
from plain ops (the tf.where trap), said with honest causal words. Each program marks the lines the analysis must
name; the tests read them from the program."""

from __future__ import annotations

import os

import dumps
import pytest
from run_helpers import culprit_line, only_run

from tensorboard_plugin_dbg.analysis import report_text
from tensorboard_plugin_dbg.analysis.root_cause import analyze

WHERE_CASES = [
    ("log", "FIX-log", "TAPE-tape"),
    ("div", "FIX-div", "TAPE-tape"),
    ("tf_gradients", "FIX-log", "TAPE-graph"),
]


def _line_of(frame, program):
    assert frame is not None
    assert os.path.realpath(frame["path"]) == os.path.realpath(dumps.program_path(program))
    return frame["line"]


@pytest.mark.parametrize("variant,fix,tape", WHERE_CASES, ids=[c[0] for c in WHERE_CASES])
def test_where_trap_names_the_where_line_as_fix_and_the_gradient_line_as_during(variant, fix, tape):
    run = only_run(dumps.make_dump("nan_where_grad", "FULL_HEALTH", variant))
    result = analyze(run)
    assert result["status"] == "found", result["message"]
    p = result["producer"]
    assert p["op_name"].startswith(("gradient_tape/", "gradients/")), p["op_name"]
    assert _line_of(p["forward"]["user_frame"], "nan_where_grad") == culprit_line("nan_where_grad", f"# {fix}")
    assert _line_of(p["user_frame"], "nan_where_grad") == culprit_line("nan_where_grad", f"# {tape}")
    why = p["forward"]["why"]
    assert why and why.count(". ") == 0 and "masked" in why and "gradient" in why, why
    assert why in result["message"]
    text = report_text.run_section(report_text.run_result(run))
    fix_at = f"fix {dumps.program_path('nan_where_grad')}:{culprit_line('nan_where_grad', f'# {fix}')}"
    during_at = f"during {dumps.program_path('nan_where_grad')}:{culprit_line('nan_where_grad', f'# {tape}')}"
    assert fix_at in text and during_at in text and text.index(fix_at) < text.index(during_at)
    assert why in text


def test_skip_claims_no_link_without_a_data_path():
    """The masked -inf of the log never flows into the gradient op that made the NaN (it reads the log's input):
    the skip must not say the gradient op 'turned it into' the NaN."""
    result = analyze(only_run(dumps.make_dump("nan_where_grad", "FULL_HEALTH", "log")))
    (skip,) = result["skipped"]
    assert skip["op_type"] == "Log" and "turned it into" not in skip["description"], skip["description"]
    assert "contained" in skip["description"]


def test_skip_keeps_the_link_when_the_data_path_exists():
    """The mask's -inf flows through add into the Softmax that broke: there the link is true and said."""
    result = analyze(only_run(dumps.make_dump("nan_masked_softmax")))
    (skip,) = result["skipped"]
    assert "until Softmax turned it into a NaN/∞" in skip["description"], skip["description"]


def _program_log(dump_dir: str) -> dict[str, float]:
    """The figures the program printed last ("steps S applied A scale X"): what TensorFlow did, not a guess."""
    with open(os.path.join(os.path.dirname(dump_dir), "program.log")) as f:
        line = next(x for x in f.read().splitlines()[::-1] if x.startswith("steps "))
    words = line.split()
    return {words[i]: float(words[i + 1]) for i in range(0, len(words), 2)}


@pytest.mark.parametrize("variant", ["loop", "fit"])
def test_loss_scale_overflow_steps_are_benign_and_counted(variant):
    dump_dir = dumps.make_dump("loss_scale", "FULL_HEALTH", variant)
    facts = _program_log(dump_dir)
    skipped = int(facts["steps"] - facts["applied"])
    assert skipped >= 1  # the program is built to overflow at first
    assert facts["scale"] * 2**skipped == 2**15  # Keras halves its initial 2**15 once per skipped step
    run = only_run(dump_dir)
    result = analyze(run)
    assert result["status"] == "clean", result["message"]
    assert result["producers"] == 0 and result["contained"] >= skipped
    message = result["message"]
    assert f"{skipped} step(s) overflowed by design and were skipped" in message, message
    assert f"lowered its loss scale {skipped} time(s)" in message and "LossScaleOptimizer" in message
    text = report_text.run_section(report_text.run_result(run))
    assert message in text


@pytest.mark.parametrize("variant", ["loop", "fit"])
def test_rules_say_a_zero_bias_was_not_updated_in_skipped_steps(variant):
    from tensorboard_plugin_dbg.analysis import rules

    dump_dir = dumps.make_dump("loss_scale", "FULL_HEALTH", variant)
    # the last layer's bias is zero until the first applied update: read zero by the leading skipped steps and by
    # the first applied one (its forward pass runs before the update), so the rule needs that many
    leading = int(_program_log(dump_dir)["leading_skipped"])
    assert leading + 1 >= rules.Thresholds().zero_steps, f"the program skipped only {leading} step(s) at first"
    run = only_run(dump_dir)
    zero = [f for f in rules.evaluate(run)["findings"] if f["type"] in ("all_zero", "dead_relu")]
    biases = [f for f in zero if "BiasAdd/Cast" in f["op_name"] or "Add/Cast" in f["op_name"]]
    assert biases, [f["op_name"] for f in zero]
    for f in biases:
        assert "skipped by LossScaleOptimizer's overflow check" in f["evidence"], f["evidence"]


def test_a_nan_in_the_data_is_not_hidden_by_the_loss_scale_guard():
    result = analyze(only_run(dumps.make_dump("loss_scale", "FULL_HEALTH", "loop_nan")))
    assert result["status"] == "found", result["message"]
    p = result["producer"]
    assert not p["op_name"].startswith("gradient_tape/") and p["forward"] is None, p["op_name"]


FIT_CASES = [
    ("array", "FULL_TENSOR", "# FIT"),
    ("array", "FULL_HEALTH", "# FIT"),
    ("dict", "FULL_TENSOR", "# FIT"),
    ("dataset", "FULL_TENSOR", "# DATASET"),
    ("dataset", "FULL_HEALTH", "# DATASET"),
]


@pytest.mark.parametrize("variant,mode,marker", FIT_CASES, ids=[f"{c[0]}-{c[1]}" for c in FIT_CASES])
def test_keras_fit_names_the_batch_and_the_line_that_built_the_data(variant, mode, marker):
    """features[13, 2] is NaN and fit takes batches of 8 without shuffling: batch 1 (from 0), sample 5, feature
    2; the dataset's line is the one that built it (fit's own line when fit builds the pipeline from arrays)."""
    run = only_run(dumps.make_dump("nan_fit_data", mode, variant))
    result = analyze(run)
    assert result["status"] == "found", result["message"]
    data = result["producer"]["data"]
    assert data is not None, result["message"]
    assert data["batch"] == 1
    assert _line_of(data["user_frame"], "nan_fit_data") == culprit_line("nan_fit_data", marker)
    if mode == "FULL_TENSOR":
        assert data["positions"] == [[5, 2]]
        assert "1 non-finite element(s)" in data["note"]
    else:
        assert data["positions"] is None and "1 NaN among 32 elements" in data["note"], data["note"]
    assert "The data carried it: batch 1 " in result["message"]
    text = report_text.run_section(report_text.run_result(run))
    assert f"fix {dumps.program_path('nan_fit_data')}:{culprit_line('nan_fit_data', marker)}" in text


def test_the_model_input_inside_fit_is_linked_to_the_same_steps_batch():
    """one_step_on_data is called from inside multi_step_on_iterator (no op records that call): its input is the
    batch the caller's IteratorGetNext handed out in the same step, so the first op that reads the NaN batch has
    a known, non-finite input (a propagator), not 'cannot be known'."""
    from tensorboard_plugin_dbg.analysis.root_cause import classification, input_sources, role_name

    run = only_run(dumps.make_dump("nan_fit_data", "FULL_HEALTH", "dataset"))
    cls = classification(run)
    names = {gid: name for gid, name, _outer in run.graph_entries()}
    rows = run.graph_executions(0, 100_000)["rows"]
    first = next(
        r
        for r in rows
        if names[r["graph_id"]] == "one_step_on_data"
        and r["health"].get("nan")
        and any(i["name"].startswith("data") for i in input_sources(run, "graph_execution", r["index"]))
    )
    inputs = input_sources(run, "graph_execution", first["index"])
    (batch,) = [i for i in inputs if i["name"].startswith("data")]
    assert "IteratorGetNext:0" in batch["description"] and "same step" in batch["description"], batch
    assert batch["health"]["nan"] == 1
    assert role_name(cls, "graph_execution", first["index"]) == "propagator"


def test_a_run_with_only_rule_findings_is_not_called_clean(capsys):
    from tensorboard_plugin_dbg.__main__ import main as cli_main

    code = cli_main(["report", dumps.make_dump("loss_scale", "FULL_HEALTH", "loop")])
    out = capsys.readouterr().out
    assert code == 3  # warnings only
    head = next(x for x in out.splitlines() if x.startswith("run "))
    assert "CLEAN" not in head and "rule finding" in head, head
    assert "1 clean" not in out.splitlines()[-1] and "1 with rule findings" in out.splitlines()[-1]


def test_runs_overview_names_the_line_to_fix_and_the_rule_findings():
    from tensorboard_plugin_dbg.analysis import rules, run_verdict

    run = only_run(dumps.make_dump("nan_where_grad", "FULL_HEALTH", "log"))
    analyze(run)
    first = run_verdict.summary(run)["first_nan"]
    assert first["line"] == culprit_line("nan_where_grad", "# FIX-log")  # the where line, not tape.gradient's
    clean = only_run(dumps.make_dump("loss_scale", "FULL_HEALTH", "loop"))
    analyze(clean)
    assert run_verdict.summary(clean).get("rule_findings") is None  # not computed yet: not claimed either way
    found = len(rules.evaluate(clean)["findings"])
    assert found and run_verdict.summary(clean)["rule_findings"] == found


def test_a_programs_own_finiteness_check_contains_but_is_not_called_by_design():
    """The where trap behind the program's own check (apply the gradient only when finite): the NaN never reaches
    the weights, so nothing escapes; the answer says a check skipped the step and names where to look, without
    calling it a loss scale's overflow by design."""
    result = analyze(only_run(dumps.make_dump("nan_where_grad", "FULL_HEALTH", "guarded")))
    assert result["status"] == "clean", result["message"]
    message = result["message"]
    assert "1 step(s) were skipped by a finiteness check" in message and "by design" not in message, message
    assert "the first was gradient_tape/" in message, message
