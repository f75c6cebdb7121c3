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
    the step is XLA-compiled, where on XLA:CPU a matrix is summed by a product with ones (`_xla_sum`; measured there
    only: with a GPU visible the step runs on it, and XLA:GPU's reductions are left as they were)."""
    import tensorflow as tf

    product = compiled and not tf.config.list_logical_devices("GPU")

    def total(t: Any) -> Any:
        matrix = product and t.shape.rank is not None and t.shape.rank >= 2 and t.shape[-1] not in (0, None)
        s = t if t.shape.rank == 0 else _xla_sum(t) if matrix else tf.reduce_sum(t)  # a scalar (the loss): no op
        return tf.cast(s, tf.float32) if s.dtype != tf.float32 else s

    return tf.math.is_finite(tf.add_n([*(total(t) for t in tensors), halt]))


def _xla_sum(matrix: Any) -> Any:
    """A tensor's sum as its column sums (a matrix-vector product with ones), then their sum. XLA:CPU emits a full
    reduction of a gradient as a reduce-window loop: a [64, 256] gradient's took 7.9 us a step, some 1 % of a small
    MLP's compiled step, where the product (a dot kernel) takes ~1 us (bench/README.md, #35). As exact a check:
    x * 1 is x, and a NaN or an infinity carries through the products and sums as through the reduction's."""
    import tensorflow as tf

    rows = tf.reshape(matrix, [-1, matrix.shape[-1]]) if matrix.shape.rank != 2 else matrix
    ones = tf.ones(tf.shape(rows)[:1], rows.dtype)
    return tf.reduce_sum(tf.linalg.matvec(rows, ones, transpose_a=True))


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
    return grad.values if hasattr(grad, "values") and hasattr(grad, "indices") else grad  # IndexedSlices


def traced_for_xla() -> bool:
    """Whether the step being traced compiles with XLA: a custom loop's `tf.function(jit_compile=True)` says so to
    no one but its trace, which TensorFlow runs inside an XLA control-flow context (Keras's `fit` has
    `model.jit_compile`). Eager: False."""
    import tensorflow as tf
    from tensorflow.python.ops import control_flow_util  # no public way to ask (TensorFlow's own ops ask it this way)

    if tf.executing_eagerly():
        return False
    return bool(control_flow_util.GraphOrParentsInXlaContext(tf.compat.v1.get_default_graph()))
