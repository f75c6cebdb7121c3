"""Per-layer history, kept in the compiled step: for each trainable variable, its gradient norm and its max |w| over
the last K steps (`NanCapsule(layer_history=32)`; 0 turns it off), in a ring of device variables that the every-step
path writes in place (one scatter per step, no host read, so an XLA step stays compiled): one float32 variable and
the step counter, as each variable an XLA step may write costs it every call. The check's rare branch
copies the ring as it stands at the held trigger (only when the capture slot is free, like capsule/shadow.py), so the
capsule holds the K steps up to and including the trigger, however many steps run before the host polls.

What is kept, whatever the model: each step's sums of squares (K x n float32) and max |w| every MAX_EVERY-th step
((K / MAX_EVERY + 1) x (n + 1) float32, the step measured in the last column), twice (live and held at the trigger):
about 10 bytes x K x n, 301 KiB for 1,000 variables at K = 32. Per step: one sum of squares per gradient
(`l2_loss`, one op; under XLA another form, below), which the watch's every-step check then uses for the gradients
instead of summing them itself, one stack and one scatter of them and 3 scalar ops (the counter read and added, one
op without XLA on CPU; the row; a gather of whether max |w| is due, a term of the check's sum): 5 ops in a step's
graph without XLA, where each op costs its dispatch. max |w| of the weights the step starts from
(the watch never applies a non-finite update, so they are finite unless the model started non-finite; a non-finite
max is kept as it is) is taken every MAX_EVERY-th step, XLA on or off, by the watch's check in its rare branch before
it applies (`measure`), and exactly at the trigger; the rows between repeat the last measured one (the manifest lists
the measured rows).

Written into the capsule as the optional group `layer_history.npz` (`grad_norm`, `max_abs_w`: float32 [n, T], oldest
step first, the trigger's step last) and the manifest's `layer_history` entry (variable names, T, K, the device step
of the last row). TensorFlow is imported inside the functions that run in the training process only.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .check import float32, values

STEPS = 32  # default K
MAX_EVERY = 8  # max |w| is measured every MAX_EVERY-th step (and at the trigger)
WRAP = 2**20  # the step of a measurement is kept modulo WRAP, exact in float32
COUNT_LIMIT = 2**62  # `ResourceCountUpTo`'s bound on `seen`, never reached


class LayerHistory:
    def __init__(self, steps: int = STEPS) -> None:
        if isinstance(steps, bool) or not isinstance(steps, int) or steps < 0:
            raise ValueError(f"layer_history must be a number of steps (0: off), not {steps!r}")
        self.steps = steps
        self.every = MAX_EVERY  # max |w| measured every `every` steps (and at the trigger)
        self.slots = -(-steps // MAX_EVERY) + 1  # the measurements a window of K steps can need
        self.names: list[str] = []  # the variables of the ring's columns, as traced
        # Two variables, as each variable an XLA step may write costs it every call (~2.5-3 us, bench/README.md #35):
        # `state`, float32 [2 K + 2 slots + 3, n + 1], its rows (`_Rows`): the ring (each step's sum of squares / 2
        # of each gradient, row = step % K, the last column unused), the peaks (max |w| of each variable and the
        # step measured, modulo WRAP, in the last column, -1: none; a slot per MAX_EVERY steps, slot = step //
        # MAX_EVERY % slots), then both as they were at the held trigger, with a row more for the peaks (those the
        # trigger's step started from), and `seen` at the trigger (// WRAP and % WRAP, in two rows' first column)
        self.state: Any = None
        self.seen: Any = None  # int64: steps recorded
        self.step: Any = None  # the traced step's number (`seen` before it), read by `record`
        self.at = _Rows(steps, self.slots)
        self.weights: list[Any] = []  # the traced step's variables, whose max |w| `measure` takes
        self.compiled = False  # the traced step is XLA-compiled (the reductions' other forms)

    @property
    def on(self) -> bool:
        return self.steps > 0

    def record(self, names: list[str], grads: list[Any], variables: list[Any], compiled: bool = False) -> Any:
        """In the every-step path, before the check's cond: this step's gradient norms into the ring. Returns (this
        step's sum of squares / 2 of each gradient, a list (empty without any); +inf on a step where max |w| is
        due, else 0, or None without any gradient). The watch's every-step check sums both lists instead of summing
        the gradients itself: the sum is non-finite iff a gradient value is, the sums overflowed (the check's rare
        path tells these apart) or max |w| is due, so a due step takes the rare branch, which calls `measure` before
        it applies (a conditional of its own would cost its call at every step, ~1.5 % of a small MLP's step
        without XLA) and so the norms and the due step cost the ring next to nothing. Nothing waits on the ring's
        write: the check's cond, which reads the ring in its branches, follows it by the function's automatic
        control dependencies. `compiled`: the step is XLA-compiled, whose reductions take another form (see
        `_squares_compiled`, `_largest_compiled`)."""
        import tensorflow as tf

        kept = [(n, g, v) for n, g, v in zip(names, grads, variables) if g is not None]
        self._ensure([n for n, _, _ in kept])
        if not kept:
            self.seen.assign_add(1)
            return [], None
        squares = _squares_compiled if compiled else _squares
        norms = [squares(float32(values(g))) for _, g, _ in kept]  # complex: |g|^2 (check.values)
        self.weights = [v for _, _, v in kept]
        self.compiled = compiled
        # each op costs its dispatch without XLA: a row written at a scalar index (no index or update reshaped);
        # whether max |w| is due, one gather in a constant (+inf every `every`-th step) at the row when K is a
        # multiple of `every` (the default), else at the step modulo `every`
        seen = self._count(compiled)
        self.step = seen  # this step's number, which `measure` takes in its branch (no read of its own)
        row = tf.math.floormod(seen, self.steps)
        updates = tf.stack([*norms, tf.constant(0.0)])  # the unused last column
        tf.raw_ops.ResourceScatterUpdate(resource=self.state.handle, indices=row, updates=updates)
        period = self.steps if self.steps % self.every == 0 else self.every
        due = np.where(np.arange(period) % self.every == 0, np.inf, 0.0).astype(np.float32)
        return norms, tf.gather(tf.constant(due), row if period == self.steps else tf.math.floormod(seen, period))

    def _count(self, compiled: bool) -> Any:
        """`seen` before this step, counted: without XLA on CPU one op that reads and adds (`ResourceCountUpTo`, each
        op costing its dispatch there); XLA has no kernel for it (nor, here, a GPU: the read and the add)."""
        import tensorflow as tf

        if compiled or tf.config.list_logical_devices("GPU"):
            seen = self.seen.value()
            self.seen.assign_add(1)
            return seen
        return tf.raw_ops.ResourceCountUpTo(resource=self.seen.handle, limit=COUNT_LIMIT, T=tf.int64)

    def measure(self) -> Any:
        """In the check's branch of a due step, before the update: max |w| of the weights the step started from (the
        watch never applies a non-finite update, so they are finite unless the model started non-finite; a
        non-finite max is kept as it is), with the step, into its slot: one row written at a scalar index, the step
        as `record` read it (ops a due step runs, MAX_EVERY-th of the steps, without XLA each a dispatch)."""
        import tensorflow as tf

        step = self.step
        slot = self.at.peaks + tf.math.floormod(tf.math.floordiv(step, self.every), self.slots)
        row = tf.stack([*self._largest(), tf.cast(tf.math.floormod(step, WRAP), tf.float32)])
        return tf.raw_ops.ResourceScatterUpdate(resource=self.state.handle, indices=slot, updates=row)

    def _row(self, step: Any) -> Any:
        """max |w| of each variable now, and the step (modulo WRAP) last."""
        import tensorflow as tf

        return tf.concat([self._measured(), tf.cast(tf.math.floormod(step, WRAP), tf.float32)[None]], 0)

    def _measured(self) -> Any:
        import tensorflow as tf

        return tf.stack(self._largest())

    def _largest(self) -> list[Any]:
        largest = _largest_compiled if self.compiled else _largest
        return [largest(float32(_read(v))) for v in self.weights]

    def hold(self, slot: Any) -> Any:
        """In the rare branch, before the capture takes the slot: the ring copied when the slot is free, with the
        exact max |w| of the weights the trigger's step started from."""
        import tensorflow as tf

        def copy() -> Any:  # one scatter of the held rows: the ring and peaks, the trigger's row, `seen`
            seen = self.seen.value()
            parts = tf.cast(tf.stack([tf.math.floordiv(seen, WRAP), tf.math.floormod(seen, WRAP)]), tf.float32)
            seen_rows = tf.pad(parts[:, None], [[0, 0], [0, len(self.names)]])  # in the first column
            rows = [self.state.value()[: self.at.held], self._row(seen - 1)[None], seen_rows]
            indices = tf.range(self.at.held, self.at.size)
            with tf.control_dependencies([self.state.scatter_update(tf.IndexedSlices(tf.concat(rows, 0), indices))]):
                return tf.constant(True)

        if not self.weights:
            return tf.constant(False)
        return tf.cond(tf.equal(slot, 0), copy, lambda: tf.constant(False))

    def _ensure(self, names: list[str]) -> None:
        import tensorflow as tf

        with tf.init_scope():
            if self.state is None or names != self.names:  # a new model (or a retrace with other variables)
                self.names = names
                self.state = tf.Variable(self.at.initial(len(names)), trainable=False, name="nan_capsule_layer_ring")
                self.seen = tf.Variable(0, dtype=tf.int64, trainable=False, name="nan_capsule_layer_seen")

    # --- read by the host when it writes the capsule ---------------------------------------------------------------

    def read(self) -> tuple[dict[str, dict[str, np.ndarray]], dict[str, object]]:
        """(the capsule's `layer_history` group, the manifest's entry): the held ring, oldest step first."""
        if not self.on:
            return {}, {"recorded": False, "why": "turned off (layer_history=0)"}
        if self.state is None:
            return {}, {"recorded": False, "why": "no step recorded (a custom loop without checked_apply?)"}
        state, at = self.state.numpy(), self.at
        seen = int(state[at.seen, 0]) * WRAP + int(state[at.seen + 1, 0])
        held = state[at.held : at.held_peaks, :-1]
        rows = min(seen, self.steps)
        steps = [seen - rows + i for i in range(rows)]
        grad_norm = np.sqrt(2.0 * held[[s % self.steps for s in steps]].astype(np.float64)).astype(np.float32).T
        max_abs_w, measured = _repeated(state[at.held_peaks : at.seen], steps, seen - 1)
        entry = {
            "recorded": True,
            "variables": list(self.names),
            "steps_kept": rows,
            "ring": self.steps,
            "last_step": seen - 1,  # the trigger's step, counted from the first recorded step (0)
            "max_abs_w_every": self.every,
            # the rows whose max |w| was measured at their own step (the others repeat the last measured one)
            "max_abs_w_rows": measured,
            "what": "grad_norm: the L2 norm of each trainable variable's gradient; max_abs_w: its max |w| at the "
            "step's start, measured every max_abs_w_every steps and at the trigger (the rows max_abs_w_rows), the "
            "rows between repeating the last measured one; float32 [variables, steps], oldest first, the trigger's "
            "step last",
        }
        return {"layer_history": {"grad_norm": grad_norm, "max_abs_w": max_abs_w}}, entry


