"""Zero by construction: a product with a constant zero, or a cast of one, is never an all_zero finding (#38 item 9).

An LSTM's first step multiplies its zero initial state (`lstm_1/zeros`, a Const) by the recurrent kernel: the
MatMul and the `c * f` Mul are all zero at every step by construction, as is a cast of the literal 0; main listed
each as an all_zero finding. An op is zero by construction when it is an all-zero constant (its trace says every
element is zero), hands one on unchanged (Cast, Identity, Reshape, ...), or multiplies by one.
"""

from __future__ import annotations

from tensorboard_plugin_dbg.index.protocol import RunQueries

CONSTANTS = frozenset({"Const", "Fill", "ZerosLike", "Zeros"})
HANDS_ON = frozenset(
    {"Cast", "Identity", "IdentityN", "Snapshot", "Reshape", "ExpandDims", "Squeeze", "Transpose", "Tile",
     "BroadcastTo", "StridedSlice", "Slice", "Neg"}
)  # fmt: skip
PRODUCTS = frozenset({"Mul", "MatMul", "BatchMatMul", "BatchMatMulV2", "Einsum"})


def by_construction(run: RunQueries, graph_id: str, op_name: str, depth: int = 8) -> bool:
    """True when the op's output is zero whatever the data: see the module's docstring."""
    entry = run.op_entry(graph_id, op_name)
    if entry is None or depth < 0:
        return False
    if entry.op_type in CONSTANTS:
        return entry.op_type in ("ZerosLike", "Zeros") or _all_zero(run, graph_id, op_name)
    if entry.op_type in HANDS_ON:
        return bool(entry.inputs) and by_construction(run, graph_id, entry.inputs[0][0], depth - 1)
    if entry.op_type in PRODUCTS:
        return any(by_construction(run, graph_id, name, depth - 1) for name, _slot in entry.inputs)
    return False


def _all_zero(run: RunQueries, graph_id: str, op_name: str) -> bool:
    """A constant whose first trace records every element zero (FULL_HEALTH, FULL_TENSOR); False untraced."""
    rows = run.op_trace_rows(graph_id, op_name, 0)
    if not len(rows):
        return False
    health = run.graph_execution(int(rows[0]), max_elements=0)["health"]
    size, zero = health.get("size"), health.get("zero")
    return isinstance(size, (int, float)) and size > 0 and zero == size
