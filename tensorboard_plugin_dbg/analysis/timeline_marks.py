"""The Python Execution Timeline's minimap: where every NaN/∞ alert of the run falls along the eager executions.

An execution alert sits at its own execution. A graph trace alert sits at the tf.function call that ran it: a call's
traces are written while it runs and its execution record right after (index/call_queries.py), so that call is the
first execution written at or after the trace. Trace alerts written after the last execution record (a call still
running, or one whose record was lost) are counted apart, not pinned on an unrelated execution.

Each alert's execution is worked out once per alert list and mutes (vectorized, in blocks: a run that went NaN
early holds millions of trace alerts) and kept per execution; a request for B bins then costs B binary searches.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from tensorboard_plugin_dbg.analysis import alert_list
from tensorboard_plugin_dbg.analysis.rules import mutes as mute_rules
from tensorboard_plugin_dbg.index.alert_order import AlertOrder
from tensorboard_plugin_dbg.index.protocol import RunQueries
from tensorboard_plugin_dbg.wire import types as wire

Rows = npt.NDArray[np.int64]

DEFAULT_BINS = 500
MAX_BINS = 2000


def alert_executions(run: RunQueries, mutes: Sequence[mute_rules.Mute] = ()) -> tuple[Rows, Rows, Rows]:
    """The executions that hold a visible NaN/∞ alert, ascending (n_executions for trace alerts after the last
    execution record), with their number of alerts and the alert-list index of their first one; cached per alert
    list and mutes. Per execution, not per alert: a run that went NaN early holds millions of trace alerts on a few
    thousand calls, and this cache was the dashboard's biggest per-trace cost (16 B per alert)."""
    table = run.alert_table(stale_ok=not run.done)
    mutes = tuple(mutes)

    def build() -> tuple[AlertOrder, Rows, Rows, Rows]:
        positions = alert_list.nan_positions(run, table, mutes, False)[0] if mutes else None
        exec_wall = run.execution_arrays()["wall_time"]
        # written in order; a clock that stepped back must not break the binary search
        ascending = np.maximum.accumulate(exec_wall) if len(exec_wall) else exec_wall
        parts: list[tuple[Rows, Rows, Rows]] = []
        seen = 0  # visible alerts before this block: the list index of its first one
        for lo, src, idx, wall in table.blocks():
            src, idx, wall = np.asarray(src), np.asarray(idx, np.int64), np.asarray(wall)
            if positions is not None:  # the visible ones of this block (positions ascend)
                keep = positions[np.searchsorted(positions, lo) : np.searchsorted(positions, lo + len(src))] - lo
                src, idx, wall = src[keep], idx[keep], wall[keep]
            at = np.where(src == 0, idx, np.searchsorted(ascending, wall, "left"))
            # list order ascends within the block: an execution's first occurrence is its first alert
            execs, first, count = np.unique(at, return_index=True, return_counts=True)
            parts.append((execs, first + seen, count))
            seen += len(at)
        return (table, *_merge(parts))

    # the value holds the table, so its id cannot be reused while cached
    got = run.derived.get("alert_executions", (id(table), mutes), build)
    return got[1], got[2], got[3]


def _merge(parts: list[tuple[Rows, Rows, Rows]]) -> tuple[Rows, Rows, Rows]:
    """The blocks' (executions, first alert, count) as one table over distinct executions, ascending."""
    if not parts:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64)
    execs, first, count = (np.concatenate([p[i] for p in parts]).astype(np.int64) for i in range(3))
    order = np.argsort(execs, kind="stable")
    execs, first, count = execs[order], first[order], count[order]
    starts = np.flatnonzero(np.concatenate(([True], execs[1:] != execs[:-1])))
    return execs[starts], np.minimum.reduceat(first, starts), np.add.reduceat(count, starts)


def marks(
    run: RunQueries, bins: int = DEFAULT_BINS, mutes: Sequence[mute_rules.Mute] = ()
) -> wire.TimelineMarksResponseBody:
    """wire.ts TimelineMarksResponse minus `run`: executions split into at most `bins` equal bins, each with its
    number of visible NaN/∞ alerts and the alert-list index of its first one (-1 when none)."""
    n = len(run.execution_arrays()["wall_time"])
    execs, first_of, count_of = alert_executions(run, mutes)
    b = max(1, min(bins, n)) if n else 0
    edges = (np.arange(b + 1, dtype=np.int64) * n) // max(b, 1)
    cut = np.searchsorted(execs, edges, "left")
    before = np.concatenate(([0], np.cumsum(count_of)))  # alerts on the executions before each entry
    counts = before[cut[1:]] - before[cut[:-1]]
    first = np.full(b, -1, np.int64)
    has = counts > 0
    if has.any():
        # the earliest alert (list index) among those of each bin: bins are ≥ 1 execution wide, so `cut` ascends
        first[has] = np.minimum.reduceat(first_of[: cut[-1]], cut[:-1][has])
    total = int(before[-1])
    return {
        "executions": n,
        "edges": edges.tolist(),
        "counts": counts.tolist(),
        "first_alert": first.tolist(),
        "alerts": total,
        "after_last": total - int(before[cut[-1]]) if n else total,
    }
