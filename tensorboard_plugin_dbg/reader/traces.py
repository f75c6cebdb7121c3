"""Decoding batches of graph_execution_trace records into index columns.

A trace's identity — (graph id, op name, output slot, debug mode, device) — repeats every step, so it is interned
as a "kind" and each row stores only its kind code, wall time and, when non-finite, a sparse entry with its counts.
`trace_fast.decode_traces` tries the vectorized fast path and falls back, record by record, to the
protobuf parser for anything whose wire layout is not the expected one.
"""

from __future__ import annotations

import dataclasses
import threading
from typing import Any

import numpy as np

from . import debug_values, schema, tensor_content
from .step_values import StepValues

Kind = tuple[str, str, int, int, str]  # (graph_id, op_name, output_slot, mode, device_name)
Counts = tuple[float, float, float, float]  # non-finite counts: -inf, +inf, NaN, size


class TraceKinds:
    """Interned trace identities. Appends only; readers may index `kinds` concurrently."""

    def __init__(self) -> None:
        self.kinds: list[Kind] = []
        self._by_tuple: dict[Kind, int] = {}
        # fast-path key -> (kind code, a words, b words, a length, b length)
        self.by_hash: dict[int, tuple[int, np.ndarray, np.ndarray, int, int]] = {}
        self._lock = threading.Lock()
        self._store: IdentityStore | None = None  # by_hash as arrays, rebuilt when it grows (see identity_store)
        self._modes = np.zeros(1, np.int64)  # see modes()

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

    def modes(self) -> np.ndarray:
        """The debug mode of each kind code, and 0 after them (so code -1 reads 0): kept while no kind is added
        (a list comprehension over thousands of kinds per chunk was ~5 % of indexing)."""
        modes = self._modes
        if len(modes) != len(self.kinds) + 1:
            kinds = list(self.kinds)
            modes = self._modes = np.array([k[3] for k in kinds] + [0], np.int64)
        return modes

    def identity_store(self) -> IdentityStore:
        """`by_hash` as sorted arrays, so a chunk's keys are matched with one searchsorted instead of a Python
        loop over its distinct keys (thousands per chunk: with small chunks that loop dominated indexing).
        Keys added since the last call are merged in (a few per chunk after the first steps: rebuilding all of
        them each time cost ~8 % of indexing)."""
        store = self._store
        if store is None or store.count != len(self.by_hash):
            if store is None or store.count > len(self.by_hash):
                store = IdentityStore.build(self.by_hash)
            else:  # dicts keep insertion order: the new keys are the last ones
                store = store.merged(IdentityStore.build(dict(list(self.by_hash.items())[store.count :])))
            self._store = store
        return store


@dataclasses.dataclass
class IdentityStore:
    """Known fast-path identities: keys sorted; per entry (same order) its kind code, its two identity spans as
    little-endian words zero-padded to the widest entry (one column each), and their byte lengths."""

    count: int
    keys: np.ndarray  # uint64, sorted
    code: np.ndarray  # int64
    a_words: np.ndarray  # uint32 (width, entries)
    b_words: np.ndarray
    a_len: np.ndarray  # int64
    b_len: np.ndarray

    def merged(self, other: IdentityStore) -> IdentityStore:
        wa = max(self.a_words.shape[0], other.a_words.shape[0])
        wb = max(self.b_words.shape[0], other.b_words.shape[0])

        def words(x: np.ndarray, y: np.ndarray, w: int) -> np.ndarray:
            out = np.zeros((w, x.shape[1] + y.shape[1]), np.uint32)
            out[: x.shape[0], : x.shape[1]], out[: y.shape[0], x.shape[1] :] = x, y
            return out

        a, b = words(self.a_words, other.a_words, wa), words(self.b_words, other.b_words, wb)
        keys = np.concatenate([self.keys, other.keys])
        order = np.argsort(keys, kind="stable")
        return IdentityStore(
            self.count + other.count,
            keys[order],
            np.concatenate([self.code, other.code])[order],
            a[:, order],
            b[:, order],
            np.concatenate([self.a_len, other.a_len])[order],
            np.concatenate([self.b_len, other.b_len])[order],
        )

    @staticmethod
    def build(by_hash: dict[int, tuple[int, np.ndarray, np.ndarray, int, int]]) -> IdentityStore:
        items = sorted(by_hash.items())
        wa = max((len(e[1]) for _, e in items), default=0)
        wb = max((len(e[2]) for _, e in items), default=0)
        a_words = np.zeros((wa, len(items)), np.uint32)
        b_words = np.zeros((wb, len(items)), np.uint32)
        for i, (_, e) in enumerate(items):
            a_words[: len(e[1]), i], b_words[: len(e[2]), i] = e[1], e[2]
        return IdentityStore(
            len(by_hash),
            np.array([k for k, _ in items], np.uint64),
            np.array([e[0] for _, e in items], np.int64),
            a_words,
            b_words,
            np.array([e[3] for _, e in items], np.int64),
            np.array([e[4] for _, e in items], np.int64),
        )


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
    steps: StepValues | None = None  # per row, what the rules' step-to-step scan needs (reader/step_values.py)


_BIG = 1 << 20  # records at least this long (FULL_TENSOR values) are walked, not parsed: see decode_big


def decode_big(data: memoryview) -> tuple[float, Kind, Counts | None] | None:
    """decode_one of a big FULL_TENSOR record without parsing or copying its tensor: the fields are walked
    (tensor_content.trace_in_record) and the non-finite elements counted in blocks over the record's own bytes.
    None when the walk does not apply (then protobuf decides)."""
    try:
        wall, kind, loc = tensor_content.trace_in_record(data)
    except tensor_content.ContentError:
        return None
    if kind[3] != 7 or loc is None or loc.storage is None:
        return None
    return wall, kind, debug_values.count_nonfinite(tensor_content.stored_values(loc, data), loc.dtype)


def decode_one(data: bytes | memoryview) -> tuple[float, Kind, Counts | None] | None:
    """(wall_time, kind, nonfinite counts or None) of one serialized trace event, or None."""
    if len(data) >= _BIG:
        decoded = decode_big(memoryview(data))
        if decoded is not None:
            return decoded
    event = schema.parse_event(data if isinstance(data, bytes) else bytes(data))
    if event is None or not event.HasField("graph_execution_trace"):
        return None
    t = event.graph_execution_trace
    kind = (t.tfdbg_context_id, t.op_name, int(t.output_slot), int(t.tensor_debug_mode), t.device_name)
    counts = debug_values.nonfinite_counts(int(t.tensor_debug_mode), t.tensor_proto or None)
    return event.wall_time, kind, counts


def decode_slow(buf: np.ndarray, starts: np.ndarray, lengths: np.ndarray, kinds: TraceKinds) -> TraceBatch:
    kind_col: list[int] = []
    wall_col: list[float] = []
    offsets: list[int] = []
    nf_rows: list[int] = []
    nf_counts: list[Any] = []
    unparsed: list[int] = []
    for start, length in zip(starts.tolist(), lengths.tolist()):
        record = buf[start : start + length]
        decoded = decode_one(record.data if length >= _BIG else record.tobytes())
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
    return TraceBatch(
        np.array(kind_col, dtype=np.int32),
        np.array(wall_col, dtype=np.float64),
        np.array(offsets, dtype=np.int64),
        np.array(nf_rows, dtype=np.int64),
        np.array(nf_counts, dtype=np.float64).reshape(-1, 4),
        unparsed,
    )
