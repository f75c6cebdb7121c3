"""Which rows of a capsule's batch carry the loss (capsule/forensics.py wrote the per-sample loss at the trigger):
the rows whose loss is non-finite, else the few rows that carry most of it ("rows 17 and 40 carry 98 % of the
loss"), else that it is spread. `report` prints the sentence under the capsule; the capsule card shows it with the
top rows (`card_fields`, merged into the card by its builder). A capsule written before the per-sample loss existed
says so."""

from __future__ import annotations

import numpy as np

from tensorboard_plugin_dbg.reader import capsule_arrays, capsule_files
from tensorboard_plugin_dbg.reader.capsule_manifest import Manifest
from tensorboard_plugin_dbg.wire import types as wire

TOP_ROWS = 8  # rows listed on the card
_CARRY = 0.9  # "carry" names the fewest rows holding this share of the finite loss ...
_FEW = 3  # ... when they are at most this many


def per_sample_loss(folder: str, manifest: Manifest, member: str = "per_sample_loss") -> np.ndarray | None:
    """A per-sample loss of the capsule at `folder` (a path or a URL; the trigger's, or `previous_per_sample_loss`),
    read where it lies in forensics.npz."""
    if "forensics" not in manifest["files"]:
        return None
    try:
        loc = capsule_arrays.locate_group(folder, manifest, "forensics").get(member)
        return None if loc is None else capsule_arrays.read_whole(loc)
    except capsule_files.CapsuleError:  # listed but damaged: the sentence says so
        return None


def previous_sentence(folder: str, manifest: Manifest) -> str:
    """The previous step's batch (capsule/forensics.py kept it by reference): its per-sample loss in one sentence."""
    entry = (manifest.get("forensics") or {}).get("previous")
    if not isinstance(entry, dict):
        return "not recorded by this capsule's version"
    values = per_sample_loss(folder, manifest, "previous_per_sample_loss")
    if values is None:
        return str(entry.get("why") or "not recorded")
    where = f"batch {entry.get('batch_index', '?')} of epoch {entry.get('epoch', '?')}"
    return f"{where}, the same weights: {sentence(values, manifest)}"


def sentence(values: np.ndarray | None, manifest: Manifest) -> str:
    """The per-sample loss in one sentence."""
    if values is None:
        why = (manifest.get("forensics") or {}).get("why")
        if "forensics" in (manifest.get("files") or {}):
            why = "forensics.npz is unreadable"
        return str(why or "not recorded by this capsule's version")
    bad = np.flatnonzero(~np.isfinite(values))
    if len(bad):
        kinds = sorted({"NaN" if np.isnan(values[i]) else "inf" for i in bad[:64]})
        return f"{_rows(bad)} {'is' if len(bad) == 1 else 'are'} non-finite ({', '.join(kinds)}) of {len(values):,}"
    total = float(np.sum(values))
    if len(values) == 0 or total <= 0:
        return f"0 over all {len(values):,} samples"
    order = np.argsort(-values, kind="stable")
    share = np.cumsum(values[order]) / total
    k = int(np.searchsorted(share, _CARRY)) + 1
    if k <= _FEW and k < len(values) / 2:
        verb = "carries" if k == 1 else "carry"
        return f"{_rows(order[:k])} {verb} {share[k - 1] * 100:.0f} % of the loss ({len(values):,} samples)"
    return f"spread: the top row ({int(order[0])}) carries {share[0] * 100:.0f} % of the loss ({len(values):,} samples)"


def card_fields(folder: str, manifest: Manifest) -> wire.CapsuleSampleLoss:
    """The card's `sample_loss`: the sentence and the top rows (non-finite first, then by loss)."""
    values = per_sample_loss(folder, manifest)
    rows: list[wire.CapsuleLossRow] = []
    if values is not None:
        key = np.where(np.isfinite(values), values, np.inf)
        for i in np.argsort(-key, kind="stable")[:TOP_ROWS].tolist():
            rows.append({"sample": i, "loss": float(values[i])})  # non-finite: the JSON encoder's "NaN" / "Infinity"
    samples = 0 if values is None else len(values)
    previous = previous_sentence(folder, manifest)
    return {"text": sentence(values, manifest), "rows": rows, "samples": samples, "previous": previous}


def _rows(indices: np.ndarray) -> str:
    names = [str(int(i)) for i in indices[: _FEW + 1]]
    more = f" and {len(indices) - len(names):,} more" if len(indices) > len(names) else ""
    if len(names) == 1:
        return f"row {names[0]}"
    return f"rows {', '.join(names[:-1])} and {names[-1]}{more}" if not more else f"rows {', '.join(names)}{more}"


rows_text = _rows  # "rows 17 and 40", for analysis/spike_cause.py too
