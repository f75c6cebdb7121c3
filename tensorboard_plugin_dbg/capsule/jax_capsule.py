"""Writing a capsule from Keras 3 on JAX: the same folder as TensorFlow's (manifest.json, batch.npz, weights.npz,
optimizer.npz, rng.npz, forensics.npz; capsule/writer.py), so `capsule.load`, `report` and the dashboard's cards
read it with neither framework. The batch is the arrays the step was handed (kept by reference on the host); the
weights and optimizer state are the model's, synced from the fit loop at the poll, which the check held at the
trigger step's pre-step state (capsule/jax_check.py). jax and Keras are imported in the training process only."""

from __future__ import annotations

import platform
from typing import Any

import numpy as np

from tensorboard_plugin_dbg.reader import capsule_files
from tensorboard_plugin_dbg.reader.capsule_manifest import Trigger

from . import distribute, forensics, shadow, structure, writer


def trigger(layout: list[tuple[str, str]], sizes: list[int], counts: Any) -> Trigger:
    """The trigger from the step's per-tensor NaN/+inf/-inf counts (the loss first, then each gradient)."""
    rows = np.asarray(counts)
    healths = [{"size": n, "nan": int(r[0]), "pos_inf": int(r[1]), "neg_inf": int(r[2])} for n, r in zip(sizes, rows)]
    return shadow.first_bad(layout, healths)


def write(watch: Any, kept: tuple[int, Any, Any, Any, bool], found: Trigger) -> str:
    """The capsule of the step `kept` (host step, epoch, batch index, batch, fit); its folder."""
    model = watch.model
    model.jax_state_sync()  # the loop's state into the model's variables (a no-op at the epoch's end: synced)
    names = structure.unique_names([v.path for v in model.variables])
    weights = {n: np.array(v.numpy()) for n, v in zip(names, model.variables)}
    optimizer_names = structure.unique_names([v.path for v in model.optimizer.variables])
    optimizer = {n: np.array(v.numpy()) for n, v in zip(optimizer_names, model.optimizer.variables)}
    spec, arrays = structure.arrays_of(kept[3], True)
    step = int(np.asarray(model.optimizer.iterations.numpy()))
    manifest = {
        "step": step,
        "epoch": kept[1],
        "batch_index": kept[2],
        "trigger": found,
        "on_nan": watch.on_nan,
        "source": "fit",
        "loss_scale": watch.loss_scaled(),
        "batch_structure": spec,
        # the check held the whole state back at the trigger: every non-trainable variable is as the step began
        "pre_step_state": [n for n, v in zip(names, model.variables) if not v.trainable],
        "compiled": watch.compiled,
        "rules": {"non_finite": True},
        "program": writer.program_info(),
        "layer_history": {"recorded": False, "why": "not recorded on the JAX backend"},
        **environment(),
    }
    groups: dict[str, capsule_files.Arrays] = {"batch": arrays, "weights": weights, "optimizer": optimizer, "rng": {}}
    extra, manifest["forensics"] = forensics.at_trigger(watch, spec, arrays, kept[3])  # per-sample loss
    groups.update(extra)
    return writer.write_capsule(watch.directory, distribute.folder_name(step, None), manifest, groups)


def environment() -> dict[str, object]:
    from importlib import metadata

    import jax
    import jaxlib
    import keras

    versions = {"python": platform.python_version(), **{m.__name__: m.__version__ for m in (np, jax, jaxlib, keras)}}
    versions["keras_backend"] = keras.backend.backend()  # "jax": replay runs the program through its launcher
    installed = {d.metadata["Name"]: d.version for d in metadata.distributions(name="tensorboard-plugin-dbg")}
    versions["tensorboard_plugin_dbg"] = next(iter(installed.values()), "unknown")
    devices = [{"name": str(d), "type": d.platform.upper()} for d in jax.devices()]
    return {"versions": versions, "devices": devices, "deterministic": False}
