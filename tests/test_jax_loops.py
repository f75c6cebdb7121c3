"""`while_loop` bodies and `cond` branches recorded as graphs of their own (#41 item 2), with real JAX on CPU.

tests/programs/jax_loops.py runs a while loop whose body's `sqrt` turns NaN at the 3rd of 5 iterations, or a `cond`
whose branch taken takes the log of a negative number: `report` names that op in the body's (branch's) graph, its
3rd trace for the loop, the health of the carry it read at that iteration (a body's inputs are traced), and the
CULPRIT line; in FULL_TENSOR the body's traces hold each iteration that ran (2, not
the buffer's capacity), equal to the same loop in numpy, and only the branch taken is traced. A loop of 150
iterations whose NaN is born at the 121st (WHERE "late"): the dump records how many iterations ran and were traced
(the loop's trace mask beside the while op), and `report` says the NaN appeared in the untraced iterations 101–150.
"""

from __future__ import annotations

import os

import dumps
import numpy as np
import pytest
from jax_helpers import array as _array
from jax_helpers import cli as _cli
from jax_helpers import events as _events
from jax_helpers import program as _program

from tensorboard_plugin_dbg.reader.debug_values import decode_debug_value

pytest.importorskip("jax")
pytestmark = pytest.mark.slow


def _culprit(where: str) -> int:
    with open(dumps.program_path("jax_loops")) as f:
        return next(i for i, line in enumerate(f, 1) if f"# CULPRIT {where}" in line)


def _traces(dump: str) -> dict[tuple[str, str], list[np.ndarray]]:
    names = {e.debugged_graph.graph_id: e.debugged_graph.graph_name for e in _events(dump, "graphs")}
    by_op: dict[tuple[str, str], list[np.ndarray]] = {}
    for e in _events(dump, "graph_execution_traces"):
        t = e.graph_execution_trace
        by_op.setdefault((names[t.tfdbg_context_id], t.op_name), []).append(_array(t.tensor_proto))
    return by_op


def test_report_names_the_while_bodys_op_its_iteration_and_line():
    proc = _cli("report", os.path.dirname(dumps.make_dump("jax_loops", "FULL_HEALTH", "while")))
    assert proc.returncode == 1, proc.stderr[-2000:]
    # the body's graph says what it is, and that the loop's condition function is not recorded (#41: said, not hidden)
    body = "while loop body in a jitted function; its condition function runs unrecorded"
    assert f"(sqrt) in jit_run.while_1 ({body})" in proc.stdout, proc.stdout
    assert "its 3rd trace" in proc.stdout
    assert "arg_1:0 — finite; 1 negative among 2 elements" in proc.stdout  # the carry it read, that iteration's
    assert f"jax_loops.py:{_culprit('while')} in shrink" in proc.stdout


def test_report_names_the_cond_branchs_op_and_line():
    proc = _cli("report", os.path.dirname(dumps.make_dump("jax_loops", "FULL_HEALTH", "cond")))
    assert proc.returncode == 1, proc.stderr[-2000:]
    assert "(log) in jit_run.cond_2_branch_1 (jitted function)" in proc.stdout, proc.stdout
    assert f"jax_loops.py:{_culprit('cond')} in risky" in proc.stdout


def test_full_tensor_traces_hold_each_iteration_that_ran_and_the_branch_taken():
    by_op = _traces(dumps.make_dump("jax_loops", "FULL_TENSOR", "cond"))
    (sqrt_op,) = [op for graph, op in by_op if graph == "jit_run.while_1" and op.startswith("sqrt_")]
    got = by_op[("jit_run.while_1", sqrt_op)]
    h, want, carries = np.array([3.0, 30.0], np.float32), [], []
    for _ in range(2):
        carries.append(h)
        want.append(np.sqrt(h))
        h = want[-1] - np.float32(1.0)
    assert len(got) == 2
    np.testing.assert_allclose(np.stack(got), np.stack(want), rtol=1e-5)
    np.testing.assert_allclose(np.stack(by_op[("jit_run.while_1", "arg_1")]), np.stack(carries), rtol=1e-5)
    taken = [op for graph, op in by_op if graph == "jit_run.cond_2_branch_1"]
    assert any(op.startswith("log_") for op in taken)
    assert not [op for graph, op in by_op if graph == "jit_run.cond_2_branch_0"]


def _masks(dump: str) -> list[tuple[str, str, int, dict]]:
    """The loops' trace masks: (graph name, op name, mode, decoded health), in the order written."""
    names = {e.debugged_graph.graph_id: e.debugged_graph.graph_name for e in _events(dump, "graphs")}
    types = {e.graph_op_creation.op_name: e.graph_op_creation.op_type for e in _events(dump, "graphs")}
    out = []
    for e in _events(dump, "graph_execution_traces"):
        t = e.graph_execution_trace
        if types.get(t.op_name) == "LoopIterations":
            mode = int(t.tensor_debug_mode)
            out.append((names[t.tfdbg_context_id], t.op_name, mode, decode_debug_value(mode, t.tensor_proto)))
    return out


