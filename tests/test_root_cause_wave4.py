"""Root cause, fourth round (issue #38), on dumps written by real TensorFlow: where TensorFlow's XLA, file order,
tf.data and tf.distribute would make the analysis say something false."""

from __future__ import annotations

import os
import shutil

import dumps
import fuzz_records
import pytest
from run_helpers import culprit_line, only_run

from tensorboard_plugin_dbg.__main__ import EXIT_UNREADABLE, main
from tensorboard_plugin_dbg.analysis import report_text, run_verdict
from tensorboard_plugin_dbg.analysis.root_cause import analyze

XLA_PROGRAMS = [("xla_fit", "one_step_on_data"), ("xla_function", "step")]


@pytest.mark.parametrize("program,function", XLA_PROGRAMS, ids=[p for p, _ in XLA_PROGRAMS])
def test_a_step_compiled_by_xla_is_never_clean(program, function, capsys):
    """tfdbg2 cannot record an XLA-compiled function: the dump holds its graph and no trace of it. The report says
    so, quotes the line that turned XLA on, says how to record it, and exits 2 (cannot judge), never "clean"."""
    dump = dumps.make_dump(program)
    run = only_run(dump)
    result = analyze(run)
    assert result["status"] == "unknown", result["message"]
    message = result["message"]
    assert f"`{function}`" in message and "compiled by XLA" in message, message
    jit_line = culprit_line(program, "jit_compile=True")
    assert f"{dumps.program_path(program)}:{jit_line}" in message, message
    assert "jit_compile=False" in message and "NanCapsule" in message, message
    assert run_verdict.summary(run)["status"] == "unknown"
    code = main(["report", dump])
    text = capsys.readouterr().out
    assert code == EXIT_UNREADABLE, text
    assert "CLEAN" not in text and "compiled by XLA" in text, text


def test_a_program_that_died_before_its_first_step_is_never_clean(capsys):
    """Built the step, died before calling it: nothing non-finite, and nothing recorded about the step either."""
    dump = dumps.make_dump("died_before_step")
    run = only_run(dump)
    result = analyze(run)
    assert result["status"] == "unknown", result["message"]
    assert "`step`" in result["message"] and "died before its first call" in result["message"]
    assert "jit_compile=True" not in open(dumps.program_path("died_before_step")).read()  # no XLA claim to quote
    assert main(["report", dump]) == EXIT_UNREADABLE
    assert "CLEAN" not in capsys.readouterr().out


def test_a_clean_keras_fit_stays_clean():
    """The same model trained without XLA: every function it built ran and was traced, so clean is true there."""
    result = analyze(only_run(dumps.make_dump("keras_fit")))
    assert result["status"] == "clean", result["message"]
    assert report_text.run_section(report_text.run_result(only_run(dumps.make_dump("keras_fit")))).count("CLEAN") == 1


def _in_file_order(cols, order):
    """The run's columns as if TensorFlow had written its trace rows in `order` (a permutation of the rows)."""
    import dataclasses

    import numpy as np

    return dataclasses.replace(
        cols,
        trace_wall=np.arange(len(order), dtype=np.float64),
        trace_op=np.asarray(cols.trace_op[order], np.int64),
        trace_tensor=np.asarray(cols.trace_tensor[order], np.int64),
        trace_nonfinite=np.asarray(cols.trace_nonfinite[order], np.int8),
        make_lookup=None,
    )


