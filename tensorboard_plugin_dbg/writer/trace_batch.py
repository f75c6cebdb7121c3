"""The graph execution traces of one compiled function's call, framed together: one write per call, not per tensor.

Every call of a compiled function writes the same traces (same context, op, slot, mode, device, vector layout), so
each trace's record is laid out once, when the function is traced: its TFRecord length header with its CRC, and its
payload around the two parts that change from call to call, the wall time and the debug vector's counts. A call
then fills one float64 array with its counts, slices it into the records, and CRCs them all in one vectorized pass
(native when google-crc32c is there). The bytes are those `DebugEventsWriter.trace` writes, field for field in
TensorFlow's order (reader/trace_fast.py reads them on its fast path): tests/test_jax_speed.py checks both equal.
FULL_TENSOR traces (a whole tensor each) are not batched: `DebugEventsWriter.trace` writes them.
"""

from __future__ import annotations

import dataclasses
import struct
from collections.abc import Sequence

import numpy as np

from ..reader import crc32c, schema
from . import summaries

# where a health mode's counts start in its debug vector (summaries.debug_vector's layouts)
COUNT_COLUMN = {"CURT_HEALTH": 1, "CONCISE_HEALTH": 2, "FULL_HEALTH": 5}
_WALL_TAG = b"\x09"  # DebugEvent.wall_time: field 1, fixed64


@dataclasses.dataclass(frozen=True)
class TracePoint:
    """What a trace names: the graph op's output and the tensor it is."""

    graph_id: str
    op_name: str
    slot: int
    tensor_id: int
    dtype: str
    shape: tuple[int, ...]


def _no_counts(shape: tuple[int, ...]) -> summaries.HealthCounts:
    return summaries.HealthCounts(int(np.prod(shape)) if shape else 1, 0, 0, 0, 0, 0, 0)


class TraceBatch:
    """The records of `points` (graph op outputs) in one mode on one device, ready to be filled call after call."""

    def __init__(self, points: Sequence[TracePoint], mode: str, device: str) -> None:
        if mode == "FULL_TENSOR":
            raise ValueError("FULL_TENSOR traces hold whole tensors: write them one by one")
        self.mode, self.count = mode, len(points)
        vectors = [summaries.debug_vector(mode, p.tensor_id, p.dtype, p.shape, _no_counts(p.shape)) for p in points]
        counted = mode in COUNT_COLUMN  # otherwise the whole vector is known now (SHAPE, NO_TENSOR)
        self.width = len(vectors[0]) if vectors and counted else 0
        self.vectors = np.array(vectors, np.float64).reshape(len(points), self.width) if counted else None
        mode_number = summaries.mode_number(mode)
        self._heads: list[bytes] = []
        self._middles: list[bytes] = []
        self._tails: list[bytes] = []
        self._lengths: list[int] = []
        for p, vector in zip(points, vectors, strict=True):
            self._lay_out(p, mode_number, summaries.tensor_proto(vector), self.width * 8, device)

    def _lay_out(self, p: TracePoint, mode_number: int, proto: bytes, content_bytes: int, device: str) -> None:
        trace = schema.GraphExecutionTrace(
            tfdbg_context_id=p.graph_id, op_name=p.op_name, output_slot=p.slot, tensor_debug_mode=mode_number
        ).SerializeToString()
        tail = summaries.length_delimited(6, device.encode())
        inner = trace + summaries.length_delimited(5, proto) + tail
        event = summaries.varint(10 << 3 | 2) + summaries.varint(len(inner)) + inner
        content_at = len(event) - len(tail) - content_bytes
        length = 9 + len(event)  # the wall time's tag and 8 bytes come first
        head = struct.pack("<Q", length)
        self._heads.append(head + struct.pack("<I", crc32c.mask(crc32c.crc32c(head))))
        self._middles.append(event[:content_at])
        self._tails.append(event[content_at + content_bytes :])
        self._lengths.append(length)

    def records(self, wall_time: float, counts: np.ndarray | None) -> list[bytes]:
        """The framed records of one call: `counts` is (points, count columns) for a health mode, else None."""
        if not self.count:
            return []
        wall = _WALL_TAG + struct.pack("<d", wall_time)
        if self.vectors is None:
            payloads = [wall + m + t for m, t in zip(self._middles, self._tails, strict=True)]
        else:
            vectors = self.vectors
            if counts is not None:
                vectors = vectors.copy()
                column = COUNT_COLUMN[self.mode]
                vectors[:, column:] = counts if self.mode != "CURT_HEALTH" else np.minimum(counts, 1)
            rows = vectors.tobytes()
            step = self.width * 8
            payloads = [
                wall + m + rows[i * step : (i + 1) * step] + t
                for i, (m, t) in enumerate(zip(self._middles, self._tails, strict=True))
            ]
        joined = np.frombuffer(b"".join(payloads), np.uint8)
        lengths = np.array(self._lengths, np.int64)
        starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))
        crcs = crc32c.mask(crc32c.crc32c_many(joined, starts, lengths)).tolist()
        return [h + p + struct.pack("<I", c) for h, p, c in zip(self._heads, payloads, crcs, strict=True)]
