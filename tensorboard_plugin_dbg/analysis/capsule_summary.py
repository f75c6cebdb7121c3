"""The capsule cards' answer (route `capsules`): every NaN capsule under the logdir with its trigger, place in
training, replay verdict and command, the batch per sample (the bad samples first: which sample did it) and the
variables holding non-finite values. A damaged capsule is listed as such, with the reader's message.

A capsule's arrays are read once per version of its files (the manifest's and the verdict's mtimes): the route may
be asked again and again while the dashboard is open."""

from __future__ import annotations

import os
import threading
from typing import Any

import numpy as np

from tensorboard_plugin_dbg.analysis import capsule_layers, capsule_rows, capsule_text
from tensorboard_plugin_dbg.index.protocol import Catalog
from tensorboard_plugin_dbg.reader import capsule_files, storage
from tensorboard_plugin_dbg.wire import types as wire

SAMPLES_SHOWN = 50
_cache: dict[str, tuple[tuple[float, float], wire.CapsuleInfo]] = {}
_cache_lock = threading.Lock()


def capsules(catalog: Catalog) -> wire.CapsulesResponse:
    """The cards of a local logdir (a URL's: capsule_cards_remote.capsules)."""
    run_names = [r.name for r in catalog.runs()]
    logdir = os.path.abspath(catalog.logdir)
    infos = [_cached(folder, logdir, run_names) for folder in capsule_files.capsules_below(logdir)]
    return {"logdir": catalog.logdir, "capsules": infos}


def _cached(folder: str, logdir: str, run_names: list[str]) -> wire.CapsuleInfo:
    version = (_mtime(os.path.join(folder, capsule_files.MANIFEST)), _mtime(os.path.join(folder, "replay.json")))
    with _cache_lock:
        hit = _cache.get(folder)
    if hit is not None and hit[0] == version:
        info = hit[1]
    else:
        info = summary(folder, logdir)
        with _cache_lock:
            _cache[folder] = (version, info)
    return with_replay_run(info, storage.relpath(storage.join(folder, capsule_files.REPLAY_DIR), logdir), run_names)


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
    rel = os.path.relpath(folder, logdir)
    try:
        return _summary(capsule_files.load(folder), rel)
    except DAMAGE as e:
        return damaged(rel, e)


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


def _summary(capsule: capsule_files.Capsule, rel: str) -> wire.CapsuleInfo:
    return card(
        capsule.path,
        rel,
        capsule.manifest,
        _samples(capsule.batch),
        _bad_weights(capsule),
        _arrays(capsule),
    )


def card(
    folder: str,
    rel: str,
    manifest: dict[str, Any],
    samples: tuple[list[wire.CapsuleSample], int],
    bad_weights: list[wire.CapsuleBadWeight],
    arrays: list[wire.CapsuleArrayInfo],
) -> wire.CapsuleInfo:
    """A readable capsule's card from what was read of it (`folder` a path or URL: capsule_cards_remote.py)."""
    trigger = manifest["trigger"]
    verdict = capsule_files.read_verdict(folder)
    return {
        "path": rel,
        "status": "ok",
        "step": int(manifest["step"]),
        "epoch": manifest.get("epoch"),
        "batch_index": manifest.get("batch_index"),
        "trigger": {
            "kind": trigger.get("kind", "unknown"),
            "name": str(trigger.get("name")),
            "health": health(trigger.get("health") or {}),
            "text": capsule_text.trigger_text(trigger),
        },
        "verdict": verdict.get("verdict") if verdict else None,
        "verdict_text": capsule_text.verdict_text(verdict),
        "replay_command": capsule_text.replay_command(folder, manifest),
        "replay_run": None,
        "samples": samples[0][:SAMPLES_SHOWN],
        "samples_total": samples[1],
        "bad_weights": bad_weights,
        "arrays": arrays,
        "sample_loss": capsule_rows.card_fields(folder, manifest),  # #36: per-sample loss at the trigger
        "layer_history": capsule_layers.card_fields(folder, manifest),  # #36: which layer moved first
    }


def health(counts: dict[str, int]) -> wire.CapsuleHealth:
    return {
        "size": int(counts.get("size", 0)),
        "nan": int(counts.get("nan", 0)),
        "pos_inf": int(counts.get("pos_inf", 0)),
        "neg_inf": int(counts.get("neg_inf", 0)),
    }


def _arrays(capsule: capsule_files.Capsule) -> list[wire.CapsuleArrayInfo]:
    listed: list[wire.CapsuleArrayInfo] = []
    for name, a in capsule.batch.items():
        listed.append({"group": "batch", "name": name, "dtype": str(a.dtype), "shape": [int(d) for d in a.shape]})
    for name, a in capsule.weights.items():
        listed.append({"group": "weights", "name": name, "dtype": str(a.dtype), "shape": [int(d) for d in a.shape]})
    for name, a in capsule.optimizer.items():
        listed.append({"group": "optimizer", "name": name, "dtype": str(a.dtype), "shape": [int(d) for d in a.shape]})
    return listed


def _samples(batch: dict[str, np.ndarray]) -> tuple[list[wire.CapsuleSample], int]:
    return top_samples(batch)


def top_samples(batch: dict[str, np.ndarray], shown: int = SAMPLES_SHOWN) -> tuple[list[wire.CapsuleSample], int]:
    """The `shown` first rows of the per-sample table — the bad samples first (which sample did it), then by max |x|,
    then by array and sample — and the table's length. Picked from numpy columns (lexsort over the batch's samples):
    no Python object per sample."""
    names = list(batch)
    columns = [capsule_files.per_sample_columns(batch[name]) for name in names]
    if not columns:
        return [], 0
    bad = np.concatenate([c[0] for c in columns])
    peak = np.concatenate([c[1] for c in columns])
    which = np.concatenate([np.full(len(c[0]), i, np.int64) for i, c in enumerate(columns)])
    sample = np.concatenate([np.arange(len(c[0]), dtype=np.int64) for c in columns])
    order = np.lexsort((sample, which, -peak, -bad))[:shown]
    rows: list[wire.CapsuleSample] = [
        {"array": names[which[i]], "sample": int(sample[i]), "nonfinite": int(bad[i]), "max_abs": float(peak[i])}
        for i in order
    ]
    return rows, len(bad)


def _bad_weights(capsule: capsule_files.Capsule) -> list[wire.CapsuleBadWeight]:
    bad: list[wire.CapsuleBadWeight] = []
    for group, arrays in (("weights", capsule.weights), ("optimizer", capsule.optimizer)):
        for name, array in arrays.items():
            h = health(capsule_files.health_counts(array))
            if h["nan"] or h["pos_inf"] or h["neg_inf"]:
                bad.append({"name": name, "group": "weights" if group == "weights" else "optimizer", **h})
    return bad
