"""Forensics at the trigger, written into the capsule: the loss of each sample of the captured batch, so a NaN or a
spike is tied to its rows ("rows 2 and 6 carry the non-finite loss", "rows 17 and 40 carry 98 % of the loss").

Computed once, at the capture, from the captured batch and the pre-step weights (stop and raise modes: the weights
as they are then, no later step applied anything; skip mode: later steps did apply until the host read the trigger,
so the model runs with the capsule's stored pre-step weights, put back afterwards): one extra forward pass
(`training=False`: no dropout draw, BatchNorm on its moving statistics), and the compiled loss per sample (Keras:
the loss function of `compile`, which reduces each sample's last axis; a `Loss` object's unreduced `call`). Only for
`fit` with a single loss; otherwise the capsule says why it holds none. The previous step's batch (fit: kept on the
device with the trigger's, capsule/stash.py, with XLA and without; a custom loop: while the host still holds it,
by reference until the poll, as Lightning keeps it) gets the same, with the same weights (`previous_per_sample_loss`: is
the spike the batch, or the model?). Stored as `forensics.npz` (`per_sample_loss`, float64 so no sample's value
overflows on the way), described in the manifest's optional `forensics` entry; capsules written before it lack both
(the viewer then says "not recorded by this capsule's version")."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from typing import Any

import numpy as np

from tensorboard_plugin_dbg.reader import capsule_files

from . import calls, distribute, structure


def at_trigger(
    watch: Any,
    spec: Any,
    batch: dict[str, np.ndarray],
    kept: Any = None,
    weights: dict[str, np.ndarray] | None = None,
) -> tuple[dict[str, dict[str, np.ndarray]], Any]:
    """(the extra array groups, the manifest's `forensics` entry) for a capture; `kept`: the trigger's batch as the
    host kept it (its predecessor in `watch.recent` is the previous step's batch); `weights`: the capsule's pre-step
    model variables by name, when the model has moved on since the trigger (skip mode)."""
    start = time.perf_counter()
    try:
        with _weights_as(watch.model, weights):
            values, loss_name = _per_sample_loss(watch, spec, batch)
    except Exception as e:  # noqa: BLE001 - forensics must never cost the capsule itself
        return {}, {"per_sample_loss": None, "why": f"not computed: {type(e).__name__}: {e}"}
    seconds = round(time.perf_counter() - start, 4)
    entry = {"per_sample_loss": {"loss": loss_name, "training": False, "seconds": seconds, "samples": len(values)}}
    arrays = {"per_sample_loss": values}
    try:
        previous = _previous(watch, kept)
        if previous is None:
            entry["previous"] = {"why": _why_no_previous(watch)}
        else:
            with _weights_as(watch.model, weights):
                arrays["previous_per_sample_loss"], _ = _per_sample_loss(watch, previous[0], previous[1])
            entry["previous"] = {**previous[2], "samples": len(arrays["previous_per_sample_loss"])}
    except Exception as e:  # noqa: BLE001 - as above
        entry["previous"] = {"why": f"not computed: {type(e).__name__}: {e}"}
    return {"forensics": arrays}, entry


def _previous(watch: Any, kept: Any) -> tuple[Any, dict[str, np.ndarray], dict[str, object]] | None:
    """(spec, arrays, where) of the step before the kept batch's: fit's from the device (capsule/stash.py, read with
    the trigger's batch), a custom loop's when the host still holds it."""
    if isinstance(watch.state, distribute.ReplicaState):  # the host holds an empty batch a step (the device keeps)
        return None
    if watch.stash.on:
        if watch.stash.previous is None:
            return None
        flat, step = watch.stash.previous
        call = calls.call_of(watch.recent, step, watch.steps_per_execution)
        epoch, index = (call[1], calls.batch_index(call[2], step - call[0])) if call else (None, None)
        spec, arrays = structure.arrays_of(flat, True)
        return spec, arrays, {"host_step": step, "epoch": epoch, "batch_index": index}
    at = next((i for i, r in enumerate(watch.recent) if r[3] is kept), None) if kept is not None else None
    if not at or watch.recent[at - 1][0] != watch.recent[at][0] - 1 or watch.recent[at - 1][3] is None:
        return None
    step, epoch, batch_index, batch, fit = watch.recent[at - 1]
    spec, arrays = structure.arrays_of(batch, fit)
    return spec, arrays, {"host_step": step, "epoch": epoch, "batch_index": batch_index}


def _why_no_previous(watch: Any) -> str:
    if isinstance(watch.state, distribute.ReplicaState):
        return "not kept: under tf.distribute the device keeps the trigger step's rows only"
    if watch.stash.on and not watch.stash.keep_last:
        where = "under XLA" if watch.stash.compiled else "without XLA"
        return f"not kept: {where}, NanCapsule(previous_batch=True) keeps it (a copy of each batch every step)"
    return "the previous step's batch was not kept (the first step watched)"


@contextlib.contextmanager
def _weights_as(model: Any, weights: dict[str, np.ndarray] | None) -> Iterator[None]:
    """The model's variables set to `weights` (by the capsule's names) for the forward pass, then put back."""
    if weights is None:
        yield
        return
    names = structure.unique_names([v.path for v in model.variables])
    pairs = [(v, weights[n]) for n, v in zip(names, model.variables) if n in weights]
    now = [np.array(v.numpy()) for v, _ in pairs]
    try:
        for variable, value in pairs:
            variable.assign(value)
        yield
    finally:
        for (variable, _), value in zip(pairs, now):
            variable.assign(value)


def _per_sample_loss(watch: Any, spec: Any, batch: dict[str, np.ndarray]) -> tuple[np.ndarray, str]:
    import keras

    if watch.source != "fit":
        raise ValueError("a custom loop's loss is its own code (only fit's compiled loss is known)")
    data = capsule_files.rebuild(spec, batch)
    if not isinstance(data, tuple) or len(data) < 2 or data[1] is None:
        raise ValueError("the batch holds no targets")
    x, y = data[0], data[1]
    loss = watch.model.loss
    if isinstance(loss, (dict, list, tuple)):
        raise ValueError("several losses (one per output): per-sample loss is kept for a single loss")
    fn = keras.losses.get(loss)
    per_sample = fn.call if isinstance(fn, keras.losses.Loss) else fn
    predicted = watch.model(x, training=False)
    values = np.asarray(keras.ops.convert_to_numpy(per_sample(y, predicted)), dtype=np.float64)
    values = values.reshape(len(values), -1).mean(axis=1) if values.ndim > 1 else values.reshape(-1)
    name = getattr(fn, "name", None) or getattr(fn, "__name__", None) or type(fn).__name__
    return values, str(name)
