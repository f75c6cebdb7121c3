"""Unit tests of the root-cause analysis on a hand-made fake run (the real-dump tests are in test_root_cause.py).

The fake implements the RunQueries protocol (index/protocol.py) over a few hand-written rows — its page queries and
its columnar read interface — so these tests pin the classification rules (producer / propagator, "most recent
health before it ran", eager tensor-id links, tf.function windows) independently of the index.
"""

from __future__ import annotations

import numpy as np
from fake_columnar import ColumnarFromPages

from tensorboard_plugin_dbg.analysis import classify as classify_mod
from tensorboard_plugin_dbg.analysis.columns import RunColumns
from tensorboard_plugin_dbg.analysis.health import describe, is_nonfinite
from tensorboard_plugin_dbg.analysis.index_columns import gather
from tensorboard_plugin_dbg.analysis.root_cause import (
    analyze,
    classification,
    role_name,
)
from tensorboard_plugin_dbg.index.derived import DerivedCache


def full(size, neg_inf=0, pos_inf=0, nan=0, neg=0, zero=0, pos=None):
    pos = size - neg_inf - pos_inf - nan - neg - zero if pos is None else pos
    return {
        "mode": "FULL_HEALTH",
        "tensor_id": 0,
        "device_id": -1,
        "dtype": "float32",
        "rank": 1,
        "size": size,
        "neg_inf": neg_inf,
        "pos_inf": pos_inf,
        "nan": nan,
        "neg": neg,
        "zero": zero,
        "pos": pos,
    }


class FakeRun(ColumnarFromPages):
    """Graph 'g': c (Const), x (Placeholder, untraced), d = Sub(x, c), r = RealDiv(c, d), m = Mul(r, c).
    Traces: step 1 all finite; step 2 d has a zero, r = +inf (producer), m = NaN (propagator).
    Executions: the function call of step 1, of step 2 (its window holds alerts: propagator), then eager
    Sub (finite, output id 10), Log(10) -> NaN (producer), Sum(Log's output) -> NaN (propagator)."""

    name = "fake"

    def __init__(self, curt: bool = False):
        self.derived = DerivedCache()
        self.ops = {
            "c": ("Const", []),
            "x": ("Placeholder", []),
            "d": ("Sub", [("x", 0), ("c", 0)]),
            "r": ("RealDiv", [("c", 0), ("d", 0)]),
            "m": ("Mul", [("r", 0), ("c", 0)]),
        }
        h_fin = full(4, pos=4)
        rows = [
            ("c", h_fin),
            ("d", full(4, neg=1, pos=3)),
            ("r", h_fin),
            ("m", h_fin),
            ("c", h_fin),
            ("d", full(4, zero=1, pos=3)),
            ("r", full(4, pos_inf=1, pos=3)),
            ("m", full(4, nan=1)),
        ]
        if curt:
            rows = [
                (n, {"mode": "CURT_HEALTH", "tensor_id": 0, "any_inf_or_nan": bool(h["nan"] or h["pos_inf"])})
                for n, h in rows
            ]
        self.rows = [
            {
                "index": i,
                "wall_time": 10.0 + i,
                "op_name": n,
                "op_type": self.ops[n][0],
                "output_slot": 0,
                "graph_id": "g",
                "device_name": None,
                "host": "h",
                "health": h,
            }
            for i, (n, h) in enumerate(rows)
        ]
        fin1 = [full(1, pos=1)]
        self.execs = [
            # (wall, op_type, is_function, inputs, outputs, output health)
            (13.5, "__inference_step_1", True, [1], [2], fin1),
            (17.5, "__inference_step_1", True, [3], [4], [full(1, nan=1)]),
            (20.0, "Sub", False, [5, 6], [10], [full(3, neg=1, pos=2)]),
            (21.0, "Log", False, [10], [11], [full(3, nan=1, zero=1, pos=1)]),
            (22.0, "Sum", False, [11], [12], [full(1, nan=1)]),
        ]
        self.frames = {
            "f0": ("/home/me/train.py", 3, "<module>", True),
            "f1": ("/home/me/train.py", 7, "step", True),
            "f2": ("/usr/lib/python3/site-packages/tensorflow/ops.py", 99, "div", False),
        }

    # --- page queries ---
    def info(self):
        # the fields the analysis reads of a real run's info (wire.RunInfoBody): its modes and who wrote it
        return {"debug_modes": ["FULL_HEALTH"], "framework": "tensorflow"}

    def graph_executions(self, begin, end, **_):
        return {
            "begin": begin,
            "end": end,
            "total": len(self.rows),
            "unfiltered_total": len(self.rows),
            "rows": self.rows[begin:end],
        }

    def graph_execution(self, index, begin=0, max_elements=1000):
        return dict(self.rows[index], tensor_debug_mode="FULL_HEALTH", value=None, graph_name="step", graph_chain=["g"])

    def op(self, graph_id, op_name, near=None):
        op_type, inputs = self.ops[op_name]
        out = []
        for slot, (name, oslot) in enumerate(inputs):
            idx = [r["index"] for r in self.rows if r["op_name"] == name]
            out.append(
                {
                    "slot": slot,
                    "op_name": name,
                    "output_slot": oslot,
                    "op": {"graph_id": "g", "op_name": name, "op_type": self.ops[name][0], "num_outputs": 1},
                    "traces": {"count": len(idx), "indices": idx},
                }
            )
        return {
            "graph_id": graph_id,
            "op_name": op_name,
            "op_type": op_type,
            "inputs": out,
            "stack_frame_ids": ["f0", "f1", "f2"],
        }

    def executions(self, begin, end):
        digests = [
            {"index": i, "wall_time": e[0], "op_type": e[1], "is_function": e[2]} for i, e in enumerate(self.execs)
        ]
        return {"begin": begin, "end": end, "total": len(self.execs), "executions": digests[begin:end]}

    def execution(self, index, max_elements=1000):
        wall, op_type, is_function, ins, outs, health = self.execs[index]
        return {
            "index": index,
            "wall_time": wall,
            "op_type": op_type,
            "is_function": is_function,
            "input_tensor_ids": ins,
            "output_tensor_ids": outs,
            "outputs": health,
            "graph_id": None,
            "stack_frame_ids": ["f0", "f2"],
        }

    def stack_frames(self, ids):
        return {
            "frames": [
                {
                    "id": i,
                    "host": "h",
                    "path": self.frames[i][0],
                    "line": self.frames[i][1],
                    "function": self.frames[i][2],
                    "source_index": 0,
                    "is_user": self.frames[i][3],
                }
                for i in ids
            ]
        }

    def source_file(self, index, begin_line=None, end_line=None):
        text = {3: "step(x)", 7: "    r = tf.divide(c, d)  # CULPRIT"}
        return {"index": index, "lines": [text.get(begin_line, "")]}


