"""A recorded jitted call's writes, handed to the writer's thread (writer/background.py), alone or with the calls of
the same function queued right after it.

The thread takes the calls queued since it last ran (up to background.DEPTH). Calls of one function from one trace
and call site write the same records but for their counts, tensor ids and wall times, so in a health mode (no loop
or branch, files streamed) they are written in one pass: their raw count vectors stacked and derived together
(host_counts.py), their graph execution traces filled into copies of one byte template (trace_batch.py), their
executions joined from one layout (writer/execution_layout.py). On a busy two-core host each pass of the thread's
work pays for cold caches and Python dispatch again (measured: ~3x its cost in a hot loop), so fewer passes matter
more than the work in each. Any other call is written alone by `RecordedJit._write`, in order.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..writer import summaries
from ..writer.events import frame
from ..writer.execution_layout import ExecutionLayout
from .instrument import COUNT_WIDTH

TICK = 1e-6  # seconds: float64 resolves ~0.24 us at today's epoch

RecordedJit = Any  # recorder.RecordedJit (which imports this module): its _write, _recorder, _traces, _counts, _layouts


class CallRecord:
    """One call: what `RecordedJit._write` takes. `joins`: calls of the same recorded function join one pass."""

    __slots__ = ("counted", "ids", "inputs", "joins", "result", "stack", "wall")

    def __init__(
        self,
        jit: RecordedJit,
        result: Any,
        ids: list[int],
        inputs: list[int],
        counted: list[bool],
        stack: list[str],
        wall: float,
    ) -> None:
        self.joins, self.result, self.ids, self.inputs = jit, result, ids, inputs
        self.counted, self.stack, self.wall = counted, stack, wall  # wall: when the call ran (time.time())

    def __call__(self) -> None:
        self.joins._write(self.result, self.ids, self.inputs, self.counted, self.stack, self.wall)

    def together(self, calls: list[CallRecord]) -> None:
        """Writes `calls` (this one first, all of one function) in order, those that can in passes of several."""
        jit = self.joins
        if not _joinable(jit):
            for call in calls:
                call()
            return
        run: list[tuple[CallRecord, np.ndarray]] = []
        for call in calls:
            which, payload, live, loops = call.result
            if which is not None or live is not None or loops is not None:  # a loop or branch: alone
                _write_run(jit, run)
                run = []
                call()
                continue
            raw = np.asarray(payload)  # the trace's index, then its raw counts
            if run and (raw.shape != run[0][1].shape or raw[0] != run[0][1][0]):  # another trace
                _write_run(jit, run)
                run = []
            run.append((call, raw))
        _write_run(jit, run)


def _joinable(jit: RecordedJit) -> bool:
    rec = jit._recorder
    return rec.mode in summaries.HEALTH_MODES and not rec.writer.buffered


def _write_run(jit: RecordedJit, run: list[tuple[CallRecord, np.ndarray]]) -> None:
    """Calls of one trace, every op run: their traces in one pass, then their executions."""
    if not run:
        return
    rec = jit._recorder
    which = int(run[0][1][0])
    graph_id, points, batch = jit._traces[which]
    derive = jit._counts[which]
    assert batch is not None and derive is not None  # a health mode
    traces, outputs = batch
    counts = derive(np.stack([raw[1:] for _, raw in run])).reshape(len(run), len(points), COUNT_WIDTH[rec.mode])
    # Each call its own instants, in the order TensorFlow writes them: its traces when the call ran, then its
    # execution a tick later, then the next call's (one shared time made the analysis's placing of traces in calls a
    # tie, #41); stamped when it ran, not when written here (an eager op run between two queued calls is stamped
    # when it ran too: the wall order is the order they ran in).
    walls: list[float] = []
    for call, _ in run:
        walls.append(max(call.wall, walls[-1] + 2 * TICK) if walls else call.wall)
    rec.writer.traces_framed([traces.joined_calls(walls, counts[:, : traces.count])])
    records = []
    for (call, _), wall, outs in zip(run, walls, counts[:, traces.count :], strict=True):
        it = iter(outputs.protos(outs))
        protos = [next(it) if c else b"" for c in call.counted]  # a non-float output: the empty placeholder
        layout = _layout(jit, which, graph_id, call)
        records.append(layout.event(wall + TICK, call.inputs, call.ids, protos))
    rec.writer.executions_framed([frame(r) for r in records])


def _layout(jit: RecordedJit, which: int, graph_id: str, call: CallRecord) -> ExecutionLayout:
    """The execution layout of this trace's calls from this call site (kept on the function)."""
    key = (which, tuple(call.stack), len(call.ids))
    layout = jit._layouts.get(key)
    if layout is None:
        rec = jit._recorder
        layout = ExecutionLayout(
            jit._name, rec.mode_number, graph_id, rec.writer.host, call.stack, len(call.ids), rec.device_id
        )
        jit._layouts[key] = layout
    return layout
