"""Health over time: an op x step map of a run (wire.ts HealthMapResponse minus `run`).

Rows are trace kinds (an op's output slot), the ones that ever went non-finite first (earliest first), then the
others in the order the dump first traced them. A step of a row is its k-th trace (tfdbg2 records no step number:
for a training function called once per step, the k-th call). The step axis is cut into at most `columns` bins;
a cell says, for its row's traces in its bin:
- `nonfinite`: how many held NaN/∞ (exact: from the index's non-finite rows);
- `trace`: the trace it stands for: the first non-finite one, else the bin's last trace (click -> that trace);
- `zero`: that trace's zero fraction (FULL_HEALTH; null in modes that do not record zeros);
- `changed`: that trace's shape/dtype differs from the previous cell's (SHAPE or FULL_HEALTH).

Cost: a page of rows costs its cells, not the dump: the non-finite rows of the page's kinds are placed by
binary search within each kind's rows (the index's kind_rows order), and one record per cell is read back (one
trace_vectors call for the page). The row order is cached per run version.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from tensorboard_plugin_dbg.analysis.rules.findings import kind_table
from tensorboard_plugin_dbg.index.protocol import RunQueries
from tensorboard_plugin_dbg.wire import types as wire

Rows = npt.NDArray[np.int64]

MAX_ROWS = 200  # rows per page (the route's cap)
MAX_COLUMNS = 1000
DEFAULT_COLUMNS = 200


def _row_order(run: RunQueries) -> tuple[Rows, Rows, Rows]:
    """(kinds in row order, non-finite rows sorted by kind then row, their kinds), cached per version."""

    def build() -> tuple[Rows, Rows, Rows]:
        arrays = run.trace_arrays()
        kinds = arrays["kind"]
        nf = np.asarray(arrays["nonfinite_rows"], np.int64)
        nf = nf[nf < len(kinds)]
        nf_kind = kinds[nf].astype(np.int64)
        n_kinds = int(kinds.max()) + 1 if len(kinds) else 0
        first_nf = np.full(n_kinds, np.iinfo(np.int64).max, np.int64)
        np.minimum.at(first_nf, nf_kind, nf)
        _order, starts = run.kind_rows()
        first_row = np.full(n_kinds, np.iinfo(np.int64).max, np.int64)
        present = np.flatnonzero(np.diff(starts) > 0)
        first_row[present] = _order[starts[present]]
        rows = np.lexsort((first_row, first_nf))  # non-finite kinds first, by their first NaN/∞; then by first trace
        rows = rows[first_row[rows] < np.iinfo(np.int64).max]
        by_kind = np.argsort(nf_kind.astype(np.int32), kind="stable")  # nf is sorted: rows stay in order per kind
        return rows, nf[by_kind], nf_kind[by_kind]

    return run.derived.get("health_map_rows", run.version, build)


def graph_labels(run: RunQueries) -> dict[str, str]:
    """graph id -> its name, numbered in the dump's order where names repeat (a retraced `train_step`: "train_step
    #1", "train_step #2"), as the frontend's widgets/graph_names.ts graphLabels numbers them."""
    ids_of: dict[str, list[str]] = {}
    for graph_id, name, _outer in run.graph_entries():
        ids = ids_of.setdefault(name or graph_id, [])
        if graph_id not in ids:
            ids.append(graph_id)
    return {
        graph_id: f"{name} #{i + 1}" if len(ids) > 1 else name
        for name, ids in ids_of.items()
        for i, graph_id in enumerate(ids)
    }