def test_graph_producer_and_propagators():
    run = FakeRun()
    result = analyze(run)
    assert result["status"] == "found"
    p = result["producer"]
    assert (p["op_name"], p["op_type"], p["alert"]["source_index"]) == ("r", "RealDiv", 6)
    # Inputs: c and d as last traced before trace 6 (the zero of step 2, not the negative of step 1).
    assert [i["graph_execution_index"] for i in p["inputs"]] == [4, 5]
    assert p["inputs"][1]["description"] == "d:0 — finite; 1 zero among 4 elements"
    assert p["inputs_known"] is True
    assert p["user_frame"]["line"] == 7 and p["source_line"].endswith("# CULPRIT")
    # Producers: r (trace 6) and eager Log; propagators: m, the step-2 call, eager Sum.
    assert (result["producers"], result["propagators"]) == (2, 3)
    cls = classification(run)
    assert role_name(cls, "graph_execution", 7) == "propagator"
    assert role_name(cls, "execution", 1) == "propagator"
    assert role_name(cls, "execution", 3) == "producer"
    assert role_name(cls, "execution", 4) == "propagator"
    assert role_name(cls, "graph_execution", 5) is None


def test_eager_producer_inputs():
    run = FakeRun()
    run.rows = []  # no traces: the step-2 call's NaN came from nowhere we can see, so that call is the producer
    p = analyze(run)["producer"]
    assert (p["alert"]["source"], p["alert"]["source_index"]) == ("execution", 1)
    assert p["inputs_known"] is False and "not made by a recorded execution" in p["inputs"][0]["description"]
    run.execs = run.execs[2:]  # eager ops only: Log is the first producer, its input made by the Sub execution
    run.version = 2
    p = analyze(run)["producer"]
    assert p["op_type"] == "Log" and p["op_name"] is None and p["alert"]["source_index"] == 1
    assert p["inputs"][0]["description"] == "Sub:0 (execution #0) — finite; 1 negative among 3 elements"
    assert p["inputs_known"] is True


def test_curt_health_says_inputs_cannot_be_known():
    result = analyze(FakeRun(curt=True))
    assert result["producer"]["op_name"] == "r"
    assert result["producer"]["inputs_known"] is False
    assert "cannot be known" in result["message"] and "CURT_HEALTH" in result["message"]


def test_clean_and_untraceable_runs():
    run = FakeRun()
    run.rows = run.rows[:4]
    run.execs = run.execs[:1]
    assert analyze(run)["status"] == "clean"
    for row in run.rows:
        row["health"] = {
            "mode": "SHAPE",
            "tensor_id": 0,
            "dtype": "float32",
            "rank": 1,
            "size": 4,
            "shape": [4],
            "shape_truncated": False,
        }
    run.execs = []
    run.version = 2
    result = analyze(run)
    assert result["status"] == "unknown" and "cannot be known" in result["message"]


