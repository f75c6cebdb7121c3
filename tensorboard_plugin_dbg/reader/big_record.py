"""A big FULL_TENSOR trace record indexed without reading it whole (issue #25).

The index reads small records a chunk at a time, but a record longer than a chunk used to be read whole into fresh
memory: a 256 MiB FULL_TENSOR value cost 256 MiB of transient memory and most of its indexing time (page faults and
copies, ~6x the time to read the bytes). A record of THRESHOLD bytes or more is streamed instead, through one buffer
of PIECE bytes:
  * its first PREFIX bytes hold the trace's fields before `tensor_content` (wall time, context id, op name, slot,
    mode, dtype, shape): the protobuf framing is walked there (tensor_content's walker) to find where the content
    starts and ends;
  * the content is read piece by piece (whole elements each: pieces start at the content's first byte), each piece
    CRC-extended and checked for non-finite values; then the few bytes after the content (the device name) and the
    data CRC;
  * the fields are walked once more over the kept head and tail (the content's bytes are a hole the walk never
    reads), giving exactly what `traces.decode_big` gives from the whole record.
Anything unusual (the walk needs a byte in the hole, not FULL_TENSOR mode, a string tensor, a long tail) answers
FALLBACK before any decision: the caller then reads the record whole as before, so odd records behave as they did.
A bad data CRC is DAMAGED; a record the file does not hold whole yet is PARTIAL (retry from the same offset).
"""

from __future__ import annotations

import dataclasses
import io
import struct

import numpy as np

from . import crc32c, full_tensor, storage, tensor_content, tensor_proto, tfrecord
from .tensor_content import ContentError, Window, fields
from .traces import Kind

THRESHOLD = 16 << 20  # records at least this long are streamed (tests lower it)
PIECE = 2 << 20  # bytes per read: the fastest here (1 MiB: more syscalls; 8 MiB: the piece leaves the caches)
PREFIX = 64 << 10  # bytes read first: a trace's fields before its content are a few hundred bytes
_TAIL_MAX = 1 << 20  # bytes after the content kept for the second walk (a device name: tens of bytes)

OK, DAMAGED, PARTIAL, FALLBACK = "ok", "damaged", "partial", "fallback"


@dataclasses.dataclass
class Streamed:
    """What streaming the record at `offset` found. `end`: the offset after it (OK, DAMAGED); for OK the trace's
    wall time, kind (traces.Kind) and whether its value holds a non-finite element (decode_big's counts not None)."""

    status: str
    offset: int
    length: int = 0
    end: int = 0
    wall_time: float = 0.0
    kind: Kind = ("", "", 0, 0, "")  # set for OK
    nonfinite: bool = False
    next_needed: int = 0  # 16 + the next record's length when its header checks and it is THRESHOLD long or more


class _Sparse(Window):
    """The record's bytes that were kept: its head [0, len(head)) and its tail [tail_at, tail_at + len(tail));
    a read anywhere else (the content) raises ContentError."""

    def __init__(self, head: bytes, tail: bytes = b"", tail_at: int = -1):
        self.head, self.tail, self.tail_at = head, tail, tail_at

    def _part(self, pos: int, n: int) -> tuple[bytes, int] | None:
        if 0 <= pos and pos + n <= len(self.head):
            return self.head, pos
        if self.tail_at >= 0 and self.tail_at <= pos and pos + n <= self.tail_at + len(self.tail):
            return self.tail, pos - self.tail_at
        return None

    def byte_at(self, pos: int) -> int:
        part = self._part(pos, 1)
        if part is None:
            raise ContentError("the walk left the kept bytes of a streamed record")
        return part[0][part[1]]

    def read(self, pos: int, n: int) -> bytes:
        part = self._part(pos, n)
        if part is None:
            raise ContentError("the walk left the kept bytes of a streamed record")
        return part[0][part[1] : part[1] + n]


@dataclasses.dataclass
class _Content:
    start: int  # payload-relative
    end: int
    storage: str  # numpy dtype of the stored elements
    dtype: str  # wire name


def _first(w: Window, start: int, end: int, field: int) -> tuple[int, int] | None:
    """The first length-delimited `field` in [start, end), stopping there (the fields after it are not read)."""
    for f, wire, a, b in fields(w, start, end):
        if f == field and wire == 2:
            return a, b
    return None


def _locate_content(head: bytes, length: int) -> _Content | None:
    """Where the trace's tensor_content lies, from the record's first bytes; None when it is not found there."""
    w = _Sparse(head)
    try:
        trace = _first(w, 0, length, 10)
        proto = _first(w, *trace, 5) if trace else None
        if proto is None:
            return None
        dtype_enum = 0
        for f, wire, a, b in fields(w, *proto):
            if f == 1 and wire == 0:
                dtype_enum = a
            elif f == 4 and wire == 2:
                name, storage, _typed = tensor_proto.DTYPES.get(dtype_enum, ("", None, None))
                storage = "<u2" if storage == "bfloat16" else storage
                return _Content(a, b, storage, name) if storage else None
    except ContentError:
        return None
    return None


