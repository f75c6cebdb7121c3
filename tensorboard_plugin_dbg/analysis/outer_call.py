"""A nested function's input followed to the tensor its caller passed in, where the dump records the calling op.

TensorFlow records no op for a call between tf.functions (links.py). The JAX writer does: a nested `jit` is an op of
the caller's graph whose type is the callee's graph name and whose data inputs are the tensors passed in, in the
order of the callee's inputs (its `arg_<i>` Placeholders). Input k of the callee is then the caller op's input k, of
the same step: that tensor's trace nearest in time to the callee's.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tensorboard_plugin_dbg.analysis.columns import RunColumns
from tensorboard_plugin_dbg.analysis.health import describe
from tensorboard_plugin_dbg.index.protocol import NotFound, RunQueries


def passed_in(
    run: RunQueries, cols: RunColumns, graph_id: str, inputs: list[str], placeholder: str, trace_row: int
) -> Any:
    """The link (a links.Link: its type stays in links.py, which imports this module) of `placeholder`, one of the
    callee's `inputs`, to its caller op's input; None when the caller's graph holds no op calling this graph with
    as many inputs."""
    try:
        info = run.graph(graph_id)
    except NotFound:
        return None
    outer = info["outer_graph_id"]
    if not outer:
        return None
    for name in run.graph_op_names(outer):
        entry = run.op_entry(outer, name)
        if entry is None or entry.op_type != info["name"] or len(entry.inputs) != len(inputs):
            continue
        source, slot = entry.inputs[inputs.index(placeholder)]
        return _traced(run, cols, outer, source, slot, trace_row, f"{info['name']} (called by {name})")
    return None


def _traced(
    run: RunQueries, cols: RunColumns, graph_id: str, op_name: str, slot: int, trace_row: int, callee: str
) -> Any:
    rows = np.asarray(run.op_trace_rows(graph_id, op_name, slot), np.int64)
    rows = rows[rows < len(cols.trace_wall)]
    tensor = f"{op_name}:{slot}"
    if not len(rows):
        why = f"an input of {callee}, passed in as {tensor}, which was not traced: its health cannot be known"
        return {"flag": None, "health": None, "execution_index": None, "output_slot": None, "op_type": None, "why": why}
    row = int(rows[np.argmin(np.abs(cols.trace_wall[rows] - cols.trace_wall[trace_row]))])
    health = run.graph_execution(row, max_elements=0)["health"]
    entry = run.op_entry(graph_id, op_name)
    why = f"an input of {callee}: passed in as {tensor} (graph execution #{row}) — {describe(health)}"
    return {
        "flag": int(cols.trace_nonfinite[row]),
        "health": health,
        "execution_index": None,
        "output_slot": slot,
        "op_type": entry.op_type if entry is not None else None,
        "why": why,
        "graph_execution_index": row,
    }
