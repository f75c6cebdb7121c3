"""The capture's device side: variables the checked step writes only when it triggers (inside the cond's rare branch,
so XLA-compiled steps keep compiling and a finite step writes nothing but a step counter), read by the host when it
polls (capsule/watch.py `Watch.poll`).

Held there: a trigger counter and the device step of each trigger (a ring), one capture slot (free / taken until the
host has written its capsule), the stop flag, the health counts of the loss and every gradient at the trigger, the
optimizer step, and copies of the model's non-trainable variables as the step started (BatchNorm statistics, seed
states: the forward pass moved them). In `stop` and `raise` modes the step after a trigger applies nothing, so the
trainable variables and the optimizer state stay the pre-step ones until the host reads them; in `skip` mode later steps
apply, so the slot holds a copy of those too (the model and optimizer state once more in device memory).

The counters and flags, the trigger ring, the health counts and the held batch's shapes are one int64 variable
(`record`: the counters read and written through `Field`s, then the ring's rows, then regions added as the step is
traced: the health counts of each checked apply, the shapes of capsule/stash.py's held batch): each
variable an XLA step may write costs it every call, the branch taken or not (bench/README.md, #35). Its writes are
scatters of the elements they change (in place under XLA, whatever the record's length).

TensorFlow is imported inside the functions that run in the training process only.
"""

from __future__ import annotations

from typing import Any, cast

import numpy as np

from tensorboard_plugin_dbg.reader.capsule_manifest import Health, Trigger

from . import structure

RING = 1024  # triggers remembered between two polls (skip mode lists each in skipped.jsonl)
HEALTH = ("nan", "pos_inf", "neg_inf", "size")
# the fields of the record: triggers so far; checked steps so far (the host counts the same steps); the capture slot
# (1 while a capture waits for the host); the optimizer's step at the held capture; the checked apply whose trigger the
# slot holds (a GAN's train step applies two optimizers); 1 once stopped (later steps of one execution apply nothing)
FIELDS = ("triggers", "counter", "slot", "step", "held_apply", "halted")
RING_AT = len(FIELDS)  # the ring's rows follow: (device step, held) of each trigger, RING of them
HEALTH_AT = RING_AT + 2 * RING  # then regions added as the step is traced (`region`): health counts, batch shapes


class Field:
    """One int64 of the record, read and written as a scalar variable would be (`value`, `assign`, `assign_add`,
    `numpy`): writes are scatters of that one element (which MirroredVariables take in a cross-replica context too)."""

    def __init__(self, record: Any, index: int) -> None:
        self.record, self.index = record, index

    def value(self) -> Any:
        return self.record.value()[self.index]

    def numpy(self) -> int:
        return int(read(self.record)[self.index])

    def assign_add(self, delta: Any) -> Any:
        return self.record.scatter_add(_at([self.index], delta))

    def assign(self, value: Any) -> Any:
        return self.record.scatter_update(_at([self.index], value))


