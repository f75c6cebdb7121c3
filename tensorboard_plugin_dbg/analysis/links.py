"""Function inputs linked to the tensors their caller passed in.

TensorFlow does not trace a function's input Placeholders, so a graph op fed by one (`tf.math.log(probs)` where
`probs` is an argument) has an input with no record. Its value is often in the dump all the same: when the function
was called eagerly, the call's `Execution` record lists the tensor ids passed in (`input_tensor_ids`, in the order of
the function's inputs: its Placeholders in creation order), and each id is an output of an earlier execution whose
record holds its health. The trace of an op belongs to the call whose record is the first one written after it (a
call's traces precede its record).

When the function was called from inside another tf.function, TF 2.21 records no op for that call
(`StatefulPartitionedCall` ops get no creation record), so the tensor passed in cannot be known from the dump; the
link then says so and why, rather than guessing — except for the one call whose arguments are known: Keras 3's
`multi_step_on_iterator` calls `one_step_on_data` with the batch its iterator op handed out in that step. A JAX
run records the calling op (outer_call.py); only a constant passed in (not recorded) leaves the input unknown. This
module is the one place that walks from a function input to its caller (the root cause and the graph views use
it).
"""

from __future__ import annotations

from typing import TypedDict

import numpy as np
from typing_extensions import NotRequired

from tensorboard_plugin_dbg.analysis import outer_call, replicas
from tensorboard_plugin_dbg.analysis.classify import eager_producer
from tensorboard_plugin_dbg.analysis.columns import RunColumns
from tensorboard_plugin_dbg.analysis.health import describe
from tensorboard_plugin_dbg.index.protocol import NotFound, RunQueries
from tensorboard_plugin_dbg.wire import types as wire

# Ops that hand out what an input pipeline made: a NaN first seen there came with the data.
DATA_OPS = frozenset(
    {
        "IteratorGetNext",
        "IteratorGetNextSync",
        "IteratorGetNextAsOptional",
        "OptionalGetValue",
        "MultiDeviceIteratorGetNextFromShard",
    }
)


class Link(TypedDict):
    """What a caller passed into a function input (function_input)."""

    flag: int | None
    health: wire.TensorHealth | None
    execution_index: int | None
    output_slot: int | None
    op_type: str | None
    why: str
    graph_execution_index: NotRequired[int]  # the trace it was (a batch the caller's iterator op handed out)


def caller_of(run: RunQueries, cols: RunColumns, graph_id: str, trace_row: int) -> int | None:
    """The execution index of the eager call of graph `graph_id` that trace `trace_row` ran in, or None when the
    record after the trace is not a call of that graph (a nested call, or records not written yet)."""
    if trace_row >= len(cols.trace_wall):  # newer than the columns (a live run): its call cannot be known yet
        return None
    e = int(np.searchsorted(cols.exec_wall, cols.trace_wall[trace_row], side="left"))
    if e >= len(cols.exec_wall) or not cols.exec_is_function[e]:
        return None
    detail = run.execution(e, max_elements=0)
    called = detail.get("graph_id")
    if called == graph_id:
        return e
    # GradientTape's forward functions are recorded with no graph id: their op type names the function
    name = _name(_info(run, graph_id)) or ""
    if not called and name and f"_{name}_" in str(detail.get("op_type", "")):
        return e
    return None


def function_inputs(run: RunQueries, graph_id: str) -> list[str]:
    """The function's input Placeholders in creation order: the order of the tensors its eager call passes in."""
    names = run.graph_op_names(graph_id)
    return [n for n in names if (e := run.op_entry(graph_id, n)) is not None and e.op_type == "Placeholder"]


def function_input(run: RunQueries, cols: RunColumns, graph_id: str, placeholder: str, trace_row: int) -> Link:
    """What the caller passed into function input `placeholder` for the call that trace `trace_row` ran in:
    {"flag": 1 non-finite / 0 finite / -1 cannot hold NaN (not a float) / None unknown, "health", "execution_index",
    "output_slot", "op_type", "why"} — `why` is one sentence for the user."""
    inputs = function_inputs(run, graph_id)
    graph_name = _graph_name(run, graph_id)
    call = caller_of(run, cols, graph_id, trace_row)
    if call is None and placeholder in inputs:
        batch = _outer_batch(run, cols, graph_id, inputs.index(placeholder), trace_row)
        if batch is None:
            batch = outer_call.passed_in(run, cols, graph_id, inputs, placeholder, trace_row)
        if batch is not None:
            return batch
    if call is None:
        return _unknown(_caller_unknown(run, graph_id, graph_name, len(inputs)))
    passed = list(cols.exec_io(call)[0])
    if placeholder not in inputs or len(inputs) != len(passed):
        why = f"an input of {graph_name}: its call (execution #{call}) passed {len(passed)} tensors for its "
        why += f"{len(inputs)} inputs, so which one it was cannot be told"
        return _unknown(why)
    tensor_id = int(passed[inputs.index(placeholder)])
    src, slot = eager_producer(cols, tensor_id, call)
    if src < 0:
        why = (
            f"passed in by execution #{call} ({graph_name}) as eager tensor {tensor_id}, which no recorded "
            f"execution made (a constant or Python/numpy data converted by {_framework(run)}): its health cannot "
            "be known"
        )
        return _unknown(why)
    detail = run.execution(src, max_elements=0)
    outputs = detail.get("outputs") or []
    health = outputs[slot] if slot < len(outputs) else None
    flag = int(cols.exec_io(src)[2][slot]) if slot < len(cols.exec_io(src)[2]) else -1
    made_by = f"{_short(detail['op_type'])}:{slot} (execution #{src})"
    if health is None or flag < 0:
        why = f"passed in by the caller from {made_by} — not instrumented (not a floating-point tensor)"
    else:
        why = f"passed in by the caller from {made_by} — {describe(health)}"
    return {
        "flag": flag,
        "health": health,
        "execution_index": src,
        "output_slot": slot,
        "op_type": detail["op_type"],
        "why": why,
    }


