"""The capsule cards' answer (route `capsules`): every NaN capsule under the logdir with its trigger, place in
training, replay verdict and command, the batch per sample (the bad samples first: which sample did it) and the
variables holding non-finite values. A damaged capsule is listed as such, with the reader's message.

One builder for a local logdir and a URL's (capsule_cards_remote.py lists a URL's capsule folders and calls
`cached`): the manifest, then every array located in its `.npz` where it lies (reader/capsule_arrays.py, through the
storage layer: a path or a URL alike) and read block by block (analysis/capsule_samples.py), so a card's memory is a
block's whatever the capsule claims. `card` assembles the card from its parts, in one place.

A card is built once per version of its capsule (the manifest's and the verdict's mtimes, or their ETags in a
URL's listing): the route may be asked again and again while the dashboard is open."""

from __future__ import annotations

import datetime
import os
import threading
import typing

from tensorboard_plugin_dbg.analysis import capsule_layers, capsule_rows, capsule_samples, capsule_text
from tensorboard_plugin_dbg.analysis.capsule_samples import health
from tensorboard_plugin_dbg.index.protocol import Catalog
from tensorboard_plugin_dbg.reader import capsule_arrays, capsule_files, storage
from tensorboard_plugin_dbg.reader.capsule_manifest import Manifest
from tensorboard_plugin_dbg.reader.tensor_content import TensorLocation
from tensorboard_plugin_dbg.wire import types as wire

SAMPLES_SHOWN = capsule_samples.SAMPLES_SHOWN
# the card's trigger kinds (a spike rule's trigger is its loss's or gradients'; its `text` says which rule)
_KINDS: dict[str, typing.Literal["loss", "gradient"]] = {
    "loss": "loss",
    "loss_spike": "loss",
    "gradient": "gradient",
    "grad_spike": "gradient",
}
Version = tuple[object, ...]
_cache: dict[str, tuple[Version, str, wire.CapsuleInfo]] = {}  # folder (path or URL) -> (version, created, card)
_cache_lock = threading.Lock()


def capsules(catalog: Catalog) -> wire.CapsulesResponse:
    """The cards of a local logdir (a URL's: capsule_cards_remote.capsules)."""
    run_names = [r.name for r in catalog.runs()]
    logdir = os.path.abspath(catalog.logdir)
    infos = []
    for folder in capsule_files.capsules_below(logdir):
        version = (
            _mtime(os.path.join(folder, capsule_files.MANIFEST)),
            _mtime(os.path.join(folder, capsule_files.VERDICT)),
        )
        _created, info = cached(folder, os.path.relpath(folder, logdir), version)
        replay_dir = storage.relpath(storage.join(folder, capsule_files.REPLAY_DIR), logdir)
        infos.append(with_replay_run(info, replay_dir, run_names))
    return {"logdir": catalog.logdir, "capsules": infos}


def cached(
    folder: str, rel: str, version: Version, listed: dict[str, int] | None = None
) -> tuple[str, wire.CapsuleInfo]:
    """build's answer, kept while `version` stays the capsule's."""
    with _cache_lock:
        hit = _cache.get(folder)
    if hit is not None and hit[0] == version:
        return hit[1], hit[2]
    created, info = build(folder, rel, listed)
    with _cache_lock:
        _cache[folder] = (version, created, info)
    return created, info


def with_replay_run(info: wire.CapsuleInfo, replay_dir: str, run_names: list[str]) -> wire.CapsuleInfo:
    """The card with the run holding its replay dump (`replay_dir` relative to the logdir), when the catalog has it."""
    replay_run = next((n for n in run_names if n == replay_dir or n.startswith(replay_dir + "#")), None)
    return {**info, "replay_run": replay_run} if info["status"] == "ok" else info


def _mtime(path: str) -> float:
    try:
        return os.stat(path).st_mtime
    except OSError:
        return -1.0


def summary(folder: str, logdir: str) -> wire.CapsuleInfo:
    """The card of the capsule at local path `folder` under `logdir` (uncached)."""
    return build(folder, os.path.relpath(folder, logdir))[1]


