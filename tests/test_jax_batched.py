"""The JAX writer's fast path (#41 speed): a call's traces framed together from records laid out at trace time
(writer/trace_batch.py), and health counts computed once per tensor, reused for outputs that only move or repeat
their input's elements (transpose, reshape, broadcast, rev, widening casts; instrument.SAME_ELEMENTS), a ReLU's
(max(x, 0)) made from its input's.

- Bytes: TraceBatch's records (one by one, and joined in one pass) are the bytes `DebugEventsWriter.trace` writes,
  in every summary mode, with and without the native CRC; its protos are those of summaries.debug_vector.
- Counts: a jitted program of such ops on a tensor holding NaN, -inf, +inf, zeros and signed values, recorded in each
  health mode, against the same program recorded in FULL_TENSOR: every trace's counts equal numpy's counts of the
  tensor FULL_TENSOR recorded for that op output (real JAX on CPU, in a subprocess).
"""

from __future__ import annotations

import numpy as np
import pytest
from jax_helpers import array as _array
from jax_helpers import events as _events
from jax_helpers import program as _program

from tensorboard_plugin_dbg.reader import crc32c, schema
from tensorboard_plugin_dbg.reader.tensor_proto import parse_tensor_proto, tensor_to_numpy
from tensorboard_plugin_dbg.writer import events, summaries
from tensorboard_plugin_dbg.writer.trace_batch import COUNT_COLUMN, TraceBatch, TracePoint

POINTS = [
    TracePoint("g" * 32, "jvp(f)/transpose_3", 0, 7, "float32", (4, 3)),
    TracePoint("h" * 32, "a/" + "long_name" * 20, 2, 300, "float16", ()),
    TracePoint("g" * 32, "mul_0", 1, 9, "bfloat16", (2, 3, 4, 5, 6, 7, 8)),
]
DEVICE = "/job:localhost/replica:0/task:0/device:CPU:0"


def _trace_bytes(p: TracePoint, mode: str, counts: summaries.HealthCounts | None, wall: float) -> bytes:
    """What DebugEventsWriter.trace frames for this point (its event, with the given wall time)."""
    event = schema.DebugEvent(wall_time=wall)
    t = event.graph_execution_trace
    t.tfdbg_context_id, t.op_name, t.output_slot = p.graph_id, p.op_name, p.slot
    t.tensor_debug_mode, t.device_name = summaries.mode_number(mode), DEVICE
    t.tensor_proto = summaries.tensor_proto(summaries.debug_vector(mode, p.tensor_id, p.dtype, p.shape, counts))
    return events.frame(event.SerializeToString())


@pytest.mark.parametrize("native", [True, False])
@pytest.mark.parametrize("mode", ["NO_TENSOR", "CURT_HEALTH", "CONCISE_HEALTH", "FULL_HEALTH", "SHAPE"])
def test_batched_records_are_the_bytes_the_writer_writes(monkeypatch, mode, native):
    if not native:
        monkeypatch.setattr(crc32c, "NATIVE", None)
    batch = TraceBatch(POINTS, mode, DEVICE)
    rng = np.random.default_rng(len(mode))
    for wall in (1.5e9, 1.7e9 + 0.123):
        counts = [summaries.HealthCounts(int(np.prod(p.shape)), *rng.integers(0, 9, 6).tolist()) for p in POINTS]
        table = None
        if mode in COUNT_COLUMN:
            table = np.array([[c.neg_inf, c.pos_inf, c.nan, c.neg, c.zero, c.pos] for c in counts])
            table = {"CURT_HEALTH": table[:, 2:3] + table[:, :1], "CONCISE_HEALTH": table[:, :3]}.get(mode, table)
        want = [_trace_bytes(p, mode, c, wall) for p, c in zip(POINTS, counts, strict=True)]
        assert batch.records(wall, table) == want
        assert batch.joined(wall, table) == b"".join(want)  # the one-pass layout the recorder streams
        protos = [_trace_proto(p, mode, c) for p, c in zip(POINTS, counts, strict=True)]
        assert batch.protos(table) == protos  # a jitted call's outputs, as its execution holds them


def _trace_proto(p: TracePoint, mode: str, counts: summaries.HealthCounts) -> bytes:
    return summaries.tensor_proto(summaries.debug_vector(mode, p.tensor_id, p.dtype, p.shape, counts))


