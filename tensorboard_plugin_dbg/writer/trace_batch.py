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
from .call_fill import CallFill

# where a health mode's counts start in its debug vector (summaries.debug_vector's layouts)
COUNT_COLUMN = {"CURT_HEALTH": 1, "CONCISE_HEALTH": 2, "FULL_HEALTH": 5}
WALL_TAG = b"\x09"  # DebugEvent.wall_time: field 1, fixed64 (execution_layout.py too)


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
        protos = [summaries.tensor_proto(v) for v in vectors]
        self._fixed_protos = protos if self.vectors is None else []
        self._proto_head = protos[0][: len(protos[0]) - self.width * 8] if protos and self.width else b""
        self._block: _Block | None = None  # the joined records' layout, made at the first joined() call

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

    def _vectors(self, counts: np.ndarray | None) -> np.ndarray | None:
        """The float64 debug vectors of one call (points x width), its counts in place; None without counts (several
        calls' records are joined from the template's bytes instead: `joined_calls`)."""
        if self.vectors is None or counts is None:
            return self.vectors
        vectors = self.vectors.copy()
        column = COUNT_COLUMN[self.mode]
        vectors[:, column:] = counts if self.mode != "CURT_HEALTH" else np.minimum(counts, 1)
        return vectors

    def joined(self, wall_time: float, counts: np.ndarray | None) -> bytes:
        """records(wall_time, counts) joined, made in a few numpy steps whatever the number of points: the
        records' bytes laid out once, each call writes its wall time, vectors and CRCs into a copy (the per-record
        Python work of records() cost a 65-op training step ~0.25 ms of the writer thread's CPU)."""
        return self.joined_calls([wall_time], None if counts is None else counts[None])

    def joined_calls(self, wall_times: Sequence[float], counts: np.ndarray | None) -> bytes:
        """joined() of several calls one after the other (counts: calls x points x count columns), in one pass:
        the writer's thread takes the calls queued together (background.py)."""
        if not self.count or not len(wall_times):
            return b""
        if self._block is None:
            self._block = _Block(self._heads, self._middles, self._tails, self.vectors, COUNT_COLUMN.get(self.mode, 0))
        flags = None
        if counts is not None and self.vectors is not None:
            flags = counts if self.mode != "CURT_HEALTH" else np.minimum(counts, 1)
            flags = np.broadcast_to(flags, (len(wall_times), *flags.shape[-2:]))
        return self._block.fill.fill(np.asarray(wall_times, np.float64), flags).tobytes()

    def protos(self, counts: np.ndarray | None) -> list[bytes]:
        """The points' debug vectors as TensorProtos alone (a jitted call's outputs, held by its execution): each
        the same bytes summaries.tensor_proto(debug_vector(...)) makes, from one prefix and a row of the vectors."""
        if not self.count:
            return []
        vectors = self._vectors(counts)
        if vectors is None:
            return list(self._fixed_protos)
        step = self.width * 8
        rows = np.ascontiguousarray(vectors, "<f8").tobytes()
        return [self._proto_head + rows[i * step : (i + 1) * step] for i in range(self.count)]

    def records(self, wall_time: float, counts: np.ndarray | None) -> list[bytes]:
        """The framed records of one call: `counts` is (points, count columns) for a health mode, else None."""
        if not self.count:
            return []
        wall = WALL_TAG + struct.pack("<d", wall_time)
        vectors = self._vectors(counts)
        if vectors is None:
            payloads = [wall + m + t for m, t in zip(self._middles, self._tails, strict=True)]
        else:
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


class _Block:
    """Where a call's records' changing bytes go in their joined bytes: each record is head (12 bytes: length and its
    CRC), wall time (9: tag and float64), middle, vector (its fixed part laid out here, its counts from `column` on
    filled per call), tail, payload CRC (4)."""

    def __init__(
        self, heads: list[bytes], middles: list[bytes], tails: list[bytes], vectors: np.ndarray | None, column: int
    ) -> None:
        width = 0 if vectors is None else vectors.shape[1]
        fixed = [b""] * len(heads) if vectors is None else [r.tobytes() for r in np.ascontiguousarray(vectors, "<f8")]
        parts: list[bytes] = []
        wall, counts, crc, starts, lengths = [], [], [], [], []
        at = 0
        for h, m, v, t in zip(heads, middles, fixed, tails, strict=True):
            payload = 9 + len(m) + len(v) + len(t)
            starts.append(at + len(h))
            lengths.append(payload)
            wall.append(at + len(h) + 1)
            counts.append(at + len(h) + 9 + len(m) + column * 8)
            crc.append(at + len(h) + payload)
            parts += [h, WALL_TAG + bytes(8), m, v, t, bytes(4)]
            at += len(h) + payload + 4
        self.template = np.frombuffer(b"".join(parts), np.uint8).copy()
        wall_at = np.array(wall, np.int64)[:, None] + np.arange(8)
        counts_at = np.array(counts, np.int64)[:, None] + np.arange((width - column) * 8 if width else 0)
        starts_at, lengths_at = np.array(starts, np.int64), np.array(lengths, np.int64)
        crc_at = np.array(crc, np.int64)[:, None] + np.arange(4)
        self.fill = CallFill(self.template, starts_at, lengths_at, wall_at, counts_at, crc_at)  # call_fill.py
