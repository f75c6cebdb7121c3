"""Source <-> graph: per line of a source file, the graph ops it created, and each op's health.

The (file, line) -> ops map is the index's (index/line_ops.py: innermost frame per file, `direct` for the op's
innermost user frame). Here it gets what the Source Code panel's markers show: per line the number of ops, how many
directly, and how many have a non-finite output (the marker turns red: the line that made the NaN op stands out);
and a line's ops, paged, non-finite ones first, each with its first non-finite trace (a graph_executions index the
dashboard can focus).

Health per op comes from the run's non-finite rows mapped to ops through their trace kinds (cost: the non-finite
rows, numpy, per index version; the kind -> op table, a loop over kinds, only when kinds or ops grew).
"""

from __future__ import annotations

import numpy as np

from tensorboard_plugin_dbg.index.protocol import FileLineOps, RunQueries
from tensorboard_plugin_dbg.reader.schema import NO_FINITENESS_MODES
from tensorboard_plugin_dbg.wire import types as wire

_NONE = np.iinfo(np.int64).max  # "no non-finite trace" in the first-row column
_BLOCK = 1 << 16  # non-finite rows per block (~2 MB of temporaries: a fixed cost, not per trace)


class OpHealth:
    """Per op ordinal (FileLineOps.op_keys): traced in a mode that tells finiteness, non-finite trace count, first
    non-finite trace row."""

    def __init__(self, traced: np.ndarray, nonfinite: np.ndarray, first: np.ndarray):
        self.traced, self.nonfinite, self.first = traced, nonfinite, first


def _kind_ops(run: RunQueries, op_keys: list[tuple[str, str]], n_kinds: int) -> np.ndarray:
    """The op ordinal of each trace kind; -1 for an op the map does not know, and for a kind whose mode tells no
    finiteness (NO_TENSOR, SHAPE: such a trace says nothing of the op's health, and never holds a non-finite row).
    A loop over kinds (one per op output slot and mode), not traces; kinds and ops only grow, so it is kept while
    their counts stay."""

    def build() -> np.ndarray:
        ordinal = {key: i for i, key in enumerate(op_keys)}
        out = np.full(n_kinds, -1, np.int64)
        for k in range(n_kinds):
            graph_id, op_name, _slot, mode, _device = run.kind_info(k)
            if int(mode) not in NO_FINITENESS_MODES:
                out[k] = ordinal.get((graph_id, op_name), -1)
        return out

    return run.derived.get("line_ops_kind_ops", (n_kinds, len(op_keys)), build)


def _build_health(run: RunQueries, op_keys: list[tuple[str, str]]) -> OpHealth:
    traces = run.trace_arrays()
    kind_col = traces["kind"]
    n_kinds = int(kind_col.max()) + 1 if len(kind_col) else 0
    kind_op = _kind_ops(run, op_keys, n_kinds)
    traced = np.zeros(len(op_keys), bool)
    traced[kind_op[kind_op >= 0]] = True
    nonfinite = np.zeros(len(op_keys), np.int64)
    first = np.full(len(op_keys), _NONE, np.int64)
    all_bad = traces["nonfinite_rows"]
    for b in range(0, len(all_bad), _BLOCK):  # in blocks: half a 1 M-trace run's rows may be non-finite
        bad = all_bad[b : b + _BLOCK]
        bad = bad[bad < len(kind_col)].astype(np.int64)
        ops_of_bad = kind_op[kind_col[bad]]
        keep = ops_of_bad >= 0
        ops_of_bad, bad = ops_of_bad[keep], bad[keep]
        nonfinite += np.bincount(ops_of_bad, minlength=len(op_keys))
        # `bad` ascends: an op's first occurrence in the earliest block that has it is its first non-finite trace
        uniq, at = np.unique(ops_of_bad, return_index=True)
        new = first[uniq] == _NONE
        first[uniq[new]] = bad[at[new]]
    return OpHealth(traced, nonfinite, first)


def op_health(run: RunQueries, table: FileLineOps) -> OpHealth:
    key = (run.version, len(table.op_keys))
    return run.derived.get("line_ops_health", key, lambda: _build_health(run, table.op_keys))


def line_counts(
    run: RunQueries, index: int, begin_line: int | None = None, end_line: int | None = None
) -> wire.SourceLineCountsResponseBody:
    """wire.ts SourceLineCountsResponse minus `run`: the lines of file `index` (within [begin_line, end_line]) that
    created graph ops, ascending. NotFound for an unknown file."""
    table = run.source_line_ops(index)
    lo = int(np.searchsorted(table.lines, begin_line, "left")) if begin_line is not None else 0
    hi = int(np.searchsorted(table.lines, end_line, "right")) if end_line is not None else len(table.lines)
    lines, ops, direct = table.lines[lo:hi], table.ops[lo:hi], table.direct[lo:hi]
    out: wire.SourceLineCountsResponseBody = {"index": index, "total_ops": int(len(lines)), "lines": []}
    if not len(lines):
        return out
    health = op_health(run, table)
    starts = np.flatnonzero(np.concatenate(([True], lines[1:] != lines[:-1])))
    totals = np.diff(np.append(starts, len(lines)))
    directs = np.add.reduceat(direct.astype(np.int64), starts)
    bad = np.add.reduceat((health.nonfinite[ops] > 0).astype(np.int64), starts)
    out["lines"] = [
        {"line": line, "ops": total, "direct": d, "nonfinite": b}
        for line, total, d, b in zip(lines[starts].tolist(), totals.tolist(), directs.tolist(), bad.tolist())
    ]
    return out


def line_ops(run: RunQueries, index: int, line: int, begin: int, end: int) -> wire.LineOpsResponseBody:
    """wire.ts LineOpsResponse minus `run`: the graph ops line `line` of file `index` created, rows [begin, end):
    ops with a non-finite output first (earliest first non-finite trace first), then those made directly, then the
    rest, each group in creation order. Costs the line's ops (a sort of them) plus the page."""
    table = run.source_line_ops(index)
    lo, hi = table.line_span(line)
    ops, direct = table.ops[lo:hi].astype(np.int64), table.direct[lo:hi]
    total, n_direct = int(hi - lo), int(direct.sum())
    if hi == lo:
        return _line_page(index, line, total, n_direct, 0, 0, [])
    health = op_health(run, table)
    first = health.first[ops]
    order = np.lexsort((ops, ~direct, first))  # first: _NONE (no non-finite trace) sorts last
    page = order[begin:end]
    graph_names = {g: name for g, name, _outer in run.graph_entries()}
    rows: list[wire.LineOp] = []
    for i in page.tolist():
        op = int(ops[i])
        graph_id, op_name = table.op_keys[op]
        entry = run.op_entry(graph_id, op_name)
        rows.append(
            {
                "graph_id": graph_id,
                "graph_name": graph_names.get(graph_id, ""),
                "op_name": op_name,
                "op_type": entry.op_type if entry is not None else "",
                "direct": bool(direct[i]),
                "traced": bool(health.traced[op]),
                "nonfinite_traces": int(health.nonfinite[op]),
                "first_nonfinite": int(first[i]) if first[i] != _NONE else None,
            }
        )
    return _line_page(index, line, total, n_direct, int((first != _NONE).sum()), begin, rows)


def _line_page(
    index: int, line: int, total: int, direct: int, nonfinite: int, begin: int, rows: list[wire.LineOp]
) -> wire.LineOpsResponseBody:
    return {
        "index": index,
        "line": line,
        "total": total,
        "direct": direct,
        "nonfinite": nonfinite,
        "begin": begin,
        "end": begin + len(rows),
        "rows": rows,
    }
