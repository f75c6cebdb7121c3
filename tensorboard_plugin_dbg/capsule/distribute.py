"""The watch under tf.distribute (MirroredStrategy, MultiWorkerMirroredStrategy): the finite check of every replica
reduced across replicas (and workers) before any update, so that a NaN/inf on one replica holds back every
replica's update, in `skip` mode too (every worker skips the same step: the replicas never diverge).

The optimizer's apply under these strategies calls `merge_call`, which TensorFlow refuses inside a `cond` branch traced
in a replica thread; so, as Keras's LossScaleOptimizer does, the decision is taken in cross-replica context (one
`merge_call`): the per-replica flags are reduced there (`strategy.reduce`, a collective across workers), or, under a
single worker's MirroredStrategy, each device decides from its copy of the gradients the apply all-reduces anyway, the
loss folded into them (capsule/local_decision.py: no collective of flags before the writes). The user's
apply then runs in each replica again (`call_for_each_replica`: its gradients' all-reduce runs every step, beside the
check), its writes held back per device, each device's behind one Switch of its own on that device's copy of the
decision (capsule/device_gates.py); the trigger is recorded by one call op that a single Switch on the decision gates
(capsule/rare_path.py: no Switch beside each of its inputs, nothing of it waits on the decision). Under a
LossScaleOptimizer (a `cond` of its own around the apply) one cross-replica `cond` either applies or records. Unlike
the LossScaleOptimizer (which looks at the first replica's flag only), every replica's flag counts.

At a trigger the devices also keep the batch (each replica's rows) and which replica went non-finite and how many rows
each had: the host cannot keep it by reference here (Keras reduces a replicated step's outputs). With each device's
own decision, each device stages its own replica's (capsule/replica_capture.py), the host joining them in replica
order; on the flags path the first device keeps them all. Under MultiWorkerMirroredStrategy each worker keeps its own
replicas' rows and writes its own capsule.

TensorFlow is imported inside the functions that run in the training process only.
"""

from __future__ import annotations

import json
import os
import threading
from typing import Any, NamedTuple

import numpy as np

from tensorboard_plugin_dbg.reader.capsule_manifest import BatchSpec, Replicas, Trigger

from . import check, device_gates, local_decision, rare_path, replica_capture, shadow, structure


class PerThread:
    """An attribute with a value per thread: MirroredStrategy traces each replica's step in a thread of its own,
    interleaved at every merge_call, so what one replica's trace stashes (its batch, loss, pre-step reads) must not be
    what another's reads."""

    def __set_name__(self, owner: Any, name: str) -> None:
        self.name = name

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        if obj is None:
            return self
        return getattr(obj.__dict__.setdefault("_per_thread", threading.local()), self.name, None)

    def __set__(self, obj: Any, value: Any) -> None:
        setattr(obj.__dict__.setdefault("_per_thread", threading.local()), self.name, value)


# Every replica's loss and gradients finite, yet the step held back: the all-reduced gradients, or their sum that each
# device's decision takes (capsule/local_decision.py), went past float32's range. Said as it is, never as a NaN.
OVERFLOW = (
    "the all-reduced gradients or their sum went past float32's range (every replica's loss and gradients finite): "
    "the step was held back"
)

SUPPORTED = "no strategy, OneDeviceStrategy, MirroredStrategy, MultiWorkerMirroredStrategy"


def check_supported(strategy: Any) -> None:
    """A strategy the watch cannot follow is a clear error, never a silent no-op (TPUStrategy,
    ParameterServerStrategy, CentralStorageStrategy, ...)."""
    import tensorflow as tf

    known = (tf.distribute.MirroredStrategy, tf.distribute.MultiWorkerMirroredStrategy, tf.distribute.OneDeviceStrategy)
    # the default strategy (none set) has no public class: TensorFlow names it _DefaultDistributionStrategy[V1]
    if strategy is None or isinstance(strategy, known) or type(strategy).__name__.startswith("_DefaultDistribution"):
        return
    raise ValueError(f"NanCapsule supports {SUPPORTED}; {type(strategy).__name__} is not supported")


