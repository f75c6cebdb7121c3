"""Root cause on dumps written by real TensorFlow (tests/programs/nan_*.py, clean_*.py, the demo).

Each nan_* program marks the line that makes its first NaN/∞ with `# CULPRIT`; the tests find that line by reading
the program and require the analysis to name exactly that file:line, the producing op type, and its inputs' health.
TensorFlow's own DebugDataReader is the oracle for the producer/propagator counts.
"""

from __future__ import annotations

import os

import dumps
import pytest
from run_helpers import culprit_line, demo_log_line, only_run  # noqa: F401  (their old import path)

from tensorboard_plugin_dbg.analysis import alerts
from tensorboard_plugin_dbg.analysis.root_cause import (
    analyze,
    classification,
    role_name,
)

# program, mode, producer op type, a phrase the culprit input's description must hold
CASES = [
    ("nan_div", "FULL_HEALTH", "RealDiv", "denom:0 — finite; 1 zero, 2 negative among 4 elements"),
    ("nan_sqrt", "FULL_HEALTH", "Sqrt", "finite; 2 negative among 3 elements"),
    ("nan_exp", "FULL_HEALTH", "Exp", "finite; no zero or negative element among 3 elements"),
    ("nan_while", "FULL_HEALTH", "Mul", "while/Placeholder_1:0 — finite"),
    ("nan_keras", "FULL_HEALTH", "Log", "Relu:0 — finite; 16 zeros among 16 elements"),
    ("nan_eager", "FULL_HEALTH", "Log", "Sub:0 (execution #0) — finite; 1 negative among 3 elements"),
    ("nan_sqrt", "FULL_TENSOR", "Sqrt", "sub:0 — finite; 2 negative among 3 elements (min -2, max 3)"),
    ("nan_div", "CONCISE_HEALTH", "RealDiv", "denom:0 — finite among 4 elements; CONCISE_HEALTH"),
    ("nan_eager", "FULL_TENSOR", "Log", "Sub:0 (execution #0) — finite; 1 negative among 3 elements (min -1, max 2)"),
]


@pytest.mark.parametrize("program,mode,op_type,input_phrase", CASES, ids=[f"{c[0]}-{c[1]}" for c in CASES])
def test_culprit_line_op_and_inputs(program, mode, op_type, input_phrase):
    run = only_run(dumps.make_dump(program, mode))
    result = analyze(run)
    assert result["status"] == "found", result["message"]
    p = result["producer"]
    assert p["op_type"] == op_type
    frame = p["user_frame"]
    assert frame is not None, p["stack_frame_ids"]
    assert os.path.realpath(frame["path"]) == os.path.realpath(dumps.program_path(program))
    assert frame["line"] == culprit_line(program)
    assert "# CULPRIT" in p["source_line"]
    assert any(input_phrase in i["description"] for i in p["inputs"]), [i["description"] for i in p["inputs"]]
    assert p["inputs_known"] is (mode in ("FULL_HEALTH", "FULL_TENSOR"))
    # Every program lets the NaN spread at least once past the culprit.
    assert result["propagators"] >= 1 and result["producers"] >= 1
    assert p["alert"]["role"] == "producer"
    assert role_name(classification(run), p["alert"]["source"], p["alert"]["source_index"]) == "producer"


def test_demo_producer_is_log_at_the_log_line(demo_dump):
    run = only_run(demo_dump)
    result = analyze(run)
    p = result["producer"]
    assert result["status"] == "found" and p["op_type"] == "Log" and p["op_name"] == "Log"
    assert [i["op_name"] for i in p["inputs"]] == ["probs"] and p["inputs"][0]["traced"]
    assert p["inputs"][0]["health"]["mode"] == "FULL_HEALTH" and p["inputs_known"]
    demo_source = dumps.DEMO_SOURCE
    log_line = demo_log_line()
    assert os.path.realpath(p["user_frame"]["path"]) == os.path.realpath(demo_source)
    assert p["user_frame"]["line"] == log_line and "tf.math.log" in p["source_line"]
    assert p["output_health"]["neg_inf"] > 0  # log(0) = -inf comes first, the NaN only after it
    assert "Log" in result["message"] and f":{log_line}" in result["message"]


def test_curt_health_cannot_know_inputs():
    run = only_run(dumps.make_dump("nan_div", "CURT_HEALTH"))
    result = analyze(run)
    p = result["producer"]
    assert result["status"] == "found" and p["op_type"] == "RealDiv"
    assert p["user_frame"]["line"] == culprit_line("nan_div")
    assert p["inputs_known"] is False
    assert "CURT_HEALTH" in result["message"] and "cannot be known" in result["message"]
    assert all("cannot be known" in i["description"] for i in p["inputs"])