class DeviceState:
    def __init__(self, copy_all: bool) -> None:
        self.copy_all = copy_all  # skip mode: the trainable variables and optimizer state are copied too
        self.record: Any = None  # int64: the Fields below, the ring, the health counts (see the module's docstring)
        self.triggers: Any = None
        self.counter: Any = None
        self.slot: Any = None
        self.step: Any = None
        self.held_apply: Any = None
        self.halted: Any = None
        self.size = 0  # the record's length
        self.health: dict[int, int] = {}  # per number of checked tensors: where its [n, 4] counts begin in the record
        # model variable name -> its copy ("o:" + name for the optimizer's); Any: a tf.Variable (TensorFlow is imported
        # lazily, in the training process only)
        self.shadows: dict[str, Any] = {}
        self.layout: list[tuple[str, str]] = []  # (kind, name) of each checked tensor, as traced
        self.pre_step_names: list[str] = []
        self._owner: tuple[Any, Any] | None = None

    def ensure(self, model: Any, optimizer: Any) -> None:
        """The variables, made once per model and optimizer (lifted out of the function being traced)."""
        import tensorflow as tf

        with tf.init_scope():
            if self.record is None:
                self.size = HEALTH_AT
                self.record = tf.Variable(
                    tf.zeros([self.size], tf.int64),
                    shape=tf.TensorShape(None),
                    trainable=False,
                    name="nan_capsule_record",
                )
                for index, name in enumerate(FIELDS):
                    setattr(self, name, Field(self.record, index))
            if len(self.layout) not in self.health:
                self.health[len(self.layout)] = self.region(len(self.layout) * len(HEALTH))
            if self._owner is None or self._owner[0] is not model or self._owner[1] is not optimizer:
                self._owner = (model, optimizer)
                self.shadows = {}
            for name, variable in self._copied(model, optimizer):  # several optimizers: built one after the other
                if name not in self.shadows:
                    value = _tf_value(variable)
                    self.shadows[name] = tf.Variable(tf.zeros_like(value), trainable=False, name="nan_capsule_shadow")

    def region(self, size: int) -> int:
        """`size` more elements at the record's end, where they begin: the record grown in place, as a step is
        traced, before it first runs (the health counts of an apply; the held batch's shapes, capsule/stash.py)."""
        import tensorflow as tf

        at, self.size = self.size, self.size + size
        with tf.init_scope():
            self.record.assign(tf.pad(self.record.value(), [[0, size]]))
        return at

    def write(self, at: int, values: Any) -> Any:
        """The record's elements from `at` set to `values` (a vector of a static length): one scatter."""
        import tensorflow as tf

        size = int(values.shape[0])
        return self.record.scatter_update(
            tf.IndexedSlices(tf.cast(values, tf.int64), tf.range(at, at + size, dtype=tf.int64))
        )

    def read(self, at: int, size: int) -> np.ndarray:
        return read(self.record)[at : at + size]

    def _copied(self, model: Any, optimizer: Any) -> list[tuple[str, Any]]:
        names = structure.unique_names([v.path for v in model.variables])
        pairs = [(n, v) for n, v in zip(names, model.variables) if self.copy_all or not v.trainable]
        if self.copy_all:
            opt_names = structure.unique_names([v.path for v in optimizer.variables])
            pairs += [("o:" + n, v) for n, v in zip(opt_names, optimizer.variables)]
        return pairs

    def count_step(self) -> Any:
        return self.counter.assign_add(1)

    # snapshot: variable name -> its pre-step value (a tf.Tensor: TensorFlow is imported lazily here)
    def capture(self, checked: list[Any], snapshot: structure.Tensors, model: Any, optimizer: Any) -> Any:
        """Inside the rare branch: the slot filled when free; the trigger's device step in the ring."""
        import tensorflow as tf

        def take() -> Any:
            if checked:
                self.write(self.health[len(checked)], health_of(checked))
            self.step.assign(tf.cast(optimizer.iterations, tf.int64))
            for name, variable in self._copied(model, optimizer):
                self.shadows[name].assign(snapshot[name] if name in snapshot else _tf_value(variable))
            with tf.control_dependencies([self.slot.assign(1)]):
                return tf.constant(1, tf.int64)

        held = tf.cond(tf.equal(self.slot.value(), 0), take, lambda: tf.constant(0, tf.int64))
        row = tf.stack([self.counter.value() - 1, held])
        at = RING_AT + 2 * tf.math.floormod(self.triggers.value(), RING)
        return self.record.scatter_update(tf.IndexedSlices(row, tf.stack([at, at + 1])))

    # --- read by the host -----------------------------------------------------------------------------------------

    def read_triggers(self, old: int, new: int) -> list[tuple[int, bool]]:
        """(device step, whether the slot holds it) of the triggers old..new-1 (the last RING of them)."""
        ring = self.read(RING_AT, 2 * RING).reshape(RING, 2)
        return [(int(ring[i % RING, 0]), bool(ring[i % RING, 1])) for i in range(max(old, new - RING), new)]

    def trigger(self) -> Trigger:
        """The held trigger: the first non-finite of the step (the loss, else the first gradient in the variables'
        order), and all."""
        n = len(self.layout)
        counts = self.health_counts(n).reshape(n, len(HEALTH))
        return first_bad(self.layout, [dict(zip(HEALTH, (int(c) for c in row))) for row in counts])

    def health_counts(self, n: int) -> np.ndarray:
        """The held trigger's health counts of its n checked tensors, flat ([n, 4] in HEALTH's order)."""
        return self.read(self.health[n], n * len(HEALTH))

    def read_variables(self, model: Any, optimizer: Any) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
        """The pre-step model and optimizer state: the held copies, else the variables themselves (unchanged)."""
        names = structure.unique_names([v.path for v in model.variables])
        weights = {n: _read(self.shadows.get(n, v)) for n, v in zip(names, model.variables)}
        opt_names = structure.unique_names([v.path for v in optimizer.variables])
        opt = {n: _read(self.shadows.get("o:" + n, v)) for n, v in zip(opt_names, optimizer.variables)}
        return weights, opt

    def release(self) -> None:
        self.slot.assign(0)


