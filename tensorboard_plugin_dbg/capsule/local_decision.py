"""The decision of a replicated step taken on each device from the gradients the apply all-reduces anyway
(capsule/distribute.py, single-worker MirroredStrategy), so that no collective of flags sits between the gradients'
all-reduce and the writes: each device's write gate (capsule/device_gates.py) opens on the sum of that device's copy
of the reduced gradients being finite (capsule/check.py `sum_finite`, `halt` in the sum). A NaN or an infinity on any
replica makes the all-reduced sum non-finite on every device (a NaN never cancels, +inf and -inf give NaN, and a
finite sum that overflows is an update that must not be applied either), so every device decides alike. One sum a
gradient is not an exact check: finite values whose sum overflows float32 (~1e34 each over a [64, 256] gradient) hold
the step back too, its capsule's trigger saying so (`distribute.OVERFLOW`; the flags path checks each value).

A replica's loss reaches no gradient by itself: it is folded into the smallest gradient before the apply (`fold`).
The capture reads which replica went non-finite, and each replica's rows, from the local replicas' own values
(`replica_flags`), on its rare path only.

Where the decision needs more than the reduced gradients, capsule/distribute.py keeps the flags reduced across
replicas in its `merge_call`: several workers (another worker's flags are known through a collective only), the spike
rules (the global loss is a reduce anyway), a LossScaleOptimizer (its own `cond`), an optimizer that clips or
accumulates the gradients before they reach the update (a clip could turn a NaN finite).

TensorFlow is imported inside the functions that run in the training process only.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import check

PASSED_AS_IS = ("clipnorm", "clipvalue", "global_clipnorm", "gradient_accumulation_steps")


def applies(watch: Any, optimizer: Any, strategy: Any, layout: list[tuple[str, str]], grads: list[Any]) -> bool:
    """Whether this step's decision can be each device's own (else the flags path of capsule/distribute.py).
    `optimizer`: the one applying (a GAN's train step applies its own)."""
    import tensorflow as tf

    scaled = watch.loss_scaled(optimizer)
    if isinstance(strategy, tf.distribute.MultiWorkerMirroredStrategy) or scaled or watch.spikes.on:
        return False
    if any(getattr(optimizer, name, None) for name in PASSED_AS_IS):
        return False
    return smallest(grads) is not None and all(kind in ("loss", "gradient") for kind, _ in layout)


def smallest(grads: list[Any]) -> int | None:
    """The index of the smallest dense floating gradient of known size (the one the loss is folded into)."""
    import tensorflow as tf

    dense = [
        (g.shape.num_elements(), i)
        for i, g in enumerate(grads)
        if isinstance(g, tf.Tensor) and g.dtype.is_floating and g.shape.num_elements() is not None
    ]
    return min(dense)[1] if dense else None


def fold(grads: list[Any], layout: list[tuple[str, str]], checked: list[Any], halt: Any = None) -> list[Any]:
    """In a replica: the gradients the apply takes, the loss folded into the smallest as `loss * 0`. Exact: x + 0 is x
    for every finite x (only a zero's sign may change, which no update sees: it adds or scales by it), and loss * 0 is
    0 for a finite loss, NaN for a NaN or infinite one, so the all-reduced gradient is non-finite on every device iff
    some replica's loss or gradient was. `halt` (0, or +inf once stopped; the first replica's, on the device that
    holds it) joins the same sum: no device reads it from another's. The capture keeps the original tensors."""
    import tensorflow as tf

    losses = [check.float32(t) for (kind, _), t in zip(layout, checked) if kind != "gradient"]
    terms = [tf.reduce_sum(t) for t in losses] + ([halt.value()] if halt is not None else [])
    if not terms:
        return grads
    index = smallest(grads)
    assert index is not None  # applies() said so
    zero = tf.cast(tf.add_n(terms) * 0.0, grads[index].dtype)  # product first: no overflow
    return [g + zero if i == index else g for i, g in enumerate(grads)]


def decision(variables: list[Any], count: int) -> Callable[[int, Any], Any]:
    """go(i, recorded) for capsule/device_gates.py: on device i, whether its copy of every reduced gradient (the first
    argument of the recorded update of each of `variables`; `count` of them have a gradient) sums finite (`halt` is
    in them: `fold`)."""
    import tensorflow as tf
    from tensorflow.python.distribute import distribute_utils  # select_replica: no public name

    applied = {id(getattr(v, "value", v)) for v in variables}  # a Keras variable's update names its tf variable

    def go(i: int, recorded: Any) -> Any:
        mine = [distribute_utils.select_replica(i, a)[0] for var, _, a, _ in recorded if a and id(var) in applied]
        if len(mine) != count:  # a gradient the decision would not see: refused at trace time, never left unchecked
            raise RuntimeError(f"NanCapsule found {len(mine)} gradient updates for {count} gradients in the apply")
        summed = packs(mine)
        return tf.math.is_finite(tf.add_n([check.float32(tf.reduce_sum(check.values(g))) for g in summed]))

    return go


def packs(grads: list[Any]) -> list[Any]:
    """The tensors whose sums cover exactly `grads`: the strategy all-reduces the gradients packed (concatenated into
    one vector, reduced, split again, each piece reshaped, under an IdentityN), so a pack's reduced vector, when every
    piece of its split is one of `grads`, stands for them all: one sum of it, not one a gradient and their AddN, and
    the decision no longer waits on the split (bench/README.md, the step's timeline). Any other gradient: itself."""
    import tensorflow as tf

    def piece(g: Any) -> Any:  # the split's output a gradient is (through an IdentityN, a Reshape), else None
        for through in ("IdentityN", "Reshape"):  # IdentityN: the all-reduce's custom gradient, output k is input k
            if isinstance(g, tf.Tensor) and g.op.type == through:
                g = g.op.inputs[g.value_index]
        return g if isinstance(g, tf.Tensor) and g.op.type == "SplitV" else None

    pieces = {id(g): piece(g) for g in grads}
    by_split: dict[str, list[Any]] = {}
    for g in grads:
        if pieces[id(g)] is not None:
            by_split.setdefault(pieces[id(g)].op.name, []).append(g)
    whole, taken = [], set()
    for members in by_split.values():
        split = pieces[id(members[0])].op
        names = {pieces[id(g)].name for g in members}
        pack = split.inputs[0]  # float32 or wider: a float16 pack's one sum would overflow where its parts' did not
        if len(members) == len(names) == len(split.outputs) and pack.shape.rank == 1 and pack.dtype.size >= 4:
            whole.append(pack)
            taken |= {id(g) for g in members}
    return whole + [g for g in grads if id(g) not in taken]


def replica_flags(local: Callable[[Any], Any], checked: list[Any], tensors: list[Any]) -> Any:
    """On the rare path: [2, replicas], each local replica's non-finite flag (its original loss and gradients) and
    its row count, as the flags path reduces them."""
    import tensorflow as tf

    replicas = len(local(checked[0]))
    bad = [1.0 - tf.cast(check.all_finite([local(t)[r] for t in checked]), tf.float32) for r in range(replicas)]
    shards = each_replicas(local, tensors[0], replicas) if tensors else [tf.constant(0.0)] * replicas
    rows = [tf.cast(tf.shape(x)[0], tf.float32) if x.shape.rank else tf.constant(0.0) for x in shards]
    return tf.stack([tf.stack(bad), tf.stack(rows)])


def each_replicas(local: Callable[[Any], Any], tensor: Any, replicas: int) -> list[Any]:
    """Each local replica's value of a batch leaf, in replica order. A plain tensor handed to `strategy.run` (not a
    distributed batch) is every replica's whole: one local value, counted once for each replica."""
    values = list(local(tensor))
    return values * replicas if len(values) == 1 else values
