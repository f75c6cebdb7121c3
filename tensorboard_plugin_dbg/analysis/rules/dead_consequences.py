"""What a dead ReLU makes zero is not a problem of its own (#38): the sum of a dead layer, the gradients through it
(ReluGrad reads the ReLU's output, and every gradient below it is zero with it) are all zero because the ReLU is.
An all_zero finding of an op that reads a dead ReLU's output (directly or through other ops of its graph, walked as
growth_origin.py walks a growth) and turned zero no earlier than the ReLU died is folded into the dead ReLU's
finding: named in its evidence as a consequence, not counted or listed apart.
"""

from __future__ import annotations

from tensorboard_plugin_dbg.analysis.rules import config
from tensorboard_plugin_dbg.analysis.rules.growth_origin import upstream_at
from tensorboard_plugin_dbg.index.protocol import RunQueries
from tensorboard_plugin_dbg.wire import types as wire

_NAMED = 4  # consequences named in the dead ReLU's evidence


def fold(run: RunQueries, found: list[wire.AlertBody]) -> list[wire.AlertBody]:
    """`found` without the all_zero findings that follow from a dead ReLU, each named under its ReLU's finding."""
    dead = {
        (f["graph_id"], f["op_name"]): f
        for f in found
        if f["type"] == config.DEAD_RELU and f["graph_id"] and f["op_name"]
    }
    if not dead:
        return found
    # per dead ReLU: (ops back from it, op name, finding) of each consequence
    follows: dict[int, list[tuple[int, str, wire.AlertBody]]] = {}
    kept = []
    for f in found:
        relu, hops = upstream_at(run, f, dead) if f["type"] == config.ALL_ZERO else (None, 0)
        if relu is not None and f.get("step", 0) >= relu.get("step", 0):
            follows.setdefault(id(relu), []).append((hops, str(f["op_name"]), f))
        else:
            kept.append(f)
    for f in kept:
        # the nearest first (what reads the ReLU itself), ties by name: not the order the rules happened to find
        # them in, nor their rows' (ops that do not read each other run in the order the executor's threads pick)
        below = [g for _hops, _name, g in sorted(follows.get(id(f), []), key=lambda c: c[:2])]
        if below:
            names = ", ".join(str(g["op_name"]) for g in below[:_NAMED])
            more = f" and {len(below) - _NAMED} more" if len(below) > _NAMED else ""
            f["evidence"] += (
                f"; it makes {len(below)} tensor(s) it flows into all zero too, no earlier than it died: {names}{more}"
                " (consequences of this ReLU, not counted apart)"
            )
    return kept
