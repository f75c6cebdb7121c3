"""Reading records back for a RunIndex, and handing memory back to the OS (kept out of ingest.py and run_index.py)."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, TypeVar, cast

import numpy as np
import numpy.typing as npt

from ..reader import debug_values, health_gather, health_vectors, schema, storage, tensor_content, tfrecord
from ..reader.traces import Kind
from ..wire import types as wire
from .columns import LOC_MASK, LOC_SHIFT
from .errors import RecordGone

if TYPE_CHECKING:  # state.py imports this module
    from .state import RunState

T = TypeVar("T")
Rows = npt.NDArray[np.int64]

# read_trace_payloads: a gap this wide between two of a page's records starts a new read (one pread costs about as
# much as copying ~16 KiB, so bridging smaller gaps is cheaper; a 1,000-row page reads at most ~16 MiB).
_GAP = 16 << 10
# read_trace_payloads reads this much past a record's start (a health record is ~250 bytes). An isolated record (an
# alert page, a filtered page: one read each) costs its own bytes, not 4 KiB: at 10 M traces the first alert page's
# records lie ~0.5 MB apart, and bigger reads made their page cost 50% more than a contiguous one.
_PAGE_TAIL = 1024
_REREAD_MAX = 1 << 20  # a longer record (a big FULL_TENSOR) is left to run.read_event
_NO_TENSOR: wire.HealthNoTensor = {"mode": "NO_TENSOR"}


def read_trace_payloads(
    run: RunState, rows: Rows
) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """(buf, starts, lengths): the serialized DebugEvent of trace row rows[k] is buf[starts[k]:starts[k] +
    lengths[k]]; lengths[k] is -1 where the read did not cover the record whole (a long record: read it with
    run.read_event). One pread per run of neighbouring records (see _GAP), no per-row Python."""

    locs = run.traces.view("loc")[rows]
    return read_payloads(run, locs >> LOC_SHIFT, locs & LOC_MASK)


def read_payloads(
    run: RunState, codes: Rows, offsets: Rows
) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """read_trace_payloads for records given by (file code, payload offset): traces, or executions (whose columns
    hold the two apart)."""
    codes, offsets = np.asarray(codes, np.int64), np.asarray(offsets, np.int64)
    n = len(codes)
    starts = np.zeros(n, np.int64)
    limits = np.zeros(n, np.int64)  # end of the bytes read around each record
    parts, base = [], 0
    one_file = n == 0 or codes.min() == codes.max()  # the usual case: skip grouping by file
    for code in [int(codes[0])] if one_file and n else np.unique(codes).tolist():
        sel = np.arange(n) if one_file else np.flatnonzero(codes == code)
        sel = sel[np.argsort(offsets[sel], kind="stable")]
        off = offsets[sel]
        cuts = (np.flatnonzero(np.diff(off) > _GAP) + 1).tolist()
        path = run.files[code].path
        try:
            with storage.preader(path) as pread:
                for lo, hi in zip([0, *cuts], [*cuts, len(off)]):
                    first = int(off[lo]) - 12
                    data = pread(int(off[hi - 1]) + _PAGE_TAIL - first, first)
                    starts[sel[lo:hi]] = off[lo:hi] - first + base
                    limits[sel[lo:hi]] = base + len(data)
                    parts.append(data)
                    base += len(data)
        except OSError as exc:  # deleted (or a remote object gone or unreachable) since it was indexed: a 4xx
            raise RecordGone(f"{storage.basename(path)} cannot be read back: {exc.strerror or exc}") from exc
    buf = np.frombuffer(b"".join(parts), np.uint8)
    if not n:
        return buf, starts, np.full(n, -1, np.int64)
    # each record's 8-byte length sits 12 bytes before its payload (and inside what was read: first = offset - 12)
    head = np.minimum(starts - 12, max(len(buf) - 8, 0))[:, None] + np.arange(8)
    lengths = buf[head].view("<u8")[:, 0].astype(np.int64) if len(buf) >= 8 else np.full(n, -1, np.int64)
    # (a length >= 2**63 wraps negative: unusable too)
    sane = (lengths >= 0) & (lengths <= min(tfrecord.MAX_RECORD, _REREAD_MAX))
    short = np.flatnonzero(sane & (starts + lengths > limits))
    if len(short):  # longer than the tail read after them (rare: long names): once more, exactly
        extra = []
        for k in short.tolist():
            code, offset = int(codes[k]), int(offsets[k])
            with storage.open_read(run.files[code].path) as f:
                f.seek(offset)
                data = f.read(int(lengths[k]))
            starts[k], limits[k] = base, base + len(data)
            extra.append(data)
            base += len(data)
        buf = np.frombuffer(b"".join([buf.tobytes(), *extra]), np.uint8)
    whole = sane & (starts + lengths <= limits)
    return buf, starts, np.where(whole, lengths, -1)


def trace_hosts(run: RunState, rows: Rows) -> list[str]:
    """The host of each trace row (that of the file holding its record)."""

    files = run.files
    return [files[c].host for c in (run.traces.view("loc")[rows] >> LOC_SHIFT).tolist()]


def trace_kinds_healths(run: RunState, rows: Rows) -> tuple[list[Kind], list[wire.TensorHealth], bool]:
    """(kind tuple of each trace row, its TensorHealth, whether every float in them is finite): what a page of
    graph executions or of alerts shows of each trace row, its health decoded as trace_healths does."""
    kinds = run.kinds.kinds
    info = [kinds[k] for k in run.traces.view("kind")[rows].tolist()]
    healths, finite = trace_healths(run, rows, np.array([k[3] for k in info], np.int64))
    return info, healths, finite


def trace_healths(run: RunState, rows: Rows, modes: Rows) -> tuple[list[wire.TensorHealth], bool]:
    """(TensorHealth of each trace row, whether every float in them is finite); modes[k] is row k's debug mode
    (from its kind). The same dicts as decode_debug_value on each row's parsed record, with one file read for the
    page and the health vectors of TF's regular records decoded together from the bytes
    (health_gather.record_healths); only the other records are parsed with protobuf."""
    rows = np.asarray(rows, np.int64)
    modes = np.asarray(modes, np.int64)
    out: list[wire.TensorHealth] = [_NO_TENSOR] * len(rows)  # placeholders: each one is set below
    finite = True  # health vectors decode to ints and bools; only FULL_TENSOR summaries hold floats
    read = np.flatnonzero(modes != 1)  # NO_TENSOR carries no value: nothing to read
    for k in np.flatnonzero(modes == 1).tolist():
        out[k] = {"mode": "NO_TENSOR"}
    if not len(read):
        return out, finite
    buf, starts, lengths = read_trace_payloads(run, rows[read])
    fast = health_gather.record_healths(buf, starts, lengths, modes[read])
    if len(read) == len(rows):
        out = cast(list[wire.TensorHealth], fast)  # its None entries are filled below
    else:
        for j, k in enumerate(read.tolist()):
            out[k] = cast(wire.TensorHealth, fast[j])  # None entries are filled below
    for j in [j for j, health in enumerate(fast) if health is None]:
        # not the regular layout: protobuf, as one record read would
        k = int(read[j])
        health = out[k] = _parsed_health(run, int(rows[k]), int(modes[k]), buf, int(starts[j]), int(lengths[j]))
        finite = finite and finite_floats(health.values())
    return out, finite


def trace_vectors(run: RunState, rows: Rows, summary: bool = False) -> tuple[Rows, npt.NDArray[np.float64]]:
    """(mode of each trace row, its debug vector as in tfdbg2-format.md, float64, NaN-padded to 11 columns; NaN
    where the mode has no vector: NO_TENSOR, FULL_TENSOR). For whole-run scans (analysis/rules): one file read per
    block of neighbouring rows and the vectors gathered together (health_gather.record_vectors); records off TF's
    regular layout are parsed with protobuf and their health dicts turned back into vectors. `summary`: only the
    elements health_gather.SUMMARY_ELEMENTS names (the others NaN): what a whole-run scan reads, at less cost."""
    rows = np.asarray(rows, np.int64)
    kinds = run.kinds.kinds
    kind_modes = np.array([k[3] for k in kinds], np.int64) if kinds else np.zeros(0, np.int64)
    kind_col = run.traces.view("kind")[rows]
    modes = kind_modes[kind_col] if len(rows) else np.zeros(0, np.int64)
    vectors = np.full((len(rows), 11), np.nan)
    read = np.flatnonzero(health_vectors.VECTOR_BYTES[np.clip(modes, 0, 15)] > 0)
    if not len(read):
        return modes, vectors
    buf, starts, lengths = read_trace_payloads(run, rows[read])
    # records the indexer decoded already: the layout checks suffice (strict=False; see record_vectors), found once
    # per kind for a scan (kind_vectors)
    if summary:
        elements = health_gather.SUMMARY_ELEMENTS
        ok, got = health_gather.kind_vectors(buf, starts, lengths, modes[read], kind_col[read], elements)
    else:
        ok, got = health_gather.record_vectors(buf, starts, lengths, modes[read], strict=False)
    vectors[read] = got
    odd = read[~ok]
    if len(odd):  # rare: records off the regular layout
        healths, _finite = trace_healths(run, rows[odd], modes[odd])
        for k, health in zip(odd.tolist(), healths):
            vectors[k] = health_vectors.vector_of(health)
    return modes, vectors


def record_length(run: RunState, row: int) -> int:
    """The payload length of trace row `row`'s record, from its header (-1 when it cannot be read)."""
    loc = int(run.traces.view("loc")[row])
    try:
        with storage.open_read(run.files[loc >> LOC_SHIFT].path) as f:
            f.seek((loc & LOC_MASK) - 12)
            head = f.read(8)
    except OSError:
        return -1
    return int.from_bytes(head, "little") if len(head) == 8 else -1


