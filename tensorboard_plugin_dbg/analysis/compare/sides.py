"""One side of a finding: the op (or eager execution) of one run, where the user's code made it, and its line."""

from __future__ import annotations

import numpy as np

from tensorboard_plugin_dbg.analysis.compare.align import function_base
from tensorboard_plugin_dbg.analysis.producer import user_frame
from tensorboard_plugin_dbg.index.protocol import RunQueries
from tensorboard_plugin_dbg.wire import types as wire

Side = wire.CompareSide  # an op of one run: `source` "graph" (trace `index`) or "eager" (execution `index`)


def graph_side(run: RunQueries, row: int, occurrence: int) -> Side:
    graph_id, op_name, slot, _mode, _device = run.kind_info(int(run.trace_arrays()["kind"][row]))
    entry = run.op_entry(graph_id, op_name)
    names = {gid: name for gid, name, _outer in run.graph_entries()}
    frame, code = user_frame(run, list(entry.stack_frame_ids)) if entry is not None else (None, None)
    return {
        "source": "graph",
        "index": int(row),
        "op_name": op_name,
        "op_type": entry.op_type if entry is not None else None,
        "function": function_base(names.get(graph_id, graph_id)),
        "graph_id": graph_id,
        "output": int(slot),
        "occurrence": int(occurrence),
        "file": frame.get("path") if frame else None,
        "line": int(frame["line"]) if frame else None,
        "code": code.strip() if code else None,
    }


def eager_side(run: RunQueries, index: int, occurrence: int, output: int = 0) -> Side:
    detail = run.execution(index, max_elements=0)
    frame, code = user_frame(run, list(detail["stack_frame_ids"]))
    return {
        "source": "eager",
        "index": int(index),
        "op_name": None,
        "op_type": detail["op_type"],
        "function": detail.get("graph_name"),
        "graph_id": detail.get("graph_id"),
        "output": output,
        "occurrence": int(occurrence),
        "file": frame.get("path") if frame else None,
        "line": int(frame["line"]) if frame else None,
        "code": code.strip() if code else None,
    }


def latest_trace_before(run: RunQueries, graph_id: str, op_name: str, slot: int, row: int) -> int | None:
    """The last trace of (op, slot) before trace `row` (the value an op's input held when it ran), or None."""
    rows = run.op_trace_rows(graph_id, op_name, slot)
    at = int(np.searchsorted(rows, row, side="left"))
    return int(rows[at - 1]) if at > 0 else None
