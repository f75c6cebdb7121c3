"""The columns the root-cause classifier needs (index_columns.gather fills them from a run).

The classifier (`classify.py`) works on flat numpy arrays so that a 10 M-trace run is a few vectorized passes, not
10 M Python calls.

Codes: every (graph_id, op_name) gets an op code and every (graph_id, op_name, output_slot) a tensor code; -1 means
unknown (a trace whose op is not in the graphs file yet, an input naming an op that is missing).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

# Ops whose output is a value made elsewhere, through an edge the graph records do not show: a loop variable or
# function input (Placeholder) gets it from the previous iteration or the caller, a ReadVariableOp from the last
# assignment (often in an untraced gradient graph). When the NaN was already seen before they ran, they carry it on
# rather than produce it (classify.py).
FORWARDING_OPS = frozenset({"Placeholder", "ReadVariableOp"})
FUNCTION_INPUT_OPS = frozenset({"Placeholder", "_Arg"})  # in a function's graph: the caller's tensor
# Ops whose outputs a called graph computes (a branch, a loop body, a function).
CALL_OPS = frozenset(
    {
        "If",
        "StatelessIf",
        "While",
        "StatelessWhile",
        "Case",
        "StatelessCase",
        "PartitionedCall",
        "StatefulPartitionedCall",
    }
)


@dataclass
class RunColumns:
    # Graph execution traces, in graph_executions index order (the index keeps it in wall-time order per host).
    trace_wall: np.ndarray  # float64[T]
    # int32 or int64 [T] op code / tensor code of (op, output_slot), -1 unknown; anything indexable by row arrays
    # (the index gives index_columns.KindMapped, which computes them from the trace's kind on access)
    trace_op: Any
    trace_tensor: Any
    # int8[T]: 1 non-finite, 0 finite, -1 the mode cannot tell; indexable by slices and row arrays, compared whole
    # (the index gives index_columns.NonFiniteFlags, which reads it through the kind and the non-finite rows)
    trace_nonfinite: Any
    # Data inputs of every op as CSR: op o's inputs are op_input_tensor[op_input_ptr[o]:op_input_ptr[o + 1]].
    op_input_ptr: np.ndarray  # int64[n_ops + 1]
    op_input_tensor: np.ndarray  # int64[...] tensor codes, -1 unknown
    op_forwards: np.ndarray  # bool[n_ops]: the op only hands on a value made elsewhere (see FORWARDING_OPS)
    # Eager executions (ops and tf.function calls), in execution index order.
    exec_wall: np.ndarray  # float64[E]
    exec_nonfinite: np.ndarray  # int8[E]: any output non-finite (1), all finite (0), cannot tell (-1)
    exec_is_function: np.ndarray  # bool[E]
    # exec_io(i) -> (input tensor ids, output tensor ids, per-output non-finite flags 1/0/-1); called only for the
    # few executions the classifier looks at (alerts and the producers of their inputs).
    exec_io: Callable[[int], tuple[Sequence[int], Sequence[int], Sequence[int]]] = field(repr=False)
    # make_lookup() -> an object with trace_lookup.TraceLookup's `before`, built from what the source already holds;
    # None: the classifier sorts the tensor codes itself (trace_op / trace_tensor must then be arrays)
    make_lookup: Callable[[], Any] | None = field(default=None, repr=False)
    # Traced outputs of every op as CSR (op o's tensor codes: op_output_tensor[op_output_ptr[o]:op_output_ptr[o+1]]),
    # for walking from a tensor to its consumers' outputs (containment.py). Empty: no op's outputs are known.
    op_output_ptr: np.ndarray = field(default_factory=lambda: np.zeros(1, np.int64))
    op_output_tensor: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    # bool[n_tensors]: the tensor is a function input (a Placeholder: TF does not trace it, its value is the
    # caller's). Shorter than the tensor codes: the rest are not inputs.
    tensor_is_input: np.ndarray = field(default_factory=lambda: np.zeros(0, bool))
    # int[E]: the execution's op type code (same function, same code), for telling dropped calls (buffer.py)
    exec_op_type: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    # bool[n_ops]: the op is a called function's input (a Placeholder/_Arg of an If/While branch or body, or of a
    # function called from a graph): its value is the tensor its caller passed in, so it is never a producer.
    # Empty: no op is known to be one.
    op_from_caller: np.ndarray = field(default_factory=lambda: np.zeros(0, bool))
    # The graph of each op (int[n_ops], a code), each graph's enclosing graph's code (int[n_graphs], -1 none), and
    # which tensors a call made (bool[n_tensors]: an If/While/function call op's output, or an Identity of one: its
    # value was made in the called graph, whose traces say whether it was non-finite). Empty: none known.
    op_graph: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    graph_outer: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    tensor_from_call: np.ndarray = field(default_factory=lambda: np.zeros(0, bool))


def csr_items(ptr: np.ndarray, values: np.ndarray, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(position in `keys`, value) for every value of every key in a CSR (keys outside it have none)."""
    keys = np.asarray(keys, np.int64)
    if len(ptr) < 2:  # an empty CSR
        return np.zeros(0, np.int64), values[:0]
    valid = (keys >= 0) & (keys < len(ptr) - 1)
    safe = np.where(valid, keys, 0)
    starts = ptr[safe]
    counts = np.where(valid, ptr[safe + 1] - starts, 0)
    owner = np.repeat(np.arange(len(keys)), counts)
    offsets = np.arange(int(counts.sum())) - np.repeat(np.cumsum(counts) - counts, counts)
    return owner, values[np.repeat(starts, counts) + offsets]
