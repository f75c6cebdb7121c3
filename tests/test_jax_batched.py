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
    # an input whose only non-finite value is -inf (its ReLU is finite: CURT_HEALTH's flag goes 1 -> 0), or +inf
    relus += jax.nn.relu(x[0, 1:]), jax.nn.relu(x[1, :2])
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


def _assert_counts_are_numpys(tmp_path, tensors: dict[tuple[str, str, int], np.ndarray]) -> None:
    """Each health mode's dump under tmp_path: a trace for every float tensor FULL_TENSOR recorded, numpy's counts."""
    for mode in HEALTH:
        got = _traces(str(tmp_path / mode))
        assert set(got) == {k for k, v in tensors.items() if v.dtype.kind == "f" or v.dtype.name == "bfloat16"}
        for key, proto in got.items():
            want = summaries.debug_vector(
                mode, 0, tensors[key].dtype.name, tensors[key].shape, summaries.counts_of(tensors[key])
            )
            assert _vector(proto)[1:] == want.tolist()[1:], (mode, key)


@pytest.mark.slow
def test_counts_reused_for_moved_elements_equal_numpys(tmp_path):
    pytest.importorskip("jax")
    proc = _program(tmp_path, SAME_ELEMENTS_PROGRAM, str(tmp_path), "FULL_TENSOR", *HEALTH)
    assert proc.returncode == 0, proc.stderr[-3000:]
    tensors = {k: _array(v) for k, v in _traces(str(tmp_path / "FULL_TENSOR")).items()}
    moved = {k for k in tensors if k[1].rsplit("_", 1)[0].split("/")[-1] in ("transpose", "broadcast_in_dim", "rev")}
    assert len(moved) >= 4 and any(np.isnan(tensors[k].astype(np.float32)).any() for k in moved)
    relus = {k for k in tensors if k[1].rsplit("_", 1)[0].split("/")[-1] == "max"}
    assert len(relus) == 8 and any(np.isnan(tensors[k].astype(np.float32)).any() for k in relus)
    assert any(np.isfinite(tensors[k]).all() for k in relus) and any(np.isposinf(tensors[k]).any() for k in relus)
    _assert_counts_are_numpys(tmp_path, tensors)


CONV_PROGRAM = """
import sys
import jax, jax.numpy as jnp, numpy as np
from tensorboard_plugin_dbg.jax import enable_dump_debug_info, disable_dump_debug_info

def loss(w, b, x):
    h = jax.lax.conv_general_dilated(x, w, (1, 1), "SAME")  # NCHW: stored NHWC by XLA:CPU
    h = jax.nn.relu(h + b) * 2.0                             # elementwise results of it, counted transposed
    return jnp.sum(h * h)

def step(w, b, x):
    value, grads = jax.value_and_grad(loss, argnums=(0, 1))(w, b, x)  # the ReLU's backward select
    return w - 0.1 * grads[0], b - 0.1 * grads[1], value

nan, inf = float("nan"), float("inf")
x = np.array(jax.random.normal(jax.random.PRNGKey(0), (4, 3, 16, 16)), np.float32)
x[0, 0, 0, 0], x[1, 1, 2, 2], x[2, 2, 5, 5], x[3, 0, :, 3] = inf, nan, -inf, 0.0
dtype = sys.argv[2]
w = (jax.random.normal(jax.random.PRNGKey(1), (8, 3, 3, 3)) * 0.5).astype(dtype)
b = jnp.linspace(-1.0, 1.0, 8).reshape(1, 8, 1, 1).astype(dtype)
for mode in sys.argv[3:]:
    enable_dump_debug_info(f"{sys.argv[1]}/{mode}", tensor_debug_mode=mode)
    jax.jit(step)(w, b, jnp.asarray(x).astype(dtype))
    disable_dump_debug_info()
"""


@pytest.mark.slow
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_counts_of_a_convolutions_elementwise_results_equal_numpys(tmp_path, dtype):
    """The tensors count_order.py counts in XLA's stored order (a conv's elementwise results, > instrument.SMALL
    elements, non-finite among them): every health mode's counts equal numpy's of what FULL_TENSOR recorded."""
    pytest.importorskip("jax")
    proc = _program(tmp_path, CONV_PROGRAM, str(tmp_path), dtype, "FULL_TENSOR", *HEALTH)
    assert proc.returncode == 0, proc.stderr[-3000:]
    tensors = {k: _array(v) for k, v in _traces(str(tmp_path / "FULL_TENSOR")).items()}
    selects = [k for k in tensors if k[1].rsplit("_", 1)[0].split("/")[-1] == "select_n" and tensors[k].ndim == 4]
    finite = {k: np.isfinite(tensors[k].astype(np.float32)) for k in selects}
    assert selects and any(not finite[k].all() for k in selects)
    assert all(tensors[k].dtype.name == dtype for k in selects)
    assert any(tensors[k].size > 4096 and (tensors[k].astype(np.float32) == 0).any() for k in selects)
    _assert_counts_are_numpys(tmp_path, tensors)


CONV_SPECS = [(("NCHW", "OIHW", "NCHW"), (0, 2, 3, 1)), (("NHWC", "HWIO", "NHWC"), None)]


@pytest.mark.parametrize(("spec", "stored"), CONV_SPECS)
def test_a_convolutions_elementwise_results_are_counted_in_its_stored_order(spec, stored):
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp

    from tensorboard_plugin_dbg.jax.count_order import CountOrders

    x = jnp.ones((2, 3, 5, 5) if spec[0] == "NCHW" else (2, 5, 5, 3))
    w = jnp.ones((4, 3, 3, 3) if spec[1] == "OIHW" else (3, 3, 3, 4))
    jaxpr = jax.make_jaxpr(lambda x, w: jax.lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=spec))
    (eqn,) = jaxpr(x, w).eqns
    out = jax.lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=spec)
    orders = CountOrders()
    orders.note("conv_general_dilated", eqn.params, [x, w], [out])
    relu = jnp.maximum(out, 0.0)
    orders.note("max", {}, [out, 0.0], [relu])
    total = jnp.sum(out)
    orders.note("reduce_sum", {}, [out], [total])
    assert orders.oriented(out) is out  # a convolution's own output: counted as it is (measured faster)
    assert orders.oriented(total) is total
    want = relu if stored is None else jnp.transpose(relu, stored)
    assert orders.oriented(relu).shape == want.shape and bool((orders.oriented(relu) == want).all())
    other = jnp.maximum(out, 0.0)  # another value of that shape, not noted: counted as it is
    assert orders.oriented(other) is other