def test_clean_program_is_clean():
    result = analyze(only_run(dumps.make_dump("clean_mlp", "FULL_HEALTH")))
    assert result["status"] == "clean" and result["producer"] is None
    assert result["producers"] == result["propagators"] == 0


def test_shape_mode_cannot_tell():
    result = analyze(only_run(dumps.make_dump("nan_div", "SHAPE")))
    assert result["status"] == "unknown" and "cannot be known" in result["message"]


def _oracle_roles(dump_dir: str) -> tuple[int, int]:
    """(producers, propagators) among graph traces, computed independently with TensorFlow's own reader: a plain
    loop remembering the last health of every (graph, op, slot); a Placeholder or ReadVariableOp run after some
    NaN/∞ was seen carries it (its value arrives through an edge the records do not show); an op fed by a call's
    output (an If/While/function call op, or the Identity after it: neither is traced) carries a NaN/∞ that a graph
    inside its own held since the op's previous trace (#38: the NaN flowed out of the call)."""
    import numpy as np
    from tensorflow.python.debug.lib import debug_events_reader

    calls = {"If", "StatelessIf", "While", "StatelessWhile", "PartitionedCall", "StatefulPartitionedCall"}
    producers = propagators = 0
    last_bad: dict[tuple[str, str, int], bool] = {}
    last_row: dict[tuple[str, str], int] = {}
    bad_graphs: list[tuple[int, str]] = []  # (row, graph id) of every non-finite trace
    seen_bad = False
    with debug_events_reader.DebugDataReader(dump_dir) as reader:
        reader.update()

        def inside(graph_id: str, ancestor: str) -> bool:
            outer = reader.graph_by_id(graph_id).outer_graph_id
            while outer:
                if outer == ancestor:
                    return True
                outer = reader.graph_by_id(outer).outer_graph_id
            return False

        def from_call(graph, name: str) -> bool:
            op = graph.get_op_creation_digest(name)
            if op.op_type == "Identity" and op.input_names:
                op = graph.get_op_creation_digest(op.input_names[0].rsplit(":", 1)[0])
            return op.op_type in calls

        for row, trace in enumerate(reader.graph_execution_traces()):
            value = np.asarray(trace.debug_tensor_value)
            bad = bool(np.any(value[5:8] > 0)) if value.size == 11 else False
            if bad:
                graph = reader.graph_by_id(trace.graph_id)
                op = graph.get_op_creation_digest(trace.op_name)
                inputs = [
                    (trace.graph_id, name.rsplit(":", 1)[0], int(name.rsplit(":", 1)[1]))
                    for name in op.input_names or ()
                ]
                forwards = op.op_type in ("Placeholder", "ReadVariableOp") and seen_bad
                since = last_row.get((trace.graph_id, trace.op_name), -1)
                out_of_call = any(from_call(graph, k[1]) for k in inputs) and any(
                    r > since and inside(g, trace.graph_id) for r, g in bad_graphs
                )
                if forwards or out_of_call or any(last_bad.get(k) for k in inputs):
                    propagators += 1
                else:
                    producers += 1
                seen_bad = True
                bad_graphs.append((row, trace.graph_id))
            last_bad[(trace.graph_id, trace.op_name, trace.output_slot)] = bad
            last_row[(trace.graph_id, trace.op_name)] = row
    return producers, propagators


@pytest.mark.parametrize("program", ["nan_while", "nan_keras", "demo"])
def test_trace_roles_match_tensorflow_oracle(program):
    dump_dir = dumps.make_dump("demo") if program == "demo" else dumps.make_dump(program, "FULL_HEALTH")
    cls = classification(only_run(dump_dir))
    ours = (int((cls.trace_role == 1).sum()), int((cls.trace_role == 2).sum()))
    assert ours == _oracle_roles(dump_dir)
    assert ours[1] > 0


def test_index_alerts_carry_roles_and_filter_to_producers(demo_dump):
    """Through the index's own alerts(): the producer filter lists exactly the classified producers, and the first
    of them is the root cause."""
    run = only_run(demo_dump)
    result = analyze(run)
    producers = alerts.alerts(run, 0, 1000, producers_only=True)
    assert producers["total"] == result["producers"] >= 1
    assert all(a["role"] == "producer" for a in producers["alerts"])
    first = producers["alerts"][0]
    assert (first["source"], first["source_index"]) == (
        result["producer"]["alert"]["source"],
        result["producer"]["alert"]["source_index"],
    )
    everything = run.alerts(0, 1000)
    assert everything["total"] == result["producers"] + result["propagators"]
