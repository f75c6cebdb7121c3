"""Growable numpy columns that readers can use while one writer appends.

The writer fills rows past the published length, then publishes a new (length, arrays) snapshot in one attribute
assignment, so a reader that took a snapshot keeps a consistent view: rows below its length never change and
growth copies into new arrays instead of resizing the ones readers hold. Growth is by 1.25x to keep slack memory
small (the index budget is ~48 bytes per trace).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

import numpy as np

# Where a graph execution trace's record is, in one int64 per row: file code << LOC_SHIFT | payload offset.
LOC_SHIFT = 48  # files up to 256 TiB
LOC_MASK = (1 << LOC_SHIFT) - 1


class Lengths(NamedTuple):
    """Row counts of a run's four column sets, published together by the writer after each batch (see
    RunIndex.lengths): side tables (exec_nf, trace_nf) point at rows below the matching main table's length, which
    separate len() calls taken at different moments did not guarantee."""

    execs: int = 0
    exec_nf: int = 0
    traces: int = 0
    trace_nf: int = 0


class Columns:
    def __init__(self, dtypes: Mapping[str, str], capacity: int = 1024):
        self._dtypes = dict(dtypes)
        self._arrays = {name: np.zeros(capacity, dtype=dt) for name, dt in self._dtypes.items()}
        self._snap: tuple[int, dict[str, np.ndarray]] = (0, self._arrays)

    def snapshot(self) -> tuple[int, dict[str, np.ndarray]]:
        """(length, name -> array); only rows below length are meaningful."""
        return self._snap

    def __len__(self) -> int:
        return self._snap[0]

    def view(self, name: str, length: int | None = None) -> np.ndarray:
        """Rows [0, length) (default: every published row). A length taken earlier from the run's published
        lengths (RunIndex.lengths) stays valid: rows are never removed or rewritten."""
        n, arrays = self._snap
        return arrays[name][: n if length is None else min(length, n)]

    def reserve(self, capacity: int) -> None:
        """Makes room for `capacity` rows now (writer thread only), so a big file whose record count is known
        roughly in advance is not copied 1.25x at a time (each growth briefly holds old + new: 2.25x the column).
        np.zeros takes fresh zero pages from the OS, so reserved rows cost no resident memory until written."""
        n, arrays = self._snap
        if capacity <= len(next(iter(arrays.values()))):
            return
        grown = {}
        for name, arr in arrays.items():
            new = np.zeros(capacity, dtype=arr.dtype)
            new[:n] = arr[:n]
            grown[name] = new
        self._arrays = grown
        self._snap = (n, grown)

    def append(self, values: Mapping[str, np.ndarray]) -> None:
        """Appends equal-length arrays (one per column; missing columns get zeros). Writer thread only."""
        count = len(next(iter(values.values())))
        if count == 0:
            return
        n, arrays = self._snap
        capacity = len(next(iter(arrays.values())))
        if n + count > capacity:
            new_cap = max(n + count, int(capacity * 1.25) + 1024)
            grown = {}
            for name, arr in arrays.items():
                new = np.zeros(new_cap, dtype=arr.dtype)
                new[:n] = arr[:n]
                grown[name] = new
            arrays = grown
        for name, arr in arrays.items():
            if name in values:
                arr[n : n + count] = values[name]
            else:
                arr[n : n + count] = 0
        self._arrays = arrays
        self._snap = (n + count, arrays)

    def capacity(self) -> int:
        return len(next(iter(self._snap[1].values())))

    def nbytes(self) -> int:
        return sum(a.nbytes for a in self._snap[1].values())