def test_cache_follows_version():
    run = FakeRun()
    assert analyze(run)["producer"]["op_name"] == "r"
    run.rows[6]["health"] = full(4, pos=4)  # r finite now: m becomes the producer, but only for a new version
    assert analyze(run)["producer"]["op_name"] == "r"
    run.version = 2
    assert analyze(run)["producer"]["op_name"] == "m"


def test_describe_modes():
    assert describe({"mode": "CONCISE_HEALTH", "size": 1000, "neg_inf": 0, "pos_inf": 0, "nan": 0}).startswith(
        "finite among 1,000 elements"
    )
    assert "cannot be known" in describe({"mode": "CURT_HEALTH", "any_inf_or_nan": False})
    assert describe(full(1000, zero=1)) == "finite; 1 zero among 1,000 elements"
    assert is_nonfinite({"mode": "SHAPE"}) is None and is_nonfinite(full(2, nan=1)) is True


def test_vectorized_trace_classification_scales():
    """2 M traces, 200 k alerts: the classification is numpy work, seconds not minutes (and correct: an op fed by
    a non-finite input is a propagator, one fed finite inputs a producer)."""
    import time

    n_ops, steps = 4, 500_000  # op 0 -> op 1 -> op 2 -> op 3, each traced once per step
    op = np.tile(np.arange(n_ops), steps)
    nonfinite = np.zeros(n_ops * steps, np.int8)
    bad_steps = np.arange(0, steps, 10)
    nonfinite[bad_steps * n_ops + 1] = 1  # op 1 goes non-finite from finite input (producer)
    nonfinite[bad_steps * n_ops + 2] = 1  # op 2 consumes op 1 (propagator)
    nonfinite[bad_steps[::2] * n_ops + 3] = 1  # op 3 consumes op 0 (finite): a producer
    cols = RunColumns(
        trace_wall=np.arange(n_ops * steps, dtype=np.float64),
        trace_op=op,
        trace_tensor=op,
        trace_nonfinite=nonfinite,
        op_input_ptr=np.array([0, 0, 1, 2, 3]),
        op_input_tensor=np.array([0, 1, 0]),
        op_forwards=np.zeros(n_ops, bool),
        exec_wall=np.zeros(0),
        exec_nonfinite=np.zeros(0, np.int8),
        exec_is_function=np.zeros(0, bool),
        exec_io=lambda i: ([], [], []),
    )
    start = time.perf_counter()
    cls, _ = classify_mod.classify(cols)
    elapsed = time.perf_counter() - start
    assert elapsed < 10, elapsed
    roles = cls.trace_role
    assert np.all(roles[bad_steps * n_ops + 1] == classify_mod.PRODUCER)
    assert np.all(roles[bad_steps * n_ops + 2] == classify_mod.PROPAGATOR)
    assert np.all(roles[bad_steps[::2] * n_ops + 3] == classify_mod.PRODUCER)
    assert cls.producers == len(bad_steps) + len(bad_steps[::2]) and cls.propagators == len(bad_steps)


def test_gather_codes_inputs_by_graph():
    cols = gather(FakeRun())
    assert len(cols.trace_wall) == 8 and list(cols.trace_nonfinite) == [0, 0, 0, 0, 0, 0, 1, 1]
    r_op = cols.trace_op[2]
    inputs = cols.op_input_tensor[cols.op_input_ptr[r_op] : cols.op_input_ptr[r_op + 1]]
    assert list(inputs) == [cols.trace_tensor[0], cols.trace_tensor[1]]  # c:0, d:0


class _LostOpRun:
    """A run whose graphs file lost the op of a contained trace (a damaged dump): its trace has no op type."""

    def graph_execution(self, index: int, begin: int = 0, max_elements: int = 1000) -> dict:
        return {"graph_id": "g", "op_name": "lost", "op_type": None, "health": full(4, neg_inf=1)}

    def op_entry(self, graph_id: str, op_name: str) -> None:
        return None


def test_a_skipped_source_whose_op_is_lost_still_matches_the_schema():
    """RootCauseSkip.op_type is a string (wire.ts): an op the graphs file lost is "" there, as in an Alert."""
    from api_helpers import load_schema, schema_errors

    from tensorboard_plugin_dbg.analysis import explain

    found = {"op_name": "r", "op_type": "RealDiv", "run_number": 1}
    skip = explain._skip(_LostOpRun(), found, 3, 2)
    assert skip["op_type"] == ""
    assert schema_errors(load_schema(), "RootCauseSkip", skip) == []


def test_an_untraced_identity_is_not_called_a_non_float():
    """TensorFlow's dump callback skips Identity (and the control-flow ops) whatever their dtype: a float32 Identity
    feeding the producer has no trace, and that says nothing about its values."""
    from tensorboard_plugin_dbg.analysis.producer_inputs import untraced_reason

    why, harmless = untraced_reason("Identity")
    assert "TensorFlow does not instrument Identity" in why and not harmless
    assert "floating-point" not in why
    why, harmless = untraced_reason("Cast")
    assert "not a floating-point tensor" in why and harmless