def first_bad(layout: list[tuple[str, str]], healths: list[dict[str, int]]) -> Trigger:
    """The trigger: the first non-finite of the step (the loss, else the first gradient in the variables' order),
    and all of them."""
    bad: list[Trigger] = [
        {"kind": kind, "name": name, "health": cast(Health, health)}  # HEALTH's four counts
        for (kind, name), health in zip(layout, healths)
        if health["nan"] or health["pos_inf"] or health["neg_inf"]
    ]
    if not bad:  # finite values whose sum overflowed cannot reach the capture: kept for safety
        return {"kind": "unknown", "name": "?", "health": {}, "all": []}
    return {**bad[0], "all": bad}


def read(variable: Any) -> np.ndarray:
    """A variable's value on the host: one read op (`.numpy()` adds an identity op, twice the time of a read that the
    host makes every `check_every` steps)."""
    return np.asarray(variable.value())


def _at(indices: list[int], values: Any) -> Any:
    """The record's elements `indices` set to (or added) `values`, as a scatter."""
    import tensorflow as tf

    return tf.IndexedSlices(tf.reshape(tf.cast(values, tf.int64), [len(indices)]), tf.constant(indices, tf.int64))


def health_of(tensors: list[Any]) -> Any:
    """The health counts of each tensor (HEALTH's four), flat: what the capture records of the checked tensors."""
    import tensorflow as tf

    return tf.reshape(tf.stack([_counts(t) for t in tensors]), [-1])


def _counts(tensor: Any) -> Any:
    import tensorflow as tf

    t = tf.convert_to_tensor(tensor)
    size = tf.cast(tf.size(t), tf.int64)
    if not t.dtype.is_floating:
        return tf.stack([tf.constant(0, tf.int64)] * 3 + [size])

    def count(mask: Any) -> Any:
        return tf.reduce_sum(tf.cast(mask, tf.int64))

    return tf.stack([count(tf.math.is_nan(t)), count(tf.equal(t, np.inf)), count(tf.equal(t, -np.inf)), size])


def _tf_value(variable: Any) -> Any:
    """The TensorFlow variable behind a Keras one (a tf.Variable is its own)."""
    import tensorflow as tf

    return variable if isinstance(variable, tf.Variable) else getattr(variable, "value", variable)


def _read(variable: Any) -> np.ndarray:
    """A variable's value as numpy without the copy `.numpy()` makes (the read is a fresh tensor already)."""
    value = _tf_value(variable)
    return np.asarray(value.read_value() if hasattr(value, "read_value") else value)
