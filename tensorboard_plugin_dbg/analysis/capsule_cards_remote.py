"""The capsule cards (route `capsules`) of a logdir behind a URL (gs://, s3://, memory://, any scheme the storage
layer reads), the same cards as for a local copy of it, read in place: nothing is copied and nothing is written.

One recursive listing per request finds the capsule folders (those holding a manifest) and the sizes of their
files, which answers "missing or truncated" without a request. Then each capsule not seen at this version (the
manifest's and replay.json's ETag or generation in that listing) is built by the one card builder, as a local
capsule's (analysis/capsule_summary.py): its manifest (one small object), then every array by ranged reads of its
place in its `.npz`, block by block. A listing that fails (unreachable endpoint, denied
credentials, missing bucket) answers no cards and a `notice` in words; every request waits at most
storage.REQUEST_TIMEOUT_S."""

from __future__ import annotations

from tensorboard_plugin_dbg.analysis import capsule_summary
from tensorboard_plugin_dbg.index.protocol import Catalog
from tensorboard_plugin_dbg.reader import capsule_files, capsule_remote, storage
from tensorboard_plugin_dbg.wire import types as wire

DEPTH = 3  # capsule folders this deep under the logdir at most, as capsule_files.capsules_below


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
    return capsule_summary.cached(folder, rel, version, listed)


_VERSIONED = (capsule_files.MANIFEST, capsule_files.VERDICT)
