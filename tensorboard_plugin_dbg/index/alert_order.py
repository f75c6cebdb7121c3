"""The run's alerts in wall-time order, without a copy per alert.

Order (wire.ts AlertsResponse): wall time, then executions before graph traces, then row. An alert is either an
execution with a non-finite output (a few, at most thousands) or a graph trace with one (millions: half the
traces of a run that went NaN early). The trace alerts are the index's sorted `trace_nf` rows, and a dump's trace
file is written in wall-time order, so in the usual case the merged order is the trace alerts as they are with the
execution alerts slotted in: `MergedAlerts` keeps only the executions' positions and answers a page by binary
search. The explicit table it replaces held source, row and wall time per alert, ~8.5 bytes per trace held and
~20 more while it was sorted, out of a budget of ~48 bytes per trace. Trace alerts out of wall-time order (several
hosts' trace files, or a clock that stepped back) get that explicit table (`ExplicitAlerts`): same interface.

Both answer `len()`, `page(positions) -> (src, idx, wall)` (src 0 = execution, 1 = graph trace; idx = its row)
and `blocks()`, for whole-list work in bounded memory.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

_BLOCK = 1 << 16


class ExplicitAlerts:
    def __init__(self, src: np.ndarray, idx: np.ndarray, wall: np.ndarray):
        self.src, self.idx, self.wall = src, idx, wall

    def __len__(self) -> int:
        return len(self.src)

    def page(self, positions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return self.src[positions], self.idx[positions], self.wall[positions]

    def blocks(self, size: int = _BLOCK) -> Iterator[tuple[int, np.ndarray, np.ndarray, np.ndarray]]:
        for lo in range(0, len(self), size):
            yield lo, self.src[lo : lo + size], self.idx[lo : lo + size], self.wall[lo : lo + size]


class MergedAlerts:
    """Trace alerts `t_rows` (ascending rows whose wall times ascend too) with execution alerts at `e_pos`."""

    def __init__(
        self, e_rows: np.ndarray, e_wall: np.ndarray, e_pos: np.ndarray, t_rows: np.ndarray, trace_wall: np.ndarray
    ) -> None:
        self.e_rows, self.e_wall, self.e_pos = e_rows, e_wall, e_pos
        self.t_rows, self.trace_wall = t_rows, trace_wall

    def __len__(self) -> int:
        return len(self.e_rows) + len(self.t_rows)

    def page(self, positions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        positions = np.asarray(positions, np.int64)
        ne, nt = len(self.e_pos), len(self.t_rows)
        k = np.searchsorted(self.e_pos, positions, side="left")  # execution alerts before each position
        kk = np.minimum(k, max(ne - 1, 0))
        is_exec = (k < ne) & (self.e_pos[kk] == positions) if ne else np.zeros(len(positions), bool)
        t = np.clip(positions - k, 0, max(nt - 1, 0))
        t_idx = self.t_rows[t].astype(np.int64) if nt else np.zeros(len(positions), np.int64)
        idx = np.where(is_exec, self.e_rows[kk] if ne else 0, t_idx)
        wall = np.where(is_exec, self.e_wall[kk] if ne else 0.0, self.trace_wall[t_idx] if nt else 0.0)
        return np.where(is_exec, 0, 1).astype(np.int8), idx, wall

    def blocks(self, size: int = _BLOCK) -> Iterator[tuple[int, np.ndarray, np.ndarray, np.ndarray]]:
        for lo in range(0, len(self), size):
            yield (lo, *self.page(np.arange(lo, min(lo + size, len(self)))))


def build(
    e_rows: np.ndarray, e_wall: np.ndarray, t_rows: np.ndarray, trace_wall: np.ndarray
) -> ExplicitAlerts | MergedAlerts:
    """The alert list of execution alerts (rows, wall times) and trace alerts (ascending rows of `trace_wall`)."""
    e_rows = np.asarray(e_rows, np.int64)
    by = np.lexsort((e_rows, e_wall))
    e_rows, e_wall = e_rows[by], np.asarray(e_wall, np.float64)[by]
    if _in_order(t_rows, trace_wall):
        # an execution goes after every trace alert with an earlier wall time, before those at the same time
        e_pos = _count_below(t_rows, trace_wall, e_wall) + np.arange(len(e_rows))
        return MergedAlerts(e_rows, e_wall, e_pos, t_rows, trace_wall)
    t_wall = trace_wall[t_rows]
    src = np.concatenate([np.zeros(len(e_rows), np.int8), np.ones(len(t_rows), np.int8)])
    idx = np.concatenate([e_rows, t_rows.astype(np.int64)])
    wall = np.concatenate([e_wall, t_wall])
    order = np.lexsort((idx, src, wall))
    return ExplicitAlerts(src[order], idx[order], wall[order])


def _in_order(t_rows: np.ndarray, trace_wall: np.ndarray) -> bool:
    """Whether the wall times of the trace alerts never decrease (checked a block at a time: no full copy)."""
    for lo in range(0, max(len(t_rows) - 1, 0), _BLOCK):
        w = trace_wall[t_rows[lo : lo + _BLOCK + 1]]
        if not bool(np.all(w[1:] >= w[:-1])):
            return False
    return True


def _count_below(t_rows: np.ndarray, trace_wall: np.ndarray, x: np.ndarray) -> np.ndarray:
    """For each x, how many trace alerts have a wall time < x (binary search over positions, all x at once)."""
    lo = np.zeros(len(x), np.int64)
    hi = np.full(len(x), len(t_rows), np.int64)
    while True:
        active = lo < hi
        if not active.any():
            return lo
        mid = (lo + hi) // 2
        below = trace_wall[t_rows[np.minimum(mid, max(len(t_rows) - 1, 0))]] < x
        lo = np.where(active & below, mid + 1, lo)
        hi = np.where(active & ~below, mid, hi)


# What build() returns: len(), page(positions) -> (source 0 execution / 1 trace, row, wall time), blocks().
AlertOrder = ExplicitAlerts | MergedAlerts
