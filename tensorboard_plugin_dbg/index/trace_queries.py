"""Graph execution, graph and op queries (methods of RunIndex; see queries.py).

Filters are resolved on trace kinds first (a kind is one (graph, op, slot, mode, device) identity), then rows
come from a per-kind permutation of the trace rows (`_kind_rows`, one counting sort per index version), so a
filtered page costs the number of matching rows, and an op's trace list costs that op's traces.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..reader import debug_values
from ..reader.schema import MODE_NAMES
from . import kind_order, record_reads
from .protocol import NotFound, RecordGone

_MAX_INDICES = 1000
_STALE_ROWS = 1 << 16  # _rows_of_kinds: appended rows scanned rather than rebuilding the permutation


def _kind_rows(self):
    """(order, starts): rows of kind k are order[starts[k]:starts[k + 1]], ascending."""
    n = self.lengths().traces

    def build():  # a blocked counting sort: int32 out, no temporaries of the run's size (see kind_order.py)
        return kind_order.rows_by_kind(self.traces.view("kind")[:n], len(self.kinds))

    return self._derive("kind_rows", (n, len(self.kinds)), build)


def _kinds_matching(self, op_type=None, op_name=None, graph_id=None) -> np.ndarray:
    def build():
        needle = op_name.lower() if op_name else None
        out = []
        for code, (g, name, _slot, _mode, _dev) in enumerate(list(self.kinds.kinds)):
            if graph_id is not None and g != graph_id:
                continue
            if needle is not None and needle not in name.lower():
                continue
            if op_type is not None:
                op = self.ops.get((g, name))
                if op is None or op.op_type != op_type:
                    continue
            out.append(code)
        return np.array(out, dtype=np.int64)

    return self._derive(f"kinds:{op_type!r}:{op_name!r}:{graph_id!r}", (len(self.kinds), len(self.ops)), build)


def _rows_of_kinds(self, kinds: np.ndarray) -> np.ndarray:
    """Sorted rows (below the published length) whose kind is in `kinds`, from the per-kind permutation
    (_kind_rows) plus a scan of the rows appended since it was built. While the dump is being read every batch
    makes the permutation stale, and rebuilding it costs the whole run with the GIL held (bench/load.py: each op
    request rebuilt it, and everyone stalled ~0.6 s at 1 M traces). So while reading, a permutation is only built
    while the run is small, and otherwise the rows appended since are scanned (O(gap), vectorized); once the dump
    is read it is rebuilt when the rows appended since exceed a quarter of it (a live dump that keeps growing)."""
    n = self.lengths().traces
    cached = self._derived.get("kind_rows")  # ((rows, kinds) it was built for, (order, starts)), see _kind_rows
    gap = n - cached[0][0] if cached is not None else n
    if gap > 0 and (n <= _STALE_ROWS or (self.done and (cached is None or gap > cached[0][0] // 4))):
        self._kind_rows()
        cached = self._derived.get("kind_rows")
    if cached is None:  # nothing built yet: scan every row
        built, order, starts = 0, np.zeros(0, np.int64), np.zeros(1, np.int64)
    else:
        (built, _), (order, starts) = cached
    parts = [order[starts[k] : starts[k + 1]] for k in kinds.tolist() if k + 1 < len(starts)]
    if built < n and len(kinds):  # rows appended since the permutation was built
        gap = self.traces.view("kind", n)[built:]
        hit = np.isin(gap, kinds) if len(kinds) > 4 else np.logical_or.reduce([gap == k for k in kinds.tolist()])
        parts.append(np.flatnonzero(hit) + built)
    if not parts:
        return np.zeros(0, dtype=np.int64)
    rows = np.concatenate(parts).astype(np.int64)
    if len(parts) > 1:
        rows.sort()
    return rows[: np.searchsorted(rows, n)] if built > n else rows


def _filtered_rows(self, op_type, op_name, graph_id, only_nonfinite) -> np.ndarray | None:
    """Sorted matching rows, or None when no filter applies (then rows are 0..n-1)."""
    lengths = self.lengths()
    n = lengths.traces
    if op_type is None and not op_name and graph_id is None:
        if not only_nonfinite:
            return None
        return self.trace_nf.view("row", lengths.trace_nf).astype(np.int64)

    def build():
        rows = _rows_of_kinds(self, self._kinds_matching(op_type, op_name or None, graph_id))
        rows = rows[rows < n]
        if only_nonfinite:
            rows = rows[np.isin(rows, self.trace_nf.view("row", lengths.trace_nf), assume_unique=True)]
        return rows

    key = (n, lengths.trace_nf, len(self.kinds), len(self.ops))
    return self._derive(f"filter:{op_type!r}:{op_name!r}:{graph_id!r}:{only_nonfinite}", key, build)


def _trace_row(self, index: int, event=None) -> dict[str, Any]:
    n, a = self.traces.snapshot()
    if not 0 <= index < n:
        raise NotFound(f"graph execution {index} not found (run has {n})")
    graph_id, op_name, slot, mode, device = self.kinds.kinds[int(a["kind"][index])]
    op = self.ops.get((graph_id, op_name))
    try:
        event = event if event is not None else self.read_trace_event(index)
        proto = event.graph_execution_trace.tensor_proto or None
        health = debug_values.decode_debug_value(int(mode), proto)
    except RecordGone as exc:  # the row is still known from the index; only its value is gone
        proto, health = None, {"mode": "UNKNOWN", "reason": str(exc)}
    return {
        "index": index,
        "wall_time": float(a["wall_time"][index]),
        "op_name": op_name,
        "op_type": op.op_type if op else None,
        "output_slot": int(slot),
        "graph_id": graph_id,
        "device_name": device or None,
        "host": self.files[self.trace_file_code(index)].host,
        "health": health,
        "_proto": proto,
        "_mode": int(mode),
    }


def graph_executions(
    self,
    begin: int,
    end: int,
    op_type: str | None = None,
    op_name: str | None = None,
    graph_id: str | None = None,
    only_nonfinite: bool = False,
) -> dict[str, Any]:
    n = self.lengths().traces
    rows = _filtered_rows(self, op_type, op_name, graph_id, only_nonfinite)
    total = n if rows is None else len(rows)
    end = min(end, total)
    begin = min(begin, end)
    page = np.arange(begin, end, dtype=np.int64) if rows is None else rows[begin:end]
    return {"begin": begin, "end": end, "total": int(total), "unfiltered_total": n, "rows": trace_rows(self, page)}


def trace_rows(self, page: np.ndarray) -> list[dict[str, Any]]:
    """wire.ts GraphExecutionRow of each trace row in `page` (rows below lengths().traces). Per page, not per row:
    the columns are sliced once, the records read in one go and the health vectors decoded together
    (record_reads.trace_healths); the list is marked finite for the JSON encoder when its floats (wall times and
    FULL_TENSOR summaries) are."""
    ops = self.ops
    walls = self.traces.view("wall_time")[page]
    info, healths, finite = record_reads.trace_kinds_healths(self, page)
    hosts = record_reads.trace_hosts(self, page)
    out = []
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


def graph_execution(self, index: int, begin: int = 0, max_elements: int = 1000) -> dict[str, Any]:
    row = self._trace_row(index)
    proto, mode = row.pop("_proto"), row.pop("_mode")
    graph = self.graphs.get(row["graph_id"])
    row.update(
        {
            "tensor_debug_mode": MODE_NAMES.get(mode, "UNSPECIFIED"),
            "value": debug_values.tensor_value(proto, begin, max_elements) if mode == 7 else None,
            "graph_name": graph.name if graph else "",
            "graph_chain": self.graph_chain_ids(row["graph_id"]),
        }
    )
    return row


def graph(self, graph_id: str) -> dict[str, Any]:
    entry = self.graphs.get(graph_id)
    if entry is None:
        raise NotFound(f"graph {graph_id!r} not found")
    chain = [
        {"graph_id": g, "name": self.graphs[g].name if g in self.graphs else ""} for g in self.graph_chain_ids(graph_id)
    ]
    inner = [{"graph_id": g.graph_id, "name": g.name} for g in list(self.graphs.values()) if g.outer_id == graph_id]
    return {
        "graph_id": graph_id,
        "name": entry.name,
        "outer_graph_id": entry.outer_id,
        "chain": chain,
        "inner_graphs": inner,
        "op_count": len(entry.op_names),
    }


def _op_kinds(self) -> dict:
    """(graph_id, op_name) -> {output_slot: [kind codes]}."""

    def build():
        out: dict = {}
        for code, (g, name, slot, _mode, _dev) in enumerate(list(self.kinds.kinds)):
            out.setdefault((g, name), {}).setdefault(slot, []).append(code)
        return out

    return self._derive("op_kinds", len(self.kinds), build)


def op_trace_rows(self, graph_id: str, op_name: str, output_slot: int | None = None) -> np.ndarray:
    """Sorted trace rows of an op (one output slot, or all); for analyses and the UI's highlighting."""
    slots = self._op_kinds().get((graph_id, op_name), {})
    kinds = [k for s, ks in slots.items() if output_slot is None or s == output_slot for k in ks]
    rows = _rows_of_kinds(self, np.array(kinds, dtype=np.int64))
    return rows[rows < len(self.traces)]


