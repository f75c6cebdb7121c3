"""Per-layer history, kept in the compiled step: for each trainable variable, its gradient norm and its max |w| over
the last K steps (`NanCapsule(layer_history=32)`; 0 turns it off), in a ring of device variables that the every-step
path writes in place (one scatter per step, no host read, so an XLA step stays compiled). The check's rare branch
copies the ring as it stands at the held trigger (only when the capture slot is free, like capsule/shadow.py), so the
capsule holds the K steps up to and including the trigger, however many steps run before the host polls.

What is kept, whatever the model: K steps x n variables x 2 float32, twice (the live ring and its copy at the
trigger): 16 bytes x K x n, 512 KiB for 1,000 variables at K = 32. Per step: one sum of squares per gradient
(`l2_loss`, one op; under XLA another form, below), which the watch's every-step check then uses for the gradients
instead of summing them itself, and one max |w| per variable (the weights the step starts from: the watch never
applies a non-finite update, so they are finite unless the model started non-finite; a non-finite max is kept as it
is).

Written into the capsule as the optional group `layer_history.npz` (`grad_norm`, `max_abs_w`: float32 [n, T], oldest
step first, the trigger's step last) and the manifest's `layer_history` entry (variable names, T, K, the device step
of the last row). TensorFlow is imported inside the functions that run in the training process only.
"""

from __future__ import annotations

from typing import Any

import numpy as np

STEPS = 32  # default K


class LayerHistory:
    def __init__(self, steps: int = STEPS) -> None:
        if isinstance(steps, bool) or not isinstance(steps, int) or steps < 0:
            raise ValueError(f"layer_history must be a number of steps (0: off), not {steps!r}")
        self.steps = steps
        self.names: list[str] = []  # the variables of the ring's columns, as traced
        self.ring: Any = None  # float32 [K, 2, n]: (sum of squares / 2 of the gradient, max |w|) per step
        self.seen: Any = None  # int64: steps recorded
        self.held: Any = None  # float32 [K, 2, n]: the ring at the held trigger
        self.held_seen: Any = None  # int64: `seen` at the held trigger

    @property
    def on(self) -> bool:
        return self.steps > 0

    def record(self, names: list[str], grads: list[Any], variables: list[Any], compiled: bool = False) -> Any:
        """In the every-step path, before the check's cond: this step's row into the ring. Returns (an op to depend
        on, this step's sum of squares / 2 over all its gradients, None without any): the watch checks the gradients
        with it instead of summing them again (non-finite iff a gradient value is, or the sum overflowed, which the
        check's rare path tells apart), so the norms cost the ring next to nothing. `compiled`: the step is
        XLA-compiled, whose reductions take another form (see `_squares_compiled`, `_largest_compiled`)."""
        import tensorflow as tf

        kept = [(n, g, v) for n, g, v in zip(names, grads, variables) if g is not None]
        self._ensure([n for n, _, _ in kept])
        if not kept:
            return self.seen.assign_add(1), None
        # max |w| every step: measured every 8th step under a tf.cond instead, a Keras fit step under XLA took ~1 s,
        # not 1 ms (cause not found)
        squares, largest_abs = (_squares_compiled, _largest_compiled) if compiled else (_squares, _largest)
        norms = tf.stack([squares(_float32(_values(g))) for _, g, _ in kept])
        largest = tf.stack([largest_abs(_float32(_read(v))) for _, _, v in kept])
        index = tf.reshape(tf.math.floormod(self.seen, self.steps), [1, 1])
        written = self.ring.scatter_nd_update(index, tf.expand_dims(tf.stack([norms, largest]), 0))
        with tf.control_dependencies([written]):
            return self.seen.assign_add(1), tf.reduce_sum(norms)

    def hold(self, slot: Any) -> Any:
        """In the rare branch, before the capture takes the slot: the ring copied when the slot is free."""
        import tensorflow as tf

        def copy() -> Any:
            with tf.control_dependencies([self.held.assign(self.ring), self.held_seen.assign(self.seen)]):
                return tf.constant(True)

        return tf.cond(tf.equal(slot, 0), copy, lambda: tf.constant(False))

    def _ensure(self, names: list[str]) -> None:
        import tensorflow as tf

        with tf.init_scope():
            if self.ring is None or names != self.names:  # a new model (or a retrace with other variables)
                self.names = names
                shape = [self.steps, 2, len(names)]
                self.ring = tf.Variable(tf.zeros(shape), trainable=False, name="nan_capsule_layer_ring")
                self.held = tf.Variable(tf.zeros(shape), trainable=False, name="nan_capsule_layer_held")
                self.seen = tf.Variable(0, dtype=tf.int64, trainable=False, name="nan_capsule_layer_seen")
                self.held_seen = tf.Variable(0, dtype=tf.int64, trainable=False, name="nan_capsule_layer_held_seen")

    # --- read by the host when it writes the capsule ---------------------------------------------------------------

    def read(self) -> tuple[dict[str, dict[str, np.ndarray]], dict[str, object]]:
        """(the capsule's `layer_history` group, the manifest's entry): the held ring, oldest step first."""
        if not self.on:
            return {}, {"recorded": False, "why": "turned off (layer_history=0)"}
        if self.held is None:
            return {}, {"recorded": False, "why": "no step recorded (a custom loop without checked_apply?)"}
        seen, held = int(self.held_seen.numpy()), self.held.numpy()
        rows = min(seen, self.steps)
        order = [(seen - rows + i) % self.steps for i in range(rows)]
        ordered = held[order] if rows else np.zeros((0, 2, len(self.names)), np.float32)
        grad_norm = np.sqrt(2.0 * ordered[:, 0, :].astype(np.float64)).astype(np.float32).T
        max_abs_w = np.ascontiguousarray(ordered[:, 1, :].T)
        entry = {
            "recorded": True,
            "variables": list(self.names),
            "steps_kept": rows,
            "ring": self.steps,
            "last_step": seen - 1,  # the trigger's step, counted from the first recorded step (0)
            "what": "grad_norm: the L2 norm of each trainable variable's gradient; max_abs_w: its max |w| at the "
            "step's start; float32 [variables, steps], oldest first, the trigger's step last",
        }
        return {"layer_history": {"grad_norm": grad_norm, "max_abs_w": max_abs_w}}, entry


