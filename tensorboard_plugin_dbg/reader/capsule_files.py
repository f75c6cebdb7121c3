"""NaN capsules on disk, read with numpy alone (no TensorFlow): the capsule package's `load`, the replay command and
the viewer read them through here.

A capsule is one folder written by `tensorboard_plugin_dbg.capsule` at the first non-finite loss or gradient:

    manifest.json     format name and version, step, epoch, batch index, trigger, the array files' names/bytes,
                      the batch's nesting, RNG notes, versions, devices, the program's argv (written last: a folder
                      without it was never finished)
    batch.npz         the batch exactly as the train step received it, flattened: 'x', 'y/0', 'x/features', ...
    weights.npz       the model's variables (weights and seed-generator states) by their paths
    optimizer.npz     the optimizer's variables by their paths (iterations included)
    rng.npz           RNG states beyond the model's (TensorFlow's global generator)
    replay/           the tfdbg2 dump of `python -m tensorboard_plugin_dbg replay` (a run like any other)
    replay.json       that replay's verdict
    tfdbg/            optional: tfdbg2's circular buffer during training, flushed at the trigger (a run too)

npz keys may hold '/' (numpy stores 'a/b' as the zip member 'a/b.npy' and reads it back as 'a/b').
"""

from __future__ import annotations

import dataclasses
import json
import os
import zipfile
from typing import Any

import numpy as np

from tensorboard_plugin_dbg.reader import capsule_remote, storage

FORMAT = "tbdbg-nan-capsule"
FORMAT_VERSION = 1
MANIFEST = "manifest.json"
VERDICT = "replay.json"
REPLAY_DIR = "replay"
GROUPS = ("batch", "weights", "optimizer", "rng")
OPTIONAL_GROUPS = ("forensics",)  # written by newer capsules (capsule/forensics.py); absent from older ones

Arrays = dict[str, np.ndarray]


class CapsuleError(Exception):
    """A capsule that cannot be read: the message names the folder or file and what is wrong with it."""


@dataclasses.dataclass
class Capsule:
    path: str  # the capsule's folder (absolute)
    manifest: dict[str, Any]
    batch: Arrays  # flattened names -> arrays (see `batch_structure` for the nesting)
    weights: Arrays
    optimizer: Arrays
    rng: Arrays

    @property
    def step(self) -> int:
        return int(self.manifest["step"])

    @property
    def trigger(self) -> dict[str, Any]:
        return dict(self.manifest["trigger"])

    @property
    def verdict(self) -> dict[str, Any] | None:
        """The last replay's verdict (replay.json), None before any replay."""
        return read_verdict(self.path)

    def batch_structure(self) -> Any:
        """The batch nested as the train step received it (dicts, tuples, lists, None)."""
        return rebuild(self.manifest["batch_structure"], self.batch)


def is_capsule(folder: str) -> bool:
    return os.path.isfile(os.path.join(folder, MANIFEST))


def find_capsules(folder: str) -> list[str]:
    """Capsule folders at or under `folder` (one level of nesting, then their children), first captured first."""
    folder = os.path.abspath(folder)
    if is_capsule(folder):
        return [folder]
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    found = [os.path.join(folder, n) for n in names if is_capsule(os.path.join(folder, n))]
    return sorted(found, key=_captured_order)


def capsules_below(logdir: str, depth: int = 3) -> list[str]:
    """Capsule folders anywhere under `logdir` down to `depth` levels (a logdir of capsules, or its parent)."""
    root = os.path.abspath(logdir)
    found: list[str] = []
    for folder, subfolders, _ in os.walk(root):
        level = folder[len(root) :].count(os.sep)
        if is_capsule(folder):
            found.append(folder)
            subfolders[:] = []  # a capsule's replay/ is a dump, not a capsule
        elif level >= depth:
            subfolders[:] = []
        else:
            subfolders.sort()
    return sorted(found, key=_captured_order)


def _captured_order(folder: str) -> tuple[str, str]:
    try:
        with open(os.path.join(folder, MANIFEST)) as f:
            return (str(json.load(f).get("created", "")), folder)
    except (OSError, ValueError):
        return ("", folder)


def load(path: str) -> Capsule:
    """The capsule at `path` (a capsule folder, or a folder holding capsules: then the first one captured). `path`
    may be a URL (gs://, s3://, memory://...): the capsule is read through a temporary local copy, and its `path` is
    the capsule folder's URL."""
    if storage.is_remote(path):
        return _load_remote(path)
    if not os.path.isdir(path):
        raise CapsuleError(f"{path}: no such folder")
    found = find_capsules(path)
    if not found:
        raise CapsuleError(f"{path}: not a NaN capsule (no {MANIFEST} in it or in its subfolders)")
    folder = found[0]
    manifest = read_manifest(folder)
    groups = {group: _read_group(folder, manifest, group) for group in GROUPS}
    return Capsule(path=folder, manifest=manifest, **groups)


def _load_remote(url: str) -> Capsule:
    url = storage.normalize(url)
    try:
        with capsule_remote.local_copy(url) as local:
            try:
                found = load(local)
            except CapsuleError as e:  # name the URL, not the temporary copy
                raise CapsuleError(str(e).replace(local, url)) from None
            return dataclasses.replace(found, path=capsule_remote.as_url(found.path, local, url))
    except OSError as e:  # the storage layer's errors: missing bucket, denied credentials, unreachable endpoint
        raise CapsuleError(f"{url}: cannot be read ({e})") from None