def test_the_first_producer_follows_data_not_file_order():
    """TensorFlow's debug ops run beside the computation, so within one graph execution a trace may be written before
    the trace of the op that made its input (seen on a replay: an If branch's Placeholder holding the loss, first in
    the file). The real dump's one step, its rows put in 20 random orders TensorFlow could write them in: the
    answer is the log every time, never the branch's input (a function's input is the caller's tensor) nor an op fed
    by the log."""
    import numpy as np

    from tensorboard_plugin_dbg.analysis import classify as classify_mod
    from tensorboard_plugin_dbg.analysis import index_columns

    run = only_run(dumps.make_dump("nan_cond_order"))
    cols = index_columns.gather(run)
    op_names = {}
    for k in range(int(run.trace_arrays()["kind"].max()) + 1):
        _graph, op_name, *_ = run.kind_info(k)
        op_names[int(cols.trace_op[np.flatnonzero(run.trace_arrays()["kind"] == k)[0]])] = op_name
    log_op = next(code for code, name in op_names.items() if name == "Log")
    placeholder = next(code for code, name in op_names.items() if name == "cond/sub/Mean")
    assert cols.op_from_caller[placeholder] and not cols.op_from_caller[log_op]
    answers, placeholder_first = [], 0
    for seed in range(20):
        order = np.random.RandomState(seed).permutation(len(cols.trace_wall))
        shuffled = _in_file_order(cols, order)
        bad = np.flatnonzero(shuffled.trace_nonfinite == 1)
        placeholder_first += int(shuffled.trace_op[bad[0]] == placeholder)
        cls, _ = classify_mod.classify(shuffled)
        source, row = cls.first_producer(shuffled)
        answers.append(op_names[int(shuffled.trace_op[row])] if source == "graph_execution" else source)
    assert answers == ["Log"] * 20, answers
    assert placeholder_first >= 1  # the flip the issue saw is among the orders tried
    result = analyze(run)
    assert result["producer"]["op_name"] == "Log"
    assert result["producer"]["user_frame"]["line"] == culprit_line("nan_cond_order")


@pytest.mark.parametrize("variant", ["fit", "loop"])
def test_a_nan_born_in_a_tf_data_map_function_is_fixed_where_it_was_born(variant, capsys):
    """The map function's division made the NaN: that line is the fix; the line that built the dataset is context
    ("made by the dataset built at"), never "fix". The batch is the one the iterator handed out with the NaN in it,
    whether the iterator ran in Keras's tf.function (fit) or eagerly (`for batch in dataset`)."""
    dump = dumps.make_dump("nan_data_map", variant)
    result = analyze(only_run(dump))
    p = result["producer"]
    assert p["op_name"] == "truediv" and p["op_type"] == "RealDiv"
    assert p["user_frame"]["line"] == culprit_line("nan_data_map")
    data = p["data"]
    assert data["born_in_pipeline"] is True
    assert data["batch"] == 2  # rows 4 and 5, the constant row 5 among them
    assert data["source_op"] == "TensorSliceDataset"
    assert data["user_frame"]["line"] == culprit_line("nan_data_map", "# DATASET")
    program = dumps.program_path("nan_data_map")
    assert f"fix the line that made it: {program}:{culprit_line('nan_data_map')}" not in result["message"]
    assert f"nan_data_map.py:{culprit_line('nan_data_map', '# DATASET')}" in result["message"]
    assert main(["report", dump]) == 1
    text = capsys.readouterr().out
    dataset_line = culprit_line("nan_data_map", "# DATASET")
    assert f"fix {program}:{dataset_line}" not in text, text
    assert f"the dataset built at {program}:{dataset_line}" in text, text
    assert f"at {program}:{culprit_line('nan_data_map')} in standardise" in text, text


def test_the_batch_of_an_iterator_op_is_still_the_fix():
    """The NaN came with the data (a NaN in the array the dataset was built from): there the dataset's line is the
    fix, as before."""
    p = analyze(only_run(dumps.make_dump("nan_data")))["producer"]
    assert p["data"]["born_in_pipeline"] is False and p["data"]["batch"] == 2