class _Rows:
    """Where each part begins in the state's rows: the ring (K rows), the peaks (slots), the held ring (K), the held
    peaks (slots + 1: the trigger's own row last), `seen` at the trigger (2); `size` rows in all."""

    def __init__(self, steps: int, slots: int) -> None:
        self.peaks = steps
        self.held = steps + slots
        self.held_peaks = 2 * steps + slots
        self.seen = 2 * steps + 2 * slots + 1
        self.size = self.seen + 2

    def initial(self, variables: int) -> np.ndarray:
        state = np.zeros([self.size, variables + 1], np.float32)
        state[self.peaks : self.held, -1] = -1.0  # no step measured
        state[self.held_peaks : self.seen, -1] = -1.0
        return state


def _repeated(peaks: np.ndarray, steps: list[int], last: int) -> tuple[np.ndarray, list[int]]:
    """(max |w| float32 [variables, rows]: each row's the last measured at or before its step, NaN where none is
    kept; the rows measured at their own step). `peaks`: the held slots, the trigger's own row last; their steps are
    kept modulo WRAP (exact in float32), told apart from the trigger's step `last`."""
    measured = {}
    for row in peaks:
        if row[-1] >= 0:
            measured[last - (last - int(row[-1])) % WRAP] = row[:-1]  # the trigger's own row, last, wins
    out = np.full((len(steps), peaks.shape[1] - 1), np.nan, np.float32)
    known = sorted(measured)
    for i, step in enumerate(steps):
        before = [m for m in known if m <= step]
        if before:
            out[i] = measured[before[-1]]
    return np.ascontiguousarray(out.T), [i for i, step in enumerate(steps) if step in measured]


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


def _read(variable: Any) -> Any:
    """A tf.Variable itself, or the value of a Keras variable (its TensorFlow variable's)."""
    import tensorflow as tf

    return variable if isinstance(variable, tf.Variable) else getattr(variable, "value", variable)