def _trace_indices(self, rows: np.ndarray, near: int | None) -> dict[str, Any]:
    if len(rows) <= _MAX_INDICES:
        picked = rows
    elif near is None:
        picked = rows[:_MAX_INDICES]
    else:
        at = int(np.searchsorted(rows, near))
        lo = max(0, min(at - _MAX_INDICES // 2, len(rows) - _MAX_INDICES))
        picked = rows[lo : lo + _MAX_INDICES]
    # ints only: the JSON encoder need not look inside (up to 1,000 per list, several lists per op)
    return {"count": len(rows), "indices": record_reads.FiniteList(np.asarray(picked, np.int64).tolist())}


def _summary(self, graph_id: str, op_name: str) -> dict[str, Any] | None:
    op = self.ops.get((graph_id, op_name))
    if op is None:
        return None
    return {"graph_id": graph_id, "op_name": op_name, "op_type": op.op_type, "num_outputs": op.num_outputs}


def op(self, graph_id: str, op_name: str, near: int | None = None) -> dict[str, Any]:
    entry = self.ops.get((graph_id, op_name))
    if entry is None:
        raise NotFound(f"op {op_name!r} not found in graph {graph_id!r}")
    inputs = [
        {
            "slot": i,
            "op_name": producer,
            "output_slot": out_slot,
            "op": _summary(self, graph_id, producer),
            "traces": self._trace_indices(self.op_trace_rows(graph_id, producer, out_slot), near),
        }
        for i, (producer, out_slot) in enumerate(entry.inputs)
    ]
    by_slot: dict[int, list] = {s: [] for s in range(entry.num_outputs)}
    for out_slot, consumer, input_slot in list(self.consumers.get((graph_id, op_name), [])):
        by_slot.setdefault(out_slot, []).append(
            {
                "input_slot": input_slot,
                "op_name": consumer,
                "op": _summary(self, graph_id, consumer),
                "traces": self._trace_indices(self.op_trace_rows(graph_id, consumer), near),
            }
        )
    return {
        "graph_id": graph_id,
        "graph_chain": [
            {"graph_id": g, "name": self.graphs[g].name if g in self.graphs else ""}
            for g in self.graph_chain_ids(graph_id)
        ],
        "op_name": op_name,
        "op_type": entry.op_type,
        "device_name": entry.device_name,
        "num_outputs": entry.num_outputs,
        "output_tensor_ids": [int(t) for t in entry.output_tensor_ids],
        "stack_frame_ids": list(entry.stack_frame_ids),
        "host": entry.host,
        "traces": self._trace_indices(self.op_trace_rows(graph_id, op_name), near),
        "inputs": inputs,
        "consumers": [{"output_slot": s, "consumers": c} for s, c in sorted(by_slot.items())],
    }
