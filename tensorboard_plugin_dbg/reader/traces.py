"""Decoding batches of graph_execution_trace records into index columns.

A trace's identity — (graph id, op name, output slot, debug mode, device) — repeats every step, so it is interned
as a "kind" and each row stores only its kind code, wall time and, when non-finite, a sparse entry with its counts.
`decode_traces` tries the vectorized fast path (reader/trace_fast.py) and falls back, record by record, to the
protobuf parser for anything whose wire layout is not the expected one.
"""

from __future__ import annotations

import dataclasses
import threading

import numpy as np

from . import debug_values, schema

Kind = tuple  # (graph_id, op_name, output_slot, mode, device_name)


class TraceKinds:
    """Interned trace identities. Appends only; readers may index `kinds` concurrently."""

    def __init__(self):
        self.kinds: list[Kind] = []
        self._by_tuple: dict[Kind, int] = {}
        self.by_hash: dict[int, tuple[int, bytes]] = {}  # fast-path key -> (kind, identity bytes)
        self._lock = threading.Lock()

    def code(self, kind: Kind) -> int:
        code = self._by_tuple.get(kind)
        if code is None:
            with self._lock:
                code = self._by_tuple.get(kind)
                if code is None:
                    code = len(self.kinds)
                    self.kinds.append(kind)
                    self._by_tuple[kind] = code
        return code

    def __len__(self) -> int:
        return len(self.kinds)


@dataclasses.dataclass
class TraceBatch:
    kind: np.ndarray  # int32
    wall_time: np.ndarray  # float64
    offset: np.ndarray  # int64, payload start relative to the buffer
    nonfinite_rows: np.ndarray  # int64 positions within this batch
    # (k, 4) float64 neg_inf, pos_inf, nan, size (-1 = not recorded) from the protobuf path; the fast path leaves
    # zeros: the index keeps only the rows and reads counts back from the records on demand
    nonfinite_counts: np.ndarray
    unparsed: list[int]  # payload starts of records that are not graph execution traces


def decode_one(data: bytes) -> tuple[float, Kind, tuple | None] | None:
    """(wall_time, kind, nonfinite counts or None) of one serialized trace event, or None."""
    event = schema.parse_event(data)
    if event is None or not event.HasField("graph_execution_trace"):
        return None
    t = event.graph_execution_trace
    kind = (t.tfdbg_context_id, t.op_name, int(t.output_slot), int(t.tensor_debug_mode), t.device_name)
    counts = debug_values.nonfinite_counts(int(t.tensor_debug_mode),
                                           t.tensor_proto or None)
    return event.wall_time, kind, counts


def decode_slow(buf: np.ndarray, starts: np.ndarray, lengths: np.ndarray, kinds: TraceKinds) -> TraceBatch:
    kind_col, wall_col, offsets, nf_rows, nf_counts, unparsed = [], [], [], [], [], []
    for start, length in zip(starts.tolist(), lengths.tolist()):
        decoded = decode_one(buf[start:start + length].tobytes())
        if decoded is None:
            unparsed.append(start)
            continue
        wall, kind, counts = decoded
        if counts is not None:
            nf_rows.append(len(kind_col))
            nf_counts.append(counts)
        kind_col.append(kinds.code(kind))
        wall_col.append(wall)
        offsets.append(start)
    return TraceBatch(np.array(kind_col, dtype=np.int32), np.array(wall_col, dtype=np.float64),
                      np.array(offsets, dtype=np.int64), np.array(nf_rows, dtype=np.int64),
                      np.array(nf_counts, dtype=np.float64).reshape(-1, 4), unparsed)


def decode_traces(buf: np.ndarray, starts: np.ndarray, lengths: np.ndarray, kinds: TraceKinds,
                  words=None) -> TraceBatch:
    try:
        from . import trace_fast
    except ImportError:
        trace_fast = None
    if trace_fast is None or len(starts) < 64:
        return decode_slow(buf, starts, lengths, kinds)
    return trace_fast.decode_fast(buf, starts, lengths, kinds, words)