def big_full_tensor(run: RunState, row: int, mode: int) -> bool:
    """A FULL_TENSOR record too long to parse per request (full_tensor_health reads it instead)."""
    return mode == 7 and record_length(run, row) > _REREAD_MAX


def full_tensor_health(run: RunState, row: int) -> wire.TensorHealth:
    """HealthFullTensor of a big FULL_TENSOR trace, read from the file in blocks (tensor_content.summarize), never
    parsed whole nor kept in the record cache; computed once per record (records never change) in the run's derived
    cache."""
    loc = int(run.traces.view("loc")[row])
    code, offset = loc >> LOC_SHIFT, loc & LOC_MASK

    def build() -> wire.TensorHealth:
        try:
            location = tensor_content.locate(run.files[code].path, offset, 10, 5, 0)
            if location is None:
                return debug_values.decode_debug_value(7, None)
            return tensor_content.summarize(location)
        except (OSError, tensor_content.ContentError) as exc:
            return {"mode": "UNKNOWN", "reason": f"undecodable FULL_TENSOR value: {exc}"}

    return run.derived.get(f"full_tensor_health:{code}:{offset}", 0, build)


def _parsed_health(
    run: RunState, row: int, mode: int, buf: npt.NDArray[np.uint8], start: int, length: int
) -> wire.TensorHealth:
    if length < 0 and big_full_tensor(run, row, mode):
        return full_tensor_health(run, row)
    event = schema.parse_event(buf[start : start + length].tobytes()) if length >= 0 else None
    if event is None:
        try:
            event = run.read_trace_event(row)  # a long record, or one that is gone: the row says so
        except RecordGone as exc:
            return {"mode": "UNKNOWN", "reason": str(exc)}
    t = event.graph_execution_trace
    return debug_values.decode_debug_value(mode, t.tensor_proto or None)


class FiniteList(list[T]):
    """A list its producer checked: every float in it is finite, and it holds only str, int, float, bool, None and
    lists and str-keyed dicts of those. The JSON encoder (api/json_encoding.py) takes it as is for its fast path
    instead of looking for non-finite floats itself (which costs as much as encoding)."""

    json_finite = True


def finite_floats(values: Iterable[object]) -> bool:
    """Whether every float among `values` (a flat iterable) is finite."""
    return all(math.isfinite(v) for v in values if isinstance(v, float))


def trim_heap() -> None:
    """Hands the heap's free pages back to the OS after a pass. A pass frees its chunk buffers and decode
    temporaries (tens of MB) inside the heap, where glibc keeps them as resident memory; this is what keeps the
    process RSS near what the index holds. No-op where glibc is not there."""
    global _MALLOC_TRIM
    if _MALLOC_TRIM is None:
        try:
            import ctypes

            _MALLOC_TRIM = ctypes.CDLL("libc.so.6").malloc_trim
        except (OSError, AttributeError):
            _MALLOC_TRIM = False
    if _MALLOC_TRIM:
        _MALLOC_TRIM(0)


_MALLOC_TRIM: Any = None