def health_map(
    run: RunQueries,
    begin: int,
    end: int,
    columns: int = DEFAULT_COLUMNS,
    step_begin: int = 0,
    step_end: int | None = None,
    graph_id: str | None = None,
    op_name: str | None = None,
    op_contains: str | None = None,
) -> wire.HealthMapResponseBody:
    """Rows [begin, end) (or only the op `graph_id`/`op_name`'s slots; or only ops whose name or type holds
    `op_contains`, case-insensitive), steps [step_begin, step_end) in at most `columns` bins."""
    kinds_order, nf_rows, nf_kinds = _row_order(run)
    kinds, graphs, names, types = kind_table(run)
    if op_name is not None:
        kinds_order = np.array(
            [k for k in kinds_order.tolist() if names[k] == op_name and graph_id in (None, graphs[k])], np.int64
        )
    if op_contains:
        needle = op_contains.lower()
        kinds_order = np.array(
            [k for k in kinds_order.tolist() if needle in names[k].lower() or needle in types[k].lower()], np.int64
        )
    order, starts = run.kind_rows()
    lengths = np.diff(starts)
    steps = int(lengths[kinds_order].max()) if len(kinds_order) else 0
    total = len(kinds_order)
    page = kinds_order[min(begin, total) : min(end, total)]
    step_end = steps if step_end is None else min(step_end, steps)
    step_begin = min(step_begin, step_end)
    width = max(1, -(-(step_end - step_begin) // max(columns, 1)))
    n_cols = -(-(step_end - step_begin) // width) if step_end > step_begin else 0
    heads: list[tuple[int, int, int | None, list[float]]] = []  # (kind, steps, first non-finite step, counts)
    reps: list[Rows] = []
    for k in page.tolist():
        seg = order[starts[k] : starts[k + 1]]
        lo, hi = np.searchsorted(nf_kinds, [k, k + 1])
        nf_steps = np.searchsorted(seg, nf_rows[lo:hi])  # the k-th trace of the kind = its step
        nonfinite, trace = _cells(seg, nf_steps, step_begin, step_end, width, n_cols)
        reps.append(trace)
        heads.append((k, int(len(seg)), int(nf_steps[0]) if len(nf_steps) else None, nonfinite))
    labels = graph_labels(run) if heads else {}
    out_rows: list[wire.HealthMapRow] = [
        {
            "kind": k,
            "graph_id": graphs[k],
            "graph_name": labels.get(graphs[k], graphs[k]),
            "op_name": names[k],
            "op_type": types[k],
            "output_slot": int(kinds[k][2]),
            "steps": n_steps,
            "first_nonfinite_step": first_step,
            "nonfinite": nonfinite,
            "trace": rep.tolist(),
            "zero": zero,
            "changed": changed,
        }
        for (k, n_steps, first_step, nonfinite), rep, (zero, changed) in zip(heads, reps, _cell_values(run, reps))
    ]
    return {
        "begin": begin,
        "end": begin + len(out_rows),
        "total": total,
        "steps": steps,
        "step_begin": step_begin,
        "step_end": step_end,
        "bin": width,
        "columns": n_cols,
        "rows": out_rows,
    }


def _cells(
    seg: Rows, nf_steps: Rows, step_begin: int, step_end: int, width: int, n_cols: int
) -> tuple[list[float], Rows]:
    """(non-finite traces per bin, the trace each bin stands for: -1 where the kind was not traced)."""
    bins = np.arange(n_cols, dtype=np.int64)
    bin_lo = step_begin + bins * width
    bin_hi = np.minimum(bin_lo + width, min(step_end, len(seg)))
    inside = (nf_steps >= step_begin) & (nf_steps < step_end)
    nf_bin = (nf_steps[inside] - step_begin) // width
    counts = np.bincount(nf_bin, minlength=n_cols)[:n_cols] if n_cols else np.zeros(0, np.int64)
    first_nf = np.full(n_cols, -1, np.int64)
    uniq, idx = np.unique(nf_bin, return_index=True)
    first_nf[uniq] = nf_steps[inside][idx]
    rep_step = np.where(first_nf >= 0, first_nf, bin_hi - 1)
    has = bin_hi > bin_lo  # the kind was traced in this bin (a kind may have fewer steps than the longest)
    trace = np.where(has, seg[np.clip(rep_step, 0, max(len(seg) - 1, 0))] if len(seg) else -1, -1)
    return counts.astype(np.int64).tolist(), trace.astype(np.int64)


def _cell_values(run: RunQueries, reps: list[Rows]) -> list[tuple[list[float | None], list[bool]]]:
    """Zero fraction and shape/dtype change of each cell's trace, per row: one trace_vectors call for the page."""
    flat = np.concatenate(reps) if reps else np.zeros(0, np.int64)
    wanted = flat[flat >= 0]
    modes, vectors = run.trace_vectors(wanted) if len(wanted) else (np.zeros(0), np.zeros((0, 11)))
    at = 0
    out: list[tuple[list[float | None], list[bool]]] = []
    for rep in reps:
        n = len(rep)
        zero: list[float | None] = [None] * n
        changed = [False] * n
        last_sig: tuple[float, ...] | None = None
        for j, t in enumerate(rep.tolist()):
            if t < 0:
                continue
            mode, v = int(modes[at]), vectors[at]
            at += 1
            sig: tuple[float, ...] | None = None
            if mode == 4 and np.isfinite(v[4]):  # FULL_HEALTH: [id, device, dtype, rank, size, ..., zero(9), ...]
                zero[j] = float(v[9] / v[4]) if v[4] > 0 else None
                sig = (v[2], v[3], v[4])
            elif mode == 5 and np.isfinite(v[3]):  # SHAPE: [id, dtype, rank, size, dims...]
                sig = tuple(v[1:10].tolist())
            changed[j] = last_sig is not None and sig is not None and sig != last_sig
            last_sig = sig if sig is not None else last_sig
        out.append((zero, changed))
    return out
