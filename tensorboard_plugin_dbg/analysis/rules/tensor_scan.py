"""One pass over a run's health records, reduced per trace kind (graph, op, slot, mode, device) to what the tensor
rules need, whatever their thresholds: how often the output's shape and dtype changed from one step to the next
(and where first), and the longest run of consecutive all-zero steps (and where). A step of a kind is its k-th
trace (tfdbg2 records no step number: wave2-notes.md).

Cost: the records are read back in blocks of neighbouring rows (one file read per block, the vectors gathered by
numpy: index/record_reads.trace_vectors); per row the pass keeps 10 bytes (dtype, a shape signature, an all-zero
flag) while it runs, and everything after is numpy over the rows sorted by kind (the index's kind_rows order).
Python loops run per kind, never per trace. The result (a few arrays per kind) is cached per run version.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from tensorboard_plugin_dbg.index.protocol import RunQueries

BLOCK = 1 << 16  # rows read per block: ~16 MB of records, a few MB of vectors
FULL_HEALTH, SHAPE, FULL_TENSOR = 4, 5, 7


@dataclasses.dataclass
class KindStats:
    """Per trace kind (arrays indexed by kind code)."""

    steps: np.ndarray  # int64: traces of the kind
    shape_changes: np.ndarray  # int64: steps whose shape signature differs from the step before
    first_shape_change: np.ndarray  # int64: sorted position (into order) of the first such step, -1 none
    dtype_changes: np.ndarray
    first_dtype_change: np.ndarray
    zero_run: np.ndarray  # int64: longest run of consecutive all-zero steps (FULL_HEALTH, size > 0)
    zero_run_end: np.ndarray  # int64: sorted position of that run's last step, -1 none
    order: np.ndarray  # the index's rows-by-kind permutation and segment starts (kind_rows), for positions -> rows
    starts: np.ndarray


def scan(run: RunQueries) -> KindStats:
    """The stats of the run's current version (cached in the run's derived-value cache).

    Built WITHOUT the run's derived-value lock, then stored (DerivedCache.put): it takes seconds at 10 M traces,
    and a build under the lock makes every other build of the run wait (the health map's first page waited 13 s
    for it at 10 M). One thread per version builds it (alert_list.start_scan); only a caller that waits on purpose
    (the report) may build it a second time."""
    version = run.version
    stats = run.derived.peek("rule_scan", version)
    if stats is None:
        stats = _scan(run)
        run.derived.put("rule_scan", version, stats)
    return stats


def _scan(run: RunQueries) -> KindStats:
    n = len(run.trace_arrays()["kind"])
    dtype = np.full(n, -1, np.int8)
    sig = np.full(n, -1, np.int64)
    zero = np.zeros(n, bool)
    for lo in range(0, n, BLOCK):
        rows = np.arange(lo, min(lo + BLOCK, n), dtype=np.int64)
        modes, v = run.trace_vectors(rows, summary=True)
        _reduce_block(modes, v, out=(dtype, sig, zero), at=rows)
    order, starts = run.kind_rows()
    order = np.asarray(order[: starts[-1]] if len(starts) else order, np.int64)
    n_kinds = len(starts) - 1
    d, s, z = dtype[order], sig[order], zero[order]
    first = np.zeros(len(order), bool)
    first[starts[:-1][starts[:-1] < len(order)]] = True  # a kind's first step has no step before it
    shape_ch, first_shape = _changes(s, first, starts, n_kinds)
    dtype_ch, first_dtype = _changes(d.astype(np.int64), first, starts, n_kinds)
    run_len, run_end = _zero_runs(z, first, starts, n_kinds)
    counts = np.diff(starts).astype(np.int64)
    return KindStats(counts, shape_ch, first_shape, dtype_ch, first_dtype, run_len, run_end, order, starts)


def _reduce_block(modes: np.ndarray, v: np.ndarray, out: tuple[np.ndarray, ...], at: np.ndarray) -> None:
    """Per row of a block: dtype code, a shape signature (rank, size, dims), the all-zero flag."""
    dtype, sig, zero = out
    full, shape = modes == FULL_HEALTH, modes == SHAPE
    known = (full | shape) & np.isfinite(np.where(full, v[:, 2], v[:, 1]))  # the dtype was read
    # FULL_HEALTH: [id, device, dtype, rank, size, ...]; SHAPE: [id, dtype, rank, size, d0..d5]
    dt = np.where(full, v[:, 2], np.where(shape, v[:, 1], -1))
    rank = np.where(full, v[:, 3], v[:, 2])
    size = np.where(full, v[:, 4], v[:, 3])
    dims = np.where(shape[:, None], np.nan_to_num(v[:, 4:10], nan=0), 0)
    h = np.nan_to_num(rank, nan=-1).astype(np.int64) * 1_000_003 + np.nan_to_num(size, nan=-1).astype(np.int64)
    for c in range(6):  # FULL_HEALTH rows hash dims 0: they compare by rank and size only
        h = h * 1_000_033 + dims[:, c].astype(np.int64)
    dtype[at] = np.where(known, np.nan_to_num(dt, nan=-1), -1).astype(np.int8)
    sig[at] = np.where(known, h & np.int64(0x7FFF_FFFF_FFFF_FFFF), -1)  # >= 0: -1 stays "unknown"
    zero[at] = full & (v[:, 4] > 0) & (v[:, 9] == v[:, 4])


def _changes(col: np.ndarray, first: np.ndarray, starts: np.ndarray, n_kinds: int) -> tuple[np.ndarray, np.ndarray]:
    """(changes per kind, sorted position of the first change, -1 none): a step whose known value differs from
    the kind's step before (unknown = -1 on either side is no change)."""
    ch = np.zeros(len(col), bool)
    if len(col) > 1:
        ch[1:] = (col[1:] != col[:-1]) & (col[1:] >= 0) & (col[:-1] >= 0)
    ch &= ~first
    pos = np.flatnonzero(ch)
    kinds = np.searchsorted(starts, pos, side="right") - 1
    count = np.bincount(kinds, minlength=n_kinds).astype(np.int64)[:n_kinds]
    first_pos = np.full(n_kinds, -1, np.int64)
    uniq, idx = np.unique(kinds, return_index=True)
    first_pos[uniq] = pos[idx]
    return count, first_pos


def _zero_runs(z: np.ndarray, first: np.ndarray, starts: np.ndarray, n_kinds: int) -> tuple[np.ndarray, np.ndarray]:
    """(longest run of consecutive all-zero steps per kind, sorted position of its last step, -1 none)."""
    idx = np.arange(len(z), dtype=np.int64)
    # where the current run began: the row after the last non-zero step, or the kind's first step
    began = np.where(~z, idx + 1, np.where(first, idx, -1))
    began = np.maximum.accumulate(began) if len(z) else began
    length = np.where(z, idx - began + 1, 0)
    best = np.zeros(n_kinds, np.int64)
    end = np.full(n_kinds, -1, np.int64)
    hit = np.flatnonzero(length > 0)
    if len(hit):
        kinds = np.searchsorted(starts, hit, side="right") - 1
        np.maximum.at(best, kinds, length[hit])
        at_best = hit[length[hit] == best[kinds]]
        best_kinds = np.searchsorted(starts, at_best, side="right") - 1
        uniq, i = np.unique(best_kinds, return_index=True)  # the first run of that length
        end[uniq] = at_best[i]
    return best, end
