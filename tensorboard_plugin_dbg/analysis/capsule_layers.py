"""Which layer moved first, from a capsule's per-layer history (capsule/layer_history.py wrote, per trainable
variable, its gradient norm and max |w| over the last K steps up to the trigger).

A variable's band is BAND times the median of its finite gradient norms over the steps before the trigger; a step is
out of band when the norm is above it or non-finite. The first out of band is the variable whose earliest out-of-band
step comes first (ties: the larger excess), and its lead is how many steps before the trigger that step was ("first
out of band: dense_3/kernel, 4 steps before the trigger"). `report` prints the sentence under the capsule; the card
carries it with a bounded heatmap (`card_fields`: at most CARD_VARIABLES variables, the most out of band, in the
model's order). A capsule written before the history existed says so."""

from __future__ import annotations

from typing import TypedDict

import numpy as np

from tensorboard_plugin_dbg.reader import capsule_arrays, capsule_files
from tensorboard_plugin_dbg.reader.capsule_manifest import Manifest
from tensorboard_plugin_dbg.wire import types as wire

BAND = 10.0  # out of band: above BAND x the variable's own median
MIN_STEPS = 4  # steps before the trigger needed to know a band
MAX_BYTES = 16 << 20  # an array of the history (the writer keeps ~10 B x K x variables: ~301 KiB for 1,000)
CARD_VARIABLES = 48  # heatmap rows on the card (a model of 1,000 variables: the 48 most out of band)
# A tf.distribute capture (the manifest's `replicas`): its compiled step keeps no per-layer ring, in `fit` as in a loop.
NOT_UNDER_DISTRIBUTE = "not recorded under tf.distribute (the per-layer history is kept without a strategy only)"


class OutOfBand(TypedDict):
    """The variable whose gradient norm left its band first (all None when none did)."""

    variable: str | None
    index: int | None
    lead: int | None  # steps before the trigger
    value: float | None
    median: float | None


def history(folder: str, manifest: Manifest) -> tuple[list[str], np.ndarray, np.ndarray] | None:
    """(variable names, grad_norm [n, T], max_abs_w [n, T]), or None when the capsule holds none (or a damaged one).
    Read where the arrays lie (a path or a URL), each at most MAX_BYTES whatever the file claims."""
    entry = manifest.get("layer_history")
    if not isinstance(entry, dict) or not entry.get("recorded") or "layer_history" not in manifest.get("files", {}):
        return None
    names = entry.get("variables")
    try:
        located = capsule_arrays.locate_group(folder, manifest, "layer_history")
        locs = [located.get("grad_norm"), located.get("max_abs_w")]
        if not isinstance(names, list) or any(loc is None or loc.size > MAX_BYTES for loc in locs):
            return None
        norms, peaks = (capsule_arrays.read_whole(loc) for loc in locs if loc is not None)
    except capsule_files.CapsuleError:
        return None
    if norms.ndim != 2 or norms.shape != peaks.shape or norms.shape[0] != len(names):
        return None
    return [str(n) for n in names], norms.astype(np.float64), peaks.astype(np.float64)


