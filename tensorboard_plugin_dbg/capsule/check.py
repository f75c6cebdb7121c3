"""The every-step check's TensorFlow ops (capsule/watch.py builds the check with them): one sum per checked tensor
and whether it is finite, the exact per-tensor check of the rare path, and the check's `If` kept a function call.

TensorFlow is imported inside the functions that run in the training process only.
"""

from __future__ import annotations

from typing import Any


def sum_finite(tensors: list[Any], halt: Any, compiled: bool = False) -> Any:
    """The every-step check, one reduction per tensor (each op costs its dispatch on the step's critical path): a
    sum is NaN or infinite when any value is, and finite values make a non-finite sum only by overflowing, which
    `all_finite` then tells apart on the rare path. `halt` (0, or +inf once stopped) joins the same sum. `compiled`:
    the step is XLA-compiled, where on XLA:CPU the check is `_xla_total` (measured there only: with a GPU visible the
    step runs on it, and XLA:GPU's reductions are left as they were)."""
    import tensorflow as tf

    if compiled and not tf.config.list_logical_devices("GPU"):
        return tf.math.is_finite(_xla_total(tensors, halt))

    sums = [float32(t if t.shape.rank == 0 else tf.reduce_sum(t)) for t in tensors]  # a scalar (the loss): no op
    return tf.math.is_finite(tf.add_n([*sums, halt]))


def _xla_total(tensors: list[Any], halt: Any) -> Any:
    """Under XLA:CPU, the sum of every tensor and `halt` in few kernels: each matrix's column sums (a product with
    ones, `_column_sums`), then the vectors of one length added elementwise and that vector summed, one reduction a
    length. XLA:CPU emits a full reduction of each vector as a kernel of its own (a [256] bias gradient's, a
    reduce-window thunk: its dispatch on the step's path), and splits a reduction of their concatenation back into one
    a vector; an elementwise sum it keeps whole (bench/README.md, #35). As exact a check: the same values summed, and
    a NaN or an infinity carries through every product and sum."""
    import tensorflow as tf

    by_length: dict[Any, list[Any]] = {}
    scalars = [halt]
    for t in tensors:
        rank = t.shape.rank
        if rank is not None and rank >= 2 and t.shape[-1] not in (0, None):
            v = _column_sums(t)
        elif rank == 1 and t.shape[0] is not None:
            v = t
        else:  # a scalar, a vector of unknown length, of unknown rank, or a matrix without columns
            v = None
            scalars.append(t if rank == 0 else tf.reduce_sum(t))
        if v is not None:
            by_length.setdefault(int(v.shape[0]), []).append(float32(v))
    sums = [tf.reduce_sum(tf.add_n(vectors)) for vectors in by_length.values()]
    return tf.add_n(sums + [float32(s) for s in scalars])


def float32(t: Any) -> Any:
    """`t` as float32, the dtype the check and the per-layer ring sum in (no op when it already is). Real `t` only: a
    cast keeps a complex tensor's real part, so complex gradients come here as their parts (`values`)."""
    import tensorflow as tf

    return t if t.dtype == tf.float32 else tf.cast(t, tf.float32)


def _column_sums(matrix: Any) -> Any:
    """A tensor's column sums, as a matrix-vector product with ones. XLA:CPU emits a full reduction of a gradient as a
    reduce-window loop: a [64, 256] gradient's took 7.9 us a step, some 1 % of a small MLP's compiled step, where the
    product (a dot kernel) takes ~1 us (bench/README.md, #35). As exact a check: x * 1 is x, and a NaN or an infinity
    carries through the products and sums as through the reduction's."""
    import tensorflow as tf

    rows = tf.reshape(matrix, [-1, matrix.shape[-1]]) if matrix.shape.rank != 2 else matrix
    ones = tf.ones(tf.shape(rows)[:1], rows.dtype)
    return tf.linalg.matvec(rows, ones, transpose_a=True)


def all_finite(tensors: list[Any]) -> Any:
    import tensorflow as tf

    checks = [tf.reduce_all(tf.math.is_finite(t)) for t in tensors]
    return tf.reduce_all(tf.stack(checks)) if checks else tf.constant(True)


def unlowered(result: Any) -> Any:
    """Keep the check's `If` op a function call instead of lowering it to Switch/Merge: one Switch in a train step's
    graph moves TensorFlow's executor off its fast path for graphs without control flow, for every op of the step
    (about +10-20 % step time on a small MLP). TensorFlow itself keeps conds unlowered this way
    (`execute_fn_for_device`); there is no public switch for it, hence the op attribute."""
    from tensorflow.core.framework import attr_value_pb2

    op = getattr(result, "op", None)  # None when eager: the cond ran at once, nothing to lower
    if op is not None and op.type == "Identity":
        op = op.inputs[0].op
    if op is not None and op.type in ("If", "StatelessIf"):
        op._set_attr("_lower_using_switch_merge", attr_value_pb2.AttrValue(b=False))  # noqa: SLF001 - see above
    return result


def values(grad: Any) -> Any:
    """A gradient's values as the check and the per-layer ring read them (an IndexedSlices' values). A complex
    gradient as its real and imaginary parts, stacked on a last axis of 2: a cast to float keeps the real part only
    (a NaN in the imaginary part went unseen), `is_finite` takes real dtypes only, and the ring's half sum of squares
    of the parts is sum |g|^2 / 2. A real gradient: itself, no op."""
    t = grad.values if hasattr(grad, "values") and hasattr(grad, "indices") else grad  # IndexedSlices
    if not getattr(getattr(t, "dtype", None), "is_complex", False):
        return t
    import tensorflow as tf

    return tf.stack([tf.math.real(t), tf.math.imag(t)], axis=-1)


def traced_for_xla() -> bool:
    """Whether the step being traced compiles with XLA: a custom loop's `tf.function(jit_compile=True)` says so to
    no one but its trace, which TensorFlow runs inside an XLA control-flow context (Keras's `fit` has
    `model.jit_compile`). Eager: False."""
    import tensorflow as tf
    from tensorflow.python.ops import control_flow_util  # no public way to ask (TensorFlow's own ops ask it this way)

    if tf.executing_eagerly():
        return False
    return bool(control_flow_util.GraphOrParentsInXlaContext(tf.compat.v1.get_default_graph()))
