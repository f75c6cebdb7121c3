"""The capsule cards (route `capsules`) of a logdir behind a URL (gs://, s3://, memory://, any scheme the storage
layer reads), the same cards as for a local copy of it, read in place: nothing is copied and nothing is written.

One recursive listing per request finds the capsule folders (those holding a manifest) and the sizes of their
files, which answers "missing or truncated" without a request. Then each capsule not seen at this version (the
manifest's and replay.json's ETag or generation in that listing) is read: its manifest (one small object), each batch
array by a ranged read of its place in `batch.npz` (reader/capsule_arrays.py, as route `capsule_array` reads it: the
per-sample health), and the variables' health block by block. A listing that fails (unreachable endpoint, denied
credentials, missing bucket) answers no cards and a `notice` in words; every request waits at most
storage.REQUEST_TIMEOUT_S."""

from __future__ import annotations

import threading
from typing import Any

from tensorboard_plugin_dbg.analysis import capsule_array, capsule_summary
from tensorboard_plugin_dbg.index.protocol import Catalog
from tensorboard_plugin_dbg.reader import capsule_arrays, capsule_files, capsule_remote, storage
from tensorboard_plugin_dbg.wire import types as wire

DEPTH = 3  # capsule folders this deep under the logdir at most, as capsule_files.capsules_below
_Version = tuple[object, ...]
_cache: dict[str, tuple[_Version, str, wire.CapsuleInfo]] = {}  # folder URL -> (version, created, card)
_cache_lock = threading.Lock()


def is_remote(logdir: str) -> bool:
    return storage.is_remote(logdir)


def capsules(catalog: Catalog) -> wire.CapsulesResponse:
    url = storage.normalize(catalog.logdir)
    try:
        listed = storage.list_files(url)
    except OSError as e:  # storage's errors in words: unreachable endpoint, timeout, denied, no such bucket
        return {"logdir": catalog.logdir, "capsules": [], "notice": _notice(url, e)}
    run_names = [r.name for r in catalog.runs()]
    found = []
    for folder in sorted(capsule_remote.capsule_files_under(url, listed)):
        rel = storage.relpath(folder, url)
        if rel != "." and rel.count("/") >= DEPTH:
            continue
        created, info = _cached(folder, rel, listed)
        replay_dir = storage.relpath(storage.join(folder, capsule_files.REPLAY_DIR), url)
        found.append((created, rel, capsule_summary.with_replay_run(info, replay_dir, run_names)))
    found.sort(key=lambda item: (item[0], item[1]))  # first captured first, as on disk
    answer: wire.CapsulesResponse = {"logdir": catalog.logdir, "capsules": [info for _created, _rel, info in found]}
    refused = storage.refused_notice(url)
    if refused:
        answer["notice"] = refused
    return answer


def _notice(url: str, exc: OSError) -> str:
    return (
        f"Cannot list {url} for NaN capsules: {exc.strerror or exc}. Tried again on the next refresh (each request "
        f"waits at most {storage.REQUEST_TIMEOUT_S:g} s)."
    )


def _cached(folder: str, rel: str, listed: dict[str, int]) -> tuple[str, wire.CapsuleInfo]:
    version = tuple(storage.listed_version(storage.join(folder, name)) for name in _VERSIONED)
    with _cache_lock:
        hit = _cache.get(folder)
    if hit is not None and hit[0] == version:
        return hit[1], hit[2]
    created, info = summary(folder, rel, listed)
    with _cache_lock:
        _cache[folder] = (version, created, info)
    return created, info


_VERSIONED = (capsule_files.MANIFEST, capsule_files.VERDICT)


def summary(folder: str, rel: str, listed: dict[str, int]) -> tuple[str, wire.CapsuleInfo]:
    """(the manifest's `created`, the card) of the capsule at URL `folder`; a damaged one's card says why."""
    try:
        manifest = capsule_files.read_manifest(folder)
        capsule_files.check_listed_files(folder, manifest, listed)
        batch = capsule_arrays.locate_group(folder, manifest, "batch")
        samples = capsule_summary.top_samples({name: capsule_arrays.read_whole(loc) for name, loc in batch.items()})
        card = capsule_summary.card(folder, rel, manifest, samples, _bad_weights(folder, manifest), _arrays(manifest))
        return str(manifest.get("created", "")), card
    except capsule_summary.DAMAGE as e:
        return "", capsule_summary.damaged(rel, e)


def _bad_weights(folder: str, manifest: dict[str, Any]) -> list[wire.CapsuleBadWeight]:
    bad: list[wire.CapsuleBadWeight] = []
    for group in ("weights", "optimizer"):
        for name, loc in capsule_arrays.locate_group(folder, manifest, group).items():
            h = capsule_summary.health(capsule_arrays.health(loc))
            if h["nan"] or h["pos_inf"] or h["neg_inf"]:
                bad.append({"name": name, "group": "weights" if group == "weights" else "optimizer", **h})
    return bad


def _arrays(manifest: dict[str, Any]) -> list[wire.CapsuleArrayInfo]:
    """What Tensor Values can open, from the manifest's listing (names, dtypes, shapes: as the arrays were saved)."""
    listed: list[wire.CapsuleArrayInfo] = []
    for group in capsule_array.GROUPS:
        for a in manifest["files"][group]["arrays"]:
            shape: list[float] = [int(d) for d in a["shape"]]
            listed.append({"group": group, "name": str(a["name"]), "dtype": str(a["dtype"]), "shape": shape})
    return listed
