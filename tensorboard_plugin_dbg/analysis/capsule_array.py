"""One batch array or variable of a NaN capsule for the Tensor Values view (route `capsule_array`): dtype, shape,
the whole-array stats, histogram and non-finite positions, and a slice of values — computed by the same code as a
dumped FULL_TENSOR value's (tensor_stats.compute, tensor_values.slice_values) over the array's place in the
capsule's `.npz` (reader/capsule_arrays.py), so a 100 MB weight is read block by block, never loaded whole.

The whole-array numbers are kept per (array, bins) for the capsule's version (its manifest's `created`): the view
asks again for each window of values it scrolls to."""

from __future__ import annotations

import os
import posixpath
import threading
from collections import OrderedDict

from tensorboard_plugin_dbg.analysis import tensor_stats, tensor_values
from tensorboard_plugin_dbg.index.protocol import NotFound, RecordGone
from tensorboard_plugin_dbg.reader import capsule_arrays, capsule_files, storage, tensor_content
from tensorboard_plugin_dbg.reader.capsule_manifest import Manifest
from tensorboard_plugin_dbg.wire import types as wire

GROUPS: tuple[wire.CapsuleArrayGroup, ...] = ("batch", "weights", "optimizer")
_KEPT = 32  # whole-array summaries kept (one per array and bin count)
_summaries: OrderedDict[tuple[object, ...], tensor_stats.Summary] = OrderedDict()
_summaries_lock = threading.Lock()


def capsule_array(
    logdir: str, capsule: str, group: wire.CapsuleArrayGroup, name: str, spec: str | None, bins: int
) -> wire.CapsuleArrayResponse:
    """wire.ts CapsuleArrayResponse. `capsule` is the capsule's folder relative to the logdir (a card's `path`).
    Raises NotFound (unknown capsule or name, damaged file: 404), tensor_slices.SliceError (a slice that does not
    fit: the route's 400)."""
    loc, manifest = _located(logdir, capsule, group, name)
    out: wire.CapsuleArrayResponse = {
        "capsule": capsule,
        "step": int(manifest["step"]),
        "group": group,
        "name": name,
        "dtype": loc.dtype,
        "shape": list(loc.shape),
        "size": loc.size,
        "stats": None,
        "histogram": None,
        "nonfinite": None,
        "slice": None,
    }
    try:
        if spec is not None:  # a bad slice fails before the whole-array pass
            out["slice"] = tensor_values.slice_values(loc, spec)
        whole = _summary(loc, str(manifest.get("created")), bins)
    except (tensor_content.ContentError, OSError) as e:
        raise RecordGone(f"capsule {capsule!r}: {group} array {name!r} can no longer be read: {e}") from None
    out["stats"], out["histogram"], out["nonfinite"] = whole["stats"], whole["histogram"], whole["nonfinite"]
    return out


def npy(logdir: str, capsule: str, group: str, name: str) -> tuple[tensor_content.TensorLocation, str]:
    """(location, file name) of the array as a `.npy` (route `capsule_array.npy`, streamed by
    tensor_values.npy_stream as a dumped tensor's): the bytes of the npz member `name.npy` for a numeric array
    (bfloat16: its raw words as <u2, the file name says bfloat16). Raises NotFound as capsule_array does."""
    loc, manifest = _located(logdir, capsule, group, name)
    suffix = ".bfloat16" if loc.dtype == "bfloat16" else ""
    return loc, f"capsule-step{int(manifest['step'])}_{group}_{name.replace('/', '_')}{suffix}.npy"


def _located(logdir: str, capsule: str, group: str, name: str) -> tuple[tensor_content.TensorLocation, Manifest]:
    folder = capsule_folder(logdir, capsule)
    try:
        return capsule_arrays.locate(folder, group, name)
    except capsule_arrays.ArrayNotFound as e:
        raise NotFound(str(e)) from None
    except capsule_files.CapsuleError as e:
        raise NotFound(f"capsule {capsule!r} cannot be read: {e}") from None


def capsule_folder(logdir: str, capsule: str) -> str:
    """The folder (or URL) of the capsule named by its path relative to the logdir; NotFound for a path that
    leaves the logdir or names no capsule."""
    parts = capsule.replace("\\", "/").split("/")
    if capsule.startswith("/") or ".." in parts:
        raise NotFound(f"no capsule {capsule!r} under the logdir (give a capsule card's path)")
    rel = posixpath.normpath("/".join(parts))
    if storage.is_remote(logdir):
        return logdir.rstrip("/") if rel == "." else storage.join(logdir, rel)
    folder = os.path.normpath(os.path.join(os.path.abspath(logdir), *rel.split("/")))
    if not capsule_files.is_capsule(folder):
        raise NotFound(f"no capsule {capsule!r} under the logdir (give a capsule card's path)")
    if os.path.realpath(folder) != os.path.normpath(os.path.join(os.path.realpath(logdir), *rel.split("/"))):
        # the cards never follow a folder link (capsules_below walks without following): neither does this route
        raise NotFound(f"capsule {capsule!r} is reached through a symbolic link (folder links are not followed)")
    return folder


def _summary(loc: tensor_content.TensorLocation, version: str, bins: int) -> tensor_stats.Summary:
    key = (loc.path, version, loc.content_offset, loc.dtype, loc.shape, bins)
    with _summaries_lock:
        hit = _summaries.get(key)
    if hit is not None and loc.small is None:
        return hit
    whole = tensor_stats.compute(loc, bins)
    if loc.small is None:  # decoded members are small: not worth keeping
        with _summaries_lock:
            _summaries[key] = whole
            while len(_summaries) > _KEPT:
                _summaries.popitem(last=False)
    return whole