def _squares(t: Any) -> Any:
    """Half the sum of squares: one op (`L2Loss`), what each op costs without XLA being its dispatch."""
    import tensorflow as tf

    return tf.nn.l2_loss(t)


def _largest(t: Any) -> Any:
    import tensorflow as tf

    return tf.reduce_max(tf.abs(t))


# Under XLA:CPU a reduction into which an elementwise op is fused (`sum(g * g)`) is emitted as a scalar loop, up to
# 15x slower than the same reduction of a tensor already in memory (1M floats: ~0.85 ms against ~0.06 ms here): the
# gradients' sums of squares alone cost a small MLP +12 % a step. Under XLA they go through a matrix product
# (squares [rows, 128] x ones [128, 1], Eigen's kernel; the dot keeps the square out of the reduction). max |w| is
# one integer max over the bits; bench/README.md has the figures.
_WIDTH = 128


def _squares_compiled(t: Any) -> Any:
    import tensorflow as tf

    size = t.shape.num_elements()
    if size is None:  # a dynamic shape: the plain form
        return tf.nn.l2_loss(t)
    rows = max(1, -(-size // _WIDTH))
    flat = tf.reshape(t, [-1])
    flat = tf.pad(flat, [[0, rows * _WIDTH - size]]) if rows * _WIDTH != size else flat
    summed = tf.matmul(tf.reshape(tf.square(flat), [rows, _WIDTH]), tf.ones([_WIDTH, 1], tf.float32))
    return tf.reduce_sum(summed) / 2


def _largest_compiled(t: Any) -> Any:
    """max |w| as one integer max over the bits with the sign cleared: the order of non-negative floats' bits is
    theirs, and a NaN's bits are above +inf's, so a NaN weight reads NaN (XLA's float max skips NaN); one reduction
    where max(max w, -min w) and a NaN sum took three."""
    import tensorflow as tf

    magnitude = tf.bitwise.bitwise_and(tf.bitcast(t, tf.int32), tf.constant(0x7FFFFFFF, tf.int32))
    return tf.bitcast(tf.reduce_max(magnitude), tf.float32)


def _float32(t: Any) -> Any:
    import tensorflow as tf

    return t if t.dtype == tf.float32 else tf.cast(t, tf.float32)


def _values(grad: Any) -> Any:
    return grad.values if hasattr(grad, "values") and hasattr(grad, "indices") else grad  # IndexedSlices


def _read(variable: Any) -> Any:
    """A tf.Variable itself, or the value of a Keras variable (its TensorFlow variable's)."""
    import tensorflow as tf

    return variable if isinstance(variable, tf.Variable) else getattr(variable, "value", variable)
