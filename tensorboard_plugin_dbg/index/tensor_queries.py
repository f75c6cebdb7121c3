"""Locating one debug tensor: (source, index, output) -> its record, its mode, and where its values are.

`source` is "graph" (a graph execution trace: one op output, `output` is its slot) or "eager" (an execution:
`output` picks one of its outputs). FULL_TENSOR records are not parsed: the reader walks their framing to the
tensor's bytes (reader/tensor_content.py), so a 256 MiB value is neither copied nor kept in the record cache. Other
modes' records are small and decoded into their health (what the view shows instead of values).
"""

from __future__ import annotations

import dataclasses
from typing import Literal

from ..reader import debug_values, tensor_content
from ..reader.schema import MODE_NAMES
from ..wire import types as wire
from .columns import LOC_MASK, LOC_SHIFT
from .errors import NotFound, RecordGone
from .state import RunState

FULL_TENSOR = 7
Source = Literal["graph", "eager"]
SOURCES: tuple[Source, ...] = ("graph", "eager")


@dataclasses.dataclass(frozen=True)
class TensorRecord:
    """One debug tensor of a run. `location` is set for FULL_TENSOR values that decode; `health` for other modes
    (and None for FULL_TENSOR); `reason` says why a FULL_TENSOR value has no location. `key` names the value for
    caches (it never changes: dump records are written once)."""

    source: Source
    index: int
    output: int
    mode: wire.DebugModeName
    op_name: str | None
    op_type: str | None
    graph_id: str | None
    wall_time: float
    num_outputs: int
    key: tuple[str, int, int, int]  # (source, file code, offset, output)
    location: tensor_content.TensorLocation | None = None
    health: wire.TensorHealth | None = None
    reason: str | None = None

    def describe(self) -> wire.TensorRef:
        """The wire.ts TensorRef fields of this tensor."""
        return {
            "source": self.source,
            "index": self.index,
            "output": self.output,
            "op_name": self.op_name,
            "op_type": self.op_type,
            "graph_id": self.graph_id,
            "wall_time": self.wall_time,
            "tensor_debug_mode": self.mode,
        }


class TensorQueries:
    def __init__(self, run: RunState):
        self.run = run

    def record(self, source: Source, index: int, output: int | None) -> TensorRecord:
        if source == "graph":
            return self._trace(index, output)
        return self._execution(index, 0 if output is None else output)

    def _trace(self, index: int, output: int | None) -> TensorRecord:
        run = self.run
        n, a = run.traces.snapshot()
        n = min(n, run.lengths().traces)
        if not 0 <= index < n:
            raise NotFound(f"graph execution {index} not found (run has {n})")
        graph_id, op_name, slot, mode, _device = run.kinds.kinds[int(a["kind"][index])]
        if output is not None and output != int(slot):
            raise NotFound(f"graph execution {index} is output {slot} of {op_name}, not output {output}")
        op = run.ops.get((graph_id, op_name))
        loc = int(a["loc"][index])
        file_code, offset = loc >> LOC_SHIFT, loc & LOC_MASK
        base = TensorRecord(
            "graph",
            index,
            int(slot),
            MODE_NAMES.get(int(mode), "UNSPECIFIED"),
            op_name,
            op.op_type if op else None,
            graph_id,
            float(a["wall_time"][index]),
            op.num_outputs if op else int(slot) + 1,
            ("graph", file_code, offset, 0),
        )
        if int(mode) != FULL_TENSOR:
            return dataclasses.replace(base, health=self._graph_health(index, int(mode)))
        return self._located(base, file_code, offset, 10, 5, 0)

    def _execution(self, index: int, output: int) -> TensorRecord:
        run = self.run
        n, a = run.execs.snapshot()
        n = min(n, run.lengths().execs)
        if not 0 <= index < n:
            raise NotFound(f"execution {index} not found (run has {n})")
        num_outputs, mode = int(a["num_outputs"][index]), int(a["mode"][index])
        if not 0 <= output < max(num_outputs, 1):
            raise NotFound(f"execution {index} has {num_outputs} outputs; no output {output}")
        file_code, offset = int(a["file"][index]), int(a["offset"][index])
        graph = int(a["graph"][index])
        base = TensorRecord(
            "eager",
            index,
            output,
            MODE_NAMES.get(mode, "UNSPECIFIED"),
            None,
            run.exec_op_types[int(a["op_type"][index])],
            run.exec_graph_ids[graph] if graph >= 0 else None,
            float(a["wall_time"][index]),
            num_outputs,
            ("eager", file_code, offset, output),
        )
        if mode != FULL_TENSOR:
            return dataclasses.replace(base, health=self._eager_health(file_code, offset, output, mode))
        return self._located(base, file_code, offset, 9, 7, output)

    def _located(self, base: TensorRecord, file_code: int, offset: int, msg: int, field: int, nth: int) -> TensorRecord:
        path = self.run.files[file_code].path
        try:
            location = tensor_content.locate(path, offset, msg, field, nth)
        except OSError as exc:
            raise RecordGone(f"the tensor's record cannot be read back: {exc.strerror or exc}") from exc
        except tensor_content.ContentError as exc:
            return dataclasses.replace(base, reason=str(exc))
        if location is None:
            return dataclasses.replace(base, reason="this output was not recorded (TensorFlow dumps float tensors)")
        return dataclasses.replace(base, location=location)

    def _graph_health(self, index: int, mode: int) -> wire.TensorHealth:
        try:
            t = self.run.read_trace_event(index).graph_execution_trace
        except RecordGone as exc:
            return {"mode": "UNKNOWN", "reason": str(exc)}
        return debug_values.decode_debug_value(mode, t.tensor_proto or None)

    def _eager_health(self, file_code: int, offset: int, output: int, mode: int) -> wire.TensorHealth:
        try:
            protos = self.run.read_event(file_code, offset).execution.tensor_protos
        except RecordGone as exc:
            return {"mode": "UNKNOWN", "reason": str(exc)}
        proto = protos[output] if output < len(protos) else None
        return debug_values.decode_debug_value(mode, proto, eager=True)