def read_manifest(folder: str) -> dict[str, Any]:
    """The manifest (of a capsule folder's path or URL), checked: format name and version, the fields every reader
    relies on."""
    path = storage.join(folder, MANIFEST)
    try:
        with storage.open_read(path) as f:  # a URL too: the capsule cards of a remote logdir read it in place
            manifest = json.loads(f.read().decode("utf-8"))
    except FileNotFoundError:
        raise CapsuleError(f"{path}: missing (the capsule was never finished)") from None
    except (OSError, ValueError) as e:
        raise CapsuleError(f"{path}: unreadable or truncated JSON ({e})") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise CapsuleError(f"{path}: not a NaN capsule manifest (format is not {FORMAT!r})")
    version = manifest.get("format_version")
    if version != FORMAT_VERSION:
        raise CapsuleError(f"{path}: unknown format version {version!r} (this reader knows {FORMAT_VERSION})")
    for key, kind in (("step", int), ("trigger", dict), ("files", dict), ("batch_structure", dict)):
        if key not in manifest:
            raise CapsuleError(f"{path}: field {key!r} is missing")
        if not isinstance(manifest[key], kind) or isinstance(manifest[key], bool):
            raise CapsuleError(f"{path}: field {key!r} is not a {kind.__name__}")
    return manifest


def check_files(folder: str, manifest: dict[str, Any]) -> None:
    """Every array file the manifest lists is there with its size (cheap: no array is read)."""
    for group in GROUPS:
        _group_file(folder, manifest, group)


def _group_file(folder: str, manifest: dict[str, Any], group: str) -> tuple[str, dict[str, Any]]:
    entry = manifest["files"].get(group)
    if not isinstance(entry, dict) or "file" not in entry:
        raise CapsuleError(f"{os.path.join(folder, MANIFEST)}: no entry for the {group} file")
    path = os.path.join(folder, os.path.basename(str(entry["file"])))
    try:
        size = os.path.getsize(path)
    except OSError:
        raise CapsuleError(f"{path}: missing") from None
    if size != entry.get("bytes"):
        raise CapsuleError(f"{path}: truncated or changed ({size} bytes, the manifest says {entry.get('bytes')})")
    return path, entry


def read_optional_group(folder: str, manifest: dict[str, Any], group: str) -> Arrays | None:
    """An optional group's arrays (OPTIONAL_GROUPS), or None when this capsule's version wrote none."""
    return _read_group(folder, manifest, group) if group in manifest["files"] else None


def _read_group(folder: str, manifest: dict[str, Any], group: str) -> Arrays:
    path, entry = _group_file(folder, manifest, group)
    try:
        with np.load(path, allow_pickle=False) as npz:
            arrays = {name: npz[name] for name in npz.files}
    except (OSError, ValueError, KeyError, zipfile.BadZipFile) as e:
        raise CapsuleError(f"{path}: unreadable ({e})") from None
    expected = [a["name"] for a in entry["arrays"]]
    missing = [name for name in expected if name not in arrays]
    if missing:
        raise CapsuleError(f"{path}: arrays missing: {', '.join(missing[:5])}")
    return {name: arrays[name] for name in expected}


def read_verdict(folder: str) -> dict[str, Any] | None:
    """The last replay's verdict (a capsule folder's path or URL), None before any replay."""
    try:
        with storage.open_read(storage.join(folder, VERDICT)) as f:
            verdict = json.load(f)
    except (OSError, ValueError):
        return None
    return verdict if isinstance(verdict, dict) else None


# --- the batch's nesting: a JSON spec of dicts/tuples/lists/None around named arrays -------------------------------


def rebuild(spec: Any, arrays: Arrays) -> Any:
    """The nested batch from its spec (capsule/structure.py flatten) and the flat arrays."""
    kind = spec["kind"]
    if kind == "array":
        return arrays[spec["name"]]
    if kind == "none":
        return None
    if kind == "dict":
        return {key: rebuild(item, arrays) for key, item in spec["items"]}
    items = [rebuild(item, arrays) for item in spec["items"]]
    return tuple(items) if kind == "tuple" else items


# --- health of an array (numpy): what the capsule card and the trigger show ----------------------------------------


def health_counts(array: np.ndarray) -> dict[str, int]:
    """size, NaN, +inf, -inf counts (integers and bools are always finite)."""
    a = np.asarray(array)
    if not np.issubdtype(a.dtype, np.inexact):
        return {"size": int(a.size), "nan": 0, "pos_inf": 0, "neg_inf": 0}
    return {
        "size": int(a.size),
        "nan": int(np.count_nonzero(np.isnan(a))),
        "pos_inf": int(np.count_nonzero(np.isposinf(a))),
        "neg_inf": int(np.count_nonzero(np.isneginf(a))),
    }


def per_sample_health(array: np.ndarray) -> list[dict[str, float | int]]:
    """For each sample (first axis) of a batch array: its non-finite count and max |x| over its finite values."""
    a = np.asarray(array)
    if a.ndim == 0:
        a = a.reshape(1)
    rows = a.reshape(a.shape[0], -1)
    if not np.issubdtype(rows.dtype, np.inexact):
        peak = np.abs(rows.astype(np.float64)).max(axis=1) if rows.shape[1] else np.zeros(len(rows))
        return [{"sample": i, "nonfinite": 0, "max_abs": float(peak[i])} for i in range(len(rows))]
    finite = np.isfinite(rows)
    bad = (~finite).sum(axis=1)
    peak = np.where(finite, np.abs(rows), 0).max(axis=1) if rows.shape[1] else np.zeros(len(rows))
    return [{"sample": i, "nonfinite": int(bad[i]), "max_abs": float(peak[i])} for i in range(len(rows))]
