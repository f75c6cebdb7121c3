"""A jitted call's records carry the time the call ran, not the time the writer's thread wrote them (#41): the thread
writes queued calls up to background.LOST_AT_MOST calls late, and an eager op run between two queued calls must
still fall between them in the dump's wall times, as it ran (real JAX on CPU, in a subprocess; the writer's thread
held on a gate so that the calls wait in its queue, as on a busy host). A call with a while loop is written alone
(RecordedJit._write), the others together (call_records.py): both are checked."""

from __future__ import annotations

import json

import pytest
from jax_helpers import events as _events
from jax_helpers import program as _program

PROGRAM = """
import json, sys, threading, time
import jax, jax.numpy as jnp
from jax import lax
from tensorboard_plugin_dbg.jax import enable_dump_debug_info

writer = enable_dump_debug_info(sys.argv[1], tensor_debug_mode="FULL_HEALTH")
f = jax.jit(lambda x: x * 2.0 + 1.0)
g = jax.jit(lambda x: lax.while_loop(lambda v: v.sum() < 100.0, lambda v: v * 2.0, x))
x = jnp.ones(4)
f(x).block_until_ready(), g(x).block_until_ready()  # traced and compiled before the timed calls
writer.flush()
spans = []

def timed(name, run, *args):
    before = time.time()
    out = run(*args)
    spans.append((name, before, time.time()))
    time.sleep(0.005)
    return out

def held(gate):  # the writer's thread busy: what comes next waits in its queue (at most 4 tasks)
    writer.defer(gate.wait)
    time.sleep(0.01)

for loop in (f, g):
    gate = threading.Event()
    held(gate)
    y = timed("first", loop, x)
    z = timed("sin", jnp.sin, y)
    timed("second", loop, z)
    time.sleep(0.02)
    gate.set()
    writer.flush()
print(json.dumps(spans))
"""


def test_queued_calls_and_an_eager_op_between_them_are_stamped_when_they_ran(tmp_path):
    pytest.importorskip("jax")
    dump = tmp_path / "dump"
    proc = _program(tmp_path, PROGRAM, str(dump))
    assert proc.returncode == 0, proc.stderr[-3000:]
    spans = json.loads(proc.stdout.strip().splitlines()[-1])
    execs = [e for e in _events(str(dump), "execution") if e.wall_time >= spans[0][1]]
    assert [e.execution.op_type for e in execs] == ["jit_<lambda>", "sin", "jit_<lambda>"] * 2
    traces = _events(str(dump), "graph_execution_traces")
    for (name, before, after), e in zip(spans, execs, strict=True):
        assert before <= e.wall_time <= after, (name, before, e.wall_time, after)
        if name != "sin":  # the call's traces (of its graph): when it ran, before its execution
            of_graph = [t.wall_time for t in traces if t.graph_execution_trace.tfdbg_context_id == e.execution.graph_id]
            of_graph = [w for w in of_graph if w >= spans[0][1]]  # the timed calls' (two of them)
            mine = [w for w in of_graph if before <= w < e.wall_time]
            assert mine and 2 * len(mine) == len(of_graph), (name, before, of_graph, e.wall_time)
    walls = [e.wall_time for e in execs]
    assert walls == sorted(walls) and len(set(walls)) == len(walls)
