"""A JAX while loop's iterations that were not traced, read back from the dump (the writer's jax/iterations.py).

The JAX writer traces a while body's first iterations only (100 per call); beside each while op it records the loop's
trace mask, op `<while op>.iterations` (LOOP_ITERATIONS): one int32 element per iteration that ran, 1 where traced.
Its health says how many ran (size) and, in FULL_HEALTH and FULL_TENSOR, how many were traced (positive count). When
the loop's output is the first non-finite tensor (its traced iterations, written before it, were all finite) and
some iterations were not traced, the NaN appeared in those: the root cause says so instead of naming the loop as if
the `while` op itself had made it. A dump written before the JAX writer recorded `shard_map` bodies (they are graphs
now, jax/shard_bodies.py) has a `shard_map` op without one: a NaN it makes is said to come from its body, which that
dump cannot name.
"""

from __future__ import annotations

from typing import TypedDict

import numpy as np

from tensorboard_plugin_dbg.index.protocol import RunQueries
from tensorboard_plugin_dbg.wire import types as wire

LOOP_ITERATIONS = "LoopIterations"  # the op type the JAX writer gives a loop's trace mask


class Iterations(TypedDict):
    ran: int
    traced: int | None  # None: the mode records the size only (CONCISE_HEALTH, SHAPE)


def of_mask(health: wire.TensorHealth) -> Iterations | None:
    """How many iterations ran and were traced, from a trace mask's health; None when the mode records neither."""
    size = health.get("size")
    if not isinstance(size, (int, float)):
        return None
    pos = health.get("pos")
    return {"ran": int(size), "traced": int(pos) if isinstance(pos, (int, float)) else None}


def words(it: Iterations) -> str:
    """E.g. "ran 150 iterations; iterations 101–150 not traced"."""
    ran, traced = it["ran"], it["traced"]
    head = f"ran {ran:,} iteration{'s' if ran != 1 else ''}"
    if traced is None:
        return f"{head}; this mode does not record how many were traced"
    if traced >= ran:
        return f"{head}, all traced"
    return f"{head}; iterations {traced + 1:,}–{ran:,} not traced"


def after(run: RunQueries, graph_id: str, while_op: str, row: int) -> Iterations | None:
    """The iterations of the run of while op `while_op` whose output is trace `row`: its mask's first trace after it
    (written at the end of the same call)."""
    rows = np.asarray(run.op_trace_rows(graph_id, f"{while_op}.iterations", 0), np.int64)
    later = rows[rows > row]
    return of_mask(run.graph_execution(int(later[0]), max_elements=0)["health"]) if len(later) else None


def untraced_body(run: RunQueries, graph_id: str | None, op_name: str | None, op_type: str, row: int) -> str | None:
    """The sentence for a NaN first seen at the output of a JAX op whose body was not (all) traced; else None."""
    if op_type == "shard_map" and run.info()["framework"] == "jax":
        return (
            "shard_map's body is not recorded in this dump (written by a JAX writer that ran it as one op: its "
            "outputs are traced, the ops inside are not; newer writers record the body): the NaN came with its "
            "inputs or from an op of the function it maps, which the dump cannot name"
        )
    return untraced_nan(run, graph_id, op_name, op_type, row)


def untraced_nan(run: RunQueries, graph_id: str | None, op_name: str | None, op_type: str, row: int) -> str | None:
    """The sentence for a NaN that a while loop's output holds while its traced iterations were finite; None when
    the producer is not such a loop, or every iteration was traced."""
    if op_type != "while" or not graph_id or not op_name or run.info()["framework"] != "jax":
        return None
    it = after(run, graph_id, op_name, row)
    if it is None or (it["traced"] is not None and it["traced"] >= it["ran"]):
        return None
    if it["traced"] is None:
        return (
            f"the while loop {words(it)}: the NaN appeared inside it, in iterations the body's traces do not show "
            "(its traced iterations were finite)"
        )
    return (
        f"the NaN appeared in iterations {it['traced'] + 1:,}–{it['ran']:,} of this while loop, which are not traced "
        f"(the JAX writer traces a while body's first {it['traced']:,} iterations per call; they were finite): "
        "the loop body made it, after them"
    )