def replicated() -> bool:
    """Inside a replica of a strategy whose replicas the watch must reduce (Mirrored, MultiWorkerMirrored)."""
    import tensorflow as tf

    if not tf.distribute.has_strategy() or tf.distribute.in_cross_replica_context():
        return False
    strategy = tf.distribute.get_strategy()
    check_supported(strategy)
    return isinstance(strategy, (tf.distribute.MirroredStrategy, tf.distribute.MultiWorkerMirroredStrategy))


def worker() -> tuple[int, int]:
    """(this worker's index, number of workers) from TF_CONFIG (one worker without it)."""
    try:
        config = json.loads(os.environ.get("TF_CONFIG", "") or "{}")
        workers = len(config["cluster"]["worker"])
        return int(config["task"]["index"]), workers
    except (ValueError, KeyError, TypeError):
        return 0, 1


class ReplicaState(shadow.DeviceState):
    """The device state of capsule/shadow.py, plus what a replicated step keeps at a trigger: the batch this
    worker's replicas had, and the flags and row counts of every replica (all workers)."""

    def __init__(self, copy_all: bool) -> None:
        super().__init__(copy_all)
        self.replicas: Any = None  # float32 [2, replicas]: non-finite flag and rows of each replica at the trigger
        self.batch: list[Any] = []  # one variable (any shape) per leaf: this worker's replicas' rows, concatenated
        self.batch_spec: tuple[BatchSpec, list[str]] = ({"kind": "none"}, [])
        # each device's replica's values at the trigger, staged on that device (capsule/replica_capture.py: the
        # local decision's path; empty on the flags path, where the first device's capture holds them all)
        self.staged: list[replica_capture.Staged] = []

    def ensure_batch(self, count: int, leaves: list[Any]) -> None:
        import tensorflow as tf

        with tf.init_scope():
            if self.replicas is None:
                self.replicas = tf.Variable(
                    tf.zeros([2, count]), shape=tf.TensorShape(None), trainable=False, name="nan_capsule_replicas"
                )
            if len(self.batch) != len(leaves) or any(v.dtype != leaf.dtype for v, leaf in zip(self.batch, leaves)):
                self.batch = [
                    tf.Variable(
                        tf.zeros([0], leaf.dtype), shape=tf.TensorShape(None), trainable=False, name="nan_capsule_batch"
                    )
                    for leaf in leaves
                ]

    def trigger(self) -> Trigger:
        """The held trigger; on a worker whose own replicas stayed finite, the other workers' replicas that did not."""
        found = super().trigger()
        bad = [i for i, flag in enumerate(self.replica_columns()[0]) if flag > 0] if self.replicas is not None else []
        if found["kind"] == "unknown" and bad:
            text = f"replica {', '.join(map(str, bad))} of another worker (this worker's loss and gradients: finite)"
            return Trigger(kind="other_worker", name=f"replica {bad[0]}", text=text, health={}, all=[])
        if found["kind"] == "unknown" and self.replicas is not None:  # each device decided from a sum (local_decision)
            return Trigger(kind="unknown", name="all-reduced gradients", text=OVERFLOW, health={}, all=[])
        return found

    def read_batch(self) -> tuple[BatchSpec, dict[str, np.ndarray], Replicas]:
        """(batch spec, this worker's rows of the trigger's batch, the replicas' part) after a trigger."""
        spec, names = self.batch_spec
        if self.staged:  # each device's replica's rows, in replica order
            arrays = {name: replica_capture.joined_leaf(self.staged, i) for i, name in enumerate(names)}
        else:
            arrays = {name: shadow._read(v) for name, v in zip(names, self.batch)}  # noqa: SLF001 - same package
        flags, rows = self.replica_columns()
        index, workers = worker()
        local = len(flags) // workers
        ours = range(index * local, (index + 1) * local)
        starts = np.concatenate([[0], np.cumsum([int(rows[i]) for i in ours])])
        part: Replicas = {
            "count": len(flags),
            "non_finite": [i for i, f in enumerate(flags) if f > 0],
            "rows": {str(r): [int(starts[k]), int(starts[k + 1])] for k, r in enumerate(ours)},  # [begin, end)
            "rows_per_replica": [int(r) for r in rows],
            "worker": index,
            "workers": workers,
        }
        return spec, arrays, part

    def replica_columns(self) -> np.ndarray:
        """[2, replicas]: each replica's non-finite flag and row count at the held trigger."""
        return replica_capture.joined_flags(self.staged) if self.staged else self.replicas.numpy()

    def health_counts(self, n: int) -> np.ndarray:
        if self.staged:  # each device's replica's counts, summed: the counts of the replicas' values joined
            return replica_capture.joined_counts(n * len(shadow.HEALTH), self.staged)
        return super().health_counts(n)

    def release(self) -> None:
        super().release()
        replica_capture.release(self.staged)