def test_a_loop_past_its_traced_iterations_records_how_many_ran_and_report_says_the_nan_was_there():
    dump = dumps.make_dump("jax_loops", "FULL_HEALTH", "late")
    ((graph, op, mode, health),) = _masks(dump)
    assert (graph, op, mode) == ("jit_run", "while_1.iterations", 4)  # the run's own mode, not another
    assert (health["size"], health["pos"], health["zero"]) == (150, 100, 50)
    by_op = _traces(dump)
    (sqrt_op,) = [op for graph, op in by_op if graph == "jit_run.while_1" and op.startswith("sqrt_")]
    assert len(by_op[("jit_run.while_1", sqrt_op)]) == 100  # the traced iterations, all finite
    proc = _cli("report", os.path.dirname(dump))
    assert proc.returncode == 1, proc.stderr[-2000:]
    assert "op while_1 (while) in jit_run" in proc.stdout, proc.stdout
    assert "the NaN appeared in iterations 101–150 of this while loop, which are not traced" in proc.stdout


def test_a_loop_with_every_iteration_traced_says_so_and_full_tensor_writes_the_mask():
    ((_, _, _, health),) = _masks(dumps.make_dump("jax_loops", "FULL_HEALTH", "while"))
    assert (health["size"], health["pos"]) == (5, 5)
    proc = _cli("report", os.path.dirname(dumps.make_dump("jax_loops", "FULL_HEALTH", "while")))
    assert "not traced" not in proc.stdout, proc.stdout
    ((_, _, mode, health),) = _masks(dumps.make_dump("jax_loops", "FULL_TENSOR", "cond"))
    assert mode == 7 and (health["size"], health["pos"], health["dtype"]) == (2, 2, "int32")


CLEAN_BRANCHES = """
import sys
import jax, jax.numpy as jnp
from jax import lax
from tensorboard_plugin_dbg.jax import enable_dump_debug_info
enable_dump_debug_info(sys.argv[1])

@jax.jit
def step(x):
    y = lax.cond(x.sum() > 0, jnp.sqrt, jnp.exp, x)
    _, z = lax.while_loop(lambda s: s[0] < 0, lambda s: (s[0] + 1, jnp.log(s[1])), (0, y))
    return z

print(step(jnp.ones(3)))
"""


def test_a_clean_run_with_a_branch_not_taken_and_a_loop_never_run_is_clean(tmp_path):
    """The branch not taken and a while body that ran 0 times have no trace, rightly: they are parts of the recorded
    step, not functions wrapped before enable_dump_debug_info (the run had read "Cannot judge")."""
    proc = _program(tmp_path, CLEAN_BRANCHES, str(tmp_path / "logdir" / "dump"))
    assert proc.returncode == 0, proc.stderr[-2000:]
    report = _cli("report", str(tmp_path / "logdir"))
    assert report.returncode == 0 and "run dump: CLEAN" in report.stdout, report.stdout


EXPLICIT_SHARDING = """
import os, sys
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=2"
import jax, jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P
from tensorboard_plugin_dbg.jax import enable_dump_debug_info
enable_dump_debug_info(sys.argv[1])
mesh = jax.make_mesh((2,), ("x",))  # its default axis types: Explicit
jax.sharding.set_mesh(mesh)

@jax.jit
def step(w, x, big):
    b = jnp.tanh(big) @ jnp.ones((128, 4))
    return jnp.log(x * w - 1.0).sum() + b.sum()  # CULPRIT

x = jax.device_put(jnp.array([0.5, 3.0, 4.0, 5.0]), NamedSharding(mesh, P("x")))
big = jax.device_put(jnp.ones((256, 128)), NamedSharding(mesh, P("x", None)))
print(step(jnp.float32(2.0), x, big))
"""


def test_a_step_on_explicitly_sharded_arrays_is_recorded(tmp_path):
    """With `jax.make_mesh`'s default (Explicit) axes, tensors of different shardings in one step: the small ones had
    been stacked for one count reduction and JAX raised ShardingTypeError in the user's step. A sharded tensor is now
    counted alone, and the report names the log at the CULPRIT line."""
    proc = _program(tmp_path, EXPLICIT_SHARDING, str(tmp_path / "logdir" / "dump"))
    assert proc.returncode == 0, proc.stderr[-2000:]
    report = _cli("report", str(tmp_path / "logdir"))
    assert report.returncode == 1, report.stdout
    assert "first producer: op log_" in report.stdout and "(log) in jit_step" in report.stdout, report.stdout
    assert "return jnp.log(x * w - 1.0).sum() + b.sum()  # CULPRIT" in report.stdout, report.stdout
    assert "output: 1 −∞ among 4 elements" in report.stdout, report.stdout
