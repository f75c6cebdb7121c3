"""The held-back update under MirroredStrategy / MultiWorkerMirroredStrategy without a cross-replica `cond` around
the apply: the user's apply is traced as usual (its gradients' all-reduce included, which then runs every step beside
the finite check instead of after the decision), but every per-device write it asks of the strategy
(`strategy.extended.update`: the optimizer's variables, its slots, its step counter, weight decay) is recorded instead
of emitted, then emitted per device, gated by one Switch on that device's copy of the decision (`emit`: no Switch
beside each input, as a lowered `cond` would put). Each gate holds one device's writes only: no edge between devices
hangs on it. A Merge of a constant before the apply (`settled`) takes what was written before it (the loss tracker), so
that the step's outputs do not wait on every device's writes.

A write the apply makes past the strategy's `update` (a variable written in place in a replica, a `cond` of the
optimizer's own) would not be held back: found in the trace, it is an error there, never a silent update on a
non-finite step. A LossScaleOptimizer (its own `cond` around the apply) keeps capsule/distribute.py's one `cond`.

TensorFlow is imported inside the functions that run in the training process only.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

# op types that write a variable, or may hold such a write (a cond or loop of the apply's own, a stateful call)
HIDDEN = ("If", "While", "StatefulPartitionedCall")
WRITES = ("Assign", "ResourceApply", "ResourceSparseApply", "ResourceScatter", "ResourceStridedSliceAssign")

Recorded = list[tuple[Any, Any, Any, Any]]  # (distributed variable, fn, args, kwargs) of each `extended.update`


def gated_apply(strategy: Any, apply_fn: Any, grads: Any, variables: Any, go: Any, extra: Callable[[], Any]) -> Any:
    """Cross-replica context: apply_fn in every replica, its variable writes held back on each device unless `go`;
    extra() (the spike rules' record) with the first device's writes. An op that ensures all ran. `go`: a bool
    tensor, or go(i, recorded) that makes device i's decision there (capsule/local_decision.py); then (the op, each
    device's decision)."""
    import tensorflow as tf

    graph = tf.compat.v1.get_default_graph()
    settled(strategy)
    before = len(graph.get_operations())
    with deferred(strategy) as recorded:
        strategy.extended.call_for_each_replica(apply_fn, args=(grads, variables))
    escaped = [op for op in graph.get_operations()[before:] if op.type in HIDDEN or op.type.startswith(WRITES)]
    if escaped:
        raise RuntimeError(
            f"NanCapsule cannot hold back this optimizer's update under {type(strategy).__name__}: "
            f"{escaped[0].type} {escaped[0].name} writes past strategy.extended.update"
        )
    applied, decisions = emit(strategy, recorded, go, extra)
    return (tf.group(applied), decisions) if callable(go) else tf.group(applied)


def settled(strategy: Any) -> Any:
    """A Merge of a constant on the first device, before the apply: automatic control dependencies make a Merge the
    last writer of every resource written before it, so the gates' Merge after the writes (`emit`) would be the last
    writer of the loss tracker's `total`/`count` too, and the step's outputs (the loss read after the update) would
    wait on every device's writes and the control Send from the others; this one takes that part, early."""
    import tensorflow as tf

    with tf.device(strategy.extended.worker_devices[0]):
        return tf.raw_ops.Merge(inputs=[tf.constant(True)]).output


@contextlib.contextmanager
def deferred(strategy: Any) -> Iterator[Recorded]:
    """While tracing the apply (cross-replica context): each `strategy.extended.update(var, fn, args, kwargs)` is
    recorded, not emitted (the list yielded). `extended._update` is where MirroredStrategy's `update` writes each
    device's copy (MultiWorkerMirrored inherits it); an instance attribute shadows it for the trace only."""
    import tensorflow as tf

    extended = strategy.extended
    recorded: Recorded = []
    graph = tf.compat.v1.get_default_graph()
    original = extended._update  # noqa: SLF001 - the per-device write of MirroredExtended (no public hook)

    def record(var: Any, fn: Any, args: Any, kwargs: Any, group: Any) -> Any:
        if tf.compat.v1.get_default_graph() is not graph:  # inside a cond of the apply's own: left there (and found)
            return original(var, fn, args, kwargs, group)
        recorded.append((var, fn, args, kwargs))
        return None  # the optimizer reads no result of its writes

    extended._update = record  # noqa: SLF001
    try:
        yield recorded
    finally:
        del extended._update  # noqa: SLF001


def emit(strategy: Any, recorded: Recorded, go: Any, extra: Callable[[], Any]) -> tuple[list[Any], list[Any]]:
    """The recorded writes, each device's gated on that device's copy of `go`, in the order recorded; extra() in the
    first device's. Not a lowered `cond` (a Switch beside each of its inputs: the variables, slots, gradients, ~28 a
    device for a three-layer MLP under Adam): one Switch on the decision, whose taken side's Identity (the pivot, as
    TensorFlow 1's `cond` made) is a control input of every op of the writes, so that on "no" all of them are dead,
    and one Merge after every device's writes, on the first (automatic control dependencies make a Merge the last
    write of what came before it, so no later op hangs on a dead write; a Merge ignores a dead control input)."""
    import tensorflow as tf
    from tensorflow.python.distribute import distribute_lib, distribute_utils  # UpdateContext: no public name

    decisions, switches = [], []
    devices = strategy.extended.worker_devices
    for i, device in enumerate(devices):
        with tf.device(device):
            mine = go(i, recorded) if callable(go) else tf.identity(go)
            decisions.append(mine)
            switches.append(tf.raw_ops.Switch(data=mine, pred=mine))
            with tf.control_dependencies([tf.identity(switches[-1][1])]):
                for var, fn, args, kwargs in recorded:
                    component = var.values[i]
                    with tf.device(component.device), distribute_lib.UpdateContext(i):
                        fn(
                            component,
                            *distribute_utils.select_replica(i, args),
                            **distribute_utils.select_replica(i, kwargs),
                        )
                if i == 0:
                    extra()
    # one Merge for every device, on the first: automatic control dependencies chain each Merge after every op that
    # must run before it, so a Merge per device waited on the one before it, a control Send between devices each way
    with tf.device(devices[0]):
        no, yes = switches[0]
        with tf.control_dependencies([tf.identity(yes)]):
            done = tf.constant(True)
        return [tf.raw_ops.Merge(inputs=[tf.identity(done), tf.identity(no)]).output], decisions
