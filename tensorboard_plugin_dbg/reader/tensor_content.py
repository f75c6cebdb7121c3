"""A FULL_TENSOR value read back by file offset, without reading (or parsing) the whole record.

A FULL_TENSOR record can be hundreds of MB; parsing it with protobuf copies it (and the record cache would keep it).
Instead the protobuf framing is walked from the record's payload offset down to the TensorProto (graph trace:
DebugEvent.graph_execution_trace=10 -> tensor_proto=5; execution: DebugEvent.execution=9 -> the K-th
tensor_protos=7), reading only tags and lengths, and `tensor_content`'s place in the file is noted: the values are
then read by element range (`read_range`, `read_elements`, `blocks`) or streamed as a `.npy` (`npy_chunks`).
A TensorProto without `tensor_content` (scalars, strings: typed fields) is small and decoded whole, by
debug_values. Storage dtypes are little-endian; bfloat16 is stored as its raw 16-bit words ("<u2") and widened
to float32 for arithmetic (`debug_values.content_values`).
"""

from __future__ import annotations

import dataclasses
import io
import struct
from collections.abc import Iterator
from typing import BinaryIO

import numpy as np

from ..wire.types import HealthFullTensor
from . import debug_values, full_tensor, storage, tensor_proto

_WINDOW = 1 << 16  # bytes read at once while walking tags
_GAP = 1 << 16  # read_elements: elements closer than this (in bytes) are read in one span
_MAX_SMALL = 64 << 20  # a TensorProto without tensor_content (typed fields) is decoded whole up to this size


class ContentError(ValueError):
    """The record does not hold a readable tensor where the index said (damaged, shrunk, or not a TensorProto)."""


@dataclasses.dataclass(frozen=True)
class TensorLocation:
    """Where one debug tensor's values are: `content_offset`/`content_bytes` in `path`, or decoded (`small`)."""

    path: str
    dtype_enum: int
    dtype: str  # wire name (tensor_proto.DTYPES)
    shape: tuple[int, ...]
    storage: str | None  # numpy dtype of the stored elements ("<u2" for bfloat16); None for strings
    content_offset: int = -1
    content_bytes: int = 0
    small: np.ndarray | None = None  # flat values, when the proto has no tensor_content

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64)) if self.shape else 1

    @property
    def itemsize(self) -> int:
        return np.dtype(self.storage).itemsize if self.storage else 0


class Window:
    """Reads a file around a position through a small buffer (tags and lengths are a few bytes each)."""

    def __init__(self, f: BinaryIO) -> None:
        self.f = f
        self.base = 0
        self.buf = b""

    def byte_at(self, pos: int) -> int:
        if not self.base <= pos < self.base + len(self.buf):
            self.f.seek(pos)
            self.base, self.buf = pos, self.f.read(_WINDOW)
            if not self.buf:
                raise ContentError("the record ends before its fields do (file shrank?)")
        return self.buf[pos - self.base]

    def read(self, pos: int, n: int) -> bytes:
        self.f.seek(pos)
        data = self.f.read(n)
        if len(data) != n:
            raise ContentError("the record ends before its fields do (file shrank?)")
        return data

    def varint(self, pos: int, end: int) -> tuple[int, int]:
        value = shift = 0
        while pos < end and shift < 64:
            b = self.byte_at(pos)
            pos += 1
            value |= (b & 0x7F) << shift
            if not b & 0x80:
                return value, pos
            shift += 7
        raise ContentError("bad varint in the record")


class MemoryWindow(Window):
    """The same walk over bytes in memory (a record already read by the indexer)."""

    def __init__(self, data: memoryview):
        self.data = data

    def byte_at(self, pos: int) -> int:
        if not 0 <= pos < len(self.data):
            raise ContentError("the record ends before its fields do")
        return self.data[pos]

    def read(self, pos: int, n: int) -> bytes:
        if pos < 0 or pos + n > len(self.data):
            raise ContentError("the record ends before its fields do")
        return bytes(self.data[pos : pos + n])


def fields(w: Window, start: int, end: int) -> Iterator[tuple[int, int, int, int]]:
    """(field number, wire type, value or payload start, payload end) of each field in [start, end)."""
    pos = start
    while pos < end:
        tag, pos = w.varint(pos, end)
        field, wire = tag >> 3, tag & 7
        if wire == 0:
            value, pos = w.varint(pos, end)
            yield field, wire, value, pos
        elif wire == 1 or wire == 5:
            pos += 8 if wire == 1 else 4
            yield field, wire, 0, pos
        elif wire == 2:
            n, pos = w.varint(pos, end)
            if pos + n > end:
                raise ContentError("a field runs past its message")
            yield field, wire, pos, pos + n
            pos += n
        else:
            raise ContentError(f"unexpected wire type {wire}")
    if pos != end:
        raise ContentError("a field runs past its message")


def _nth(w: Window, start: int, end: int, field: int, nth: int) -> tuple[int, int] | None:
    seen = 0
    for f, wire, a, b in fields(w, start, end):
        if f == field and wire == 2:
            if seen == nth:
                return a, b
            seen += 1
    return None


