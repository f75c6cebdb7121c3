"""Single traces of run B against run A, for the views that show B's traces (#27): Graph Execution's difference
column and "divergent only" list, Graph Structure's colours.

A comparison (comparison.py) already knows which aligned pairs differ; these functions answer for the rows a view
shows, and cost what those rows cost: B's aligned rows (`Pairs.b`) are ascending, so a row's pair is one binary
search, and only the shown rows' vectors (or, FULL_TENSOR, tensors) are read.
"""

from __future__ import annotations

import numpy as np

from tensorboard_plugin_dbg.analysis.compare.comparison import Comparison
from tensorboard_plugin_dbg.analysis.compare.differences import FULL_TENSOR, NO_TENSOR, graph_tensor_metric
from tensorboard_plugin_dbg.analysis.compare.metrics import Metric, health_metric
from tensorboard_plugin_dbg.wire import types as wire

Difference = wire.TraceDifference


def divergent_rows(c: Comparison) -> np.ndarray:
    """int64[n]: B's trace rows whose aligned A trace differs, and those A holds no trace for ("only in changed": an
    added op is a divergence, and often the first change's side B), ascending (a filter's `within`)."""
    return np.union1d(c.traces.b[c.trace_differs], c.traces.only_b).astype(np.int64)


def pair_positions(c: Comparison, rows_b: np.ndarray) -> np.ndarray:
    """int64 per B row: its pair position, -1 for a row only B holds."""
    rows_b = np.asarray(rows_b, np.int64)
    aligned = c.traces.b
    if not len(aligned):
        return np.full(len(rows_b), -1, np.int64)
    at = np.minimum(np.searchsorted(aligned, rows_b), len(aligned) - 1)
    return np.where(aligned[at] == rows_b, at, -1).astype(np.int64)


def differences(c: Comparison, rows_b: np.ndarray) -> list[Difference]:
    """The difference of each given B trace row from its aligned A trace, in the given order. The health modes'
    vectors of all the rows are read in one go per run (as a page of the list reads them)."""
    rows_b = np.asarray(rows_b, np.int64)
    positions = pair_positions(c, rows_b)
    paired = positions >= 0
    rows_a = np.full(len(rows_b), -1, np.int64)
    rows_a[paired] = c.traces.a[positions[paired]]
    modes_a = np.zeros(len(rows_b), np.int64)
    modes_a[paired] = c.keys_a.modes(rows_a[paired])
    modes_b = c.keys_b.modes(rows_b).astype(np.int64)
    values = (modes_a == FULL_TENSOR) & (modes_b == FULL_TENSOR)
    health = np.flatnonzero(paired & (modes_a != NO_TENSOR) & (modes_b != NO_TENSOR) & ~values)
    vectors: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    if len(health):
        _ma, va = c.run_a.trace_vectors(rows_a[health])
        _mb, vb = c.run_b.trace_vectors(rows_b[health])
        vectors = {int(k): (va[i], vb[i]) for i, k in enumerate(health.tolist())}
    return [
        _difference(c, int(rows_b[k]), int(positions[k]), (int(modes_a[k]), int(modes_b[k])), vectors.get(k))
        for k in range(len(rows_b))
    ]


def _difference(
    c: Comparison, row_b: int, pos: int, modes: tuple[int, int], vectors: tuple[np.ndarray, np.ndarray] | None
) -> Difference:
    if pos < 0:
        why = f"no aligned trace in baseline {c.run_a.name} (an op, or an occurrence, it lacks)"
        return _made("only_in_b", "only in changed", why)
    row_a = int(c.traces.a[pos])
    mode_a, mode_b = modes
    if NO_TENSOR in (mode_a, mode_b) or (vectors is None and not mode_a == mode_b == FULL_TENSOR):
        return _made("not_compared", "", "NO_TENSOR: no value recorded to compare")
    differs = bool(c.trace_differs[pos])
    if mode_a == mode_b == FULL_TENSOR:
        metric = c.trace_metrics.get(pos) or graph_tensor_metric(c.run_a, c.run_b, row_a, row_b, c.tol)
        if metric is None:
            return _made("differs" if differs else "not_compared", "", "no stored value to compare")
        return _tensor_difference(metric, differs)
    assert vectors is not None  # read for every compared row outside FULL_TENSOR (differences above)
    metric = health_metric(mode_a, mode_b, vectors[0], vectors[1])
    if differs and not metric["differs"]:
        return _op_type_change(c, row_a, row_b)
    if not differs:
        return _made("same", "=", metric["summary"])
    counts = metric.get("counts") or {}
    text = " ".join(f"{_column(name)}{_num(a)}→{_num(b)}" for name, (a, b) in counts.items())
    return _made("differs", text or metric["summary"], metric["summary"])


def _tensor_difference(metric: Metric, differs: bool) -> Difference:
    summary = metric["summary"]
    if metric.get("bitwise_equal"):
        return _made("same", "=", "bitwise equal")
    max_abs, max_rel = metric.get("max_abs"), metric.get("max_rel")
    if max_abs is None and max_rel is None:  # a shape or dtype change, or not numeric
        return _made("differs" if differs else "same", summary if differs else "=", summary)
    text = f"{_g(max_abs)} / {_g(max_rel)}"
    if metric.get("dtype_a") != metric.get("dtype_b"):
        text = f"{metric.get('dtype_a')}→{metric.get('dtype_b')} {text}"
    return _made("differs" if differs else "same", text if differs else f"≈ {text}", summary, max_abs)


def _op_type_change(c: Comparison, row_a: int, row_b: int) -> Difference:
    type_a, type_b = _op_type(c, "a", row_a), _op_type(c, "b", row_b)
    return _made("differs", f"{type_a}→{type_b}", f"op type {type_a} → {type_b}")


def _op_type(c: Comparison, side: str, row: int) -> str:
    run = c.run_a if side == "a" else c.run_b
    graph_id, op_name, _slot, _mode, _device = run.kind_info(int(run.trace_arrays()["kind"][row]))
    entry = run.op_entry(graph_id, op_name)
    return entry.op_type if entry is not None else "?"


def _made(status: str, text: str, summary: str, magnitude: float | None = None) -> Difference:
    return {"status": status, "text": text, "summary": summary, "magnitude": magnitude}  # type: ignore[typeddict-item]


# A cell's width: the counts as the health chips write them ("−×13→16 +×3→0"); the summary (the tooltip) in words
_COLUMN_LABELS = {"negative": "−×", "zero": "0×", "positive": "+×", "nan": "NaN ", "-inf": "−∞ ", "+inf": "+∞ "}


def _column(name: str) -> str:
    return _COLUMN_LABELS.get(name, "NaN/∞ " if name == "inf/nan" else f"{name} ")


def _num(x: float) -> str:
    if not np.isfinite(x):
        return str(x)
    return str(int(x)) if x == int(x) else f"{x:g}"


def _g(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.2g}"  # a cell's width; the summary (the tooltip) has 4 digits
