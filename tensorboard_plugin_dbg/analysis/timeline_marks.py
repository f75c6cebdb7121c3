"""The Python Execution Timeline's minimap: where every NaN/∞ alert of the run falls along the eager executions.

An execution alert sits at its own execution. A graph trace alert sits at the tf.function call that ran it: a call's
traces are written while it runs and its execution record right after (index/call_queries.py), so that call is the
first execution written at or after the trace. Trace alerts written after the last execution record (a call still
running, or one whose record was lost) are counted apart, not pinned on an unrelated execution.

Each alert's execution is worked out once per alert list and mutes (vectorized, in blocks: a run that went NaN
early holds millions of trace alerts); a request for B bins then costs B binary searches.
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


def alert_executions(run: RunQueries, mutes: Sequence[mute_rules.Mute] = ()) -> tuple[Rows, Rows]:
    """(the execution of each visible NaN/∞ alert, ascending; the alert-list index of each of them), cached per
    alert list and mutes (n_executions for a trace alert after the last execution record)."""
    table = run.alert_table(stale_ok=not run.done)
    mutes = tuple(mutes)

    def build() -> tuple[AlertOrder, Rows, Rows]:
        positions = alert_list.nan_positions(run, table, mutes, False)[0] if mutes else None
        exec_wall = run.execution_arrays()["wall_time"]
        # written in order; a clock that stepped back must not break the binary search
        ascending = np.maximum.accumulate(exec_wall) if len(exec_wall) else exec_wall
        parts = []
        for lo, src, idx, wall in table.blocks():
            src, idx, wall = np.asarray(src), np.asarray(idx, np.int64), np.asarray(wall)
            if positions is not None:  # the visible ones of this block (positions ascend)
                keep = positions[np.searchsorted(positions, lo) : np.searchsorted(positions, lo + len(src))] - lo
                src, idx, wall = src[keep], idx[keep], wall[keep]
            parts.append(np.where(src == 0, idx, np.searchsorted(ascending, wall, "left")))
        at = np.concatenate(parts).astype(np.int64) if parts else np.zeros(0, np.int64)
        order = np.argsort(at, kind="stable")  # alert-list order is wall-time order: nearly sorted already
        return table, at[order], order

    # the value holds the table, so its id cannot be reused while cached
    got = run.derived.get("alert_executions", (id(table), mutes), build)
    return got[1], got[2]


def marks(
    run: RunQueries, bins: int = DEFAULT_BINS, mutes: Sequence[mute_rules.Mute] = ()
) -> wire.TimelineMarksResponseBody:
    """wire.ts TimelineMarksResponse minus `run`: executions split into at most `bins` equal bins, each with its
    number of visible NaN/∞ alerts and the alert-list index of its first one (-1 when none)."""
    n = len(run.execution_arrays()["wall_time"])
    by_exec, order = alert_executions(run, mutes)
    b = max(1, min(bins, n)) if n else 0
    edges = (np.arange(b + 1, dtype=np.int64) * n) // max(b, 1)
    cut = np.searchsorted(by_exec, edges, "left")
    counts = np.diff(cut)
    first = np.full(b, -1, np.int64)
    has = counts > 0
    if has.any():
        # the earliest alert (list index) among those of each bin
        first[has] = np.minimum.reduceat(order[: cut[-1]], cut[:-1][has])
    return {
        "executions": n,
        "edges": edges.tolist(),
        "counts": counts.tolist(),
        "first_alert": first.tolist(),
        "alerts": len(by_exec),
        "after_last": int(len(by_exec) - cut[-1]) if n else len(by_exec),
    }