def _shape(w: Window, start: int, end: int) -> tuple[int, ...]:
    dims = []
    for f, wire, a, b in fields(w, start, end):
        if f == 2 and wire == 2:  # dim { size = 1 }
            size = next((v for g, t, v, _ in fields(w, a, b) if g == 1 and t == 0), 0)
            dims.append(size - (1 << 64) if size >= 1 << 63 else size)
    if any(d < 0 for d in dims):
        raise ContentError(f"the tensor's shape has an unknown dimension: {dims}")
    return tuple(dims)


def locate(path: str, payload_offset: int, message_field: int, proto_field: int, nth: int) -> TensorLocation | None:
    """The tensor in the record whose payload starts at `payload_offset`: the `nth` `proto_field` of the DebugEvent's
    `message_field` (trace: 10, 5, 0; execution output K: 9, 7, K). None when there is no such TensorProto or it is
    empty (an eager placeholder). Raises ContentError when the bytes are not what the index saw, OSError when the
    file cannot be read."""
    with storage.open_read(path) as f:
        w = Window(f)
        length = int.from_bytes(w.read(payload_offset - 12, 8), "little")
        end = payload_offset + length
        if end > storage.size_of(f):
            raise ContentError("the record is cut short (the file shrank after it was indexed)")
        message = _nth(w, payload_offset, end, message_field, 0)
        found = _nth(w, *message, proto_field, nth) if message else None
        return tensor_location(w, path, *found) if found else None


def tensor_location(w: Window, path: str, start: int, end: int) -> TensorLocation | None:
    dtype_enum, content, others = 0, None, False
    shape: tuple[int, ...] = ()
    for f, wire, a, b in fields(w, start, end):
        if f == 1 and wire == 0:
            dtype_enum = a
        elif f == 2 and wire == 2:
            shape = _shape(w, a, b)
        elif f == 4 and wire == 2:
            content = (a, b - a)
        else:
            others = True
    name, storage, _typed = tensor_proto.DTYPES.get(dtype_enum, (tensor_proto.dtype_name(dtype_enum), None, None))
    storage = "<u2" if storage == "bfloat16" else storage
    if dtype_enum == 0 and content is None and not shape and not others:
        return None  # an eager output that was not instrumented
    loc = TensorLocation(path, dtype_enum, name, shape, storage)
    if content is not None and storage is None and name == "string" and content[1] <= _MAX_SMALL:
        try:
            return dataclasses.replace(loc, small=debug_values.string_content(w.read(*content), loc.size))
        except ValueError as exc:
            raise ContentError(str(exc)) from exc
    if content is not None and storage is not None:
        loc = dataclasses.replace(loc, content_offset=content[0], content_bytes=content[1])
        if content[1] != loc.size * loc.itemsize:
            need = loc.size * loc.itemsize
            raise ContentError(f"tensor_content holds {content[1]} bytes; {name}{list(shape)} needs {need}")
        return loc
    if end - start > _MAX_SMALL:
        raise ContentError(f"a {name} tensor of {end - start} bytes without tensor_content is too big to decode")
    proto = tensor_proto.parse_tensor_proto(w.read(start, end - start))
    if proto is None:
        raise ContentError("the debug tensor does not parse")
    try:
        flat, _name, _shape_list = tensor_proto.tensor_to_numpy(proto, raw_bfloat16=True)
    except ValueError as exc:
        raise ContentError(str(exc)) from exc
    return dataclasses.replace(loc, small=flat)


def int32(v: int) -> int:
    return v - (1 << 64) if v >= 1 << 63 else v


def trace_in_record(data: memoryview) -> tuple[float, tuple[str, str, int, int, str], TensorLocation | None]:
    """(wall time, (context id, op name, output slot, mode, device), tensor) of one serialized graph execution
    trace, walking its fields instead of parsing it: a FULL_TENSOR record of hundreds of MB is neither copied nor
    decoded (its tensor's `content_offset` is relative to `data`). Raises ContentError when the bytes are not a
    trace (the caller then asks protobuf)."""
    return walk_trace(MemoryWindow(data), len(data))


def walk_trace(w: Window, length: int) -> tuple[float, tuple[str, str, int, int, str], TensorLocation | None]:
    """trace_in_record over the record's bytes as `w` reads them (in memory, or the kept head and tail of a record
    streamed by big_record.py)."""
    wall, span = 0.0, None
    for f, wire, a, b in fields(w, 0, length):
        if f == 1 and wire == 1:
            wall = struct.unpack("<d", w.read(b - 8, 8))[0]
        elif f == 10 and wire == 2:
            span = (a, b)
    if span is None:
        raise ContentError("not a graph execution trace")
    text = {1: "", 2: "", 6: ""}
    ints = {3: 0, 4: 0}
    tensor = None
    for f, wire, a, b in fields(w, *span):
        if wire == 2 and f in text:
            try:
                text[f] = w.read(a, b - a).decode("utf-8")
            except UnicodeDecodeError as exc:
                raise ContentError("a name is not UTF-8") from exc
        elif wire == 0 and f in ints:
            ints[f] = int32(a)
        elif wire == 2 and f == 5:
            tensor = (a, b)
    loc = tensor_location(w, "", *tensor) if tensor else None
    return wall, (text[1], text[2], ints[3], ints[4], text[6]), loc