@pytest.mark.parametrize("mode", ["FULL_HEALTH", "FULL_TENSOR"])
def test_a_replicas_input_is_followed_to_its_shard_of_the_batch(mode):
    """Keras `fit` under MirroredStrategy: the Log on replica_1 reads `one_step_on_data`'s input, which is replica
    1's shard of the batch (input k is output k // N of replica k % N's iterator op). Main followed it to replica
    0's iterator op's labels (IteratorGetNext:1, "finite; no zero or negative"): a false "its inputs were finite"."""
    result = analyze(only_run(dumps.make_dump("nan_mirrored_fit", mode)))
    p = result["producer"]
    assert p["op_type"] == "Log" and p["op_name"].startswith("replica_1/"), p["op_name"]
    assert p["user_frame"]["line"] == culprit_line("nan_mirrored_fit")
    assert p["role"] == "producer" and p["inputs_known"]
    (shard,) = [i for i in p["inputs"] if i["op_type"] == "Placeholder"]
    assert shard["health"]["neg"] == 1 and shard["health"]["nan"] == 0, shard  # the one negative feature, finite
    text = shard["description"]
    assert "IteratorGetNext_1:0" in text and "to replica 1 of 2 (on CPU:1), batch 1: its shard" in text, text
    if mode == "FULL_TENSOR":  # the shard's shape tells its rows
        assert "rows 4-7 of the global batch's 8" in text, text
    else:
        assert "the 2nd of the 2 parts tf.distribute split the global batch into" in text, text