def folder_name(step: int, replicas: Replicas | None) -> str:
    """The capsule's folder name: with several workers each writes its own, the worker's index in the name, and
    worker 0's manifest names the others' (one event: `report` and the dashboard list them together)."""
    name = f"capsule-step{step:09d}"
    if replicas is None or replicas["workers"] < 2:
        return name
    if replicas["worker"] == 0:
        replicas["worker_capsules"] = [f"{name}-worker{w}" for w in range(1, replicas["workers"])]
    return f"{name}-worker{replicas['worker']}"


class Apply(NamedTuple):
    """One checked apply of a traced step: the optimizer applying (a GAN's train step applies two of its own), its
    variables, and whether it is the step's first (the one that counts the step)."""

    optimizer: Any
    variables: list[Any]
    first: bool


def checked_apply(
    watch: Any,
    apply_fn: Any,
    grads: list[Any],
    step: Apply,
    layout: list[tuple[str, str]],
    checked: list[Any],
    snapshot: structure.Tensors,
    batch: Any,
    fit: bool,
) -> Any:
    """In a replica: the flag of this replica's loss and gradients, then one merge_call where every replica's flag
    decides whether all apply (a bool tensor: whether the update was applied)."""
    import tensorflow as tf

    ctx = tf.distribute.get_replica_context()
    leaves = structure.flatten(batch, fit)[1] if batch is not None else []
    tensors = [tf.convert_to_tensor(leaf) for _, leaf in leaves]
    state = _prepared(watch, step, layout, sorted(snapshot), ctx.num_replicas_in_sync, tensors)
    if batch is not None:
        state.batch_spec = (structure.flatten(batch, fit)[0], [name for name, _ in leaves])
    # each device decides from the reduced gradients where it can (else the flags path)
    if local_decision.applies(watch, step.optimizer, ctx.strategy, layout, grads):
        first = tf.get_static_value(ctx.replica_id_in_sync_group) == 0  # `halt` joins the first replica's fold only
        grads, flags = local_decision.fold(grads, layout, checked, watch.halt if first else None), None
    else:
        flags = _flags(ctx, checked, tensors)
    pre = [snapshot[n] for n in state.pre_step_names]

    def decide(strategy: Any, flags: Any, checked: Any, tensors: Any, pre: Any, grads: Any) -> Any:
        spikes = _spikes(watch, strategy, layout, checked)
        return _decide(watch, strategy, apply_fn, step, flags, checked, tensors, pre, grads, spikes)

    return ctx.merge_call(decide, args=(flags, checked, tensors, pre, grads))


def _flags(ctx: Any, checked: list[Any], tensors: list[Any]) -> Any:
    """[2, replicas]: this replica's non-finite flag and row count in its column, summed over replicas and workers in
    _decide."""
    import tensorflow as tf

    finite = check.all_finite(checked)  # no cond here: one more would be lowered
    bad = tf.cast(tf.logical_not(finite), tf.float32)
    rows = tf.cast(tf.shape(tensors[0])[0], tf.float32) if tensors and tensors[0].shape.rank else tf.constant(0.0)
    mine = tf.one_hot(ctx.replica_id_in_sync_group, ctx.num_replicas_in_sync)
    return tf.stack([mine * bad, mine * rows])


