"""Bodies of scan, custom_vjp and custom_jvp recorded as graphs of their own (#41 item 4), with real JAX on CPU.

tests/programs/jax_bodies.py scans a cell whose `log` turns NaN at the 3rd iteration only: `report` names that op in
the scan's body graph, its 3rd trace, and the CULPRIT line; in FULL_TENSOR the body's traces hold every
iteration's value, equal to the same cell run step by step with numpy; the custom_vjp and custom_jvp bodies (clip,
relu) are graphs whose ops are traced.
"""

from __future__ import annotations

import os

import dumps
import numpy as np
import pytest
from jax_helpers import array as _array
from jax_helpers import cli as _cli
from jax_helpers import events as _events

pytest.importorskip("jax")
pytestmark = pytest.mark.slow
XS = np.array([[1.0, 1.0], [1.0, 2.0], [-5.0, 1.0], [1.0, 1.0]], np.float32)


def _culprit() -> int:
    with open(dumps.program_path("jax_bodies")) as f:
        return next(i for i, line in enumerate(f, 1) if "# CULPRIT" in line)


def test_report_names_the_scan_bodys_op_its_iteration_and_line():
    proc = _cli("report", os.path.dirname(dumps.make_dump("jax_bodies")))
    assert proc.returncode == 1, proc.stderr[-2000:]
    assert "first producer: op log_3 (log) in jit_run.scan_1 (jitted function)" in proc.stdout, proc.stdout
    assert "its 3rd trace" in proc.stdout
    assert f"jax_bodies.py:{_culprit()} in cell" in proc.stdout


def test_full_tensor_traces_hold_every_iteration_and_the_custom_bodies():
    dump = dumps.make_dump("jax_bodies", "FULL_TENSOR")
    names = {e.debugged_graph.graph_id: e.debugged_graph.graph_name for e in _events(dump, "graphs")}
    assert {"jit_run.scan_1", "jit_run.clipped_2", "jit_run.relu_4"} <= set(names.values())
    by_op: dict[tuple[str, str], list[np.ndarray]] = {}
    for e in _events(dump, "graph_execution_traces"):
        t = e.graph_execution_trace
        by_op.setdefault((names[t.tfdbg_context_id], t.op_name), []).append(_array(t.tensor_proto))
    h, logs = np.zeros(2, np.float32), []
    for x in XS:
        h = np.tanh(h * np.float32(0.5) + x)
        with np.errstate(invalid="ignore"):
            logs.append(np.log(h))
    got = by_op[("jit_run.scan_1", "log_3")]
    assert len(got) == len(XS)
    np.testing.assert_allclose(np.stack(got), np.stack(logs), rtol=1e-5)
    assert np.isnan(got[2]).any() and not np.isnan(got[1]).any()
    clip_ops = [op for (graph, op) in by_op if graph.startswith("jit_run.clipped_2")]
    relu_ops = [op for (graph, op) in by_op if graph.startswith("jit_run.relu_4")]
    assert any(op.startswith("min_") for op in clip_ops) and any(op.startswith("max_") for op in relu_ops)