def test_report_into_a_closed_pipe_prints_no_traceback():
    """`report LOGDIR | head`: the reader closes the pipe before the report is written. A real pipe whose read end
    is closed before the child writes: no BrokenPipeError traceback, no "Exception ignored", the SIGPIPE status."""
    import os
    import subprocess
    import sys

    env = dict(os.environ, PYTHONPATH=dumps.ROOT)
    child = subprocess.Popen(
        [sys.executable, "-m", "tensorboard_plugin_dbg", "report", dumps.make_dump("nan_div")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    child.stdout.close()  # the reader is gone before the child has imported anything
    err = child.stderr.read().decode()
    child.stderr.close()
    assert child.wait(timeout=120) == 141, err
    assert "Traceback" not in err and "BrokenPipeError" not in err and "Exception ignored" not in err, err


def test_an_ops_kth_run_is_its_kth_trace_in_every_text(capsys):
    """#38 item 7: "execution" is the timeline's word (eager executions); an op's k-th run in a graph is its k-th
    trace in the report, the message and the rules alike (the card and Graph Structure: e2e)."""
    dump = dumps.make_dump("nan_data_map", "fit")
    p = analyze(only_run(dump))["producer"]
    main(["report", dump])
    line = next(x for x in capsys.readouterr().out.splitlines() if "first producer:" in x)
    assert line.endswith(f", its {p['run_number'] + 1}th trace"), line  # the 6th: rows 0-5 of the map
    assert p["run_number"] == 5
    from tensorboard_plugin_dbg.analysis import rules

    for f in rules.evaluate(only_run(dumps.make_dump("batch_alternates")))["findings"]:
        assert " step" not in f["evidence"], f["evidence"]


def test_batches_are_counted_from_0_in_the_text_as_in_the_json(capsys):
    """#38 item 11: the report's text said "batch 3" where its JSON (and the capsules, and Keras's callbacks) said
    batch 2: one convention, from 0. nan_data's NaN is in row 5 of batches of 2: batch 2."""
    import json

    dump = dumps.make_dump("nan_data")
    main(["report", dump, "--json"])
    (run,) = json.loads(capsys.readouterr().out)["runs"]
    batch = run["producer"]["data"]["batch"]
    assert batch == 2
    main(["report", dump])
    text = capsys.readouterr().out
    assert f"the data carried it: batch {batch};" in text, text
    assert f"The data carried it: batch {batch} from the input pipeline" in analyze(only_run(dump))["message"]


def test_a_gradient_zero_by_construction_is_not_vanishing():
    """#38 item 8: a layer norm on the logits before a softmax: the gradient through the row mean
    (gradient_tape/sub/Sum) sums terms that cancel to 0, leaving ~1e-8 of rounding. Main called it a vanishing
    gradient (and its Reshape/Tile after it). A gradient that truly vanishes (the loss scaled by 1e-9) still is."""
    from tensorboard_plugin_dbg.analysis import rules
    from tensorboard_plugin_dbg.analysis.rules import tensor_rules

    run = only_run(dumps.make_dump("layer_norm_healthy"))
    rows = run.op_trace_rows(*next((g, n) for g, n in _ops(run) if n == "gradient_tape/sub/Sum"))
    tiny = [tensor_rules._max_abs(run, int(r)) for r in rows]
    assert max(tiny) < rules.Thresholds().vanish_floor, tiny  # the program makes the case the rule used to flag
    assert [f for f in rules.evaluate(run)["findings"] if f["type"] == "value_vanishing"] == []
    vanishing = rules.evaluate(only_run(dumps.make_dump("vanishing_grad")))["findings"]
    assert [f["type"] for f in vanishing] == ["value_vanishing"]


def _ops(run):
    for graph_id, _name, _outer in run.graph_entries():
        for name in run.graph_op_names(graph_id):
            yield graph_id, name


@pytest.mark.parametrize("program", ["data_lambdas", "nan_mirrored_fit"])
def test_no_retracing_finding_for_functions_the_user_did_not_retrace(program):
    """#38 items 4 and 9: eight `Dataset_map_lambda` graphs are four lambdas over two datasets, each traced once per
    `.map()` call; a MirroredStrategy `fit` traces tf.data's `_next_func` once per device and epoch. Neither is a
    retrace the user can act on (main reported both). A user's function traced per input shape still is."""
    from tensorboard_plugin_dbg.analysis import rules

    run = only_run(dumps.make_dump(program))
    graphs = [name for _gid, name, _outer in run.graph_entries()]
    if program == "data_lambdas":
        assert graphs.count("Dataset_map_lambda") == 8, graphs  # the case: eight graphs of that name
    else:
        assert graphs.count("_next_func") >= 3, graphs
    found = [f for f in rules.evaluate(run)["findings"] if f["type"] == "retracing"]
    assert found == [], [f["evidence"] for f in found]
    shapes = rules.evaluate(only_run(dumps.make_dump("retrace_shapes")))["findings"]
    assert [f["type"] for f in shapes].count("retracing") == 1


def test_a_library_function_retraced_by_the_users_calls_names_the_users_call(capsys):
    """#38 item 4, second half: a learning rate set by compiling again before each `fit` makes Keras trace its step
    (`multi_step_on_iterator`, Keras's code) once per `fit` call. Main said nothing (a function the user did not
    write was left out); the finding now names the user's `fit` line, whose calls retrace it, and what to change.
    The nested `one_step_on_data`, retraced with it and never called by the user, is not a second finding."""
    from tensorboard_plugin_dbg.analysis import rules

    program = "retrace_keras_compile"
    dump = dumps.make_dump(program)
    run = only_run(dump)
    traces = [name for _gid, name, _outer in run.graph_entries()].count("multi_step_on_iterator")
    assert traces >= 5, traces  # the case: Keras's step traced once per compile()
    found = [f for f in rules.evaluate(run)["findings"] if f["type"] == "retracing"]
    assert [f["function"] for f in found] == ["multi_step_on_iterator"], [f["evidence"] for f in found]
    f = found[0]
    where = f"{dumps.program_path(program)}:{culprit_line(program, '# CALL')}"
    assert f["count"] == traces and len(f["graph_ids"]) == traces, f
    assert f["user_frame"]["path"] == dumps.program_path(program) and "# CALL" in f["source_line"], f
    assert (
        f"not your code: keras{os.sep}" in f["evidence"] and f"each trace made by your call at {where}" in f["evidence"]
    ), f["evidence"]
    assert "compile once, before the loop" in f["evidence"], f["evidence"]
    main(["report", dump])
    text = capsys.readouterr().out
    assert "multi_step_on_iterator (not your code" in text and f"at {where}" in text, text


def test_a_library_function_retraced_for_no_cause_of_the_users_is_not_a_finding():
    """The control: `predict` on a new batch size each call traces Keras's step twice, then relaxes its shape (the
    user need change nothing); a MirroredStrategy's `_next_func` is traced per device and epoch from inside
    tf.distribute, never by a call of the user's (test above, `nan_mirrored_fit`). Neither is a finding."""
    from tensorboard_plugin_dbg.analysis import rules

    run = only_run(dumps.make_dump("retrace_keras_predict"))
    graphs = [name for _gid, name, _outer in run.graph_entries()]
    assert graphs.count("one_step_on_data_distributed") >= 2, graphs  # the case: Keras's step did retrace
    found = [f for f in rules.evaluate(run)["findings"] if f["type"] == "retracing"]
    assert found == [], [f["evidence"] for f in found]


def test_what_a_dead_relu_zeroes_is_named_under_it_not_counted_apart(capsys):
    """A ReLU dies and its sum, the gradients through it (ReluGrad reads its output) and the update made of them go
    all zero with it. Main counted each as an all_zero finding of its own beside the dead ReLU; they are its
    consequences, named under its finding, and the report counts one problem besides the retrace."""
    from tensorboard_plugin_dbg.analysis import rules

    dump = dumps.make_dump("ranked_findings")
    found = rules.evaluate(only_run(dump))["findings"]
    assert sorted(f["type"] for f in found) == ["dead_relu", "retracing"], [(f["type"], f["op_name"]) for f in found]
    dead = next(f for f in found if f["type"] == "dead_relu")
    assert "gradient_tape/ReluGrad" in dead["evidence"] and "consequences of this ReLU" in dead["evidence"], dead
    main(["report", dump])
    text = capsys.readouterr().out
    assert "rules: 2 finding(s)" in text and "all_zero" not in text, text


def test_a_diverging_lstm_says_so_above_a_short_list_of_findings(capsys):
    """#38 item 9: an LSTM trained at lr=1e4. Main named the loss's Square under 34 findings listed whole (116
    lines) with no word that training diverged. The overflow of float32's range is said before the op; the
    findings are one line per kind with a count, `--all` lists them all."""
    dump = dumps.make_dump("lstm_diverges")
    p = analyze(only_run(dump))["producer"]
    assert p["output_health"]["nan"] == 0 and p["output_health"]["pos_inf"] > 0, p["output_health"]
    assert p["inputs_known"] and p["overflow"].startswith("overflow of float32's range"), p["overflow"]
    main(["report", dump])
    text = capsys.readouterr().out.splitlines()
    at = next(i for i, line in enumerate(text) if "overflow of float32's range" in line)
    assert "diverging training" in text[at] and at < next(i for i, x in enumerate(text) if "first producer:" in x)
    findings = [line for line in text if line.startswith("    ") and ": op " in line]
    main(["report", dump, "--all"])
    every = [line for line in capsys.readouterr().out.splitlines() if line.startswith("    ") and ": op " in line]
    kinds = {line.split(":")[0].strip() for line in every}
    assert len(findings) == len(kinds) < len(every), (findings, len(every))  # one per kind, the rest with --all
    assert len(text) < 40, len(text)


def test_a_product_with_a_constant_zero_is_not_an_all_zero_finding():
    """#38 item 9: an LSTM's first step multiplies its zero initial state (a Const) by the recurrent kernel, and
    its cell state by the forget gate: zero by construction at every step, never an all_zero finding (main listed
    both). The constant's trace says it is all zero."""
    from tensorboard_plugin_dbg.analysis import rules
    from tensorboard_plugin_dbg.analysis.rules import constant_zero

    run = only_run(dumps.make_dump("lstm_diverges"))
    ends = ("lstm_1/lstm_cell_1/MatMul_1", "lstm_1/lstm_cell_1/mul")  # the first step, outside the while loop
    first_step = {name: g for g, name in _ops(run) if name.endswith(ends)}
    assert len(first_step) == 2, first_step
    for name, graph_id in first_step.items():
        assert constant_zero.by_construction(run, graph_id, name), name
    found = {f["op_name"] for f in rules.evaluate(run)["findings"] if f["type"] == "all_zero"}
    assert not found & set(first_step), found & set(first_step)
    # a MatMul of data by weights is not zero by construction
    assert not constant_zero.by_construction(run, *next((g, n) for g, n in _ops(run) if n.endswith("dense_1/MatMul")))


def test_a_last_partial_batch_is_not_a_shape_change_per_op():
    """#38 item 9: 44 training and 20 validation rows in batches of 8 end on a partial batch; main gave a
    shape_change finding for each op that saw it (35 here). One shrink at an op's last trace is a partial batch:
    said once per function, with how many ops shrank with it."""
    from tensorboard_plugin_dbg.analysis import rules

    run = only_run(dumps.make_dump("partial_val_batch"))
    found = [f for f in rules.evaluate(run)["findings"] if f["type"] == "shape_change"]
    functions = {f["graph_id"] for f in found}
    assert len(found) == len(functions) < 8, [f["op_name"] for f in found]  # once per function, not per op
    assert any("a last partial batch:" in f["evidence"] and "more op(s)" in f["evidence"] for f in found), found


def test_a_diverging_lstm_with_full_tensor_says_how_fast_it_grew():
    """#38 item 9: with FULL_TENSOR the magnitudes are in the dump: the overflow says how the op's input grew trace
    by trace before it overflowed (FULL_HEALTH says how to record them instead)."""
    import re

    p = analyze(only_run(dumps.make_dump("lstm_diverges", "FULL_TENSOR")))["producer"]
    assert p["op_type"] == "Square", p["op_name"]
    (sub,) = p["inputs"]
    got = re.search(r"its input (\S+):0 grew from (\S+) to (\S+) over its last (\d+) traces \(×(\S+) per trace\)",
                    p["overflow"])  # fmt: skip
    assert got and got.group(1) == sub["op_name"], p["overflow"]
    assert float(got.group(3)) == pytest.approx(max(abs(sub["health"]["min"]), abs(sub["health"]["max"])), rel=1e-2)
    assert float(got.group(2)) * 1e6 < float(got.group(3)) and int(got.group(4)) >= 2, p["overflow"]
    health = analyze(only_run(dumps.make_dump("lstm_diverges")))["producer"]["overflow"]
    assert "grew from" not in health and "FULL_TENSOR' records their magnitudes" in health, health


def _readers_first(dump: str, tmp_path, readers: int) -> str:
    """A copy of `dump` whose traces file holds the map function's first `readers` `GatherV2` traces before the
    first `args_1` they read (records moved whole: CRCs stay valid). readers=1: the order in which tf.data's parallel
    threads write in some recordings; readers=2: two overlapping runs both written before either's input (the order
    of CI's recording at stop 44)."""
    run = only_run(dump)
    rows = [run.graph_execution(i, max_elements=0) for i in range(64)]
    gathers = [i for i, r in enumerate(rows) if r["op_name"] == "GatherV2"][:readers]
    graph = rows[gathers[0]]["graph_id"]
    array = next(i for i, r in enumerate(rows) if r["op_name"] == "args_1" and r["graph_id"] == graph)
    copy = tmp_path / "dump"
    shutil.copytree(dump, copy)
    (traces,) = copy.glob("*.graph_execution_traces")
    data = traces.read_bytes()
    records = [data[a:b] for a, b in fuzz_records.spans(data)]
    moved = [records[i] for i in gathers if i > array]
    records = [r for i, r in enumerate(records) if not (i in gathers and i > array)]
    records[array:array] = moved
    traces.write_bytes(b"".join(records))
    return str(copy)


@pytest.mark.parametrize("order", ["as_recorded", "reader_first", "two_readers_first"])
def test_an_input_traced_after_its_reader_in_the_same_run_is_not_a_dropped_record(capsys, tmp_path, order):
    """#38 (fourth round's last pass): a MirroredStrategy `fit` fed a NaN. tf.data's `grab_batch` gathers the batch
    from the array (`args_1`), and the gather's trace reaches the file before the array's in the same run: the
    buffer was off, nothing was dropped. Main said "no trace of it before this op ran (a circular buffer keeps only
    the last records)" and "first kept: a circular buffer dropped earlier records"; the array's trace of that run
    is the gather's input, NaN and all. two_readers_first: two runs of the map overlapped and both gathers came
    before either array (CI's recording refused stop 44: the pairing by "the input's next trace, before the op's
    next" found none): the n-th gather read the n-th array."""
    dump = dumps.make_dump("nan_mirrored_data")
    readers = {"as_recorded": 0, "reader_first": 1, "two_readers_first": 2}[order]
    dump = _readers_first(dump, tmp_path, readers) if readers else dump
    run = only_run(dump)
    rows = [run.graph_execution(i, max_elements=0) for i in range(64)]
    if readers:  # the case: the readers' traces come first
        gathers = [i for i, r in enumerate(rows) if r["op_name"] == "GatherV2"][:readers]
        graph = rows[gathers[0]]["graph_id"]
        array = next(i for i, r in enumerate(rows) if r["op_name"] == "args_1" and r["graph_id"] == graph)
        assert max(gathers) < array, [r["op_name"] for r in rows[:12]]
    result = analyze(run)
    assert result["first_kept"] is False, result["message"]
    assert "circular buffer" not in result["message"], result["message"]
    for inp in result["producer"]["inputs"]:
        assert "circular buffer" not in inp["description"], inp["description"]
    main(["report", dump])
    text = capsys.readouterr().out
    assert "circular buffer" not in text, text
    assert f"nan_mirrored_data.py:{culprit_line('nan_mirrored_data', '# FIT')}" in text, text
    # the array's NaN reached the batch through tf.data's functions: never "it does not flow into" the batch's op
    assert "does not flow into" not in text, text


def test_the_loss_op_is_named_with_its_loss_and_compile_line(capsys):
    """#38 item 5: the diverging LSTM's producer is `compile_loss/mse/Square`, made inside `fit`'s step: its stack
    ends at the `model.fit` line. The report and the card say which loss it is (`mse`) and the `compile(` line that
    chose it with the learning rate, the line a person would change (CULPRIT); a non-loss op gets no such line."""
    dump = dumps.make_dump("lstm_diverges")
    p = analyze(only_run(dump))["producer"]
    assert p["op_name"].startswith("compile_loss/mse/"), p["op_name"]
    where = f"lstm_diverges.py:{culprit_line('lstm_diverges')}"
    assert p.get("loss", "").startswith("the loss: `mse`, given to compile() at " + where), p.get("loss")
    main(["report", dump])
    text = capsys.readouterr().out
    assert f"  the loss: `mse`, given to compile() at {where}" in text, text
    other = analyze(only_run(dumps.make_dump("others_custom_loop")))["producer"]
    assert "loss" not in other, other.get("loss")


def test_findings_are_ranked_what_breaks_training_before_retracing(capsys):
    """#38 item 9: a loop retraces its evaluation helper (run first) and then kills a ReLU with a learning rate too
    high. Main listed the kinds in time order, retracing on top; the report ranks the dead ReLU (the model stops
    learning) above the retracing (slow, harmless), each kind's first finding being its earliest."""
    dump = dumps.make_dump("ranked_findings")
    main(["report", dump])
    kinds = [line.split(":")[0].strip() for line in capsys.readouterr().out.splitlines() if line.startswith("    ")
             and ": " in line and not line.startswith("      ")]  # fmt: skip
    assert "dead_relu" in kinds and "retracing" in kinds, kinds
    assert kinds.index("dead_relu") < kinds.index("retracing"), kinds
    # the dashboard's kind rows (each a fold of its findings) come in the same rank: the summary's key order
    from tensorboard_plugin_dbg.analysis import alerts

    totals = list(alerts.alerts(only_run(dump), 0, 0, wait_rules=True)["totals_by_type"])
    assert totals.index("dead_relu") < totals.index("retracing"), totals