def out_of_band(norms: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(each variable's median before the trigger [n], the mask of out-of-band steps [n, T])."""
    before = norms[:, :-1]
    finite = np.where(np.isfinite(before), before, np.nan)
    with np.errstate(all="ignore"):
        median = np.nanmedian(finite, axis=1) if before.shape[1] else np.full(len(norms), np.nan)
        # NaN medians (no finite step) and zero ones (an unused variable) judge only non-finite steps
        above = (median[:, None] > 0) & (norms > BAND * median[:, None])
    return median, above | ~np.isfinite(norms)


def first_out_of_band(names: list[str], norms: np.ndarray) -> OutOfBand | None:
    """The variable that left its band first: {variable, index, lead, value, median}; None when too few steps."""
    steps = norms.shape[1]
    if steps - 1 < MIN_STEPS or not names:
        return None
    median, mask = out_of_band(norms)
    earliest = np.where(mask.any(axis=1), mask.argmax(axis=1), steps)
    first = int(earliest.min())
    if first == steps:
        return {"variable": None, "index": None, "lead": None, "value": None, "median": None}
    tied = np.flatnonzero(earliest == first)
    with np.errstate(all="ignore"):
        excess = np.where(np.isfinite(norms[tied, first]), norms[tied, first] / median[tied], np.inf)
    pick = int(tied[int(np.argmax(np.nan_to_num(excess, nan=-1.0)))])
    value, base = float(norms[pick, first]), float(median[pick])
    return {"variable": names[pick], "index": pick, "lead": steps - 1 - first, "value": value, "median": base}


def sentence(found: tuple[list[str], np.ndarray, np.ndarray] | None, manifest: Manifest) -> str:
    if found is None:
        entry = manifest.get("layer_history")
        why = entry.get("why") if isinstance(entry, dict) else None
        if why and manifest.get("replicas") and not str(why).startswith("turned off"):
            return NOT_UNDER_DISTRIBUTE  # never the writer's guess there ("a custom loop without checked_apply?")
        return str(why) if why else "not recorded by this capsule's version"
    names, norms, _ = found
    first = first_out_of_band(names, norms)
    if first is None:
        return f"{norms.shape[1]} step(s) recorded: too few to know each variable's band"
    if first["variable"] is None:
        return f"no variable left its band (>{BAND:g}x its median gradient norm) in the last {norms.shape[1]} steps"
    lead, found_value, median = first["lead"], first["value"] or 0.0, first["median"] or 0.0  # set with the variable
    when = f"{lead} step{'s' * (lead != 1)} before the trigger" if lead else "at the trigger itself, not before"
    value = f"gradient norm {_num(found_value)}" if np.isfinite(found_value) else "non-finite gradient norm"
    return (
        f"first out of band: {first['variable']}, {when} ({value} vs its median {_num(median)}; "
        f"{len(names):,} variables, {norms.shape[1]} steps)"
    )


def card_fields(folder: str, manifest: Manifest) -> wire.CapsuleLayerHistory:
    """The card's `layer_history`: the sentence, the first out of band, and the heatmap's rows (log10 of the gradient
    norm; None where non-finite: the JSON stays finite and the canvas paints it apart)."""
    found = history(folder, manifest)
    text = sentence(found, manifest)
    if found is None:
        return {"text": text, "variables": [], "grad_norm": [], "steps": 0, "total": 0, "first": None, "lead": None}
    names, norms, _ = found
    first = first_out_of_band(names, norms)
    shown = _shown(norms, first)
    rows = [[_log10(v) for v in norms[i].tolist()] for i in shown]
    return {
        "text": text,
        "variables": [names[i] for i in shown],
        "grad_norm": rows,
        "steps": int(norms.shape[1]),
        "total": len(names),
        "first": first["variable"] if first else None,
        "lead": first["lead"] if first else None,
    }


def _shown(norms: np.ndarray, first: OutOfBand | None) -> list[int]:
    """At most CARD_VARIABLES rows, in the model's order: the first out of band, then the largest excess over the
    median."""
    if len(norms) <= CARD_VARIABLES:
        return list(range(len(norms)))
    median, _ = out_of_band(norms)
    with np.errstate(all="ignore"):
        excess = np.nanmax(np.where(np.isfinite(norms), norms, np.inf) / np.where(median > 0, median, 1)[:, None], 1)
    order = np.argsort(-np.nan_to_num(excess, nan=0.0), kind="stable")[:CARD_VARIABLES].tolist()
    if first and first.get("index") is not None and first["index"] not in order:
        order[-1] = first["index"]
    return sorted(order)


def _log10(value: float) -> float | None:
    if not np.isfinite(value):
        return None
    return float(np.log10(value)) if value > 0 else -45.0  # float32's smallest subnormal is 1.4e-45


def _num(value: float) -> str:
    return format(value, ".2g").replace("e+0", "e").replace("e+", "e").replace("e-0", "e-")
