"""A float32 (or float64) overflow: ∞ from finite inputs with no zero, in an op that grows values (a square, a
product, a sum, an exp) — not a division by zero, not a log of 0. Values past 3.4e38 (1.8e19 before a square) in a
training step are what a diverging training makes (a learning rate too high, no gradient clipping): #38 item 9's
LSTM at lr=1e4 named the loss's Square that overflowed, under findings, with no word that training diverged.

FULL_HEALTH records no magnitudes, so the growth step by step is not in such a dump: the sentence says what the
overflow shows and how to see the growth (FULL_TENSOR's magnitudes, the value_explosion rule).
"""

from __future__ import annotations

from typing import cast

import numpy as np

from tensorboard_plugin_dbg.index.protocol import RunQueries
from tensorboard_plugin_dbg.wire import types as wire

_RANGE = {"float32": "3.4e38", "float64": "1.8e308"}
# Ops whose ∞ from finite inputs can only be values too large (division, log, reciprocal excluded)
GROWING_OPS = frozenset(
    {
        "Square", "Mul", "Exp", "Pow", "MatMul", "BatchMatMulV2", "AddV2", "Add", "AddN", "Sub", "Sum", "Mean",
        "SquaredDifference", "BiasAdd", "Conv2D", "Cumsum", "Expm1",
    }
)  # fmt: skip


def overflow(
    run: RunQueries,
    graph_id: str | None,
    op_type: str,
    health: wire.TensorHealth,
    inputs: list[wire.RootCauseInput],
    known: bool,
) -> str | None:
    """The sentence for an overflow of float32/float64's range by a growing op, or None; with FULL_TENSOR, how
    its input grew trace by trace (growth())."""
    dtype = health.get("dtype")
    if op_type not in GROWING_OPS or not isinstance(dtype, str) or dtype not in _RANGE or not known:
        return None
    if _n(health, "nan") or not (_n(health, "pos_inf") + _n(health, "neg_inf")):
        return None
    if any(i["health"] and (_n(i["health"], "nan") or _n(i["health"], "pos_inf") or _n(i["health"], "neg_inf"))
           for i in inputs):  # fmt: skip
        return None
    text = (
        f"overflow of {dtype}'s range (its largest finite value is {_RANGE[dtype]}): the values grew past it, as a "
        "diverging training makes them (a learning rate too high, no gradient clipping)"
    )
    grew = growth(run, graph_id, inputs) if graph_id else None
    if grew:
        return f"{text}; {grew}"
    return f"{text}; tensor_debug_mode='FULL_TENSOR' records their magnitudes step by step"


_LOOK_BACK = 64  # earlier traces of the input read for its growth
_GROWING = 2.0  # a trace at least this many times the one before it counts as growth


def growth(run: RunQueries, graph_id: str, inputs: list[wire.RootCauseInput]) -> str | None:
    """E.g. "its input sub:0 grew from 0.9 to 2.1e19 over its last 4 traces (×3.4e6 per trace) before it
    overflowed": the run of growing traces (each >= _GROWING times the one before) of the op's largest input that
    ends at the overflow, from FULL_TENSOR's min and max; None without them or without such growth."""
    best: tuple[float, wire.RootCauseInput] | None = None
    for i in inputs:
        h = i["health"]
        if h and h.get("max") is not None and i.get("graph_execution_index") is not None:
            m = _max_abs(h)
            best = (m, i) if best is None or m > best[0] else best
    if best is None:
        return None
    inp = best[1]
    rows = np.asarray(run.op_trace_rows(graph_id, inp["op_name"], int(inp["output_slot"])), np.int64)
    rows = rows[rows <= int(cast(int, inp["graph_execution_index"]))][-_LOOK_BACK:]
    mags = [_max_abs(run.graph_execution(int(r), max_elements=0)["health"]) for r in rows.tolist()]
    end = len(mags) - 1
    start = end
    while start > 0 and mags[start - 1] > 0 and mags[start] >= _GROWING * mags[start - 1]:
        start -= 1
    if start == end:
        return None
    rate = (mags[end] / mags[start]) ** (1.0 / (end - start))
    return (
        f"its input {inp['op_name']}:{inp['output_slot']} grew from {mags[start]:.3g} to {mags[end]:.3g} over its "
        f"last {end - start + 1} traces (×{rate:.3g} per trace) before it overflowed"
    )


def _max_abs(health: wire.TensorHealth) -> float:
    lo, hi = health.get("min"), health.get("max")
    if lo is None or hi is None:
        return 0.0
    return max(abs(float(cast(float, lo))), abs(float(cast(float, hi))))


def _n(health: wire.TensorHealth, key: str) -> float:
    return cast(float, health.get(key) or 0)
