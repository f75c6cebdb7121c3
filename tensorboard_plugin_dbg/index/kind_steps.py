"""Step-to-step reductions per trace kind, fed a block of rows at a time in row order: what the rules' scan
(analysis/rules/tensor_scan.py) keeps of a whole run, with no array of the run's size. The indexer feeds one as it
appends trace rows (ingest.py, the values from reader/step_values.py), so the scan reads no record back.

A kind's steps are its rows in ascending order (the index's rows-by-kind permutation, `kind_rows`); a step's
*position* is its place in that permutation (`starts[kind]` + its step number); built without `starts` (while
indexing, the kinds and their counts still growing) it answers step numbers instead. Fed every row once, in row order,
`KindSteps` answers what the whole-run numpy version answered over the rows sorted by kind (three columns of the
run's size, their kind-sorted copies and the int64 temporaries of the zero runs: ~80 bytes per trace at the peak),
carrying only a few values per kind from one block to the next: the last value of each column, the steps seen,
the current all-zero run. tests/test_memory_lean_structures.py checks it against that whole-run version.
"""

from __future__ import annotations

import numpy as np


class KindSteps:
    """Per kind: how often a column's known value (>= 0; -1 is unknown) changed from the kind's step before, the
    position of the first change, and the longest run of consecutive flagged steps with the position of its last
    step (the first such run when several are as long)."""

    def __init__(self, starts: np.ndarray | None, columns: int):
        # None: positions are step numbers, and the kinds grow as rows of new ones come (see _grow)
        self.starts = np.asarray(starts, np.int64) if starts is not None else None
        n_kinds = len(starts) - 1 if starts is not None else 0
        self.steps = np.zeros(n_kinds, np.int64)  # steps seen so far
        self.last = [np.full(n_kinds, -1, np.int64) for _ in range(columns)]  # each column's value at the last step
        self.changes = [np.zeros(n_kinds, np.int64) for _ in range(columns)]
        self.first_change = [np.full(n_kinds, -1, np.int64) for _ in range(columns)]
        self.run = np.zeros(n_kinds, np.int64)  # flagged steps ending at the last step seen
        self.best_run = np.zeros(n_kinds, np.int64)
        self.best_run_end = np.full(n_kinds, -1, np.int64)
        self._last: tuple[np.ndarray, ...] | None = None  # the last block's kinds and their order (_order)

    def add(self, kinds: np.ndarray, values: list[np.ndarray], flag: np.ndarray) -> None:
        """The next rows in row order: their kind codes (0 <= code < kinds), one array per column, the flag."""
        m = len(kinds)
        if not m:
            return
        if self.starts is None and int(kinds.max()) >= len(self.steps):
            self._grow(int(kinds.max()) + 1)
        n_kinds = len(self.steps)
        by, ks, seg_first, idx, seg_start, seg_last, seen = self._order(kinds, n_kinds)
        step = self.steps[ks] + (idx - seg_start)
        pos = self.starts[ks] + step if self.starts is not None else step
        has_prev = step > 0  # a kind's first step has no step before it
        for c, col in enumerate(values):
            cur = col[by].astype(np.int64)
            prev = np.empty(m, np.int64)
            prev[1:] = cur[:-1]
            prev[seg_first] = self.last[c][ks[seg_first]]
            changed = has_prev & (cur != prev) & (cur >= 0) & (prev >= 0)
            self._count_changes(c, ks[changed], pos[changed])
            self.last[c][ks[seg_last]] = cur[seg_last]
        self._runs(flag[by].astype(bool), ks, idx, seg_first, seg_start, seg_last, pos)
        self.steps += seen

    def _order(self, kinds: np.ndarray, n_kinds: int) -> tuple[np.ndarray, ...]:
        """The block's rows by kind and where each kind's rows begin and end there, with the rows per kind; kept
        for the next block, which a training loop's trace file usually lays out the same (ingest.chunk_bytes: its
        chunks are whole steps), so that one compare replaces the sort."""
        if self._last is not None and len(self._last[-1]) == n_kinds and np.array_equal(kinds, self._last[0]):
            return self._last[1:]
        m = len(kinds)
        key = kinds.astype(np.uint16) if n_kinds <= 1 << 16 else kinds.astype(np.int64)
        by = np.argsort(key, kind="stable")  # by kind, rows ascending within a kind: steps in order
        ks = kinds[by].astype(np.int64)
        seg_first = np.ones(m, bool)  # the block's first row of its kind
        seg_first[1:] = ks[1:] != ks[:-1]
        idx = np.arange(m, dtype=np.int64)
        seg_start = np.maximum.accumulate(np.where(seg_first, idx, 0))
        seg_last = np.flatnonzero(np.append(seg_first[1:], True))  # the block's last row of each kind present
        seen = np.bincount(ks, minlength=n_kinds)[:n_kinds]
        self._last = (kinds.copy(), by, ks, seg_first, idx, seg_start, seg_last, seen)
        return self._last[1:]

    def _grow(self, n_kinds: int) -> None:
        """Room for kind codes below n_kinds (a new kind: no step seen, no change, no run)."""
        more = n_kinds - len(self.steps)

        def pad(a: np.ndarray, fill: int) -> np.ndarray:
            return np.concatenate([a, np.full(more, fill, np.int64)])

        self.steps, self.run, self.best_run = pad(self.steps, 0), pad(self.run, 0), pad(self.best_run, 0)
        self.best_run_end = pad(self.best_run_end, -1)
        self.last = [pad(a, -1) for a in self.last]
        self.changes = [pad(a, 0) for a in self.changes]
        self.first_change = [pad(a, -1) for a in self.first_change]

    def copy(self) -> KindSteps:
        """A snapshot: later rows fed to this one leave it as it is."""
        out = KindSteps(self.starts, columns=0)
        out.steps, out.run, out.best_run, out.best_run_end = (
            a.copy() for a in (self.steps, self.run, self.best_run, self.best_run_end)
        )
        out.last, out.changes, out.first_change = (
            [a.copy() for a in arrays] for arrays in (self.last, self.changes, self.first_change)
        )
        return out

    def _count_changes(self, c: int, ks: np.ndarray, pos: np.ndarray) -> None:
        n_kinds = len(self.steps)
        self.changes[c] += np.bincount(ks, minlength=n_kinds)[:n_kinds]
        kinds, at = np.unique(ks, return_index=True)  # each kind's first change in this block (positions ascend)
        unset = self.first_change[c][kinds] < 0
        self.first_change[c][kinds[unset]] = pos[at[unset]]

    def _runs(
        self,
        z: np.ndarray,
        ks: np.ndarray,
        idx: np.ndarray,
        seg_first: np.ndarray,
        seg_start: np.ndarray,
        seg_last: np.ndarray,
        pos: np.ndarray,
    ) -> None:
        # where the current run began within the block: the row after the last unflagged step of the kind, or the
        # kind's first row in the block (then the run carried from earlier blocks continues it)
        began = np.maximum.accumulate(np.where(~z, idx + 1, np.where(seg_first, idx, -1)))
        length = np.where(z, idx - began + 1, 0)
        carried = z & (began == seg_start)
        length[carried] += self.run[ks[carried]]
        self.run[ks[seg_last]] = length[seg_last]
        hit = np.flatnonzero(length > 0)
        if not len(hit):
            return
        block_best = np.zeros(len(self.steps), np.int64)
        np.maximum.at(block_best, ks[hit], length[hit])
        better = block_best > self.best_run  # a run only as long as an earlier one does not replace it
        at_best = hit[better[ks[hit]] & (length[hit] == block_best[ks[hit]])]
        kinds, first = np.unique(ks[at_best], return_index=True)  # the first run of that length in the block
        self.best_run[kinds] = block_best[kinds]
        self.best_run_end[kinds] = pos[at_best[first]]