def stored_values(loc: TensorLocation, data: memoryview) -> np.ndarray:
    """The stored elements of a tensor located in `data` (trace_in_record), without a copy."""
    if loc.small is not None:
        return loc.small
    return np.frombuffer(data, dtype=loc.storage, count=loc.size, offset=loc.content_offset)


def read_range(loc: TensorLocation, first: int, count: int) -> np.ndarray:
    """Stored elements [first, first + count) (flat, C order), in the storage dtype."""
    if loc.small is not None:
        return loc.small[first : first + count]
    out = np.empty(count, loc.storage)
    with storage.open_unbuffered(loc.path, storage.RANDOM_BLOCK) as f:
        f.seek(loc.content_offset + first * loc.itemsize)
        got = f.readinto(out.data)
    if got != out.nbytes:
        raise ContentError("the tensor's bytes are cut short (the file shrank after it was indexed)")
    return out


def read_elements(loc: TensorLocation, flat: np.ndarray) -> np.ndarray:
    """Stored elements at flat positions `flat` (any order), reading nearby ones in one span each."""
    if loc.small is not None or not len(flat):
        return (loc.small if loc.small is not None else np.empty(0, loc.storage))[flat]
    order = np.argsort(flat, kind="stable")
    pos = flat[order]
    breaks = np.flatnonzero(np.diff(pos) * loc.itemsize > _GAP) + 1
    out = np.empty(len(flat), loc.storage)
    for a, b in zip(np.r_[0, breaks].tolist(), np.r_[breaks, len(pos)].tolist()):
        span = read_range(loc, int(pos[a]), int(pos[b - 1] - pos[a] + 1))
        out[order[a:b]] = span[pos[a:b] - pos[a]]
    return out


def blocks(loc: TensorLocation, elements: int) -> Iterator[tuple[int, np.ndarray]]:
    """(first flat position, values) of consecutive blocks of at most `elements`, decoded (bfloat16 widened)."""
    for first in range(0, loc.size, elements):
        raw = read_range(loc, first, min(elements, loc.size - first))
        yield first, debug_values.content_values(raw, loc.dtype)


def summarize(loc: TensorLocation) -> HealthFullTensor:
    """debug_values.summarize_array of the whole tensor (wire.ts HealthFullTensor), reading it in blocks: the same
    dict for a tensor of one block, and the same counts, min and max (a mean summed block by block in float64) for a
    bigger one, without holding it in memory or widening it to float64."""
    if loc.small is not None or loc.size <= debug_values.COUNT_BLOCK:
        whole = debug_values.content_values(read_range(loc, 0, loc.size), loc.dtype)
        return debug_values.summarize_array(whole, loc.dtype, list(loc.shape))
    parts = (b for _first, b in blocks(loc, debug_values.COUNT_BLOCK))
    return full_tensor.summarize_blocks(parts, loc.dtype, list(loc.shape), loc.size)


def npy_header(loc: TensorLocation) -> bytes:
    """The .npy (version 1.0) header of the tensor's stored dtype and shape."""
    descr = np.lib.format.dtype_to_descr(np.dtype(_npy_dtype(loc)))
    return _npy_header_bytes(str(descr), loc.shape)


def _npy_dtype(loc: TensorLocation) -> str:
    if loc.storage is not None:
        return loc.storage
    width = max([len(x) for x in _strings(loc)] + [1])
    return f"S{width}"


def _strings(loc: TensorLocation) -> list[bytes]:
    return [x if isinstance(x, bytes) else str(x).encode() for x in (loc.small if loc.small is not None else [])]


def _npy_header_bytes(descr: str, shape: tuple[int, ...]) -> bytes:
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, {"descr": descr, "fortran_order": False, "shape": tuple(shape)})
    return buf.getvalue()


def npy_chunks(loc: TensorLocation, chunk: int = 1 << 20) -> Iterator[bytes]:
    """The whole .npy file: header, then the stored bytes as they are on disk, `chunk` bytes at a time."""
    yield npy_header(loc)
    if loc.storage is None:
        yield np.array(_strings(loc), dtype=_npy_dtype(loc)).tobytes()
        return
    if loc.small is not None:
        yield np.ascontiguousarray(loc.small, loc.storage).tobytes()
        return
    with storage.open_read(loc.path, storage.STREAM_BLOCK) as f:
        f.seek(loc.content_offset)
        left = loc.content_bytes
        while left > 0:
            data = f.read(min(chunk, left))
            if not data:
                raise ContentError("the tensor's bytes are cut short (the file shrank after it was indexed)")
            left -= len(data)
            yield data


def npy_bytes(loc: TensorLocation) -> int:
    """Length of npy_chunks' output (for Content-Length)."""
    if loc.storage is None:
        return len(npy_header(loc)) + loc.size * np.dtype(_npy_dtype(loc)).itemsize
    return len(npy_header(loc)) + loc.size * loc.itemsize
