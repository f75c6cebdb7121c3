"""A float32 (or float64) overflow: ∞ from finite inputs with no zero, in an op that grows values (a square, a
product, a sum, an exp) — not a division by zero, not a log of 0. Values past 3.4e38 (1.8e19 before a square) in a
training step are what a diverging training makes (a learning rate too high, no gradient clipping): #38 item 9's
LSTM at lr=1e4 named the loss's Square that overflowed, under findings, with no word that training diverged.

FULL_HEALTH records no magnitudes, so the growth step by step is not in such a dump: the sentence says what the
overflow shows and how to see the growth (FULL_TENSOR's magnitudes, the value_explosion rule).
"""

from __future__ import annotations

from typing import cast

from tensorboard_plugin_dbg.wire import types as wire

_RANGE = {"float32": "3.4e38", "float64": "1.8e308"}
# Ops whose ∞ from finite inputs can only be values too large (division, log, reciprocal excluded)
GROWING_OPS = frozenset(
    {
        "Square", "Mul", "Exp", "Pow", "MatMul", "BatchMatMulV2", "AddV2", "Add", "AddN", "Sub", "Sum", "Mean",
        "SquaredDifference", "BiasAdd", "Conv2D", "Cumsum", "Expm1",
    }
)  # fmt: skip


def overflow(op_type: str, health: wire.TensorHealth, inputs: list[wire.RootCauseInput], known: bool) -> str | None:
    """The sentence for an overflow of float32/float64's range by a growing op, or None."""
    dtype = health.get("dtype")
    if op_type not in GROWING_OPS or not isinstance(dtype, str) or dtype not in _RANGE or not known:
        return None
    if _n(health, "nan") or not (_n(health, "pos_inf") + _n(health, "neg_inf")):
        return None
    if any(i["health"] and (_n(i["health"], "nan") or _n(i["health"], "pos_inf") or _n(i["health"], "neg_inf"))
           for i in inputs):  # fmt: skip
        return None
    return (
        f"overflow of {dtype}'s range (its largest finite value is {_RANGE[dtype]}): the values grew past it, as a "
        "diverging training makes them (a learning rate too high, no gradient clipping); tensor_debug_mode="
        "'FULL_TENSOR' records their magnitudes step by step (the value_explosion rule)"
    )


def _n(health: wire.TensorHealth, key: str) -> float:
    return cast(float, health.get(key) or 0)
