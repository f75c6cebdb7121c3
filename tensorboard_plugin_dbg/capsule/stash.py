"""fit's batches kept on the device, so that the train step hands nothing back to the host: the last step's batch,
written at the end of every step, and at a trigger (the check's rare branch, when the capture slot is free) the
trigger's batch and the batch before it, read by the host when it writes the capsule (the previous step's batch gets
its per-sample loss too, capsule/forensics.py). Without XLA and with it, `steps_per_execution` steps a call or one.

Why not the logs: every extra output of the train function costs its handling on the host each step (Keras wraps
the outputs in an `Optional`, reduces them per replica and maps them in Python): 5-7 points of a 0.9 ms MLP step
(bench/README.md, #35), for a batch read once per run. And under `steps_per_execution=N` the train function returns
the last of its N steps' outputs only.

Under XLA a variable cannot change shape inside the compiled step, and an epoch's last batch is shorter: there each
leaf's buffer has a fixed capacity (the largest batch of the data, taken on the host from the first call's batches
before the step runs, `first_call`), a batch is written into its prefix, and its real shape is written beside it.
Without XLA the buffers take each batch's shape as it is. TensorFlow is imported in the training process only.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from tensorboard_plugin_dbg.reader.capsule_manifest import BatchSpec

from . import structure


class BatchStash:
    def __init__(self) -> None:
        self.on = False  # set by the callback: fit on one device (replicas keep theirs: capsule/distribute.py)
        self.compiled = False  # XLA: fixed-shape buffers of `capacity`
        self.unsized = False  # XLA: a fit began, its first call sizes the buffers
        self.keep_last = False  # each step's batch written into `last` (the previous step's batch at a trigger)
        self.capacity: list[list[int]] | None = None  # per leaf, the largest shape seen (XLA; None: not sized yet)
        self.spec: BatchSpec = {"kind": "none"}
        self.names: list[str] = []
        self.ranks: list[int] = []
        self.last: list[Any] = []  # per leaf: the last step's batch
        self.held: list[Any] = []  # per leaf: the trigger's batch
        self.held_previous: list[Any] = []  # per leaf: the batch of the step before the trigger
        self.last_meta: Any = None  # int64 [sum(ranks)]: the last step's shapes (XLA)
        # where the held batch's shapes lie in the device state's record (capsule/shadow.py; one variable fewer that
        # the compiled step may write): the trigger's shapes, the previous device step, the previous shapes
        self.held_at: int | None = None
        self.previous: tuple[structure.Flat, int] | None = None  # host side: read with the trigger's batch
        self.missing: str | None = None  # host side: why the last read trigger's batch is not held (XLA, too large)

    # --- host side, before a call: the buffers sized for the data (XLA) ---------------------------------------------

    def first_call(self, iterator: Any, steps: int) -> tuple[Any, int | None]:
        """Under XLA, at a fit's first call: up to `steps` batches taken from the iterator (on the host, references:
        no copy), the buffers grown to hold the largest, and an iterator over the same batches with the same element
        spec (the train function runs as traced) for this call; (iterator, batches taken), or (iterator, None)
        when nothing needs sizing."""
        import tensorflow as tf

        if not (self.on and self.compiled and self.unsized) or not isinstance(iterator, tf.data.Iterator):
            return iterator, None
        self.unsized = False
        taken = []
        for _ in range(steps):
            optional = iterator.get_next_as_optional()
            if not optional.has_value():
                break
            taken.append(optional.get_value())
        if not taken:
            raise StopIteration  # as Keras's train function does at the end of the data
        self._grow(taken)
        return iter(_same_spec(taken, iterator.element_spec)), len(taken)

    def _grow(self, batches: list[Any]) -> None:
        import tensorflow as tf

        unset = tf.experimental.Optional  # Keras hands train_step None for it
        plain = [tf.nest.map_structure(lambda i: None if isinstance(i, unset) else i, b) for b in batches]
        shapes = [[list(leaf.shape) for _, leaf in structure.flatten(b, fit=True)[1]] for b in plain]
        largest = [[max(dims) for dims in zip(*leaf)] for leaf in zip(*shapes)]
        if self.capacity is not None and [len(c) for c in self.capacity] != [len(s) for s in largest]:
            self.capacity = None  # another structure: sized anew
        self._grow_to(largest)

    # --- the device side (graph, XLA-compiled or not) ----------------------------------------------------------------

    def step_end(self, batch: Any) -> list[Any]:
        """At the end of every step (after its checks): the step's batch into `last` (under XLA its shapes beside
        it; without XLA the buffers have them, and each op costs its dispatch on the step's path: nothing more)."""
        tensors = self._ensure(batch) if self.keep_last else []
        if not tensors:
            return []
        written = [v.assign(self._fitted(t, v)) for v, t in zip(self.last, tensors)]
        if self.compiled:
            import tensorflow as tf

            written.append(self.last_meta.assign(tf.concat(self._shapes(tensors), 0)))
        return written

    def capture(self, batch: Any, free: Any, step: Any, state: Any) -> list[Any]:
        """Inside the rare branch of device step `step`: the trigger's batch and the previous step's (`last`, not
        yet overwritten by this step) into the held buffers when the capture slot is `free` (a bool tensor read
        before the slot is taken: a later trigger must not overwrite the batch of the capture held). `state`: the
        device state (capsule/shadow.py), whose record holds the shapes."""
        import tensorflow as tf

        tensors = self._ensure(batch)
        if not tensors:
            return []
        if self.held_at is None:
            self.held_at = state.region(self._meta_size())

        def keep() -> Any:
            written = [v.assign(self._held(t, v, free)) for v, t in zip(self.held, tensors)]
            last = [tf.zeros([sum(self.ranks)], tf.int64)]  # no previous batch: its shapes 0
            if self.keep_last:  # else not referenced: each variable an XLA step may write costs it every step
                written += [h.assign(v.value()) for h, v in zip(self.held_previous, self.last)]
                last = [self.last_meta.value()] if self.compiled else self._shapes([v.value() for v in self.last])
            before = tf.reshape(tf.cast(step, tf.int64) - 1, [1])
            # reshaped to the region's length: the previous batch's buffers have no static rank outside XLA
            meta = tf.reshape(tf.concat([*self._shapes(tensors), before, *last], 0), [self._meta_size()])
            written.append(state.write(self.held_at, meta))
            with tf.control_dependencies(written):
                return tf.constant(True)

        return [tf.cond(free, keep, lambda: tf.constant(False))]

    def _ensure(self, batch: Any) -> list[Any]:
        """The batch's leaves as tensors, the buffers made once for its structure (lifted out of the trace); [] when
        the stash is off or, under XLA, not sized for this structure."""
        import tensorflow as tf

        if not self.on or batch is None:
            return []
        self.spec, leaves = structure.flatten(batch, fit=True)
        tensors = [tf.convert_to_tensor(leaf) for _, leaf in leaves]
        ranks = [t.shape.rank for t in tensors]
        if any(r is None for r in ranks):
            return []
        if self.compiled and (self.capacity is None or [len(c) for c in self.capacity] != ranks):
            return []
        self.names = [name for name, _ in leaves]
        if [v.dtype for v in self.last] != [t.dtype for t in tensors] or self.ranks != ranks:
            self.ranks = ranks
            with tf.init_scope():
                self.last, self.held, self.held_previous = (self._buffers(tensors) for _ in range(3))
                self.last_meta = tf.Variable(tf.zeros([sum(ranks)], tf.int64), name="nan_capsule_meta")
                self.held_at = None  # a region of the new size, at the next capture's trace
        return tensors

    def _meta_size(self) -> int:
        return 2 * sum(self.ranks) + 1

    def _buffers(self, tensors: list[Any]) -> list[Any]:
        import tensorflow as tf

        shapes = self.capacity if self.compiled and self.capacity else [[0] * (t.shape.rank or 0) for t in tensors]
        return [
            tf.Variable(tf.zeros(s, t.dtype), shape=tf.TensorShape(None), trainable=False, name="nan_capsule_batch")
            for s, t in zip(shapes, tensors)
        ]

    def _fitted(self, tensor: Any, variable: Any) -> Any:
        """The tensor as the buffer takes it: itself without XLA; under XLA in the prefix of the buffer's fixed
        shape (cut to it should a batch ever be larger: its real shape, written beside it, tells the host)."""
        import tensorflow as tf

        if not self.compiled:
            return tensor
        room = tf.shape(variable.value())
        cut = tf.slice(tensor, tf.zeros_like(room), tf.minimum(tf.shape(tensor), room))
        return tf.pad(cut, tf.stack([tf.zeros_like(room), room - tf.shape(cut)], axis=1))

    def _held(self, tensor: Any, variable: Any, free: Any) -> Any:
        """The trigger's batch as the held buffer takes it. Under XLA a select on `free` (true here: `keep` runs only
        then): the buffer's new value is then computed in the rare branch, where a plain copy of the step's input
        made XLA copy each batch leaf at the start of every step (one copy a leaf, its bytes, on the step's path;
        bench/README.md, #35). Bit for bit the batch: a select moves values as they are."""
        import tensorflow as tf

        fitted = self._fitted(tensor, variable)
        return tf.where(free, fitted, variable.value()) if self.compiled else fitted

    @staticmethod
    def _shapes(tensors: list[Any]) -> list[Any]:
        import tensorflow as tf

        return [tf.shape(t, out_type=tf.int64) for t in tensors]

    # --- host side, at the capsule's writing --------------------------------------------------------------------------

    def read(self, state: Any) -> structure.Flat | None:
        """The held trigger's batch (and, kept in `previous` with its device step, the batch before it), or None when
        none was stashed. Under XLA a batch larger than its buffer (a later batch larger than the fit's first ones)
        is not held: an empty batch then, `missing` says why, and the buffers grow to its shape for later triggers."""
        self.previous, self.missing = None, None
        if not self.on or not self.held or self.held_at is None:
            return None
        meta = [int(v) for v in state.read(self.held_at, self._meta_size())]
        total = sum(self.ranks)
        trigger = self._cut(self.held, meta[:total])
        previous_step, previous = meta[total], self._cut(self.held_previous, meta[total + 1 :])
        empty = previous is None or any(0 in a.shape[:1] for _, a in previous.leaves)  # none written yet
        if previous is not None and previous_step >= 0 and not empty:
            self.previous = (previous, previous_step)
        if trigger is None:
            shapes, at = [], 0
            for rank in self.ranks:
                shapes.append(meta[at : at + rank])
                at += rank
            self.missing = _too_large(self.names, shapes, self.capacity or [])
            self._grow_to(shapes)
            return structure.Flat({"kind": "none"}, [])
        return trigger

    def warn_missing(self, folder: str) -> None:
        if self.missing is not None:
            warnings.warn(f"NanCapsule: {folder}: {self.missing}", RuntimeWarning, stacklevel=2)

    def _grow_to(self, shapes: list[list[int]]) -> None:
        """The buffers made at least `shapes` (XLA compiles the step again, once, for the larger variables)."""
        import tensorflow as tf

        grown = [[max(a, b) for a, b in zip(old, new)] for old, new in zip(self.capacity or shapes, shapes)]
        self.capacity = grown
        if len(self.last) != len(grown):  # not made yet (made at the trace, of this capacity)
            return
        for variables in (self.last, self.held, self.held_previous):
            for variable, shape in zip(variables, grown):
                if list(variable.value().shape) != shape:
                    variable.assign(tf.zeros(shape, variable.dtype))

    def _cut(self, variables: list[Any], flat_shapes: list[int]) -> structure.Flat | None:
        arrays, at = [], 0
        for name, variable, rank in zip(self.names, variables, self.ranks):
            shape, at = flat_shapes[at : at + rank], at + rank
            value = np.asarray(variable.numpy())
            if any(s > c for s, c in zip(shape, value.shape)):
                return None  # larger than its buffer: not kept whole
            arrays.append((name, value[tuple(slice(0, s) for s in shape)] if self.compiled else value))
        return structure.Flat(self.spec, arrays)