def test_an_empty_batch_joins_to_nothing():
    batch = TraceBatch([], "FULL_HEALTH", DEVICE)
    assert batch.joined(1.5e9, np.zeros((0, 6))) == b""
    assert batch.protos(np.zeros((0, 6))) == []


SAME_ELEMENTS_PROGRAM = """
import sys
import jax, jax.numpy as jnp, numpy as np
from tensorboard_plugin_dbg.jax import enable_dump_debug_info, disable_dump_debug_info

def body(x, h):
    t = x.T                                          # transpose
    b = jnp.broadcast_to(x[0], (3, 4))               # broadcast of a slice
    r = jnp.flip(t.reshape(-1))                      # reshape, rev
    w = h.astype(jnp.float32)                        # widening cast
    z = jnp.zeros((4, 4)) + x                        # broadcast of a literal 0.0
    big = jnp.tile(x, (20, 30)).T                    # above instrument.SMALL: counted on its own
    relus = jax.nn.relu(x), jax.nn.relu(b), jnp.maximum(0.0, big), jax.nn.relu(w)  # counts made from the input's
    twice = jax.nn.relu(jax.nn.relu(t))              # a ReLU of a ReLU of a transpose
    scanned = jax.lax.scan(lambda c, v: (c, jnp.log(v) * 2), 0.0, x)[1]  # a body's counts, made in its program
    return jnp.log(t) + 1, b * 2, r, w * 3, z, jnp.expand_dims(w, 0), big - 1, *relus, twice, scanned

nan, inf = float("nan"), float("inf")
x = jnp.array([[nan, -inf, 0.0, 2.0], [inf, -1.0, -0.0, 5.0], [1.0, 1.0, nan, -3.0], [0.0, 0.0, 0.0, 7.0]])
h = jnp.array([[1.0, -inf], [nan, 0.0]], jnp.float16)
for mode in sys.argv[2:]:
    enable_dump_debug_info(f"{sys.argv[1]}/{mode}", tensor_debug_mode=mode)
    jax.jit(body)(x, h)
    disable_dump_debug_info()
"""
HEALTH = ("CURT_HEALTH", "CONCISE_HEALTH", "FULL_HEALTH")


def _traces(dump_dir: str) -> dict[tuple[str, str, int], bytes]:
    names = {e.debugged_graph.graph_id: e.debugged_graph.graph_name for e in _events(dump_dir, "graphs")}
    found = {}
    for e in _events(dump_dir, "graph_execution_traces"):
        t = e.graph_execution_trace
        found[(names[t.tfdbg_context_id], t.op_name, t.output_slot)] = t.tensor_proto
    return found


def _vector(proto: bytes) -> list[float]:
    flat, _, _ = tensor_to_numpy(parse_tensor_proto(proto))
    return flat.tolist()


@pytest.mark.slow
def test_counts_reused_for_moved_elements_equal_numpys(tmp_path):
    pytest.importorskip("jax")
    proc = _program(tmp_path, SAME_ELEMENTS_PROGRAM, str(tmp_path), "FULL_TENSOR", *HEALTH)
    assert proc.returncode == 0, proc.stderr[-3000:]
    tensors = {k: _array(v) for k, v in _traces(str(tmp_path / "FULL_TENSOR")).items()}
    moved = {k for k in tensors if k[1].rsplit("_", 1)[0].split("/")[-1] in ("transpose", "broadcast_in_dim", "rev")}
    assert len(moved) >= 4 and any(np.isnan(tensors[k].astype(np.float32)).any() for k in moved)
    relus = {k for k in tensors if k[1].rsplit("_", 1)[0].split("/")[-1] == "max"}
    assert len(relus) == 6 and any(np.isnan(tensors[k].astype(np.float32)).any() for k in relus)
    for mode in HEALTH:
        got = _traces(str(tmp_path / mode))
        assert set(got) == {k for k, v in tensors.items() if v.dtype.kind == "f" or v.dtype.name == "bfloat16"}
        for key, proto in got.items():
            want = summaries.debug_vector(
                mode, 0, tensors[key].dtype.name, tensors[key].shape, summaries.counts_of(tensors[key])
            )
            assert _vector(proto)[1:] == want.tolist()[1:], (mode, key)
