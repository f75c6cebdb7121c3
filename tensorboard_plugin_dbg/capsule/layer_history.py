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
is) — under XLA every MAX_EVERY-th step and at the trigger, the rows between repeating the last measured one (the
manifest lists the measured rows).

Written into the capsule as the optional group `layer_history.npz` (`grad_norm`, `max_abs_w`: float32 [n, T], oldest
step first, the trigger's step last) and the manifest's `layer_history` entry (variable names, T, K, the device step
of the last row). TensorFlow is imported inside the functions that run in the training process only.
"""

from __future__ import annotations

from typing import Any

import numpy as np

STEPS = 32  # default K
MAX_EVERY = 8  # under XLA, max |w| is measured every MAX_EVERY-th step (and at the trigger)


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
        self.every = 1  # max |w| measured every `every` steps (MAX_EVERY once a compiled step is traced)
        self.weights: list[Any] = []  # the traced step's variables: the rare branch measures their max |w| exactly

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
        squares = _squares_compiled if compiled else _squares
        norms = tf.stack([squares(_float32(_values(g))) for _, g, _ in kept])
        self.weights = [v for _, _, v in kept]
        largest = self._peaks(compiled)
        index = tf.reshape(tf.math.floormod(self.seen, self.steps), [1, 1])
        written = self.ring.scatter_nd_update(index, tf.expand_dims(tf.stack([norms, largest]), 0))
        with tf.control_dependencies([written]):
            return self.seen.assign_add(1), tf.reduce_sum(norms)

    def _peaks(self, compiled: bool) -> Any:
        """max |w| of each variable. Under XLA measured every MAX_EVERY-th step (a conditional; the other steps repeat
        the ring's last row): there a reduction over all the weights is a scalar loop (below), every step ~10 % of a
        small MLP's step. The last row is read with a gather: a slice at an index read from a variable made XLA
        take that index as a compile-time constant and compile the whole step again at every step (~1 s a step).
        Without XLA every step (one op each; a cond would be lowered to Switch/Merge, capsule/watch.py)."""
        import tensorflow as tf

        if not compiled:
            return self._measured(_largest)
        self.every = MAX_EVERY
        last = lambda: tf.gather(tf.gather(self.ring, tf.math.floormod(self.seen - 1, self.steps)), 1)  # noqa: E731
        due = tf.equal(tf.math.floormod(self.seen, MAX_EVERY), 0)
        return tf.cond(due, lambda: self._measured(_largest_compiled), last)

    def _measured(self, largest_abs: Any) -> Any:
        import tensorflow as tf

        return tf.stack([largest_abs(_float32(_read(v))) for v in self.weights])

    def hold(self, slot: Any) -> Any:
        """In the rare branch, before the capture takes the slot: the ring copied when the slot is free, the
        trigger's row with the exact max |w| of the weights it started from (measured every MAX_EVERY-th step only
        under XLA)."""
        import tensorflow as tf

        def copy() -> Any:
            copied = [self.held.assign(self.ring), self.held_seen.assign(self.seen)]
            if self.every > 1 and self.weights:
                row = tf.math.floormod(self.seen - 1, self.steps)
                with tf.control_dependencies(copied):
                    peaks = tf.expand_dims(self._measured(_largest_compiled), 0)
                    copied.append(self.held.scatter_nd_update(tf.reshape(tf.stack([row, 1]), [1, 2]), peaks))
            with tf.control_dependencies(copied):
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
            "max_abs_w_every": self.every,
            # the rows whose max |w| was measured at their own step (the others repeat the row before)
            "max_abs_w_rows": [i for i in range(rows) if (seen - rows + i) % self.every == 0 or i == rows - 1],
            "what": "grad_norm: the L2 norm of each trainable variable's gradient; max_abs_w: its max |w| at the "
            "step's start, measured every max_abs_w_every steps and at the trigger (the rows max_abs_w_rows), the "
            "rows between repeating the last measured one; float32 [variables, steps], oldest first, the trigger's "
            "step last",
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
# one integer max over the bits, every MAX_EVERY-th step; bench/README.md has the figures.
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