def _prepared(
    watch: Any, step: Apply, layout: list[tuple[str, str]], pre_step: list[str], count: int, tensors: list[Any]
) -> Any:
    """At trace time: the device state made once (variables lifted out of the replicas' graphs). The layout kept
    where the host finds it again by the index the capture records (`held_apply`): one entry an apply, every
    replica's trace of it the same."""
    import tensorflow as tf

    if not isinstance(watch.state, ReplicaState):
        watch.state = ReplicaState(watch.state.copy_all)
    state = watch.state
    state.layout, state.pre_step_names = layout, pre_step
    if layout not in watch.layouts:
        watch.layouts.append(layout)
    if not step.optimizer.built:  # the one applying (watch.optimizer may be several: a GAN's)
        with tf.init_scope():
            step.optimizer.build(step.variables)
    with tf.init_scope(), tf.variable_creator_scope(_one_copy):
        state.ensure(watch.model, watch.optimizer)
        state.ensure_batch(count, tensors)
    return state


def _one_copy(next_creator: Any, **kwargs: Any) -> Any:
    """The device state as plain variables, one copy each, not the strategy's MirroredVariables: the step counter is
    written every step, and a mirrored write is one write per replica plus the edges between their devices that the
    cross-replica `cond` then waits on (the watch's own variables never need a copy per replica: only the capture and
    the host read them)."""
    from tensorflow.python.ops import resource_variable_ops  # no public way past the strategy's creator

    del next_creator  # the strategy's creator (a MirroredVariable) is left out on purpose
    kept = {k: v for k, v in kwargs.items() if k in ("initial_value", "trainable", "name", "dtype", "shape")}
    return resource_variable_ops.ResourceVariable(**kept)


