"""Graph execution trace queries: pages (filtered), one trace, an op's rows, and the rows-by-kind permutation.

Filters are resolved on trace kinds first (a kind is one (graph, op, slot, mode, device) identity), then rows
come from a per-kind permutation of the trace rows (`kind_rows`, one counting sort per index version), so a
filtered page costs the number of matching rows, and an op's trace list costs that op's traces.
"""

from __future__ import annotations

import dataclasses
from typing import TypedDict

import numpy as np

from ..reader import debug_values, tensor_content, tensor_proto
from ..reader.schema import MODE_NAMES
from ..wire import types as wire
from . import kind_order, record_reads
from .columns import LOC_MASK, LOC_SHIFT
from .device_queries import DeviceQueries
from .errors import NotFound, RecordGone
from .state import RunState
from .trace_filter import NO_FILTER, TraceFilter

MAX_INDICES = 1000  # trace indices listed per op (the nearest to the focused trace)
_STALE_ROWS = 1 << 16  # _rows_of_kinds: appended rows scanned rather than rebuilding the permutation


class TracePage(TypedDict):
    """wire.ts GraphExecutionsResponse minus `run` and `call` (RunIndex.graph_executions adds `call`)."""

    begin: int
    end: int
    total: int
    unfiltered_total: int
    rows: list[wire.GraphExecutionRow]


