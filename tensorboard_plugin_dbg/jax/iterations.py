"""How many iterations each recorded `while_loop` ran, and how many of them were traced (#41: past the 100th,
iterations are not traced; this says so in the dump rather than leaving it to the README).

The recording loop already carries its iteration counter (bodies.py). After the loop, one more op of the caller's
graph, `<while op>.iterations` of type LOOP_ITERATIONS, is traced in the run's own mode once per run of the loop: its
tensor is the loop's trace mask, an int32 vector with one element per iteration that ran, 1 where it was traced and
0 where not (so FULL_HEALTH's size is how many ran, its positive count how many were traced; CONCISE_HEALTH and SHAPE
keep the size; FULL_TENSOR writes the mask). In the program only [traced, ran] is computed; the host writes the
summary (or the mask) from it. A loop inside a loop body, a scan body or a branch hands its counts up like the
body's payload: a row per iteration of the outer loop, written only where that iteration ran. The dashboard reads it
back (analysis/loop_iterations.py): "iterations 101–N not traced", and a NaN that the loop's output holds while its
traced iterations were finite is said to have appeared in the untraced ones.
"""

from __future__ import annotations

from typing import Any

import jax.numpy as jnp
import numpy as np

from ..writer import summaries
from ..writer.events import DebugEventsWriter
from ..writer.trace_batch import TracePoint

LOOP_ITERATIONS = "LoopIterations"  # the op type the dashboard knows (analysis/loop_iterations.py)


class LoopCounts:
    """The loops' counts of one interpreted graph (an Instrumenter's): points, in-graph int32[2] values, liveness."""

    def __init__(self) -> None:
        self.points: list[TracePoint] = []
        self.values: list[Any] = []
        self.live: list[Any] = []  # 1, or a traced int32 scalar: 0 where the enclosing iteration or branch never ran

    def add(self, writer: DebugEventsWriter, outer_id: str, body_name: str, caller_op: str, ran: Any, cap: int) -> None:
        """The loop whose body is graph `body_name`, called by op `caller_op` of graph `outer_id`, ran `ran` times."""
        (tensor_id,) = writer.tensor_ids(1)
        name = f"{caller_op}.iterations"
        writer.op(outer_id, body_name.rsplit(".", 1)[0], LOOP_ITERATIONS, name, [], [tensor_id], [])
        self.points.append(TracePoint(outer_id, name, 0, tensor_id, "int32", (-1,)))
        self.values.append(jnp.stack([jnp.minimum(ran, cap), ran]).astype(jnp.int32))
        self.live.append(1)

    def payload(self) -> tuple[Any, Any]:
        """(values n x 2, liveness n): what leaves a body's run, or the program."""
        if not self.points:
            return jnp.zeros((0, 2), jnp.int32), jnp.zeros((0,), jnp.int32)
        return jnp.stack(self.values), jnp.stack([jnp.asarray(v, jnp.int32) for v in self.live])

    def adopt(self, points: list[TracePoint], payload: tuple[Any, Any], alive: Any = 1) -> None:
        """A body's loops, run once more (`alive`: 0 when that run did not happen)."""
        values, live = payload
        for k, p in enumerate(points):
            self.points.append(p)
            self.values.append(values[k])
            self.live.append(live[k] * alive)


def write(
    writer: DebugEventsWriter, mode: str, points: list[TracePoint], payload: Any, device: str, wall: float | None = None
) -> None:
    """The trace masks of one call's loops that ran (after the call's other traces; `wall`: when the call ran)."""
    values, live = (np.asarray(a) for a in payload)
    for p, (traced, ran), alive in zip(points, values.tolist(), live.tolist(), strict=True):
        if alive:
            proto = mask_proto(mode, traced, ran)
            writer.trace(p.graph_id, p.op_name, 0, summaries.mode_number(mode), proto, device, wall)


def mask_proto(mode: str, traced: int, ran: int) -> bytes:
    """The trace mask of a loop that ran `ran` iterations, the first `traced` traced, as `mode` records it."""
    if mode == "FULL_TENSOR":
        return summaries.tensor_proto(np.repeat(np.array([1, 0], np.int32), [traced, ran - traced]))
    counts = summaries.HealthCounts(ran, 0, 0, 0, 0, ran - traced, traced)
    return summaries.tensor_proto(summaries.debug_vector(mode, -1, "int32", (ran,), counts))
