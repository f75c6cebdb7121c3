"""A rule finding as the `alerts` route lists it (wire.ts Alert with `type` = the rule, `evidence`, `step`) and
the user's line of its op, shared by the rule modules."""

from __future__ import annotations

from typing import Literal

from tensorboard_plugin_dbg.analysis import producer
from tensorboard_plugin_dbg.index.protocol import RunQueries
from tensorboard_plugin_dbg.reader.traces import Kind
from tensorboard_plugin_dbg.wire import types as wire

FRAME_LIMIT = 200  # findings whose user line is looked up (each is a few record reads); the rest say null


def finding(
    rule: wire.AlertType,
    source: Literal["execution", "graph_execution"],
    source_index: int,
    wall_time: float,
    op: tuple[str | None, str | None, str, int],
    step: int,
    count: int,
    evidence: str,
) -> wire.AlertBody:
    """op = (graph_id, op_name, op_type, output_slot)."""
    graph_id, op_name, op_type, slot = op
    return {
        "type": rule,
        "source": source,
        "source_index": int(source_index),
        "wall_time": float(wall_time),
        "op_name": op_name,
        "op_type": op_type,
        "graph_id": graph_id,
        "output_slot": int(slot),
        "neg_inf": None,
        "pos_inf": None,
        "nan": None,
        "size": None,
        "role": None,
        "step": int(step),
        "count": int(count),
        "evidence": evidence,
        "user_frame": None,
        "source_line": None,
    }


def add_user_lines(run: RunQueries, found: list[wire.AlertBody]) -> None:
    """Fills user_frame / source_line of the first FRAME_LIMIT findings from their op's creation stack (a
    retracing finding already holds its call site)."""
    for f in found[:FRAME_LIMIT]:
        if f.get("user_frame") is not None or f["op_name"] is None or f["graph_id"] is None:
            continue
        entry = run.op_entry(f["graph_id"], f["op_name"])
        if entry is not None:
            f["user_frame"], f["source_line"] = producer.user_frame(run, list(entry.stack_frame_ids))


KindTable = tuple[list[Kind], list[str], list[str], list[str]]


def kind_table(run: RunQueries) -> KindTable:
    """(kind tuples, graph id, op name, op type) of every trace kind, cached per run version (one op_entry per
    kind: Python per kind, never per trace)."""

    def build() -> KindTable:
        column = run.trace_arrays()["kind"]
        n = int(column.max()) + 1 if len(column) else 0
        kinds = [run.kind_info(k) for k in range(n)]
        types: list[str] = []
        for graph_id, op_name, *_ in kinds:
            entry = run.op_entry(graph_id, op_name)
            types.append(entry.op_type if entry else "")
        return kinds, [k[0] for k in kinds], [k[1] for k in kinds], types

    return run.derived.get("kind_table", run.version, build)