def _outer_batch(run: RunQueries, cols: RunColumns, graph_id: str, position: int, trace_row: int) -> Link | None:
    """Input `position` of a function called from inside another tf.function that reads a batch (Keras 3's
    `multi_step_on_iterator` calls `one_step_on_data(next(iterator))`): the caller's iterator op hands out the
    function's arguments, flattened in the same order as its inputs, so input k is that op's output k — of the same
    step: its trace nearest in time to `trace_row` (a callee's traces may be written before its caller's).

    Under tf.distribute (MirroredStrategy) the caller has one iterator op per replica, in replica order, and the
    function takes the per-replica values flattened value by value (x of replica 0, x of replica 1, ..., then y):
    input k is output k // N of replica k % N's iterator op (replicas.py says which shard that is)."""
    info = _info(run, graph_id)
    outer = info["outer_graph_id"] if info else None
    if not outer:
        return None
    data_ops = [(name, e) for name in run.graph_op_names(outer) if (e := run.op_entry(outer, name)) is not None]
    data_ops = [(name, e) for name, e in data_ops if e.op_type in DATA_OPS]
    n = len(data_ops)
    if not n or any(e.num_outputs != data_ops[0][1].num_outputs for _, e in data_ops):
        return None
    if position >= n * data_ops[0][1].num_outputs:
        return None
    replica, slot = position % n, position // n
    name, entry = data_ops[replica]
    row = replicas.nearest(run, cols, outer, name, slot, trace_row)
    if row is None:
        return None
    health = run.graph_execution(row, max_elements=0)["health"]
    shard = replicas.shard_words(run, cols, outer, [nm for nm, _ in data_ops], replica, slot, row) if n > 1 else ""
    why = (
        f"an input of {_graph_name(run, graph_id)}, called from inside {_outer_name(run, graph_id)} with the "
        f"batch its {name} handed out in the same step{shard}: {name}:{slot} (graph execution #{row}) — "
        f"{describe(health)}"
    )
    return {
        "flag": int(cols.trace_nonfinite[row]),
        "health": health,
        "execution_index": None,
        "output_slot": slot,
        "op_type": entry.op_type,
        "why": why,
        "graph_execution_index": row,
    }


def _caller_unknown(run: RunQueries, graph_id: str, graph_name: str, inputs: int) -> str:
    """Why the tensor a nested call passed in cannot be known, in the words of the framework that wrote the run:
    TensorFlow records no op for a call between tf.functions; the JAX writer records the calling op, but with the
    tensors it passed only (a constant, e.g. a Python number, is inlined into the call: not an op, not recorded),
    so when their count differs from the function's inputs which is which cannot be told (outer_call.py)."""
    outer = _outer_name(run, graph_id)
    where = f" from inside {outer}" if outer else ""
    if run.info()["framework"] == "jax":
        return (
            f"an input of {graph_name}, called{where}: the calling op's recorded tensors do not match its {inputs} "
            "inputs one to one (a constant passed in, e.g. a Python number, is inlined into the call and not "
            "recorded), so which tensor was passed in cannot be told"
        )
    return (
        f"an input of {graph_name}, called{where}: TensorFlow records no op for a call between tf.functions, "
        "so the tensor passed in cannot be known"
    )


def _unknown(why: str) -> Link:
    return {"flag": None, "health": None, "execution_index": None, "output_slot": None, "op_type": None, "why": why}


def _short(op_type: str) -> str:
    """`__inference_model_32` -> `model`: the function's own name."""
    for prefix in ("__inference_", "__forward_", "__backward_"):
        if op_type.startswith(prefix):
            return op_type[len(prefix) :].rsplit("_", 1)[0]
    return op_type


def _info(run: RunQueries, graph_id: str | None) -> wire.GraphInfoBody | None:
    try:
        return run.graph(graph_id) if graph_id else None
    except NotFound:
        return None


def _name(info: wire.GraphInfoBody | None) -> str | None:
    return info["name"] if info else None


def _graph_name(run: RunQueries, graph_id: str) -> str:
    name = _name(_info(run, graph_id))
    return f"{_kind(run)} `{name}`" if name else "a function"


def _outer_name(run: RunQueries, graph_id: str) -> str | None:
    info = _info(run, graph_id)
    name = _name(_info(run, info["outer_graph_id"] if info else None))
    return f"{_kind(run)} `{name}`" if name else None


def _kind(run: RunQueries) -> str:
    """What a function is called in the words of the framework that wrote the run."""
    return "jitted function" if run.info()["framework"] == "jax" else "tf.function"


def _framework(run: RunQueries) -> str:
    return "JAX" if run.info()["framework"] == "jax" else "TensorFlow"
