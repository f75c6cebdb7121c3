"""`shard_map` bodies recorded as graphs of their own (#41), with real JAX on 2 CPU devices.

tests/programs/jax_shard_map.py runs a jitted step whose shard_map body takes the log of a value that is 0 on the
second device's shard only. `report` names the log inside the body's graph and the CULPRIT line, with the whole
logical tensor's figures (the counts summed over the mesh), under Auto and Explicit mesh axes, check_vma on and
off; the body is a graph of its own whose calling op is the shard_map equation, and an input of the body is followed
to the tensor its caller passed in. In FULL_TENSOR a body tensor is each device's shard, stacked in device order,
and a value the same on every device (check_vma tells) is recorded once. `pmap` (a jit of a shard_map to JAX
0.10), inside the jitted step or at top level, is recorded the same way.
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

from tensorboard_plugin_dbg.index.catalog import Catalog
from tensorboard_plugin_dbg.writer import summaries
from tensorboard_plugin_dbg.writer.events import DebugEventsWriter

pytest.importorskip("jax")
pytestmark = pytest.mark.slow
X, W = np.array([3.0, 4.0, 0.5, 5.0], np.float32), np.float32(2.0)  # the program's: x * w - 1 is 0 at x[2]


def _culprit(which: str = "shard_map") -> int:
    tag = f"# CULPRIT {which}"
    with open(dumps.program_path("jax_shard_map")) as f:
        return next(i for i, line in enumerate(f, 1) if line.rstrip().endswith(tag))


def _report(*args: str) -> str:
    proc = _cli("report", os.path.dirname(dumps.make_dump("jax_shard_map", *args)))
    assert proc.returncode == 1, proc.stdout + proc.stderr[-2000:]
    return proc.stdout


@pytest.mark.parametrize("axes", ["auto", "explicit"])
@pytest.mark.parametrize("check", ["check", "nocheck"])
def test_report_names_the_log_inside_the_shard_map_body_and_its_line(axes, check):
    text = _report("FULL_HEALTH", axes, check)
    assert "(log) in jit_step.shard_map_1 (shard_map body in a jitted function" in text, text
    assert f"jax_shard_map.py:{_culprit()} in per_shard" in text, text
    # the whole logical tensor: 4 elements over the 2 devices, the one -inf on the second device's shard
    assert "output: 1 −∞ among 4 elements" in text, text
    assert "not recorded" not in text


def test_the_body_is_a_graph_called_by_the_shard_map_op_and_its_input_is_followed_to_the_caller():
    (run,) = Catalog(os.path.dirname(dumps.make_dump("jax_shard_map", "FULL_HEALTH", "auto", "check"))).runs()
    ids = {name: (graph_id, outer) for graph_id, name, outer in run.graph_entries()}
    body, outer = ids["jit_step.shard_map_1"]
    assert outer == ids["jit_step"][0]
    callers = [n for n in run.graph_op_names(outer) if run.op_entry(outer, n).op_type == "jit_step.shard_map_1"]
    assert [n.split("_")[0] for n in callers] == ["shard"]  # the shard_map equation's op, shard_map_<i>
    (log,) = [n for n in run.graph_op_names(body) if n.startswith("log_")]
    chain = [g["name"] for g in run.op(body, log)["graph_chain"]]
    assert chain[-2:] == ["jit_step", "jit_step.shard_map_1"], chain
    text = _report("FULL_HEALTH", "auto", "check", "passed")  # the body's log reads its input: the caller's tensor
    assert "arg_0:0 — an input of jit_step.shard_map_1 (called by shard_map_" in text, text
    assert "1 zero among 4 elements" in text and f"jax_shard_map.py:{_culprit('passed')} in of_passed" in text


def _body_traces(dump: str) -> dict[str, np.ndarray]:
    names = {e.debugged_graph.graph_id: e.debugged_graph.graph_name for e in _events(dump, "graphs")}
    out = {}
    for e in _events(dump, "graph_execution_traces"):
        t = e.graph_execution_trace
        if names[t.tfdbg_context_id] == "jit_step.shard_map_1":
            out[t.op_name.split("_")[0]] = _array(t.tensor_proto)
    return out


@pytest.mark.parametrize("check", ["check", "nocheck"])
def test_full_tensor_holds_each_devices_shard_and_a_replicated_value_once(check):
    got = _body_traces(dumps.make_dump("jax_shard_map", "FULL_TENSOR", "auto", check))
    with np.errstate(divide="ignore"):
        logs = np.log(X * W - np.float32(1.0))
    np.testing.assert_allclose(got["log"], logs.reshape(2, 2), rtol=1e-6)  # device 0's shard, then device 1's
    total = logs.sum()
    if check == "check":  # JAX knows psum's result is the same on both devices: recorded once
        assert got["psum"].shape == () and got["psum"] == total
    else:  # check_vma=False: nothing tells, each device's copy is recorded
        assert got["psum"].shape == (2,) and (got["psum"] == total).all()


@pytest.mark.parametrize("where", ["pmap", "toplevel"])
def test_pmap_inside_jit_and_at_top_level_is_recorded_as_a_shard_map_body(where):
    """pmap is a jit of a shard_map to JAX 0.10: inside the jitted step its body is a shard_map body; called at top
    level it is recorded as a jitted call of it (jax/pmaps.py; it had been one eager execution, `_fun`)."""
    text = _report("FULL_HEALTH", "auto", "check", where)
    graph = "jit_step." if where == "pmap" else "jit_per_device."
    assert f"(log) in {graph}" in text and ".shard_map_" in text, text
    assert f"jax_shard_map.py:{_culprit('pmap')} in per_device" in text, text
    assert "output: 1 −∞ among 4 elements" in text, text


@pytest.mark.parametrize("check", ["check", "nocheck"])
def test_a_while_loop_inside_the_body_is_recorded(check):
    """A while loop's carry inside a shard_map body varies over the mesh: the loop's recorded body keeps its inputs'
    types (with check_vma its first interpretation raised a vma mismatch in the user's step)."""
    text = _report("FULL_HEALTH", "auto", check, "loop")
    assert "(log) in jit_step.shard_map_1.while_" in text and "(while loop body in a jitted function" in text, text
    assert f"jax_shard_map.py:{_culprit('loop')} in looped.<locals>.<lambda>" in text, text
    assert "its 1st trace" in text and "output: 1 −∞ among 4 elements" in text, text


def test_a_dump_from_a_writer_that_ran_shard_map_as_one_op_says_its_body_is_not_recorded(tmp_path):
    """Dumps written before bodies were recorded hold a `shard_map` op with no body graph: a NaN first seen at its
    output is said to come from a body that dump cannot name, not read as the shard_map op's own doing (a dump laid
    out as that writer laid it out, written with the package's writer)."""
    w = DebugEventsWriter(str(tmp_path / "logdir" / "dump"), "jax 0.10.2")
    device = "/job:localhost/replica:0/task:0/device:CPU:0"
    stack = w.stack([(__file__, 1, "step")])
    arg, out = w.tensor_ids(2)
    w.graph("g", "jit_step")
    w.op("g", "jit_step", "Placeholder", "arg_0", [], [arg], [])
    w.op("g", "jit_step", "shard_map", "shard_map_0", ["arg_0:0"], [out], stack)
    mode = summaries.mode_number("FULL_HEALTH")
    x = np.array([-np.inf, 1.0, 2.0, 3.0], np.float32)
    vector = summaries.debug_vector("FULL_HEALTH", out, "float32", x.shape, summaries.counts_of(x))
    w.trace("g", "shard_map_0", 0, mode, summaries.tensor_proto(vector), device)
    w.execution("jit_step", mode, graph_id="g", output_tensor_ids=[out], stack_frame_ids=stack)
    w.close()
    text = _cli("report", str(tmp_path / "logdir")).stdout
    assert "op shard_map_0 (shard_map) in jit_step (jitted function)" in text, text
    assert "shard_map's body is not recorded in this dump (written by a JAX writer that ran it as one op" in text, text


MINOR_AXIS = """
import os, sys
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=4"
import jax, jax.numpy as jnp
from jax import lax
from jax.sharding import NamedSharding, PartitionSpec as P
from tensorboard_plugin_dbg.jax import enable_dump_debug_info
enable_dump_debug_info(sys.argv[1])
mesh = jax.make_mesh((2, 2), ("d", "m"))  # Explicit axes
jax.sharding.set_mesh(mesh)

def inner(h):
    return lax.psum(jnp.log(h), "m")  # CULPRIT

def outer(x):
    return jax.shard_map(inner, in_specs=P(None, "m"), out_specs=P(None, None), axis_names={"m"})(x - 1.0)

@jax.jit
def step(x):
    cols = jnp.tanh(x)  # sharded over its columns
    return jax.shard_map(outer, in_specs=P("d", None), out_specs=P("d", None), axis_names={"d"})(x).sum() + cols.sum()

print(step(jax.device_put(jnp.arange(1.0, 17.0).reshape(4, 4), NamedSharding(mesh, P("d", "m")))))
"""


def test_a_tensor_sharded_over_a_minor_axis_and_a_shard_map_inside_a_partly_manual_one(tmp_path):
    """With Explicit axes, a tensor sharded over its second dimension was flattened to be counted, and JAX raised
    ShardingTypeError in the user's step ("This reshape is not supported"); counted without a reshape, the step runs
    and the log inside a shard_map nested in a partly manual shard_map is named at its line."""
    proc = _program(tmp_path, MINOR_AXIS, str(tmp_path / "logdir" / "dump"))
    assert proc.returncode == 0, proc.stderr[-2000:]
    text = _cli("report", str(tmp_path / "logdir")).stdout
    assert "(log) in jit_step.shard_map_1.shard_map_1 (shard_map body" in text, text
    assert 'return lax.psum(jnp.log(h), "m")  # CULPRIT' in text, text
    assert "output: 1 −∞ among 16 elements" in text, text
