"""The parts of a capsule card read from its arrays where they lie (located members, a path or a URL alike): the
per-sample table's top rows and the variables holding non-finite values. Both read block by block
(reader/capsule_arrays.py), so a card's memory is a block's whatever the capsule claims (1 M samples: one table of
SHOWN rows merged with each block's, never a column per sample)."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from tensorboard_plugin_dbg.reader import capsule_arrays
from tensorboard_plugin_dbg.reader.tensor_content import TensorLocation
from tensorboard_plugin_dbg.wire import types as wire

SAMPLES_SHOWN = 50
SAMPLE_BLOCK = 1 << 18  # elements of a batch array read at a time (a few MiB with their per-sample columns)
_Rows = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]  # non-finite, max |x|, array index, sample


def top_samples(
    batch: dict[str, TensorLocation], shown: int = SAMPLES_SHOWN, block: int = SAMPLE_BLOCK
) -> tuple[list[wire.CapsuleSample], int]:
    """The `shown` first rows of the per-sample table — the bad samples first (which sample did it), then by max |x|,
    then by array and sample — and the table's length (every array's samples)."""
    names = list(batch)
    top: _Rows = (np.zeros(0, np.int64), np.zeros(0), np.zeros(0, np.int64), np.zeros(0, np.int64))
    total = 0
    for which, name in enumerate(names):
        total += capsule_arrays.samples_of(batch[name])
        for first, bad, peak in capsule_arrays.sample_columns(batch[name], block):
            rows = (bad, peak, np.full(len(bad), which, np.int64), np.arange(first, first + len(bad), dtype=np.int64))
            top = _best(top, rows, shown)
    bad, peak, which_col, sample = top
    listed: list[wire.CapsuleSample] = [
        {"array": names[int(w)], "sample": int(s), "nonfinite": int(b), "max_abs": float(p)}
        for b, p, w, s in zip(bad, peak, which_col, sample)
    ]
    return listed, total


def _best(top: _Rows, rows: _Rows, shown: int) -> _Rows:
    """The `shown` first of both tables in the card's order (a total order: merging block by block picks the rows a
    sort of the whole table would)."""
    bad, peak, which, sample = (np.concatenate([a, b]) for a, b in zip(top, rows))
    order = np.lexsort((sample, which, -peak, -bad))[:shown]
    return bad[order], peak[order], which[order], sample[order]


def bad_weights(located: dict[str, dict[str, TensorLocation]]) -> list[wire.CapsuleBadWeight]:
    """The variables (weights and optimizer state) holding a NaN or an infinity, with their counts."""
    bad: list[wire.CapsuleBadWeight] = []
    for group in ("weights", "optimizer"):
        for name, loc in located[group].items():
            h = health(capsule_arrays.health(loc))
            if h["nan"] or h["pos_inf"] or h["neg_inf"]:
                bad.append({"name": name, "group": "weights" if group == "weights" else "optimizer", **h})
    return bad


def health(counts: Mapping[str, object]) -> wire.CapsuleHealth:
    """The card's counts (a trigger's from the manifest: a count that is not a number is none)."""
    size, nan, pos_inf, neg_inf = (counts.get(k) for k in ("size", "nan", "pos_inf", "neg_inf"))
    return {"size": _count(size), "nan": _count(nan), "pos_inf": _count(pos_inf), "neg_inf": _count(neg_inf)}


def _count(value: object) -> int:
    return int(value) if isinstance(value, (int, float)) and value == value and abs(value) < 2**63 else 0
