"""The alert list the `alerts` route pages over once rules and mutes join it: the NaN/∞ alerts first (the index's
wall-time ordered list, as they always were), then the rule findings (rules/, wall-time order), each list without
what the mutes hide. Also how many alerts each mute hides (the UI shows it next to the mute).

Mutes are matched per trace kind and per execution op type, then applied to the alert list a block at a time
(numpy), and the visible positions are cached per (alert table, classification, mutes): paging costs the page.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Sequence
from typing import TypedDict

import numpy as np
import numpy.typing as npt

from tensorboard_plugin_dbg.analysis import root_cause, rules
from tensorboard_plugin_dbg.analysis.classify import PRODUCER, UNKNOWN, Classification
from tensorboard_plugin_dbg.analysis.rules import mutes as mute_rules
from tensorboard_plugin_dbg.analysis.rules import tensor_scan
from tensorboard_plugin_dbg.analysis.rules.config import Thresholds
from tensorboard_plugin_dbg.index.alert_order import AlertOrder
from tensorboard_plugin_dbg.index.protocol import RunQueries
from tensorboard_plugin_dbg.wire import types as wire

Counts = npt.NDArray[np.int64]


class Evaluated(TypedDict):
    """rules.evaluate's answer, and whether the rules' scan is still running (then no finding is there yet)."""

    findings: list[wire.AlertBody]
    totals: dict[str, int]
    needs: list[wire.RuleNeed]
    pending: bool


def nan_positions(
    run: RunQueries, table: AlertOrder, mutes: Sequence[mute_rules.Mute], producers_only: bool
) -> tuple[np.ndarray, np.ndarray]:
    """(positions in `table` of the NaN/∞ alerts left visible, alerts hidden per mute), cached per (table,
    classification when filtering by role, mutes)."""
    cls = root_cause.classification(run) if producers_only else None
    mutes = tuple(mutes)

    def build() -> tuple[AlertOrder, Classification | None, np.ndarray, np.ndarray]:
        masks = mute_rules.nan_masks(run, mutes) if mutes else None
        kinds = run.trace_arrays()["kind"]
        exec_types = run.execution_arrays()["op_type"]
        found, hidden = [], np.zeros(len(mutes), np.int64)
        for lo, src, idx, _ in table.blocks():
            keep = np.ones(len(idx), bool)
            if cls is not None:
                keep &= np.isin(root_cause.roles_by_row(cls, src, idx), (PRODUCER, UNKNOWN))
            if masks is not None:
                by_mute = mute_rules.alert_hidden(np.asarray(src), np.asarray(idx, np.int64), kinds, exec_types, masks)
                hidden += by_mute.sum(axis=1)
                keep &= ~by_mute.any(axis=0)
            found.append(np.flatnonzero(keep) + lo)
        positions = np.concatenate(found) if found else np.zeros(0, np.int64)
        return table, cls, positions, hidden

    # the value holds the table and the classification, so their ids cannot be reused while it is cached
    key = (id(table), id(cls), mutes)
    got = run.derived.get("visible_alert_positions", key, build)
    return got[2], got[3]


def rule_findings(
    run: RunQueries, thresholds: Thresholds, mutes: Sequence[mute_rules.Mute], wait: bool = False
) -> tuple[list[wire.AlertBody], Counts, Evaluated]:
    """(visible findings, findings hidden per mute, the whole evaluation with `pending`). While the dump is still
    being read, no rule is evaluated (each batch would make the whole-run scan stale). Once it is read, a request
    never waits for the scan (seconds at 10 M traces) unless `wait`: it is started on a thread of its own and the
    answer says `pending` until it is there (the dashboard asks again); the findings after it cost milliseconds."""
    empty: Evaluated = {"findings": [], "totals": {}, "needs": [], "pending": not run.done}
    if not run.done:
        return [], np.zeros(len(mutes), np.int64), empty
    if not wait and run.derived.peek("rule_scan", run.version) is None:
        start_scan(run).join(SCAN_WAIT)  # a small dump's scan is done by then: its answer is complete at once
        if run.derived.peek("rule_scan", run.version) is None:
            return [], np.zeros(len(mutes), np.int64), {**empty, "pending": True}
    evaluated: Evaluated = {**rules.evaluate(run, thresholds), "pending": False}
    hidden = np.zeros(len(mutes), np.int64)
    visible: list[wire.AlertBody] = []
    for f in evaluated["findings"]:
        by = mute_rules.finding_hidden(f, mutes)
        hidden[by] += 1
        if not by:
            visible.append(f)
    return visible, hidden, evaluated


SCAN_WAIT = 0.3  # seconds a request waits for a scan it started (a 100 k-trace dump's scan takes ~0.1 s)
# run -> (version, thread) of the last scan started: one thread per run version (weak: a dropped run is forgotten)
_STARTED: weakref.WeakKeyDictionary[RunQueries, tuple[int, threading.Thread]] = weakref.WeakKeyDictionary()
_STARTED_LOCK = threading.Lock()  # a leaf: guards _STARTED only, never held while anything else is taken


def _scan_and_judge(run: RunQueries) -> None:
    """The rules' scan, then their findings at the default thresholds: the runs overview says "clean" only of a
    run whose rules found nothing (run_verdict.summary reads them from the cache)."""
    tensor_scan.scan(run)
    rules.evaluate(run)


def start_scan(run: RunQueries) -> threading.Thread:
    """Builds the rules' scan and default findings of the run's current version on a daemon thread (once per
    version) and returns the thread. The build takes only the run's derived-value lock (index/derived.py lock
    order), as a request's would."""
    version = run.version
    with _STARTED_LOCK:
        started = _STARTED.get(run)
        if started is not None and started[0] == version:
            return started[1]
        thread = threading.Thread(target=_scan_and_judge, args=(run,), name=f"dbg-rules-{run.name}", daemon=True)
        # started before another request can see it: a thread joined before it starts raises (the stress harness
        # caught that); start() takes no lock of ours, so the leaf lock stays a leaf
        thread.start()
        _STARTED[run] = (version, thread)
    return thread
