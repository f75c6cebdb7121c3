"""The JAX writer's calls written together (jax/call_records.py): the calls of one jitted function queued while the
writer's thread is busy are written in one pass, and each call's records are still its own — its traces' counts
equal numpy's of that call's tensors, its execution holds its tensor ids and outputs' summaries, every record's CRCs
hold (real JAX on CPU, in a subprocess; the thread held on a gate so that the calls queue up, as on a busy host)."""

from __future__ import annotations

import pathlib

import numpy as np
import pytest
from jax_helpers import array as _array
from jax_helpers import events as _events
from jax_helpers import program as _program

from tensorboard_plugin_dbg.reader import crc32c
from tensorboard_plugin_dbg.writer import summaries

PROGRAM = """
import sys, threading
import jax, jax.numpy as jnp, numpy as np
from tensorboard_plugin_dbg.jax import enable_dump_debug_info, disable_dump_debug_info
from tensorboard_plugin_dbg.jax import call_records
from tensorboard_plugin_dbg.writer import background

joined = []
together = call_records.CallRecord.together
call_records.CallRecord.together = lambda self, calls: (joined.append(len(calls)), together(self, calls))[1]
writer = enable_dump_debug_info(sys.argv[1], tensor_debug_mode=sys.argv[2])

@jax.jit
def f(x, n):
    return jnp.log(x) * 2.0, n + 1

nan, inf = float("nan"), float("inf")
inputs = [np.array(v, np.float32) for v in (
    [1.0, 2.0, 0.0, -1.0], [nan, 3.0, 3.0, 3.0], [inf, -inf, 0.5, 2.0 ** 30], [1e-30, 1.0, -0.0, 7.0],
)]
xs = [jnp.asarray(v) for v in inputs]  # eager ops, recorded: made before the calls queue up
ns = [jnp.int32(i) for i in range(len(inputs))]
for _ in range(2):  # twice: the second time the calls' layouts are known
    writer.flush()
    gate = threading.Event()
    writer.defer(lambda: gate.wait(30))
    writer.defer(lambda: None)  # the thread takes both and waits: the calls below queue up behind it
    while writer._background._queued:
        pass
    for i in range(background.DEPTH):
        f(xs[i], ns[i])
    gate.set()
    writer.flush()
disable_dump_debug_info()
print("joined", joined)
"""


def _intact(dump: str, suffix: str) -> None:
    """Every record of the file: its length's and its payload's masked CRC-32C hold."""
    (path,) = [p for p in pathlib.Path(dump).iterdir() if p.name.endswith("." + suffix)]
    data = path.read_bytes()
    while data:
        head, length = data[:8], int.from_bytes(data[:8], "little")
        assert int.from_bytes(data[8:12], "little") == crc32c.mask(crc32c.crc32c_python(head))
        payload = data[12 : 12 + length]
        assert int.from_bytes(data[12 + length : 16 + length], "little") == crc32c.mask(crc32c.crc32c_python(payload))
        data = data[16 + length :]


@pytest.mark.parametrize("mode", ["CURT_HEALTH", "FULL_HEALTH"])
def test_calls_written_together_keep_each_calls_counts_ids_and_crcs(tmp_path, mode):
    pytest.importorskip("jax")
    dump = tmp_path / "dump"
    proc = _program(tmp_path, PROGRAM, str(dump), mode)
    assert proc.returncode == 0 and "failed" not in proc.stderr, proc.stderr[-3000:]
    assert f"joined {[4, 4]}" in proc.stdout  # each time the four calls were written together
    for suffix in ("execution", "graph_execution_traces"):
        _intact(str(dump), suffix)
    nan, inf = float("nan"), float("inf")
    inputs = [[1.0, 2.0, 0.0, -1.0], [nan, 3.0, 3.0, 3.0], [inf, -inf, 0.5, 2.0**30], [1e-30, 1.0, -0.0, 7.0]]
    with np.errstate(all="ignore"):
        logs = [np.log(np.array(v, np.float32)) for v in inputs] * 2
    calls = [e.execution for e in _events(str(dump), "execution") if e.execution.op_type == "jit_f"]
    assert len(calls) == len(logs)
    outputs = [list(c.output_tensor_ids) for c in calls]
    assert len({i for ids in outputs for i in ids}) == 2 * len(calls)  # each call its own tensor ids
    for call, log in zip(calls, logs, strict=True):
        want = summaries.debug_vector(mode, -1, "float32", (4,), summaries.counts_of(log * 2))
        assert _array(call.tensor_protos[0]).tolist()[1:] == want.tolist()[1:]  # past the tensor id
        assert call.tensor_protos[1] == b""  # an int32 output: the empty placeholder, as TensorFlow writes it
    traces = [e.graph_execution_trace for e in _events(str(dump), "graph_execution_traces")]
    logged = [t for t in traces if t.op_name.startswith("log")]
    assert len(logged) == len(logs)
    for trace, log in zip(logged, logs, strict=True):
        want = summaries.debug_vector(mode, -1, "float32", (4,), summaries.counts_of(log))
        assert _array(trace.tensor_proto).tolist()[1:] == want.tolist()[1:]


def test_calls_written_together_keep_their_order_in_time(tmp_path):
    """The joined calls once shared one wall time (traces and executions of all of them): the analysis places a
    trace in the call whose execution follows it, and with ties `report` named the first call's input (an eager
    `broadcast_in_dim`) as the second call's source in some runs, `jit_step:0` in others. Each call's traces now
    come strictly after the previous call's execution and strictly before its own."""
    pytest.importorskip("jax")
    dump = tmp_path / "dump"
    proc = _program(tmp_path, PROGRAM, str(dump), "FULL_HEALTH")
    assert proc.returncode == 0 and f"joined {[4, 4]}" in proc.stdout, proc.stderr[-3000:]
    execs = [e.wall_time for e in _events(str(dump), "execution") if e.execution.op_type == "jit_f"]
    traces = [e for e in _events(str(dump), "graph_execution_traces")]
    per_call = len(traces) // len(execs)
    assert per_call * len(execs) == len(traces)
    previous = -1.0
    for k, wall in enumerate(execs):
        mine = [t.wall_time for t in traces[k * per_call : (k + 1) * per_call]]
        assert previous < min(mine) and max(mine) < wall, (k, previous, mine, wall)
        previous = wall
