"""Alert queries (methods of RunIndex; see queries.py): the alert list in wall-time order, its pages, and the
root-cause roles (producer or propagator) of each alert, from the analysis when it is installed.
"""

from __future__ import annotations

import importlib
from typing import Any

import numpy as np

from . import alert_order, record_reads


def _alert_table(self, stale_ok: bool = False):
    """Every alert in wall-time order (alert_order.py: len(), page(positions) -> (source 0=execution/1=graph,
    row, wall time), blocks()). `stale_ok`: while another request rebuilds it, the previous version will do
    (see _derive)."""
    lengths = self.lengths()
    key = (lengths.exec_nf, lengths.trace_nf)

    def build():
        # Exactly the rows of `key` (one published snapshot): every row they point at is already there.
        e_rows = self.exec_nf.view("row", lengths.exec_nf)
        return alert_order.build(
            e_rows,
            self.execs.view("wall_time")[e_rows],
            self.trace_nf.view("row", lengths.trace_nf),
            self.traces.view("wall_time"),
        )

    return self._derive("alerts", key, build, stale_ok=stale_ok)


def _exec_alerts(self, rows: np.ndarray) -> list[tuple[dict[str, Any], list]]:
    """(digest, [neg_inf, pos_inf, nan, size] with null for unknown) of execution alert rows, in one go."""
    if not len(rows):
        return []
    counts = self._exec_nf_counts(rows, ("neg_inf", "pos_inf", "nan", "size"))
    return [
        (digest, [None if c < 0 else int(c) for c in row_counts])
        for digest, row_counts in zip(self._exec_digests(rows), counts.tolist())
    ]


def _alert_page(self, page: np.ndarray, psrc: np.ndarray, pidx: np.ndarray, pwall: np.ndarray) -> list:
    """wire.ts Alert of each position in `page`, whose (source, row, wall time) are psrc, pidx, pwall (roles
    still null). The page's trace records are read in one go and their health vectors decoded together
    (record_reads.trace_healths), its executions' columns read once: the cost is the page's."""
    ops = self.ops
    t_info, healths, finite = record_reads.trace_kinds_healths(self, pidx[psrc == 1])
    traced = iter(zip(t_info, healths))
    executed = iter(self._exec_alerts(pidx[psrc == 0]))
    out = []
    for p, s, i, w in zip(page.tolist(), psrc.tolist(), pidx.tolist(), pwall.tolist()):
        if s == 0:
            digest, c = next(executed)
            out.append(
                {
                    "index": p,
                    "type": "InfNanAlert",
                    "source": "execution",
                    "source_index": i,
                    "wall_time": w,
                    "op_name": None,
                    "op_type": digest["op_type"],
                    "graph_id": digest["graph_id"],
                    "output_slot": 0,
                    "neg_inf": c[0],
                    "pos_inf": c[1],
                    "nan": c[2],
                    "size": c[3],
                    "role": None,
                }
            )
            continue
        (graph_id, op_name, slot, _mode, _device), health = next(traced)
        op = ops.get((graph_id, op_name))
        out.append(
            {
                "index": p,
                "type": "InfNanAlert",
                "source": "graph_execution",
                "source_index": i,
                "wall_time": w,
                "op_name": op_name,
                "op_type": op.op_type if op else "",
                "graph_id": graph_id,
                "output_slot": int(slot),
                "neg_inf": health.get("neg_inf"),
                "pos_inf": health.get("pos_inf"),
                "nan": health.get("nan"),
                "size": health.get("size"),
                "role": None,
            }
        )
    # exec alerts hold ints and None; trace healths were checked by trace_healths
    return record_reads.FiniteList(out) if finite and bool(np.isfinite(pwall).all()) else out


