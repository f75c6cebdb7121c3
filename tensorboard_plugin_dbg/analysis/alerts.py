"""Alert pages with each alert's role (producer, propagator, contained, expected, unknown: root_cause's
classification), the `role=producer` filter (producers and unknowns: where a NaN/∞ may have been born),
and the warm-up the refresher runs when a dump has been read to its end.

The index makes the alert list and its rows (roles null); this module is what the `alerts` route and the report
call.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tensorboard_plugin_dbg.analysis import root_cause
from tensorboard_plugin_dbg.analysis.classify import PRODUCER, ROLE_NAMES, UNKNOWN
from tensorboard_plugin_dbg.index.alert_order import AlertOrder
from tensorboard_plugin_dbg.index.protocol import RunQueries


def alerts(
    run: RunQueries, begin: int, end: int, alert_type: str | None = None, producers_only: bool = False
) -> dict[str, Any]:
    """wire.ts AlertsResponse minus `run`: alerts [begin, end) in wall-time order (of the producers only, with
    `producers_only`), with `total` (after the filters) and `totals_by_type`, each alert with its role.

    Once the dump is fully read, roles are final and a page waits for them; while it is still being read, a page
    never waits on the whole-run analysis: roles come from the classification of this version when it is done,
    else stay null ("not known yet") rather than holding every alert request for seconds."""
    if not producers_only:
        answer = run.alerts(begin, end, alert_type)
        _fill_roles(run, answer["alerts"], wait=run.done)
        return answer
    answer = run.alerts(0, 0, alert_type)  # totals only: O(1)
    if not answer["total"]:
        return {**answer, "begin": begin, "end": begin}
    table = run.alert_table(stale_ok=not run.done)
    positions = _producer_positions(run, table)
    page = positions[begin:end]
    rows = run.alert_rows(page, *table.page(page))
    _fill_roles(run, rows, wait=True)
    return {
        "begin": begin,
        "end": begin + len(rows),
        "total": len(positions),
        "totals_by_type": answer["totals_by_type"],
        "alerts": rows,
    }


def _fill_roles(run: RunQueries, page: list[dict[str, Any]], wait: bool) -> None:
    if not page:
        return
    cls = root_cause.classification(run) if wait else root_cause.classification_if_ready(run)
    if cls is None:
        return
    # Looked up by (source, row), not by alert position: positions shift when rows arrive mid-list, rows do not.
    src = np.array([a["source"] == "graph_execution" for a in page], np.int8)
    rows = np.array([a["source_index"] for a in page], np.int64)
    for alert, code in zip(page, root_cause.roles_by_row(cls, src, rows).tolist()):
        alert["role"] = ROLE_NAMES[code]


def _producer_positions(run: RunQueries, table: AlertOrder) -> np.ndarray:
    """Positions in the alert table of the producers' alerts. Kept per (table, classification): finding them
    looks at every alert (5 M at 10 M traces, ~10 ms), which a role-filtered page must not repeat. Waits for the
    classification if the refresher has not made it yet (see warm())."""
    cls = root_cause.classification(run)

    def build():  # a block of alerts at a time: no array per alert beyond the (few) producers
        found = [
            np.flatnonzero(np.isin(root_cause.roles_by_row(cls, src, idx), (PRODUCER, UNKNOWN))) + lo
            for lo, src, idx, _ in table.blocks()
        ]
        return table, cls, np.concatenate(found) if found else np.zeros(0, np.int64)

    # the value holds the table and the classification, so their ids cannot be reused while it is cached
    return run.derived.get("producer_positions", (id(table), id(cls)), build)[2]


def warm(run: RunQueries) -> None:
    """Builds what the first requests after indexing need (the sorted alert list, the classification that gives
    every alert's role, the root cause and with it the rows of each kind) on the caller's thread: the refresher
    calls it (RunIndex.on_complete) when the dump is fully read, before it reports done. At 10 M traces the
    dashboard's first root-cause request otherwise took ~1 s (bench/paint_profile.py), all of it building the kind
    order for the producer's op."""
    run.alert_table()
    root_cause.classification(run)
    root_cause.analyze(run)