class TraceQueries:
    def __init__(self, run: RunState, devices: DeviceQueries) -> None:
        self.run = run
        self.devices = devices

    # ------------------------------------------------------------------------------------ kinds and rows
    def kind_rows(self) -> tuple[np.ndarray, np.ndarray]:
        """(order, starts): rows of kind k are order[starts[k]:starts[k + 1]], ascending."""
        run = self.run
        n = run.lengths().traces

        def build() -> tuple[
            np.ndarray, np.ndarray
        ]:  # a blocked counting sort: int32 out, no temporaries of the run's size (see kind_order.py)
            return kind_order.rows_by_kind(run.traces.view("kind")[:n], len(run.kinds))

        return run.derived.get("kind_rows", (n, len(run.kinds)), build)

    def _kinds_matching(
        self, op_type: str | None, op_name: str | None, graph_id: str | None, device: str | None = None
    ) -> np.ndarray:
        run = self.run

        def build() -> np.ndarray:
            needle = op_name.lower() if op_name else None
            wanted_type = op_type.lower() if op_type is not None else None  # "log" finds Log: people type lower case
            out = []
            for code, (g, name, _slot, _mode, dev) in enumerate(list(run.kinds.kinds)):
                if graph_id is not None and g != graph_id:
                    continue
                if device is not None and dev != device:
                    continue
                if needle is not None and needle not in name.lower():
                    continue
                if wanted_type is not None:
                    op = run.ops.get((g, name))
                    if op is None or op.op_type.lower() != wanted_type:
                        continue
                out.append(code)
            return np.array(out, dtype=np.int64)

        key = (len(run.kinds), len(run.ops))
        return run.derived.get(f"kinds:{op_type!r}:{op_name!r}:{graph_id!r}:{device!r}", key, build)

    def _rows_of_kinds(self, kinds: np.ndarray) -> np.ndarray:
        """Sorted rows (below the published length) whose kind is in `kinds`, from the per-kind permutation
        (kind_rows) plus a scan of the rows appended since it was built. While the dump is being read every batch
        makes the permutation stale, and rebuilding it costs the whole run with the GIL held (bench/load.py: each
        op request rebuilt it, and everyone stalled ~0.6 s at 1 M traces). So while reading, a permutation is only
        built while the run is small, and otherwise the rows appended since are scanned (O(gap), vectorized); once
        the dump is read it is rebuilt when the rows appended since exceed a quarter of it (a live dump that keeps
        growing)."""
        run = self.run
        n = run.lengths().traces
        cached = run.derived.latest("kind_rows")  # ((rows, kinds) it was built for, (order, starts))
        gap = n - cached[0][0] if cached is not None else n
        if gap > 0 and (n <= _STALE_ROWS or (run.done and (cached is None or gap > cached[0][0] // 4))):
            self.kind_rows()
            cached = run.derived.latest("kind_rows")
        if cached is None:  # nothing built yet: scan every row
            built, order, starts = 0, np.zeros(0, np.int64), np.zeros(1, np.int64)
        else:
            (built, _), (order, starts) = cached
        parts = [order[starts[k] : starts[k + 1]] for k in kinds.tolist() if k + 1 < len(starts)]
        if built < n and len(kinds):  # rows appended since the permutation was built
            appended = run.traces.view("kind", n)[built:]
            if len(kinds) > 4:
                hit = np.isin(appended, kinds)
            else:
                hit = np.logical_or.reduce([appended == k for k in kinds.tolist()])
            parts.append(np.flatnonzero(hit) + built)
        if not parts:
            return np.zeros(0, dtype=np.int64)
        rows = np.concatenate(parts).astype(np.int64)
        if len(parts) > 1:
            rows.sort()
        return rows[: np.searchsorted(rows, n)] if built > n else rows

    def _filtered_rows(self, filters: TraceFilter) -> np.ndarray | None:
        """Sorted matching rows, or None when no filter applies (then rows are 0..n-1)."""
        run = self.run
        lengths = run.lengths()
        n = lengths.traces
        if not self.devices.known(filters.device, filters.host):
            return np.zeros(0, np.int64)
        if filters.device is not None and self.devices.every_trace_on(filters.device):
            filters = dataclasses.replace(filters, device=None)  # a one-device run: the filter keeps every row
        by_kind, host, only_nonfinite = filters.by_kind(), filters.host, filters.only_nonfinite
        if not by_kind and host is None:
            if not only_nonfinite:
                return None
            return run.trace_nf.view("row", lengths.trace_nf).astype(np.int64)

        def build() -> np.ndarray | None:
            nonfinite = run.trace_nf.view("row", lengths.trace_nf).astype(np.int64)
            rows: np.ndarray | None = None
            if by_kind:
                kinds = self._kinds_matching(filters.op_type, filters.op_name or None, filters.graph_id, filters.device)
                if only_nonfinite:  # the non-finite rows of those kinds: O(non-finite rows), not O(the kinds' rows)
                    wanted = np.zeros(len(run.kinds), bool)
                    wanted[kinds] = True
                    rows = nonfinite[wanted[run.traces.view("kind", n)[nonfinite]]]
                else:
                    rows = self._rows_of_kinds(kinds)
                    rows = rows[rows < n]
            elif only_nonfinite:
                rows = nonfinite
            if host is not None:  # per row (the file holding it): after the kinds, on the fewest rows
                rows = self.devices.rows_on_host(rows, host, n)
            return rows  # None: every row (a host filter that every row matches)

        key = (n, lengths.trace_nf, len(run.kinds), len(run.ops), len(run.files))
        return run.derived.get(("filter", filters), key, build)

    def matching(self, filters: TraceFilter, within: np.ndarray | None = None) -> np.ndarray | None:
        """Sorted rows under the filters and among `within` (sorted rows), or None for every row. Restricting to
        `within` costs the rows between its first and last, not the run's."""
        rows = self._filtered_rows(filters)
        if within is None:
            return rows
        if rows is None or not len(within):
            return within
        rows = rows[np.searchsorted(rows, within[0]) : np.searchsorted(rows, within[-1], "right")]
        return rows[np.isin(rows, within, assume_unique=True)]

    def _op_kinds(self) -> dict[tuple[str, str], dict[int, list[int]]]:
        """(graph_id, op_name) -> {output_slot: [kind codes]}."""
        run = self.run

        def build() -> dict[tuple[str, str], dict[int, list[int]]]:
            out: dict[tuple[str, str], dict[int, list[int]]] = {}
            for code, (g, name, slot, _mode, _dev) in enumerate(list(run.kinds.kinds)):
                out.setdefault((g, name), {}).setdefault(slot, []).append(code)
            return out

        return run.derived.get("op_kinds", len(run.kinds), build)

    def op_rows(self, graph_id: str, op_name: str, output_slot: int | None = None) -> np.ndarray:
        """Sorted trace rows of an op (one output slot, or all); for analyses and the UI's highlighting."""
        slots = self._op_kinds().get((graph_id, op_name), {})
        kinds = [k for s, ks in slots.items() if output_slot is None or s == output_slot for k in ks]
        rows = self._rows_of_kinds(np.array(kinds, dtype=np.int64))
        return rows[rows < len(self.run.traces)]

    def indices(self, rows: np.ndarray, near: int | None) -> wire.TraceIndices:
        """wire.ts TraceIndices: how many rows, and at most MAX_INDICES of them (those nearest `near`)."""
        if len(rows) <= MAX_INDICES:
            picked = rows
        elif near is None:
            picked = rows[:MAX_INDICES]
        else:
            at = int(np.searchsorted(rows, near))
            lo = max(0, min(at - MAX_INDICES // 2, len(rows) - MAX_INDICES))
            picked = rows[lo : lo + MAX_INDICES]
        # ints only: the JSON encoder need not look inside (up to 1,000 per list, several lists per op)
        return {"count": len(rows), "indices": record_reads.FiniteList(np.asarray(picked, np.int64).tolist())}

    # ------------------------------------------------------------------------------------ pages and one trace
    def page(
        self, begin: int, end: int, filters: TraceFilter = NO_FILTER, within: np.ndarray | None = None
    ) -> TracePage:
        """wire.ts GraphExecutionsResponse minus `run` (and `call`): rows under the filters, among `within`
        (sorted rows, e.g. one call's) when given."""
        n = self.run.lengths().traces
        rows = self.matching(filters, within)
        total = n if rows is None else len(rows)
        end = min(end, total)
        begin = min(begin, end)
        page = np.arange(begin, end, dtype=np.int64) if rows is None else rows[begin:end]
        return {"begin": begin, "end": end, "total": int(total), "unfiltered_total": n, "rows": self.rows(page)}

    def rows(self, page: np.ndarray) -> list[wire.GraphExecutionRow]:
        """wire.ts GraphExecutionRow of each trace row in `page` (rows below lengths().traces). Per page, not per
        row: the columns are sliced once, the records read in one go and the health vectors decoded together
        (record_reads.trace_healths); the list is marked finite for the JSON encoder when its floats (wall times
        and FULL_TENSOR summaries) are."""
        run = self.run
        ops = run.ops
        walls = run.traces.view("wall_time")[page]
        info, healths, finite = record_reads.trace_kinds_healths(run, page)
        hosts = record_reads.trace_hosts(run, page)
        out: list[wire.GraphExecutionRow] = []
        for i, (g, name, slot, _mode, device), wall, host, health in zip(
            page.tolist(), info, walls.tolist(), hosts, healths
        ):
            op = ops.get((g, name))
            out.append(
                {
                    "index": i,
                    "wall_time": wall,
                    "op_name": name,
                    "op_type": op.op_type if op else None,
                    "output_slot": int(slot),
                    "graph_id": g,
                    "device_name": device or None,
                    "host": host,
                    "health": health,
                }
            )
        return record_reads.FiniteList(out) if finite and bool(np.isfinite(walls).all()) else out

    def health(self, index: int) -> wire.TensorHealth:
        """The decoded debug value of one trace (NotFound past the published length)."""
        t = self.run.trace_event(index).graph_execution_trace
        return debug_values.decode_debug_value(int(t.tensor_debug_mode), t.tensor_proto or None)

    def _big_value(self, index: int, begin: int, max_elements: int) -> wire.TensorValue | None:
        """tensor_value's answer for a big FULL_TENSOR record: its elements [begin, begin + max_elements) read by
        offset."""
        loc = int(self.run.traces.view("loc")[index])
        try:
            location = tensor_content.locate(self.run.files[loc >> LOC_SHIFT].path, loc & LOC_MASK, 10, 5, 0)
        except (OSError, tensor_content.ContentError):
            return None
        if location is None:
            return None
        b = min(max(0, begin), location.size)
        e = min(location.size, b + max(0, max_elements))
        part = debug_values.content_values(tensor_content.read_range(location, b, e - b), location.dtype)
        return tensor_proto.value_dict(part, location.dtype, list(location.shape), location.size, b)

    def detail(self, index: int, begin: int = 0, max_elements: int = 1000) -> wire.GraphExecutionDetail:
        """wire.ts GraphExecutionDetail; `begin`/`max_elements` slice a FULL_TENSOR value by flat element."""
        run = self.run
        n, a = run.traces.snapshot()
        if not 0 <= index < n:
            raise NotFound(f"graph execution {index} not found (run has {n})")
        graph_id, op_name, slot, mode, device = run.kinds.kinds[int(a["kind"][index])]
        op = run.ops.get((graph_id, op_name))
        value: wire.TensorValue | None = None
        health: wire.TensorHealth
        if record_reads.big_full_tensor(run, index, int(mode)):  # read from the file, not parsed and cached whole
            health = record_reads.full_tensor_health(run, index)
            value = self._big_value(index, begin, max_elements)
        else:
            try:
                proto = run.read_trace_event(index).graph_execution_trace.tensor_proto or None
                health = debug_values.decode_debug_value(int(mode), proto)
            except RecordGone as exc:  # the row is still known from the index; only its value is gone
                proto, health = None, {"mode": "UNKNOWN", "reason": str(exc)}
            if int(mode) == 7:
                value = tensor_proto.tensor_value(proto, begin, max_elements)
        graph = run.graphs.get(graph_id)
        return {
            "index": index,
            "wall_time": float(a["wall_time"][index]),
            "op_name": op_name,
            "op_type": op.op_type if op else None,
            "output_slot": int(slot),
            "graph_id": graph_id,
            "device_name": device or None,
            "host": run.files[run.trace_file_code(index)].host,
            "health": health,
            "tensor_debug_mode": MODE_NAMES.get(int(mode), "UNSPECIFIED"),
            "value": value,
            "graph_name": graph.name if graph else "",
            "graph_chain": run.graph_chain_ids(graph_id),
            "call_index": self._call_of(float(a["wall_time"][index])),
        }

    def _call_of(self, wall: float) -> int | None:
        """The execution whose window holds a trace written at `wall`: the first execution record written at or
        after it (a call's traces precede its record, call_queries.py); None past the last record."""
        run = self.run
        n_exec, arrays = run.execs.snapshot()

        def build() -> np.ndarray:  # written in order; a clock that stepped back must not break the search
            walls = arrays["wall_time"][:n_exec]
            return np.maximum.accumulate(walls) if n_exec else walls

        ascending = run.derived.get("exec_walls_ascending", n_exec, build)
        e = int(np.searchsorted(ascending, wall, "left"))
        return e if e < n_exec else None
