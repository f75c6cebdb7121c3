"""CRC-32C (Castagnoli), scalar and vectorized with numpy, plus TFRecord's masking.

Why vectorized: a dump holds millions of small records and a few multi-megabyte ones (source files); a per-byte
Python loop would dominate indexing. Everything here is XOR-linear, which the code exploits twice:
  * many equal-length records are processed column-wise (one numpy step per 4-byte column for all records),
    using two 65,536-entry tables that advance the register over 4 bytes at once;
  * a long record is cut into equal chunks whose CRCs are computed column-wise, then folded with a
    precomputed "advance over C zero bytes" operator.
The register after a message from init `i` equals adv(i, n) ^ raw(message), where raw starts from 0 and adv(i, n)
advances `i` over n zero bytes; so the init/xorout terms are added once per record length.

Where `google-crc32c` is installed with its C extension (the `fast` extra), records of NATIVE_MIN bytes or more
go through it instead (hardware CRC-32C: ~10 GB/s against the numpy path's ~0.3 GB/s on a big FULL_TENSOR record,
and ~10x on 250-byte trace records even called once per record); shorter slices (the 8-byte record headers) stay
on the vectorized path, which is faster for them. The numpy code is the fallback and gives the same answers
(tests/test_reader_framing.py checks both).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import numpy as np

# (the C extension reads bytes or a numpy array, without a copy; not a writable memoryview)
_Data = bytes | np.ndarray


def _native_crc32c() -> tuple[Callable[[_Data], int], Callable[[int, _Data], int]] | None:
    """google_crc32c's (value, extend) when its C extension is there (its pure-Python fallback is slower than ours)."""
    try:
        import google_crc32c
    except ImportError:
        return None
    if getattr(google_crc32c, "implementation", None) != "c":
        return None
    return google_crc32c.value, google_crc32c.extend


NATIVE = _native_crc32c()  # None: the numpy path only (tests set it to None to check the fallback)
NATIVE_MIN = 32  # bytes: shorter slices are faster vectorized than with one native call each
_SLICE_MAX = 1 << 20  # a longer slice of a bytes chunk is read through the array instead (slicing bytes copies)

_POLY = 0x82F63B78
_MASK_DELTA = 0xA282EAD8
_CHUNK = 1024  # bytes per chunk when folding a long record
_LONG = 4096  # records at least this long use the chunked path
_SLAB = 16384  # chunks advanced together in the chunked path (16 MiB: the transposed slab stays near the cache)


def _byte_table() -> np.ndarray:
    table = np.arange(256, dtype=np.uint32)
    for _ in range(8):
        table = np.where(table & 1, (table >> 1) ^ np.uint32(_POLY), table >> 1).astype(np.uint32)
    return table


T8 = _byte_table()
_T8_LIST = [int(v) for v in T8]


def _advance_array(values: np.ndarray, nbytes: int) -> np.ndarray:
    """Advances every register in `values` over `nbytes` zero bytes (raw, vectorized)."""
    r = values.astype(np.uint32)
    for _ in range(nbytes):
        r = T8[r & 0xFF] ^ (r >> 8)
    return r


# Advance over 4 bytes, split by the register's low and high halves (the map is linear, so the halves add).
_LOW16 = _advance_array(np.arange(65536, dtype=np.uint32), 4)
_HIGH16 = _advance_array(np.arange(65536, dtype=np.uint32) << 16, 4)
# Advance over one chunk of zero bytes, one table per register byte.
_CHUNK_TABLES = [[int(v) for v in _advance_array(np.arange(256, dtype=np.uint32) << (8 * k), _CHUNK)] for k in range(4)]
# Operators "advance over 2**k zero bytes", each as four 256-entry byte tables; built lazily.
_POW2_OPS: list[list[list[int]]] = [
    [[int(v) for v in _advance_array(np.arange(256, dtype=np.uint32) << (8 * k), 1)] for k in range(4)]
]
_INIT_TERM: dict[int, int] = {}