def _decide(
    watch: Any,
    strategy: Any,
    apply_fn: Any,
    step: Apply,
    flags: Any,
    checked: list[Any],
    tensors: list[Any],
    pre: list[Any],
    grads: list[Any],
    spikes: tuple[Any, structure.Tensors],  # the spike rule's verdict and its measured tensors, by rule
) -> Any:
    """Cross-replica context, once per step (per worker): the flags of all replicas reduced, then apply everywhere or
    record the trigger. Without flags (capsule/local_decision.py) each device decides from its reduced gradients."""
    import tensorflow as tf

    state, halt, variables = watch.state, watch.halt, step.variables
    held_apply = watch.layouts.index(state.layout)  # the host reads this apply's layout back by it
    local = strategy.experimental_local_results
    everyone = go = None
    if flags is not None:
        everyone = strategy.reduce(tf.distribute.ReduceOp.SUM, flags, axis=None)  # a collective across workers
        go = tf.logical_and(tf.equal(tf.reduce_sum(everyone[0]), 0.0), tf.equal(halt, 0.0))
    rules, (spiky, measured) = watch.spikes, spikes
    if spiky is not None:
        go = tf.logical_and(go, tf.logical_not(spiky))

    def record(measured: structure.Tensors) -> list[Any]:
        return [rules.record(measured)] if rules.on else []

    def apply() -> Any:
        strategy.extended.call_for_each_replica(apply_fn, args=(grads, variables))
        with tf.control_dependencies(record(measured)):
            return tf.constant(True)

    def capture() -> Any:
        firsts = {n: local(v)[0] for n, v in zip(state.pre_step_names, pre)}
        free = tf.equal(state.slot.value(), 0)  # read before the capture takes the slot: the trigger it holds
        held = tf.where(free, tf.constant(held_apply, tf.int64), state.held_apply.value())  # and that one's apply
        recorded = [state.held_apply.assign(held)]
        if everyone is None:  # each device staged its replica's values itself (capsule/replica_capture.py)
            with tf.control_dependencies(recorded):
                recorded.append(state.capture([], firsts, watch.model, watch.optimizer))
        else:
            merged = [tf.concat([tf.reshape(v, [-1]) for v in local(t)], 0) for t in checked]  # local replicas'
            with tf.control_dependencies(recorded):
                recorded.append(state.capture(merged, firsts, watch.model, watch.optimizer))
            replicas = len(local(checked[0])) if checked else 1
            each = [local_decision.each_replicas(local, t, replicas) for t in tensors]  # plain: every replica's

            def hold() -> Any:  # the rows and flags of the trigger the slot holds, as its health counts
                writes = [state.replicas.assign(everyone)]
                writes += [b.assign(tf.concat(values, 0)) for b, values in zip(state.batch, each)]
                with tf.control_dependencies(writes):
                    return tf.constant(True)

            recorded.append(tf.cond(free, hold, lambda: tf.constant(False)))
        recorded += [rules.capture(measured)] if rules.on else []
        with tf.control_dependencies(recorded), tf.control_dependencies([state.triggers.assign_add(1)]):
            if watch.on_nan != "skip":
                halt.assign(float("inf"))
            return tf.constant(False)

    # one call op, kept a call: the executor walks every op of the lowered cond's untaken branch as dead every step
    captured = tf.function(capture, autograph=False, experimental_attributes={"_noinline": True})

    def rare() -> Any:
        return tf.cond(halt > 0, lambda: tf.constant(False), captured)

    def counted() -> list[Any]:  # a train step's later applies (a GAN's second optimizer) count no new step
        return [state.count_step()] if step.first else []

    if go is None:  # each device's gate on its own decision, its replica's capture too; the rest on the first's
        count = sum(1 for g in grads if g is not None)
        with tf.init_scope(), tf.variable_creator_scope(_one_copy):
            leaves = [local(t)[0] for t in tensors]
            state.staged = replica_capture.ensure(state.staged, strategy.extended.worker_devices, leaves)
        decision = local_decision.decision(variables, count)  # device i's, its replica's values staged behind it
        decide = replica_capture.staged_decision(decision, state.staged, local, checked, tensors)
        applied, decisions = device_gates.gated_apply(strategy, apply_fn, grads, variables, decide, lambda: [])
        with tf.control_dependencies(counted()):  # on the first device only: no other device waits on it
            noted = rare_path.unless(decisions[0], rare)
        with tf.control_dependencies([applied, noted]):
            return tf.identity(decisions[0])
    if not watch.loss_scaled(step.optimizer):  # each device's writes behind a Switch of its own (device_gates.py)
        applied = device_gates.gated_apply(strategy, apply_fn, grads, variables, go, lambda: record(measured))
        with tf.control_dependencies(counted()):
            noted = rare_path.unless(go, rare)  # one Switch on the decision, not one per input
        with tf.control_dependencies([applied, noted]):
            return tf.identity(go)
    with tf.control_dependencies(counted()):
        return tf.cond(go, apply, rare)  # lowered: an If call op cannot take resources on two devices


def _spikes(watch: Any, strategy: Any, layout: list[tuple[str, str]], checked: list[Any]) -> tuple[Any, Any]:
    """The spike rules on the global step (cross-replica context): the loss summed over the replicas (each replica's
    loss is its share of the global mean), the norm of the summed gradients (one more reduction of every gradient
    across replicas and workers: only with grad_spike on)."""
    import tensorflow as tf

    rules = watch.spikes
    if not rules.on:
        return None, {}
    total = tf.distribute.ReduceOp.SUM
    loss = strategy.reduce(total, checked[0], axis=None) if layout and layout[0][0] == "loss" else None
    grads = [c for (kind, _), c in zip(layout, checked) if kind == "gradient"]
    summed = [strategy.reduce(total, g, axis=None) for g in grads] if rules.factors["grad_spike"] is not None else []
    return rules.measure(loss, summed)
