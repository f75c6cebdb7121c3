"""Execution records of one recorded function's calls from one call site, laid out once (trace_batch.py does the same
for its graph execution traces).

Every such call writes the same op type, graph, mode, output count, code location and output devices; what changes
is the wall time, the tensor ids and the outputs' summaries. So those parts are encoded once and each call's
DebugEvent is joined from them: the bytes `DebugEventsWriter.execution` makes through protobuf (fields in number
order, proto3 defaults left out; tests/test_writer_execution_layout.py checks both equal) at a fraction of the cost
(~25 us a call through protobuf on the writer's thread).
"""

from __future__ import annotations

import struct
from collections.abc import Sequence

from .summaries import length_delimited, varint
from .trace_batch import WALL_TAG

_EXECUTION = 9  # DebugEvent.execution
_INPUTS, _OUTPUTS, _MODE, _PROTOS = 4, 5, 6, 7  # Execution's fields
_PROTO_TAG = varint(_PROTOS << 3 | 2)


def _packed(number: int, values: Sequence[int]) -> bytes:
    """A packed repeated varint field (int64 two's complement, as protobuf writes -1); nothing when empty."""
    return length_delimited(number, b"".join(varint(v) for v in values)) if len(values) else b""


class ExecutionLayout:
    def __init__(
        self,
        op_type: str,
        mode: int,
        graph_id: str,
        host: str,
        stack_frame_ids: Sequence[str],
        num_outputs: int,
        device_id: int,
    ) -> None:
        head = length_delimited(1, op_type.encode()) if op_type else b""
        head += varint(2 << 3) + varint(num_outputs) if num_outputs else b""
        self._head = head + (length_delimited(3, graph_id.encode()) if graph_id else b"")
        self._mode = varint(_MODE << 3) + varint(mode) if mode else b""
        location = length_delimited(1, host.encode()) if host else b""
        location += b"".join(length_delimited(2, s.encode()) for s in stack_frame_ids)
        self._tail = length_delimited(8, location) + _packed(9, [device_id] * num_outputs)

    def event(self, wall_time: float, inputs: Sequence[int], outputs: Sequence[int], protos: Sequence[bytes]) -> bytes:
        """One call's serialized DebugEvent (to be framed): its input and output tensor ids, its outputs' protos."""
        body = b"".join(
            (
                self._head,
                _packed(_INPUTS, inputs),
                _packed(_OUTPUTS, outputs),
                self._mode,
                b"".join(_PROTO_TAG + varint(len(p)) + p for p in protos),
                self._tail,
            )
        )
        return WALL_TAG + struct.pack("<d", wall_time) + length_delimited(_EXECUTION, body)