def _apply(op: list[list[int]], x: int) -> int:
    return op[0][x & 0xFF] ^ op[1][(x >> 8) & 0xFF] ^ op[2][(x >> 16) & 0xFF] ^ op[3][x >> 24]


def _advance(x: int, n: int) -> int:
    """Advances register `x` over `n` zero bytes in O(log n)."""
    k = 0
    while n:
        while len(_POW2_OPS) <= k:
            last = _POW2_OPS[-1]
            _POW2_OPS.append([[_apply(last, _apply(last, b << (8 * j))) for b in range(256)] for j in range(4)])
        if n & 1:
            x = _apply(_POW2_OPS[k], x)
        n >>= 1
        k += 1
    return x


def _init_term(n: int) -> int:
    """adv(0xFFFFFFFF, n) ^ 0xFFFFFFFF: what the standard init and xorout add to a raw CRC of n bytes."""
    term = _INIT_TERM.get(n)
    if term is None:
        term = _advance(0xFFFFFFFF, n) ^ 0xFFFFFFFF
        if len(_INIT_TERM) < 100_000:
            _INIT_TERM[n] = term
    return term


def _raw_columns(columns: np.ndarray, r: np.ndarray) -> np.ndarray:
    """Advances registers `r` (M,) over word columns `columns` (W, M) of little-endian uint32, in place."""
    lo = np.empty_like(r)
    hi = np.empty_like(r)
    for j in range(columns.shape[0]):
        np.bitwise_xor(r, columns[j], out=r)
        np.bitwise_and(r, 0xFFFF, out=lo)
        np.right_shift(r, 16, out=hi)
        np.take(_LOW16, lo, out=lo)
        np.take(_HIGH16, hi, out=hi)
        np.bitwise_xor(lo, hi, out=r)
    return r


