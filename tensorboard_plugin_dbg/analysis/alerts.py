"""Alert pages with each alert's role (producer, propagator, contained, expected, unknown: root_cause's
classification), the `role=producer` filter (producers and unknowns: where a NaN/∞ may have been born),
and the warm-up the refresher runs when a dump has been read to its end.

The index makes the alert list and its rows (roles null); this module is what the `alerts` route and the report
call.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypedDict

import numpy as np
import numpy.typing as npt

from tensorboard_plugin_dbg.analysis import alert_list, root_cause
from tensorboard_plugin_dbg.analysis.classify import ROLE_NAMES
from tensorboard_plugin_dbg.analysis.rules import mutes as mute_rules
from tensorboard_plugin_dbg.analysis.rules import ranking
from tensorboard_plugin_dbg.analysis.rules.config import DEFAULTS, NAN_INF, Thresholds
from tensorboard_plugin_dbg.index.protocol import RunQueries
from tensorboard_plugin_dbg.wire import types as wire


class _NanPage(TypedDict):
    """The NaN/∞ part of a page: `total` (after the role filter and the mutes), `visible_all` (after the mutes
    only), the alerts, and how many each mute hides."""

    total: int
    visible_all: int
    alerts: list[wire.Alert]
    hidden: npt.NDArray[np.int64]


def alerts(
    run: RunQueries,
    begin: int,
    end: int,
    alert_type: str | None = None,
    producers_only: bool = False,
    mutes: Sequence[mute_rules.Mute] = (),
    thresholds: Thresholds = DEFAULTS,
    wait_rules: bool = False,
) -> wire.AlertsResponseBody:
    """wire.ts AlertsResponse minus `run`: alerts [begin, end) of the list alert_list.py describes (NaN/∞ alerts in
    wall-time order, then the rule findings), after the `type` and role filters and the mutes, with `total` (after
    them), `totals_by_type` (after the mutes), `muted` (what each mute hides) and `needs` (rules this dump cannot
    judge), each NaN/∞ alert with its role.

    Once the dump is fully read, roles are final and a page waits for them; while it is still being read, a page
    never waits on the whole-run analysis: roles come from the classification of this version when it is done,
    else stay null ("not known yet") rather than holding every alert request for seconds."""
    mutes = tuple(mutes)
    findings, rule_hidden, evaluated = alert_list.rule_findings(run, thresholds, mutes, wait_rules)
    want_nan = alert_type in (None, "", NAN_INF)
    # a rule-only page still needs the NaN/∞ totals and what the mutes hide of them: an empty NaN page gives both
    nan_answer = _nan_page(run, begin, end, producers_only, mutes) if want_nan else _nan_page(run, 0, 0, False, mutes)
    shown = [] if producers_only else [f for f in findings if alert_type in (None, "", f["type"])]
    n_nan = nan_answer["total"] if want_nan else 0
    rule_rows: list[wire.Alert] = [
        {**f, "index": n_nan + j} for j, f in enumerate(shown[max(begin - n_nan, 0) : max(end - n_nan, 0)])
    ]
    rows = (nan_answer["alerts"] if want_nan else []) + rule_rows
    totals: dict[str, float] = {NAN_INF: nan_answer["visible_all"]} if nan_answer["visible_all"] else {}
    for f in ranking.ranked(findings):  # the dashboard's kind rows (each a fold) in the report's rank (#38 item 9)
        totals[f["type"]] = totals.get(f["type"], 0) + 1
    by_mute = (nan_answer["hidden"] if len(nan_answer["hidden"]) else np.zeros(len(mutes), np.int64)) + rule_hidden
    return {
        "begin": begin,
        "end": begin + len(rows),
        "total": n_nan + len(shown),
        "totals_by_type": totals,
        "alerts": rows,
        "muted": {"total": int(by_mute.sum()), "by_mute": [int(x) for x in by_mute.tolist()]},
        "needs": evaluated["needs"],
        "rules_pending": bool(evaluated["pending"]),
    }


def _nan_page(
    run: RunQueries, begin: int, end: int, producers_only: bool, mutes: tuple[mute_rules.Mute, ...]
) -> _NanPage:
    """The NaN/∞ part of a page (_NanPage)."""
    if not producers_only and not mutes:
        answer = run.alerts(begin, end, NAN_INF)  # as it always was
        _fill_roles(run, answer["alerts"], wait=run.done)
        total = answer["total"]
        return {"total": total, "visible_all": total, "alerts": answer["alerts"], "hidden": np.zeros(0, np.int64)}
    if not run.alerts(0, 0, NAN_INF)["total"]:  # totals only: O(1)
        return {"total": 0, "visible_all": 0, "alerts": [], "hidden": np.zeros(len(mutes), np.int64)}
    table = run.alert_table(stale_ok=not run.done)
    hidden = np.zeros(len(mutes), np.int64)
    positions = visible = np.arange(len(table))
    if mutes:
        visible, hidden = alert_list.nan_positions(run, table, mutes, False)
        positions = visible
    if producers_only:
        positions = alert_list.nan_positions(run, table, mutes, True)[0]
    page = positions[begin:end]
    rows = run.alert_rows(page, *table.page(page))
    _fill_roles(run, rows, wait=True)
    return {"total": len(positions), "visible_all": len(visible), "alerts": rows, "hidden": hidden}


def _fill_roles(run: RunQueries, page: list[wire.Alert], wait: bool) -> None:
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


def warm(run: RunQueries) -> None:
    """Builds what the first requests after indexing need (the sorted alert list, the classification that gives
    every alert's role, the root cause and with it the rows of each kind) on the caller's thread: the refresher
    calls it (RunIndex.on_complete) when the dump is fully read, before it reports done. At 10 M traces the
    dashboard's first root-cause request otherwise took ~1 s (bench/paint_profile.py), all of it building the kind
    order for the producer's op."""
    warm_without_rules(run)
    # the rules' whole-run scan on a thread of its own: `done` is not held back by it (seconds at 10 M traces)
    alert_list.start_scan(run)


def warm_without_rules(run: RunQueries) -> None:
    """warm() but the rules' scan (benchmarks time the scan on its own)."""
    run.alert_table()
    root_cause.classification(run)
    root_cause.analyze(run)
