"""The capture of a replicated step on each device (single-worker MirroredStrategy, where each device decides from its
copy of the reduced gradients: capsule/local_decision.py): each device stages its own replica's values (the health
counts of its loss and gradients as checked, its non-finite flag and row count, its batch rows) in variables on that
device, in one call op of its own gated by a Switch on that device's own decision; the first device's capture
(capsule/distribute.py) records the rest (the pre-step state, the step, the trigger, `halt`). So no value of another
device's replica is sent to the first device on a step that applies: a capture on the first device taking every
replica's values had them carried there every step, its call dead or not (bench/README.md, #35: 9 of the 11 Sends the
capsule added). The host joins the devices' staged values when it reads a trigger (`ReplicaState` in
capsule/distribute.py): the health counts summed, the flags' columns and the rows concatenated in replica order, so
the capsule is the one a single capture wrote.

Each device's staging holds a `taken` flag, as the first device's capture slot (capsule/shadow.py): written at a
trigger only while free, freed by the host with the slot, so that every device's staged values are those of the
trigger the slot holds (skip mode triggers on, a halted step's device stages nothing over them).

TensorFlow is imported inside the functions that run in the training process only.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from . import local_decision, rare_path, shadow


class Staged:
    """One device's staged values of its replica at the held trigger (variables on that device)."""

    def __init__(self, device: str, dtypes: list[Any]) -> None:
        import tensorflow as tf

        def variable(value: Any, name: str) -> Any:
            return tf.Variable(value, shape=tf.TensorShape(None), trainable=False, name=f"nan_capsule_staged_{name}")

        with tf.device(device):
            self.counts = variable(tf.zeros([0], tf.int64), "counts")  # HEALTH's four of each checked tensor, flat
            self.flags = variable(tf.zeros([2, 1]), "flags")  # its replica's non-finite flag and row count
            self.batch = [variable(tf.zeros([0], d), "batch") for d in dtypes]  # its replica's rows of each leaf
            self.taken = variable(tf.constant(0, tf.int64), "taken")  # 1 from a trigger until the host releases it
        self.dtypes = dtypes

    def read_counts(self, size: int) -> np.ndarray:
        counts = shadow.read(self.counts)
        return counts if counts.shape == (size,) else np.zeros([size], np.int64)


def ensure(staged: list[Staged], devices: list[str], leaves: list[Any]) -> list[Staged]:
    """Every device's staging, made once (at trace time, lifted out of the step: the caller enters init_scope and a
    creator of plain variables)."""
    dtypes = [leaf.dtype for leaf in leaves]
    if len(staged) == len(devices) and all(s.dtypes == dtypes for s in staged):
        return staged
    return [Staged(device, dtypes) for device in devices]


def shard(local: Callable[[Any], Any], value: Any, replica: int, replicas: int) -> Any:
    """A replica's own value of a per-replica one (a plain tensor handed to strategy.run: every replica's whole)."""
    return local_decision.each_replicas(local, value, replicas)[replica]


def replica_values(local: Callable[[Any], Any], checked: list[Any], tensors: list[Any], replica: int) -> Any:
    """(its loss and gradients as checked, its batch leaves, the [2, 1] flag and row count) of one replica, the
    flag and count computed where they are used (on the rare path)."""
    replicas = len(local(checked[0])) if checked else len(local(tensors[0])) if tensors else 1
    mine = [shard(local, t, replica, replicas) for t in checked]
    leaves = [shard(local, t, replica, replicas) for t in tensors]
    return mine, leaves, lambda: local_decision.replica_flags(lambda v: (v,), mine, leaves)


def staged_decision(
    decision: Callable[[int, Any], Any],
    staged: list[Staged],
    local: Callable[[Any], Any],
    checked: list[Any],
    tensors: list[Any],
) -> Callable[[int, Any], Any]:
    """go(i, recorded) for capsule/device_gates.py: `decision`'s, device i's replica's values staged behind it where
    it is false (one call op behind one Switch, in device i's scope). Made before the writes' one Merge, which
    automatic control dependencies then make wait on it with device i's writes: no Send of its own."""

    def go(i: int, recorded: Any) -> Any:
        mine = decision(i, recorded)
        into = staged[i]
        values, leaves, flags = replica_values(local, checked, tensors, i)
        rare_path.when_not(mine, lambda: _take(into, values, leaves, flags))
        return mine

    return go


def _take(into: Staged, mine: list[Any], leaves: list[Any], flags: Callable[[], Any]) -> Any:
    """Inside the device's call: its replica's values staged while its `taken` flag is free."""
    import tensorflow as tf

    def write() -> Any:
        writes = [into.flags.assign(flags())]
        writes += [into.counts.assign(shadow.health_of(mine))] if mine else []
        writes += [b.assign(leaf) for b, leaf in zip(into.batch, leaves)]
        with tf.control_dependencies(writes):
            return into.taken.assign(1).read_value()

    free = tf.equal(into.taken.read_value(), 0)
    return tf.cond(free, write, lambda: tf.constant(1, tf.int64))


def joined_counts(size: int, staged: list[Staged]) -> np.ndarray:
    """The health counts of every replica's loss and gradients (`size` of them, flat): each device's summed."""
    return sum((s.read_counts(size) for s in staged), np.zeros([size], np.int64))


def joined_flags(staged: list[Staged]) -> np.ndarray:
    """[2, replicas]: each replica's non-finite flag and row count, in replica order."""
    return np.concatenate([np.reshape(shadow.read(s.flags), [2, -1]) for s in staged], axis=1)


def joined_leaf(staged: list[Staged], index: int) -> np.ndarray:
    """A batch leaf's rows of every replica, in replica order."""
    return np.concatenate([shadow.read(s.batch[index]) for s in staged])


def release(staged: list[Staged]) -> None:
    for s in staged:
        s.taken.assign(0)