def _too_large(names: list[str], shapes: list[list[int]], capacity: list[list[int]]) -> str:
    """Why a trigger's batch is not in its capsule, in words a user can act on."""
    over = [f"{n} {s} > {c}" for n, s, c in zip(names, shapes, capacity) if any(a > b for a, b in zip(s, c))]
    return (
        f"the trigger's batch ({'; '.join(over)}) was larger than the device buffers sized from the fit's first "
        "batches under XLA (a compiled step cannot grow a variable): the capsule holds the state before the step, "
        "not its batch; the buffers are grown now, for later triggers. Batches of one size (the largest first, or "
        "drop_remainder=True) or jit_compile=False keep every batch"
    )


def _same_spec(batches: list[Any], spec: Any) -> Any:
    """A dataset of `batches` whose element spec is `spec` (the train function then runs as traced, no new trace):
    the batches after an empty element whose unknown dimensions are 0 (a concatenation's spec is the most specific
    that both sides fit: the unknown dimensions stay unknown), else, should that not give `spec`, through a
    generator (slower: it traces its functions)."""
    import tensorflow as tf

    try:
        empty = tf.nest.map_structure(lambda s: tf.zeros([d or 0 for d in s.shape], s.dtype), spec)
        dataset = tf.data.Dataset.from_tensors(empty).take(0)
        for batch in batches:
            dataset = dataset.concatenate(tf.data.Dataset.from_tensors(batch))
        if dataset.element_spec == spec:
            return dataset
    except (TypeError, ValueError):  # a spec of unknown rank, or not tensors
        pass
    return tf.data.Dataset.from_generator(lambda: iter(batches), output_signature=spec)
