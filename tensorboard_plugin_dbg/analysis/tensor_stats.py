"""Whole-tensor numbers of a FULL_TENSOR value, in two passes over blocks of the file (never the whole tensor in
memory, no per-element Python objects): pass 1 the classes (NaN, -inf, +inf, negative, zero, positive), min, max,
sum, the first non-finite positions and per-axis non-finite counts; pass 2 the histogram of the finite values and
the sum of squared deviations (std). Ints and bools: what applies (no non-finite class; bool as 0/1). Complex:
everything of the modulus |z| (NaN when a part is NaN and none is infinite). Strings: the count only.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any, Literal, TypedDict

import numpy as np
import numpy.typing as npt

from tensorboard_plugin_dbg.index.protocol import RunQueries, TensorRecord
from tensorboard_plugin_dbg.reader import tensor_content
from tensorboard_plugin_dbg.wire import types as wire


class Summary(TypedDict):
    """The whole-tensor part of wire.ts TensorResponse (None where the tensor holds strings)."""

    stats: wire.TensorStats
    histogram: wire.TensorHistogram | None
    nonfinite: wire.NonFinitePositions | None


BLOCK = 1 << 21  # elements per block: 8 MiB of float32, ~30 MiB of temporaries at most
MAX_POSITIONS = 100  # first non-finite positions listed (C order)
MAX_AXIS_ENTRIES = 1000  # per axis, the first indices holding a non-finite element
_AXIS_BINCOUNT = 1 << 20  # longer axes are not counted per index (null)
DEFAULT_BINS = 64
MAX_BINS = 1024


class _Pass1:
    def __init__(self, shape: tuple[int, ...]):
        self.shape = shape
        self.counts = dict.fromkeys(("nan", "neg_inf", "pos_inf", "neg", "zero", "pos"), 0)
        self.n_finite, self.total = 0, 0.0
        self.shift: float | None = None  # sum of squares around a value of the tensor (no cancellation in the std)
        self.squares = 0.0
        self.lo, self.hi = math.inf, -math.inf
        self.positions: list[np.ndarray] = []
        self.n_positions = 0
        self.per_axis = [np.zeros(d, np.int64) if d <= _AXIS_BINCOUNT else None for d in shape]

    def add(self, first: int, x: np.ndarray) -> None:
        finite = np.isfinite(x) if x.dtype.kind == "f" else None
        if finite is not None and not finite.all():
            bad = np.flatnonzero(~finite)
            vals = x[bad]
            nan = np.isnan(vals)
            self.counts["nan"] += int(nan.sum())
            self.counts["pos_inf"] += int((vals > 0).sum())
            self.counts["neg_inf"] += int((vals < 0).sum())
            self._positions(bad + first)
            x = x[finite]
        if not x.size:
            return
        neg, zero = int(np.count_nonzero(x < 0)), int(np.count_nonzero(x == 0))
        self.counts["neg"] += neg
        self.counts["zero"] += zero
        self.counts["pos"] += x.size - neg - zero
        self.n_finite += x.size
        self.total += float(np.add.reduce(x, dtype=np.float64))
        self.lo, self.hi = min(self.lo, x.min().item()), max(self.hi, x.max().item())
        if self.shift is None:
            self.shift = float(x[0])
        # float32/float64 in their own dtype (no widened copy of a big block); float16 and ints widened first
        wide = x if x.dtype in (np.float32, np.float64) else x.astype(np.float64)
        d = wide - wide.dtype.type(self.shift)
        np.multiply(d, d, out=d)
        self.squares += float(np.add.reduce(d, dtype=np.float64))

    def std(self) -> float:
        m = self.total / self.n_finite - (self.shift or 0.0)
        return math.sqrt(max(0.0, self.squares / self.n_finite - m * m))

    def _positions(self, flat: np.ndarray) -> None:
        if self.n_positions < MAX_POSITIONS:
            take = flat[: MAX_POSITIONS - self.n_positions]
            self.positions.append(take)
            self.n_positions += len(take)
        if self.shape:
            for axis, idx in enumerate(np.unravel_index(flat, self.shape)):
                counts = self.per_axis[axis]
                if counts is not None:
                    counts += np.bincount(idx, minlength=len(counts))


def _numbers(block: np.ndarray) -> np.ndarray:
    if block.dtype.kind == "c":
        return np.abs(block)
    if block.dtype.kind == "b":
        return block.view(np.uint8)
    return block


def _blocks(loc: tensor_content.TensorLocation) -> Iterator[tuple[int, npt.NDArray[Any]]]:
    for first, block in tensor_content.blocks(loc, BLOCK):
        yield first, _numbers(block)


def cached(run: RunQueries, record: TensorRecord, bins: int = DEFAULT_BINS) -> Summary:
    """compute() of a located tensor, once per (tensor, bins) in the run's derived cache: the dump's records never
    change, so the key is the record's place and the value is never stale. The Tensor Values view and the root
    cause (a data batch's bad elements) share it."""
    loc = record.location
    assert loc is not None
    return run.derived.get(f"tensor_summary:{record.key}", bins, lambda: compute(loc, bins))


def compute(loc: tensor_content.TensorLocation, bins: int = DEFAULT_BINS) -> Summary:
    """wire.ts TensorSummary: `stats`, `histogram` and `nonfinite` of the whole tensor."""
    if loc.storage is None:  # strings
        return {"stats": _stats_of(None, loc.size, "none"), "histogram": None, "nonfinite": None}
    p1 = _Pass1(loc.shape)
    for first, x in _blocks(loc):
        p1.add(first, x)
    lo, hi = (float(p1.lo), float(p1.hi)) if p1.n_finite else (0.0, 1.0)
    if hi <= lo:  # one value: a range around it, wider than float64's spacing there (a uint64 key near 1e19)
        pad = max(0.5, abs(lo) * 1e-6)
        lo, hi = lo - pad, hi + pad
    counts = np.zeros(bins, np.int64)
    edges = np.linspace(lo, hi, bins + 1)
    mean = p1.total / p1.n_finite if p1.n_finite else 0.0
    if p1.n_finite:
        for _first, x in _blocks(loc):
            if x.dtype.kind == "f":
                x = x[np.isfinite(x)]
            counts += _histogram(x, lo, hi, edges)
    of: Literal["modulus", "values"] = "modulus" if loc.dtype.startswith("complex") else "values"
    stats = _stats_of(p1, loc.size, of)
    if p1.n_finite:
        stats["min"], stats["max"], stats["mean"], stats["std"] = p1.lo, p1.hi, mean, p1.std()
    histogram: wire.TensorHistogram = {
        "edges": edges.tolist(),
        "counts": counts.tolist(),
        "nan": p1.counts["nan"],
        "neg_inf": p1.counts["neg_inf"],
        "pos_inf": p1.counts["pos_inf"],
    }
    return {"stats": stats, "histogram": histogram, "nonfinite": _nonfinite(p1)}


def _histogram(x: np.ndarray, lo: float, hi: float, edges: np.ndarray) -> np.ndarray:
    """np.histogram(x.astype(float64), len(edges) - 1, (lo, hi))[0] for finite `x` within [lo, hi]: each value's bin
    estimated arithmetically (in float32 for float32 data: half the memory traffic), and only the values within
    rounding of a bin edge compared with the float64 edges themselves, as numpy's correction step does for every
    value (that step and its 65,536-element Python loop were most of np.histogram's 1.7 s on a 256 MiB tensor)."""
    bins = len(edges) - 1
    work = x if x.dtype == np.float32 else x.astype(np.float32 if x.dtype == np.float16 else np.float64)
    if work.dtype == np.float32 and hi - lo > float(np.finfo(np.float32).max):
        work = x.astype(np.float64)  # a range beyond float32 (±3e38 both present) overflowed to inf, then to INT64_MIN
    eps = 1e-3 if work.dtype == np.float32 else 1e-6
    f = work - work.dtype.type(lo)
    f *= work.dtype.type(bins / (hi - lo))
    idx = f.astype(np.intp)
    np.clip(idx, 0, bins - 1, out=idx)  # a range overflowing even float64 casts inf/NaN to INT64_MIN: never an index
    f -= idx
    near = np.flatnonzero((f < eps) | (f > 1 - eps))
    if len(near):
        v, k = work[near].astype(np.float64), idx[near]
        k = k - (v < edges[k])
        k = k + ((v >= edges[np.minimum(k + 1, bins)]) & (k < bins - 1))
        idx[near] = np.clip(k, 0, bins - 1)
    return np.bincount(idx, minlength=bins)


def _stats_of(p1: _Pass1 | None, size: int, of: Literal["values", "modulus", "none"]) -> wire.TensorStats:
    counts: dict[str, int | None] = {**p1.counts} if p1 is not None else {}  # strings: no class counts
    return {
        "of": of,
        "count": size,
        "nan": counts.get("nan"),
        "neg_inf": counts.get("neg_inf"),
        "pos_inf": counts.get("pos_inf"),
        "neg": counts.get("neg"),
        "zero": counts.get("zero"),
        "pos": counts.get("pos"),
        "min": None,
        "max": None,
        "mean": None,
        "std": None,
    }


def _nonfinite(p1: _Pass1) -> wire.NonFinitePositions:
    total = p1.counts["nan"] + p1.counts["neg_inf"] + p1.counts["pos_inf"]
    flat = np.concatenate(p1.positions) if p1.positions else np.zeros(0, np.int64)
    positions = np.stack(np.unravel_index(flat, p1.shape), axis=1).tolist() if p1.shape else [[] for _ in flat]
    per_axis: list[wire.AxisCounts | None] = []
    for counts in p1.per_axis:
        if counts is None:
            per_axis.append(None)
            continue
        idx = np.flatnonzero(counts)
        per_axis.append(
            {
                "index": idx[:MAX_AXIS_ENTRIES].tolist(),
                "count": counts[idx[:MAX_AXIS_ENTRIES]].tolist(),
                "truncated": len(idx) > MAX_AXIS_ENTRIES,
            }
        )
    return {"total": total, "positions": positions, "truncated": total > len(positions), "per_axis": per_axis}
