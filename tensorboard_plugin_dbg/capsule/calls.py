"""Which step of which call, and what holding a step back undoes. Under `steps_per_execution=N` one call of fit's
train function runs N steps and the host sees one batch begin per call: the host notes where each call started
(`Watch.keep_batch`), the device records the step of a trigger, and the two meet here (the batch index of the step
that triggered, not the call's first). A step held back (or halted after a stop) applies nothing, its forward pass
included: the non-trainable variables it moved are put back (`undo_forward`, in the check's rare branch).

TensorFlow is imported in the training process only."""

from __future__ import annotations

from typing import Any

from . import shadow, structure


def read_counts(watch: Any) -> int:
    """The trigger counter; when a call runs several steps, with the device's step counter in the same read (the
    host's own count is an estimate after an epoch's last, shorter call: it is set from the device here)."""
    state = watch.state
    if watch.steps_per_execution == 1:
        return state.triggers.numpy()
    record = shadow.read(state.record)  # one read: the counters are fields of one variable (capsule/shadow.py)
    seen, steps = int(record[state.triggers.index]), int(record[state.counter.index])
    watch.steps_run = watch.polled_at = steps
    return seen


def call_of(recent: list[tuple[int, Any, Any, Any, bool]], device_step: int, per_call: int) -> Any:
    """The kept call (first step, epoch, first batch index, batch, fit) that ran `device_step`, or None."""
    found = [r for r in recent if r[0] <= device_step < r[0] + per_call]
    return found[-1] if found else None


def batch_index(first: Any, offset: int) -> Any:
    """The batch index of a step `offset` steps into a call whose first batch index is `first` (None: unknown)."""
    return first + offset if isinstance(first, int) else first


def undo_forward(model: Any, snapshot: structure.Tensors) -> list[Any]:
    """The non-trainable variables a held-back or halted step's forward pass moved (BatchNorm statistics, seed
    states: NaN statistics after a NaN batch) back to their values as it began (`snapshot`, read then), so that a
    checkpoint saved after it, or the model after fit, holds the pre-step state (assign ops, in the rare branch)."""
    import tensorflow as tf

    names = structure.unique_names([v.path for v in model.variables])
    pairs = [(n, v if isinstance(v, tf.Variable) else v.value) for n, v in zip(names, model.variables) if n in snapshot]
    return [variable.assign(snapshot[name]) for name, variable in pairs]