def _raw_long(buf: np.ndarray, start: int, n: int) -> int:
    """Raw CRC of one long slice: chunk CRCs column-wise, then folded with the chunk-advance operator."""
    h = n % _CHUNK
    r = 0
    for b in buf[start : start + h].tobytes():
        r = _T8_LIST[(r ^ b) & 0xFF] ^ (r >> 8)
    body = buf[start + h : start + n]
    if len(body) == 0:
        return r
    rows = np.ascontiguousarray(body).view("<u4").reshape(-1, _CHUNK // 4)
    # Each chunk's CRC is independent: transpose and advance a slab of chunks at a time, so the transposed copy
    # and the registers stay in cache (one transpose of a 256 MiB record was ~40% of its CRC time).
    crcs = np.empty(len(rows), np.uint32)
    for a in range(0, len(rows), _SLAB):
        slab = rows[a : a + _SLAB]
        crcs[a : a + len(slab)] = _raw_columns(np.ascontiguousarray(slab.T), np.zeros(len(slab), dtype=np.uint32))
    chunk_crcs = crcs.tolist()
    t0, t1, t2, t3 = _CHUNK_TABLES
    for c in chunk_crcs:
        r = t0[r & 0xFF] ^ t1[(r >> 8) & 0xFF] ^ t2[(r >> 16) & 0xFF] ^ t3[r >> 24] ^ c
    return r


_FRONT = _LONG + 8  # zero bytes before the buffer copy, so left-padded words never index below 0
_KEEP_HIGH32 = np.array([0xFFFFFFFF ^ ((1 << (8 * k)) - 1) for k in range(5)], dtype=np.uint32)
_BATCH = 8192  # records per vectorized step: keeps the working arrays in cache
_LAZY = 16 << 20  # Words of a bigger buffer are copied only when needed (see Words.flat)
_FEW = 1 << 16  # ...and fewer positions than this are read from the bytes instead


_local = threading.local()


def _workspace(n4: int) -> np.ndarray:
    """Per-thread buffers reused across chunks: fresh 100 MB allocations would cost more in page faults than
    the copies themselves. Valid until the same thread builds the next Words; release_workspace() frees them
    (the index calls it after each refresh pass)."""
    flat = getattr(_local, "flat", None)
    if flat is None or len(flat) < 4 * n4:
        flat = np.zeros(4 * (n4 + n4 // 8), np.uint32)
        _local.flat = flat
    return flat


def release_workspace() -> None:
    _local.flat = None


class Words:
    """A uint8 buffer, zero-padded on both sides, stored four times as little-endian uint32 words starting at byte
    0, 1, 2 and 3 (one (4, n) array): the 4 bytes at any position p are the single element index(p), and the next
    4 bytes are index(p) + 1. So any slice is read one plain gather per word, whatever its alignment. Costs 4x
    the chunk, transiently; numpy gathers from unaligned views take a slow path, so the copies pay for themselves.
    """

    def __init__(self, buf: np.ndarray):
        self._buf = buf
        self.size = len(buf)
        self._flat: np.ndarray | None = None
        self._n4 = 0
        if len(buf) <= _LAZY:
            self._materialize()

    def _materialize(self) -> None:
        buf = self._buf
        n4 = (_FRONT + len(buf) + 27) // 4
        flat = _workspace(n4)
        cap = len(flat) // 4
        n = len(buf)
        for k in range(4):  # copy k holds padded bytes k, k + 1, ...: buf lands at FRONT - k, zeros around it
            row = flat[k * cap : k * cap + n4].view(np.uint8)
            row[: _FRONT - k] = 0
            row[_FRONT - k : _FRONT - k + n] = buf
            row[_FRONT - k + n :] = 0
        self._flat = flat
        self._n4 = cap

    # A chunk bigger than _LAZY holds a few big records (a FULL_TENSOR value): their headers and CRC words are read
    # straight from the bytes, and the four copies (4x the chunk: 1 GiB for a 256 MiB record) are only made if a
    # caller needs them for many positions (short records' CRCs, the trace decoder's word gathers).
    @property
    def flat(self) -> np.ndarray:
        if self._flat is None:
            self._materialize()
        return self._flat  # type: ignore[return-value]  # (set by _materialize)

    @property
    def n4(self) -> int:
        if self._flat is None:
            self._materialize()
        return self._n4

    def _bytes_at(self, positions: np.ndarray, width: int) -> np.ndarray:
        """(len(positions), width) bytes from each position, zero outside the buffer (as the copies are padded)."""
        idx = np.asarray(positions, np.int64)[:, None] + np.arange(width)
        inside = (idx >= 0) & (idx < self.size)
        return np.where(inside, self._buf[np.clip(idx, 0, max(self.size - 1, 0))], 0).astype(np.uint8)

    @property
    def lazy(self) -> bool:
        """The copies are not made (yet)."""
        return self._flat is None

    def padded_bytes(self) -> np.ndarray:
        """The original bytes."""
        return self._buf

    def index(self, positions: np.ndarray) -> np.ndarray:
        p = positions + _FRONT
        return (p & 3) * self.n4 + (p >> 2)

    def u32(self, positions: np.ndarray) -> np.ndarray:
        """The little-endian uint32 at each byte position."""
        if self._flat is None and np.size(positions) <= _FEW and self.size:
            word = np.ascontiguousarray(self._bytes_at(np.ravel(positions), 4)).view("<u4")[:, 0]
            return word.astype(np.uint32).reshape(np.shape(positions))
        return self.flat[self.index(positions)]

    def f64(self, positions: np.ndarray) -> np.ndarray:
        """The little-endian float64 at each byte position."""
        if self._flat is None and np.size(positions) <= _FEW and self.size:
            value = np.ascontiguousarray(self._bytes_at(np.ravel(positions), 8)).view("<f8")[:, 0]
            return value.copy().reshape(np.shape(positions))
        i = self.index(positions)
        return (self.flat[i].astype(np.uint64) | (self.flat[i + 1].astype(np.uint64) << np.uint64(32))).view(np.float64)


_INIT_TABLE: list[Any] = []


def _init_terms() -> np.ndarray:
    """_init_term for every length below _LONG, as one array (built on first use, ~10 ms)."""
    if not _INIT_TABLE:
        table = np.zeros(_LONG, np.uint32)
        r = 0xFFFFFFFF
        for n in range(_LONG):  # adv(0xFFFFFFFF, n), one zero byte at a time
            table[n] = r ^ 0xFFFFFFFF
            r = _T8_LIST[r & 0xFF] ^ (r >> 8)
        _INIT_TABLE.append(table)
    return _INIT_TABLE[0]


def zeros_crcs(lengths: np.ndarray) -> np.ndarray:
    """Standard CRC-32C of `lengths[i]` zero bytes each, as uint32, without any buffer of zeros: a table gather below
    _LONG, O(log n) table steps above (record_crc: a fresh zero buffer of a chunk's size cost a page fault a page)."""
    lengths = np.asarray(lengths, np.int64)
    short = lengths < _LONG
    out = _init_terms()[np.where(short, lengths, 0)]
    for i in np.flatnonzero(~short):
        out[i] = _init_term(int(lengths[i]))
    return out


def _raw_padded(words: Words, starts: np.ndarray, lengths: np.ndarray, width: int) -> np.ndarray:
    """Raw CRCs of slices no longer than `width` (a multiple of 4): each slice is read as `width` bytes ending at
    its end, with the bytes before its start masked to zero (leading zeros leave a raw CRC unchanged)."""
    out = np.zeros(len(starts), np.uint32)
    first = words.index(starts + lengths - width)
    for a in range(0, len(starts), _BATCH):
        base = first[a : a + _BATCH]
        lead = width - lengths[a : a + _BATCH]
        masked_steps = int((lead.max() + 3) // 4)
        r = np.zeros(len(base), np.uint32)
        w = np.empty_like(r)
        lo = np.empty_like(r)
        hi = np.empty_like(r)
        idx = np.empty_like(base)
        for j in range(width // 4):
            np.add(base, j, out=idx)
            np.take(words.flat, idx, out=w)
            if j < masked_steps:
                w &= _KEEP_HIGH32[np.clip(lead - 4 * j, 0, 4)]
            np.bitwise_xor(r, w, out=r)
            np.bitwise_and(r, 0xFFFF, out=lo)
            np.right_shift(r, 16, out=hi)
            np.take(_LOW16, lo, out=lo)
            np.take(_HIGH16, hi, out=hi)
            np.bitwise_xor(lo, hi, out=r)
        out[a : a + _BATCH] = r
    return out


def crc32c_many(
    buf: np.ndarray | None, starts: np.ndarray, lengths: np.ndarray, words: Words | None = None
) -> np.ndarray:
    """Standard CRC-32C of each slice buf[starts[i] : starts[i] + lengths[i]] (uint8 buffer), as uint32; `buf`
    may be None when `words` (its word copies) are given."""
    if buf is None and words is None:
        raise ValueError("crc32c_many needs the buffer or its word copies")
    starts = np.asarray(starts, dtype=np.int64)
    lengths = np.asarray(lengths, dtype=np.int64)
    out = np.zeros(len(starts), dtype=np.uint32)
    if len(starts) == 0:
        return out
    if NATIVE is not None:
        native = np.flatnonzero(lengths >= NATIVE_MIN)
        if len(native):
            src = buf if buf is not None else words.padded_bytes()  # type: ignore[union-attr]  # (checked above)
            out[native] = _native_many(src, starts[native], lengths[native])
            rest = np.flatnonzero(lengths < NATIVE_MIN)
            if len(rest):
                out[rest] = crc32c_many(buf, starts[rest], lengths[rest], words)  # all below NATIVE_MIN: numpy
            return out
    long_mask = lengths >= _LONG
    if long_mask.any():
        long_buf = buf if buf is not None else words.padded_bytes()  # type: ignore[union-attr]  # (checked above)
        for i in np.flatnonzero(long_mask):
            n = int(lengths[i])
            out[i] = _raw_long(long_buf, int(starts[i]), n) ^ _init_term(n)
    short = np.flatnonzero(~long_mask)
    if len(short):
        at = starts.copy()
        if words is not None and words.lazy:  # a big chunk's few short records: word copies of their bytes only
            src = words.padded_bytes()
            ends = np.cumsum(lengths[short])
            at[short] = ends - lengths[short]
            words = Words(
                np.concatenate([src[a : a + n] for a, n in zip(starts[short].tolist(), lengths[short].tolist())])
            )
        words = words if words is not None else Words(buf)  # type: ignore[arg-type]  # (one of them is set)
        # buckets of similar length, so padding wastes at most half of each bucket's work
        bucket = np.ceil(np.log2(np.maximum(lengths[short], 8)) * 2).astype(np.int64)
        for b in np.unique(bucket):
            sel = short[bucket == b]
            w = int(((lengths[sel].max() + 3) // 4) * 4)
            raw = _raw_padded(words, at[sel], lengths[sel], w) if w else np.zeros(len(sel), np.uint32)
            out[sel] = raw ^ _init_terms()[lengths[sel]]
    return out


def _native_many(buf: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """CRC-32C of each slice through the native library: one call per slice, from the bytes object the buffer was
    made from when it is one (a chunk read from a file: slicing bytes is the cheapest per call for short records),
    else from the array's own slices (the C extension reads a numpy array without a copy: a 256 MiB record costs
    no copy at all)."""
    assert NATIVE is not None
    value = NATIVE[0]
    base = buf.base
    whole = base if isinstance(base, bytes) and len(base) == buf.nbytes and buf.ndim == 1 else None
    if whole is None:
        return np.array([value(buf[s : s + n]) for s, n in zip(starts.tolist(), lengths.tolist())], np.uint32)
    crcs = [
        value(whole[s : s + n] if n <= _SLICE_MAX else buf[s : s + n])
        for s, n in zip(starts.tolist(), lengths.tolist())
    ]
    return np.array(crcs, np.uint32)


def extend(crc: int, piece: np.ndarray) -> int:
    """The standard CRC-32C of A + piece from `crc`, the CRC of A (0 for nothing yet): a long record checked one
    piece at a time (reader/big_record.py). `piece`: a contiguous uint8 array, passed to the native library without
    a copy; without it, the numpy CRC of the piece is folded in (register after A, advanced over the piece's zero
    bytes, plus the piece's raw CRC)."""
    n = len(piece)
    if NATIVE is not None:
        return NATIVE[1](crc, piece)
    if n == 0:
        return crc
    piece_crc = int(crc32c_many(piece, np.array([0]), np.array([n]))[0])
    register = _advance(crc ^ 0xFFFFFFFF, n) ^ piece_crc ^ _init_term(n)
    return register ^ 0xFFFFFFFF


def crc32c(data: bytes) -> int:
    """Standard CRC-32C of `data`."""
    arr = np.frombuffer(data, dtype=np.uint8)
    return int(crc32c_many(arr, np.array([0]), np.array([len(data)]))[0])


def crc32c_python(data: bytes) -> int:
    """Plain table-driven CRC-32C, for tests and tiny inputs."""
    r = 0xFFFFFFFF
    for b in data:
        r = _T8_LIST[(r ^ b) & 0xFF] ^ (r >> 8)
    return r ^ 0xFFFFFFFF


def mask(crc: Any) -> Any:  # an int, or a uint32 array
    """TFRecord's masked CRC; works on ints and uint32 arrays."""
    if isinstance(crc, np.ndarray):
        c = crc.astype(np.uint32)
        return ((c >> np.uint32(15)) | (c << np.uint32(17))) + np.uint32(_MASK_DELTA)
    crc &= 0xFFFFFFFF
    return (((crc >> 15) | (crc << 17)) + _MASK_DELTA) & 0xFFFFFFFF