class _Stream:
    """Reads the payload from where the file is positioned, a piece at a time through one reused buffer, extending
    the data CRC and, for the content (`run`'s `content`), looking each piece over for a non-finite element.
    (A helper thread reading the next piece while this one checks the last was slower here: the CRC holds the GIL.)"""

    def __init__(self, f: io.RawIOBase, crc: int):
        self.f, self.crc = f, crc
        self.buf = np.empty(PIECE, np.uint8)
        self.nonfinite = False

    def run(self, n: int, content: _Content | None = None) -> bool:
        """Reads the next `n` payload bytes; False when the file ends first."""
        # whole elements per piece (the content's first byte starts the first): none is split across two pieces
        step = PIECE - PIECE % np.dtype(content.storage).itemsize if content is not None else PIECE
        while n > 0:
            size = min(step, n)
            piece = self.buf[:size]
            if _fill(self.f, piece) < size:
                return False
            self.crc = crc32c.extend(self.crc, piece)
            if content is not None and not self.nonfinite:  # one seen flags the row: no more to look for
                self.nonfinite = _has_nonfinite(piece, content)
            n -= size
        return True


def _fill(f: io.RawIOBase, view: np.ndarray) -> int:
    """Reads into all of `view` unless the file ends first; the bytes read."""
    got = 0
    while got < len(view):
        n = f.readinto(view[got:].data)
        if not n:
            break
        got += n
    return got


def _has_nonfinite(piece: np.ndarray, content: _Content) -> bool:
    """Whether the piece's elements (it starts on an element: see _Stream.run) hold a non-finite value, as
    full_tensor.count_nonfinite (decode_big's count) would flag them."""
    itemsize = np.dtype(content.storage).itemsize
    whole = len(piece) - len(piece) % itemsize  # a ragged end only when the content is (the walk then refuses it)
    stored = piece[:whole].view(content.storage)
    return full_tensor.count_nonfinite(stored, content.dtype) is not None


def read_trace(path: str, offset: int) -> Streamed:
    """Streams the record whose 12-byte header is at `offset` in the graph execution traces file `path`."""
    with storage.open_unbuffered(path) as f:
        f.seek(offset)
        head = f.read(12)
        if len(head) < 12:
            return Streamed(PARTIAL, offset)
        length = _length(head)
        if length is None:
            return Streamed(FALLBACK, offset)  # the scanner reports (and resyncs past) a bad header
        prefix = f.read(min(PREFIX, length))
        if len(prefix) < min(PREFIX, length):
            return Streamed(PARTIAL, offset)
        content = _locate_content(prefix, length)
        if content is None or length - content.end > _TAIL_MAX:
            stream = _Stream(f, crc32c.extend(0, np.frombuffer(prefix, np.uint8)))
            if not stream.run(length - len(prefix)):
                return Streamed(PARTIAL, offset)
            return _verdict(f, stream, offset, length) or Streamed(FALLBACK, offset, length)
        stream = _Stream(f, crc32c.extend(0, np.frombuffer(prefix, np.uint8, count=content.start)))
        f.seek(offset + 12 + content.start)  # the content read again from its first byte: pieces of whole elements
        if not stream.run(content.end - content.start, content):
            return Streamed(PARTIAL, offset)
        tail = f.read(length - content.end)
        if len(tail) < length - content.end:
            return Streamed(PARTIAL, offset)
        stream.crc = crc32c.extend(stream.crc, np.frombuffer(tail, np.uint8))
        verdict = _verdict(f, stream, offset, length)
        if verdict is not None:
            return verdict
        return _decoded(_Sparse(prefix, tail, content.end), content, stream, offset, length)


def _verdict(f: io.RawIOBase, stream: _Stream, offset: int, length: int) -> Streamed | None:
    """PARTIAL or DAMAGED from the data CRC after the payload; None when it checks."""
    footer = f.read(4)
    if len(footer) < 4:
        return Streamed(PARTIAL, offset)
    if crc32c.mask(stream.crc) != struct.unpack("<I", footer)[0]:
        return Streamed(DAMAGED, offset, length, offset + 16 + length, next_needed=_next_needed(f))
    return None


def _next_needed(f: io.RawIOBase) -> int:
    """Streamed.next_needed from the 12 bytes after the record (where the file is positioned)."""
    length = _length(f.read(12))
    return 16 + length if length is not None and length >= THRESHOLD else 0


def _length(head: bytes) -> int | None:
    """The payload length a 12-byte record header gives, or None when the header is short, fails its CRC or gives
    more than a record may hold."""
    if len(head) < 12 or crc32c.mask(crc32c.crc32c(head[:8])) != struct.unpack_from("<I", head, 8)[0]:
        return None
    length: int = struct.unpack_from("<Q", head)[0]
    return length if length <= tfrecord.MAX_RECORD else None


def _decoded(w: _Sparse, content: _Content, stream: _Stream, offset: int, length: int) -> Streamed:
    """OK with the trace's fields, or FALLBACK when they are not decode_big's case (then protobuf decides)."""
    try:
        wall, kind, loc = tensor_content.walk_trace(w, length)
    except ContentError:
        return Streamed(FALLBACK, offset, length)
    if (
        kind[3] != 7
        or loc is None
        or loc.storage != content.storage
        or loc.dtype != content.dtype
        or (loc.content_offset, loc.content_offset + loc.content_bytes) != (content.start, content.end)
    ):
        return Streamed(FALLBACK, offset, length)
    return Streamed(OK, offset, length, offset + 16 + length, wall, kind, stream.nonfinite, _next_needed(stream.f))
