"""The columns the root-cause classifier needs, gathered from a run.

The classifier (`classify.py`) works on flat numpy arrays so that a 10 M-trace run is a few vectorized passes, not
10 M Python calls. This module fills those arrays:

- `from_index(run)`: from the columnar index's own arrays (index_columns.py): no per-row Python work at all.
- `from_queries(run)`: from the public `RunQueries` methods only (paged graph_executions, op(), execution()).
  Correct for any index, but costs one Python dict per row: the fallback, and what unit tests with fakes use.

Codes: every (graph_id, op_name) gets an op code and every (graph_id, op_name, output_slot) a tensor code; -1 means
unknown (a trace whose op is not in the graphs file yet, an input naming an op that is missing).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tensorboard_plugin_dbg.analysis.health import is_nonfinite

PAGE = 1000
# Ops whose output is a value made elsewhere, through an edge the graph records do not show: a loop variable or
# function input (Placeholder) gets it from the previous iteration or the caller, a ReadVariableOp from the last
# assignment (often in an untraced gradient graph). When the NaN was already seen before they ran, they carry it on
# rather than produce it (classify.py).
FORWARDING_OPS = frozenset(
    {"Placeholder", "ReadVariableOp"}
)  # the API's page cap; an index may accept more, but asking for more gains little here


@dataclass
class RunColumns:
    # Graph execution traces, in graph_executions index order (the index keeps it in wall-time order per host).
    trace_wall: np.ndarray  # float64[T]
    # int32 or int64 [T] op code / tensor code of (op, output_slot), -1 unknown; anything indexable by row arrays
    # (the index gives index_columns.KindMapped, which computes them from the trace's kind on access)
    trace_op: Any
    trace_tensor: Any
    trace_nonfinite: np.ndarray  # int8[T]: 1 non-finite, 0 finite, -1 the mode cannot tell
    # Data inputs of every op as CSR: op o's inputs are op_input_tensor[op_input_ptr[o]:op_input_ptr[o + 1]].
    op_input_ptr: np.ndarray  # int64[n_ops + 1]
    op_input_tensor: np.ndarray  # int64[...] tensor codes, -1 unknown
    op_forwards: np.ndarray  # bool[n_ops]: the op only hands on a value made elsewhere (see FORWARDING_OPS)
    # Eager executions (ops and tf.function calls), in execution index order.
    exec_wall: np.ndarray  # float64[E]
    exec_nonfinite: np.ndarray  # int8[E]: any output non-finite (1), all finite (0), cannot tell (-1)
    exec_is_function: np.ndarray  # bool[E]
    # int64[E] smallest output tensor id (-1 when none); None when getting it costs a record read per execution
    exec_first_output_id: np.ndarray | None
    # exec_io(i) -> (input tensor ids, output tensor ids, per-output non-finite flags 1/0/-1); called only for the
    # few executions the classifier looks at (alerts and the producers of their inputs).
    exec_io: Callable[[int], tuple[Sequence[int], Sequence[int], Sequence[int]]] = field(repr=False)
    # make_lookup() -> an object with classify._TraceLookup's `before`, built from what the source already holds;
    # None: the classifier sorts the tensor codes itself (trace_op / trace_tensor must then be arrays)
    make_lookup: Callable[[], Any] | None = field(default=None, repr=False)


def _flag(health: Any) -> int:
    value = is_nonfinite(health)
    return -1 if value is None else int(value)


def from_index(run: Any) -> RunColumns | None:
    """The columnar index's own arrays (the fast path), or None when `run` is not that index."""
    from tensorboard_plugin_dbg.analysis import index_columns

    return index_columns.from_run_index(run)


def from_queries(run: Any) -> RunColumns:
    """Columns built from the public RunQueries methods (one Python object per row: the slow, general path)."""
    total = int(run.graph_executions(0, 0)["unfiltered_total"])
    walls, ops, tensors, flags = [], [], [], []
    op_codes: dict[tuple[str, str], int] = {}
    tensor_codes: dict[tuple[str, str, int], int] = {}

    def tensor_code(graph_id: str, op_name: str, slot: int) -> int:
        return tensor_codes.setdefault((graph_id, op_name, slot), len(tensor_codes))

    for begin in range(0, total, PAGE):
        for row in run.graph_executions(begin, min(begin + PAGE, total))["rows"]:
            key = (row["graph_id"], row["op_name"])
            walls.append(row["wall_time"])
            ops.append(op_codes.setdefault(key, len(op_codes)))
            tensors.append(tensor_code(key[0], key[1], int(row["output_slot"])))
            flags.append(_flag(row["health"]))

    # Inputs of every traced op (ops never traced cannot be alerts, so they need no inputs).
    ptr, inputs, forwards = [0], [], []
    for graph_id, op_name in list(op_codes):
        try:
            info = run.op(graph_id, op_name)
        except LookupError:  # op not in the graphs file (yet): its inputs are unknown
            info = {"inputs": [], "op_type": None}
        forwards.append(info["op_type"] in FORWARDING_OPS)
        for inp in info["inputs"]:
            inputs.append(tensor_code(graph_id, inp["op_name"], int(inp["output_slot"])))
        ptr.append(len(inputs))

    n_exec = int(run.executions(0, 0)["total"])
    e_wall, e_func, e_first, e_flag = [], [], [], []
    io: list[tuple[list[int], list[int], list[int]]] = []
    for begin in range(0, n_exec, PAGE):
        for digest in run.executions(begin, min(begin + PAGE, n_exec))["executions"]:
            detail = run.execution(int(digest["index"]), max_elements=0)
            outs = [int(t) for t in detail["output_tensor_ids"]]
            health = list(detail.get("outputs") or [])
            out_flags = [_flag(health[i]) if i < len(health) else -1 for i in range(len(outs))]
            io.append(([int(t) for t in detail["input_tensor_ids"]], outs, out_flags))
            e_wall.append(digest["wall_time"])
            e_func.append(bool(digest["is_function"]))
            e_first.append(min(outs) if outs else -1)
            e_flag.append(1 if 1 in out_flags else (0 if 0 in out_flags else -1))

    return RunColumns(
        trace_wall=np.asarray(walls, np.float64),
        trace_op=np.asarray(ops, np.int64),
        trace_tensor=np.asarray(tensors, np.int64),
        trace_nonfinite=np.asarray(flags, np.int8),
        op_input_ptr=np.asarray(ptr, np.int64),
        op_input_tensor=np.asarray(inputs, np.int64),
        op_forwards=np.asarray(forwards, bool),
        exec_wall=np.asarray(e_wall, np.float64),
        exec_nonfinite=np.asarray(e_flag, np.int8),
        exec_is_function=np.asarray(e_func, bool),
        exec_first_output_id=np.asarray(e_first, np.int64),
        exec_io=lambda i: io[i],
    )


def gather(run: Any) -> RunColumns:
    return from_index(run) or from_queries(run)