def build(folder: str, rel: str, listed: dict[str, int] | None = None) -> tuple[str, wire.CapsuleInfo]:
    """(the manifest's `created`, the card) of the capsule at `folder` (a path, or a URL with the sizes its listing
    gave: `listed`); a damaged one's card says why."""
    try:
        manifest = capsule_files.read_manifest(folder)
        if listed is not None:  # missing or truncated from the listing, without a request
            capsule_files.check_listed_files(folder, manifest, listed)
        located = {group: capsule_arrays.locate_group(folder, manifest, group) for group in capsule_files.GROUPS}
        return str(manifest.get("created", "")), card(folder, rel, manifest, located)
    except DAMAGE as e:
        return "", damaged(rel, e)


# what reading one capsule may raise: each is that capsule's damaged card, never the route's 500 (a manifest of the
# right version with wrong fields; a header claiming more memory than exists; JSON nested beyond the stack)
DAMAGE = (
    capsule_files.CapsuleError,
    KeyError,
    TypeError,
    ValueError,
    AttributeError,
    MemoryError,
    RecursionError,
    NotImplementedError,  # zipfile's answer to a flipped flag or version field
)


def damaged(rel: str, e: BaseException) -> wire.CapsuleInfo:
    """The card of a capsule that could not be read, with why (local and remote cards alike)."""
    if isinstance(e, capsule_files.CapsuleError):
        return {"path": rel, "status": "damaged", "error": str(e)}
    if isinstance(e, (MemoryError, RecursionError)):
        return {"path": rel, "status": "damaged", "error": f"{rel}: cannot be read ({type(e).__name__})"}
    return {"path": rel, "status": "damaged", "error": f"{rel}: unexpected content ({type(e).__name__}: {e})"}


def card(
    folder: str,
    rel: str,
    manifest: Manifest,
    located: dict[str, dict[str, TensorLocation]],
) -> wire.CapsuleInfo:
    """A readable capsule's card, assembled from its parts (`folder` a path or URL; `located`: each group's arrays
    where they lie). A new card field is one line here, computed in its own module from these arguments."""
    trigger = manifest["trigger"]
    samples = capsule_samples.top_samples(located["batch"])
    verdict = capsule_files.read_verdict(folder)
    return {
        "path": rel,
        "status": "ok",
        "step": int(manifest["step"]),
        "epoch": manifest.get("epoch"),
        "batch_index": manifest.get("batch_index"),
        "trigger": {
            "kind": _KINDS.get(str(trigger.get("kind")), "unknown"),
            "name": str(trigger.get("name")),
            "health": health(trigger.get("health") or {}),
            "text": capsule_text.trigger_text(trigger) + capsule_text.replica_suffix(manifest),
        },
        "verdict": _known(verdict.get("verdict") if verdict else None),  # replay.json may come from someone else
        "verdict_text": capsule_text.verdict_text(verdict),
        "replay_command": capsule_text.review_command(folder),  # asks before running (#37)
        "replay_run": None,
        "samples": samples[0][:SAMPLES_SHOWN],
        "samples_total": samples[1],
        "bad_weights": capsule_samples.bad_weights(located),
        "arrays": _arrays(located),
        "sample_loss": capsule_rows.card_fields(folder, manifest),  # #36: per-sample loss at the trigger
        "layer_history": capsule_layers.card_fields(folder, manifest),  # #36: which layer moved first
        "captured_time": captured_time(manifest.get("created")),  # #36: the dashboard's landing
    }


def captured_time(created: object) -> float | None:
    """The manifest's `created` (ISO 8601, UTC, capsule/writer.py) in seconds since the epoch; None if absent or not
    a time (a capsule comes from others: a bad field costs this field only)."""
    try:
        moment = datetime.datetime.fromisoformat(str(created))
    except ValueError:
        return None
    return (moment if moment.tzinfo else moment.replace(tzinfo=datetime.timezone.utc)).timestamp()


def _arrays(located: dict[str, dict[str, TensorLocation]]) -> list[wire.CapsuleArrayInfo]:
    """What Tensor Values can open (route capsule_array), as located: names, dtypes, shapes."""
    listed: list[wire.CapsuleArrayInfo] = []
    for group in ("batch", "weights", "optimizer"):
        for name, loc in located[group].items():
            listed.append({"group": group, "name": name, "dtype": loc.dtype, "shape": [int(d) for d in loc.shape]})
    return listed


def _known(verdict: str | None) -> wire.CapsuleVerdict | None:
    """A verdict the card's type names (an unknown word from a crafted replay.json: none, its text says it)."""
    return next((v for v in typing.get_args(wire.CapsuleVerdict) if v == verdict), None)
