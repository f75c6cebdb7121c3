"""Alert queries: the alert list in wall-time order (alert_order.py) and its pages, with roles left null.

Roles (producer / propagator) are an analysis: analysis/alerts.py fills them in and filters by them.
"""

from __future__ import annotations

from typing import TypedDict, cast

import numpy as np
import numpy.typing as npt

from ..wire import types as wire
from . import alert_order, record_reads
from .exec_queries import ExecutionQueries
from .state import RunState

ALERT_TYPE = "InfNanAlert"  # the one alert type the index makes


class AlertPage(TypedDict):
    """The index's part of wire.ts AlertsResponse (roles null): analysis/alerts.py adds the rules' findings, the
    mutes' counts, `needs` and `rules_pending`, the route `run`."""

    begin: int
    end: int
    total: int
    totals_by_type: dict[str, float]
    alerts: list[wire.Alert]


class AlertQueries:
    def __init__(self, run: RunState, executions: ExecutionQueries):
        self.run, self.executions = run, executions

    def table(self, stale_ok: bool = False) -> alert_order.AlertOrder:
        """Every alert in wall-time order (len(), page(positions) -> (source 0=execution/1=graph, row, wall time),
        blocks()). `stale_ok`: while another request rebuilds it, the previous version will do (derived.py)."""
        run = self.run
        lengths = run.lengths()

        def build() -> alert_order.AlertOrder:
            # Exactly the rows of the key (one published snapshot): every row they point at is already there.
            e_rows = run.exec_nf.view("row", lengths.exec_nf)
            return alert_order.build(
                e_rows,
                run.execs.view("wall_time")[e_rows],
                run.trace_nf.view("row", lengths.trace_nf),
                run.traces.view("wall_time"),
            )

        return run.derived.get("alerts", (lengths.exec_nf, lengths.trace_nf), build, stale_ok=stale_ok)

    def _exec_alerts(self, rows: npt.NDArray[np.int64]) -> list[tuple[wire.ExecutionDigest, list[float | None]]]:
        """(digest, [neg_inf, pos_inf, nan, size] with null for unknown) of execution alert rows, in one go."""
        if not len(rows):
            return []
        counts = self.executions.nf_counts(rows, ("neg_inf", "pos_inf", "nan", "size"))
        return [
            (digest, [None if c < 0 else int(c) for c in row_counts])
            for digest, row_counts in zip(self.executions.digests(rows), counts.tolist())
        ]

    def rows(
        self,
        page: npt.NDArray[np.int64],
        psrc: npt.NDArray[np.int8],
        pidx: npt.NDArray[np.int64],
        pwall: npt.NDArray[np.float64],
    ) -> list[wire.Alert]:
        """wire.ts Alert of each position in `page`, whose (source, row, wall time) are psrc, pidx, pwall (roles
        null). The page's trace records are read in one go and their health vectors decoded together
        (record_reads.trace_healths), its executions' columns read once: the cost is the page's."""
        ops = self.run.ops
        t_info, healths, finite = record_reads.trace_kinds_healths(self.run, pidx[psrc == 1])
        traced = iter(zip(t_info, healths))
        executed = iter(self._exec_alerts(pidx[psrc == 0]))
        out: list[wire.Alert] = []
        for p, s, i, w in zip(page.tolist(), psrc.tolist(), pidx.tolist(), pwall.tolist()):
            if s == 0:
                digest, c = next(executed)
                op_name, op_type, graph_id, slot = None, digest["op_type"], digest["graph_id"], 0
                neg_inf, pos_inf, nan, size = c
            else:
                (graph_id, op_name, slot, _mode, _device), health = next(traced)
                op = ops.get((graph_id, op_name))
                op_type = op.op_type if op else ""
                neg_inf, pos_inf, nan, size = (_count(health, k) for k in ("neg_inf", "pos_inf", "nan", "size"))
            out.append(
                {
                    "index": p,
                    "type": ALERT_TYPE,
                    "source": "graph_execution" if s else "execution",
                    "source_index": i,
                    "wall_time": w,
                    "op_name": op_name,
                    "op_type": op_type,
                    "graph_id": graph_id,
                    "output_slot": int(slot),
                    "neg_inf": neg_inf,
                    "pos_inf": pos_inf,
                    "nan": nan,
                    "size": size,
                    "role": None,
                }
            )
        # exec alerts hold ints and None; trace healths were checked by trace_healths
        return record_reads.FiniteList(out) if finite and bool(np.isfinite(pwall).all()) else out

    def page(self, begin: int, end: int, alert_type: str | None = None) -> AlertPage:
        """wire.ts AlertsResponse minus `run`, roles null: alerts [begin, end) in wall-time order, `total` after
        the type filter, `totals_by_type`."""
        run = self.run
        known_type = alert_type in (None, "", ALERT_TYPE)
        if end <= begin:
            # Totals only (a client polling the count): no sorted table, O(1) at any size.
            lengths = run.lengths()
            total_all = lengths.exec_nf + lengths.trace_nf
            return {
                "begin": begin,
                "end": begin,
                "total": total_all if known_type else 0,
                "totals_by_type": {ALERT_TYPE: total_all} if total_all else {},
                "alerts": [],
            }
        # once the dump is read, an alert page is exact; before, it may come from the previous batch's table
        table = self.table(stale_ok=not run.done)
        total = len(table) if known_type else 0
        # the page is a slice of positions (no array of every position per request)
        page = np.arange(min(begin, total), min(end, total))
        psrc, pidx, pwall = table.page(page)
        return {
            "begin": begin,
            "end": begin + len(page),
            "total": total,
            "totals_by_type": {ALERT_TYPE: len(table)} if len(table) else {},
            "alerts": self.rows(page, psrc, pidx, pwall),
        }


def _count(health: wire.TensorHealth, key: str) -> float | None:
    # a count of the health's mode, or None where the mode does not record it (its key is absent)
    return cast("float | None", health.get(key))
