"""Where a growth starts: value_explosion / value_vanishing findings collapsed to the ops the trend begins at.

When a recurrence multiplies a state by 20 every step, every op that reads it grows too (`abs`, `reduce_max`, the
variable read that hands the last value back): one finding per op would bury the one line to fix. A finding is
*downstream* when an op it reads (directly or through other ops of its graph) has a finding of the same rule; it is
dropped and named in the evidence of the origin it comes from. A variable read or function input (columns.py
FORWARDING_OPS) hands on a value made elsewhere (the assign of the op that grows), so it is never the origin of an
op that reads it when that op grows too.

A vanishing gradient is fixed in the forward pass (a tiny loss scale, a saturating activation): its finding is
named by the forward op's line (gradients.py) and says which op it is the gradient of.
"""

from __future__ import annotations

from tensorboard_plugin_dbg.analysis import gradients, producer
from tensorboard_plugin_dbg.analysis.columns import FORWARDING_OPS
from tensorboard_plugin_dbg.analysis.rules import config
from tensorboard_plugin_dbg.index.protocol import RunQueries
from tensorboard_plugin_dbg.wire import types as wire

_HOPS = 64  # ops walked back from a finding to find an upstream one
_NAMED = 4  # downstream ops named in the origin's evidence


def collapse(run: RunQueries, found: list[wire.AlertBody]) -> list[wire.AlertBody]:
    """`found` with the downstream growth findings folded into their origins' evidence."""
    exploding = _origins(run, [f for f in found if f["type"] == config.VALUE_EXPLOSION])
    vanishing = _origins(run, [f for f in found if f["type"] == config.VALUE_VANISHING])
    for f in vanishing:
        _name_forward(run, f)
    rest = [f for f in found if f["type"] not in (config.VALUE_EXPLOSION, config.VALUE_VANISHING)]
    return rest + exploding + vanishing


def _origins(run: RunQueries, found: list[wire.AlertBody]) -> list[wire.AlertBody]:
    by_op = {(f["graph_id"], f["op_name"]): f for f in found if f["graph_id"] and f["op_name"]}
    origin_of: dict[int, wire.AlertBody] = {}
    hops_of: dict[int, int] = {}  # how many ops back its origin_of lies
    for f in found:
        up, hops = upstream_at(run, f, by_op)
        if up is not None:
            origin_of[id(f)], hops_of[id(f)] = up, hops
    # a forwarding op read by a growing op: the value it hands on is that op's (through an assign)
    for f in found:
        if f["op_type"] in FORWARDING_OPS and id(f) not in origin_of:
            readers = [g for g in found if g is not f and _reads(run, g, f) and id(g) not in origin_of]
            # by name, not the first the rules found: their order is the rows', which the executor decides
            reader = min(readers, key=lambda g: str(g["op_name"]), default=None)
            if reader is not None:
                origin_of[id(f)], hops_of[id(f)] = reader, 1
    kept = [f for f in found if id(f) not in origin_of]
    for f in kept:
        # the nearest first, ties by name: not the row order the rules found them in (ops that do not read each
        # other run in whatever order the executor's threads pick, per machine and per run)
        below = [
            name
            for _hops, name in sorted(
                (_distance(origin_of, hops_of, g), str(g["op_name"] or g["op_type"]))
                for g in found
                if _root(origin_of, g) is f and g is not f
            )
        ]
        if below:
            more = f" and {len(below) - _NAMED} more" if len(below) > _NAMED else ""
            f["evidence"] += f"; it carries on into {', '.join(map(str, below[:_NAMED]))}{more} (not found again)"
    return kept


def _root(origin_of: dict[int, wire.AlertBody], f: wire.AlertBody) -> wire.AlertBody:
    seen = 0
    while id(f) in origin_of and seen < 1000:
        f, seen = origin_of[id(f)], seen + 1
    return f


def _distance(origin_of: dict[int, wire.AlertBody], hops_of: dict[int, int], f: wire.AlertBody) -> int:
    """How many ops back `f`'s root lies (the hops of each link of its chain added)."""
    total, seen = 0, 0
    while id(f) in origin_of and seen < 1000:
        total, f, seen = total + hops_of[id(f)], origin_of[id(f)], seen + 1
    return total


def upstream_at(
    run: RunQueries, f: wire.AlertBody, by_op: dict[tuple[str, str], wire.AlertBody]
) -> tuple[wire.AlertBody | None, int]:
    """A finding of a non-forwarding op that `f`'s op reads, directly or through other ops (None: it is an
    origin), and how many ops back it lies (1: `f`'s op reads it directly)."""
    graph_id = f["graph_id"]
    if graph_id is None or f["op_name"] is None:
        return None, 0
    frontier, seen = [f["op_name"]], {f["op_name"]}
    for hops in range(1, _HOPS + 1):
        nxt = []
        for name in frontier:
            entry = run.op_entry(graph_id, name)
            for inp, _slot in entry.inputs if entry is not None else ():
                if inp in seen:
                    continue
                seen.add(inp)
                hit = by_op.get((graph_id, inp))
                if hit is not None and hit["op_type"] not in FORWARDING_OPS:
                    return hit, hops
                nxt.append(inp)
        if not nxt:
            break
        frontier = nxt
    return None, 0


def _reads(run: RunQueries, reader: wire.AlertBody, f: wire.AlertBody) -> bool:
    entry = run.op_entry(reader["graph_id"], reader["op_name"]) if reader["graph_id"] and reader["op_name"] else None
    return entry is not None and reader["graph_id"] == f["graph_id"] and any(n == f["op_name"] for n, _ in entry.inputs)


def _name_forward(run: RunQueries, f: wire.AlertBody) -> None:
    """A vanishing gradient's finding names its forward op and that op's line (set before add_user_lines)."""
    if f["graph_id"] is None or f["op_name"] is None:
        return
    entry = run.op_entry(f["graph_id"], f["op_name"])
    forward = gradients.forward_op(run, f["graph_id"], entry) if entry is not None else None
    if forward is None:
        return
    frame, line = producer.user_frame(run, list(forward.stack_frame_ids))
    f["evidence"] += f"; the gradient of {forward.op_name} ({forward.op_type}): its line is the one to look at"
    if frame is not None:
        f["user_frame"], f["source_line"] = frame, line