def alerts(self, begin: int, end: int, alert_type: str | None = None, producers_only: bool = False) -> dict[str, Any]:
    known_type = alert_type in (None, "", "InfNanAlert")
    if end <= begin and not producers_only:
        # Totals only (a client polling the count): no sorted table, no roles, O(1) at any size.
        lengths = self.lengths()
        total_all = lengths.exec_nf + lengths.trace_nf
        return {
            "begin": begin,
            "end": begin,
            "total": total_all if known_type else 0,
            "totals_by_type": {"InfNanAlert": total_all} if total_all else {},
            "alerts": [],
        }
    # once the dump is read, an alert page is exact; before, it may come from the previous batch's table
    table = self._alert_table(stale_ok=not self.done)
    total_all = len(table)
    if producers_only and known_type:
        positions = self._producer_positions(table)
        total = len(positions)
        page = positions[begin:end]
    else:  # no filter: the page is a slice of positions (no array of every position per request)
        total = total_all if known_type else 0
        page = np.arange(min(begin, total), min(end, total))
    psrc, pidx, pwall = table.page(page)
    alerts = self._alert_page(page, psrc, pidx, pwall)
    # Once the dump is fully read, roles are final and a page waits for them; while it is still being read,
    # a page never waits on the whole-run analysis: roles come from the analysis of this version when it is
    # done, else stay null ("not known yet") rather than holding every alert request for seconds.
    page_codes = self._alert_role_codes(psrc, pidx, wait=self.done)
    if page_codes is not None:
        for a, code in zip(alerts, page_codes.tolist()):
            a["role"] = (None, "producer", "propagator")[code]
    return {
        "begin": begin,
        "end": begin + len(alerts),
        "total": total,
        "totals_by_type": {"InfNanAlert": total_all} if total_all else {},
        "alerts": alerts,
    }


def _producer_positions(self, table) -> np.ndarray:
    """Positions in the alert table of the producers' alerts. Kept per (table, classification): finding them
    looks at every alert (5 M at 10 M traces, ~10 ms), which a role-filtered page must not repeat. Waits for
    the classification if the refresher has not made it yet (see warm())."""
    try:
        mod = importlib.import_module("tensorboard_plugin_dbg.analysis.root_cause")
    except ImportError:
        return np.arange(len(table))
    cls = mod.classification(self)

    def build():  # a block of alerts at a time: no array per alert beyond the (few) producers
        found = [np.flatnonzero(mod.roles_by_row(cls, src, idx) == 1) + lo for lo, src, idx, _ in table.blocks()]
        return table, cls, np.concatenate(found) if found else np.zeros(0, np.int64)

    # the value holds the table and the classification, so their ids cannot be reused while it is cached
    return self._derive("producer_positions", (id(table), id(cls)), build)[2]


def _alert_role_codes(self, src: np.ndarray, idx: np.ndarray, wait: bool) -> np.ndarray | None:
    """int8 role (0 unknown, 1 producer, 2 propagator) of the alerts (src, idx), from the analysis's
    classification of this index version; None when the analysis is absent, or not ready and not `wait`."""
    try:
        mod = importlib.import_module("tensorboard_plugin_dbg.analysis.root_cause")
    except ImportError:
        return None
    if wait:
        cls = mod.classification(self)
    else:
        cls = getattr(mod, "classification_if_ready", lambda run: None)(self)
    if cls is None:
        return None
    # Looked up by (source, row), not by alert position: positions shift when rows arrive mid-list, rows do not.
    return mod.roles_by_row(cls, src, idx)


def warm(self) -> None:
    """Builds what the first requests after indexing need (the sorted alert list, the roles of every alert, the
    root cause and with it the rows of each kind) on the caller's thread: the refresher calls it when the dump is
    fully read, before it reports done. At 10 M traces the dashboard's first root-cause request otherwise took
    ~1 s (bench/paint_profile.py), all of it building the kind order for the producer's op."""
    self._alert_table()
    self._alert_role_codes(np.zeros(0, np.int8), np.zeros(0, np.int64), wait=True)
    self.root_cause()
