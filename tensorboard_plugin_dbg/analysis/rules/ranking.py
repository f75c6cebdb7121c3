"""The rules' findings ranked for a reader (#38 item 9): kinds that say training is broken (values exploding or
vanishing, a dead ReLU, a tensor stuck at zero) before kinds that say something changed (dtype, shape, a last
partial batch) and before retracing, which costs time but no correctness. Within a kind, time order (the first
finding is where the problem began). The findings' list itself stays in time order (the dashboard pages it and
steps through it by time); the report prints its kinds in this order."""

from __future__ import annotations

from tensorboard_plugin_dbg.analysis.rules import config
from tensorboard_plugin_dbg.wire import types as wire

RANK: tuple[str, ...] = (
    config.VALUE_EXPLOSION,
    config.VALUE_VANISHING,
    config.DEAD_RELU,
    config.ALL_ZERO,
    config.DTYPE_CHANGE,
    config.SHAPE_CHANGE,
    config.BATCH_ALTERNATES,
    config.RETRACING,
)


def ranked(findings: list[wire.AlertBody]) -> list[wire.AlertBody]:
    """`findings` (in time order) with their kinds in RANK order, each kind's findings kept in time order."""
    order = {kind: i for i, kind in enumerate(RANK)}
    return sorted(findings, key=lambda f: order.get(f["type"], len(RANK)))
