"""TFRecord framing: find the records in a byte range of a growing file, check both CRCs, resync past damage.

Layout per record: uint64 LE length, uint32 LE masked CRC-32C of those 8 bytes, `length` bytes, uint32 LE masked
CRC-32C of the data. The walk itself is a tight Python loop (each record's position depends on the previous
length); both CRC checks are vectorized afterwards. Damage never raises: a bad length CRC or an impossible length
makes the scanner search forward for the next offset whose 12-byte header checks out (vectorized over a window),
a bad data CRC drops just that record. A record cut by the end of the bytes read is left for the next pass.
"""

from __future__ import annotations

import dataclasses
import struct

import numpy as np

from . import crc32c, record_crc
from .trace_periodic import find_period

MAX_RECORD = 1 << 30  # no tfdbg2 record comes close; a longer length is treated as damage
_U64 = struct.Struct("<Q")
_SYNC_WINDOW = 1 << 20
_WALK = 4096  # records walked one by one before trying to predict the rest


@dataclasses.dataclass
class Damage:
    offset: int  # absolute file offset of the damaged record (or of the garbage that starts there)
    reason: str


@dataclasses.dataclass
class Scan:
    """Records found in buf (positions relative to buf, whose first byte is at file offset `base`)."""

    base: int
    buf: np.ndarray  # uint8
    starts: np.ndarray  # int64 payload starts (relative to buf)
    lengths: np.ndarray  # int64 payload lengths
    next_offset: int  # absolute offset to continue from on the next pass
    resyncing: bool  # True when next_offset is not a known record boundary: search for a header there first
    damages: list[Damage]
    needed: int = 0  # >0 when the next record is longer than buf: bytes to read at next_offset to get it whole
    words: crc32c.Words | None = None  # the aligned word copies of buf, reused by the decoders

    @property
    def tail(self) -> np.ndarray | None:
        """Lengths of the last records found (the `hint` for scanning the bytes that follow), or None when the
        scan did not end on a known record boundary."""
        return None if self.resyncing or self.damages else self.lengths[-_WALK:].copy()


def _header_ok(words: crc32c.Words, positions: np.ndarray) -> np.ndarray:
    """Whether the 8-byte length at each position matches the masked CRC after it (vectorized)."""
    crcs = crc32c.crc32c_many(None, positions, np.full(len(positions), 8, dtype=np.int64), words)
    return crc32c.mask(crcs) == words.u32(positions + 8)


def _find_header(buf: np.ndarray, words: crc32c.Words, begin: int) -> int:
    """First position >= begin holding a header whose CRC checks and whose length is possible; -1 if none."""
    n = len(buf)
    pos = begin
    while pos + 12 <= n:
        stop = min(n - 12 + 1, pos + _SYNC_WINDOW)
        cand = np.arange(pos, stop, dtype=np.int64)
        ok = _header_ok(words, cand)
        for i in np.flatnonzero(ok):
            p = int(cand[i])
            if _U64.unpack_from(buf.data, p)[0] <= MAX_RECORD:
                return p
        pos = stop
    return -1


def _walk_heads(
    mv: memoryview, words: crc32c.Words, pos: int, n: int, hint: np.ndarray | None = None
) -> tuple[np.ndarray, int, str, int]:
    """Header positions from `pos` on, until the bytes end or a length is impossible.

    Returns (positions, next position, 'end' | 'partial' | 'impossible', bytes needed for a partial record).
    Alternates a plain walk of _WALK records with speculation: trace files repeat the same sequence of record
    lengths every training step, so once a period shows, the positions of the rest of the buffer are predicted
    and checked against the lengths actually there, all at once; the walk resumes at the first mismatch.
    `hint`, the lengths of the records just before `pos` (the previous chunk's tail), lets the speculation start
    at once instead of after a walk: with small chunks that walk was a large share of the time."""
    unpack = _U64.unpack_from
    parts = []
    p = pos
    walk = _WALK
    if hint is not None and len(hint) >= 32:
        predicted = _speculate(words, hint, p, n)
        if len(predicted):
            parts.append(predicted)
            last = int(predicted[-1])
            p = last + 16 + unpack(mv, last)[0]
    while True:
        heads: list[int] = []
        lens: list[int] = []
        stop, needed = "end", 0
        while p + 12 <= n and len(heads) < walk:
            length = unpack(mv, p)[0]
            if length > MAX_RECORD:
                stop = "impossible"
                break
            end = p + 16 + length
            if end > n:
                stop, needed = "partial", 16 + length
                break
            heads.append(p)
            lens.append(length)
            p = end
        parts.append(np.array(heads, dtype=np.int64))
        if stop != "end" or len(heads) < walk:
            return np.concatenate(parts), p, stop, needed
        predicted = _speculate(words, np.array(lens, dtype=np.int64), p, n)
        if len(predicted):
            parts.append(predicted)
            last = int(predicted[-1])
            p = last + 16 + unpack(mv, last)[0]
        else:
            walk = min(walk * 2, 1 << 16)  # no period yet: look at a longer stretch next time


def _speculate(words: crc32c.Words, lens: np.ndarray, p: int, n: int) -> np.ndarray:
    """Verified header positions from p on, predicted from the period of `lens` (empty when none)."""
    period = find_period(lens)
    if not period:
        return np.zeros(0, np.int64)
    pattern = lens[-period:]
    steps = pattern + 16
    cycle = int(steps.sum())
    cycles = (n - p) // cycle + 1
    offsets = np.concatenate([[0], np.cumsum(steps)[:-1]])
    pos = (p + np.arange(cycles, dtype=np.int64)[:, None] * cycle + offsets[None, :]).reshape(-1)
    expect = np.tile(pattern, cycles)
    fits = pos + 16 + expect <= n
    pos, expect = pos[fits], expect[fits]
    actual = words.u32(pos).astype(np.int64) | (words.u32(pos + 4).astype(np.int64) << 32)
    bad = np.flatnonzero(actual != expect)
    return pos[: bad[0]] if len(bad) else pos


def scan(buf: np.ndarray, base: int, resyncing: bool = False, hint: np.ndarray | None = None) -> Scan:
    """Finds every intact record in `buf` (bytes of a file from offset `base`). `hint`: Scan.tail of the scan of
    the bytes just before (only a speed-up: every position it predicts is checked)."""
    n = len(buf)
    damages: list[Damage] = []
    starts: list[np.ndarray] = []
    lengths: list[np.ndarray] = []
    pos = 0
    needed = 0
    mv = buf.data  # a memoryview of the bytes
    words = crc32c.Words(buf)
    if resyncing:
        found = _find_header(buf, words, 0)
        if found < 0:
            return Scan(
                base, buf, np.zeros(0, np.int64), np.zeros(0, np.int64), base + max(0, n - 11), True, [], words=words
            )
        pos = found
    while True:
        hp, p, stop_reason, needed = _walk_heads(mv, words, pos, n, None if resyncing else hint)
        hint = None
        bad_at = len(hp)
        # every CRC of the records found in one native pass; one by one only when that fails or cannot tell
        intact = record_crc.records_intact(buf, hp + 12, _lengths(words, hp), words) if len(hp) else None
        if len(hp) and not intact:
            ok = _header_ok(words, hp)
            if not ok.all():
                bad_at = int(np.argmin(ok))
        if (
            bad_at < len(hp)
            or stop_reason == "impossible"
            or (stop_reason == "partial" and not _header_ok(words, np.array([p], dtype=np.int64))[0])
        ):
            good = hp[:bad_at]
            bad_pos = int(hp[bad_at]) if bad_at < len(hp) else p
            starts.append(good + 12)
            lengths.append(_lengths(words, good))
            reason = (
                "impossible record length"
                if stop_reason == "impossible" and bad_at == len(hp)
                else "length CRC mismatch"
            )
            damages.append(Damage(base + bad_pos, reason))
            needed = 0
            found = _find_header(buf, words, bad_pos + 1)
            if found < 0:
                pos = max(bad_pos + 1, n - 11)
                return _finish(buf, words, base, starts, lengths, pos, True, damages, 0)
            pos = found
            continue
        if len(hp):
            starts.append(hp + 12)
            lengths.append(_lengths(words, hp))
        return _finish(buf, words, base, starts, lengths, p, False, damages, needed, checked=bool(intact))


def _lengths(words: crc32c.Words, heads: np.ndarray) -> np.ndarray:
    return words.u32(heads).astype(np.int64) | (words.u32(heads + 4).astype(np.int64) << 32)


def _finish(
    buf: np.ndarray,
    words: crc32c.Words,
    base: int,
    starts: list[np.ndarray],
    lengths: list[np.ndarray],
    pos: int,
    resyncing: bool,
    damages: list[Damage],
    needed: int,
    checked: bool = False,
) -> Scan:
    """The Scan of the records found; `checked`: their data CRCs are known to check (record_crc)."""
    s = np.concatenate(starts) if starts else np.zeros(0, np.int64)
    ln = np.concatenate(lengths) if lengths else np.zeros(0, np.int64)
    if len(s) and not checked:
        crcs = crc32c.mask(crc32c.crc32c_many(buf, s, ln, words))
        stored = words.u32(s + ln)
        bad = crcs != stored
        if bad.any():
            for i in np.flatnonzero(bad):
                damages.append(Damage(base + int(s[i]) - 12, "data CRC mismatch"))
            s, ln = s[~bad], ln[~bad]
    damages.sort(key=lambda d: d.offset)
    return Scan(base, buf, s, ln, base + pos, resyncing, damages, needed, words)


def cycle_bytes(hint: np.ndarray | None) -> int:
    """Bytes of one period of the record lengths in `hint` (a Scan.tail): one training step of a trace file, whose
    records repeat every step; 0 when no period shows."""
    if hint is None:
        return 0
    period = find_period(hint)
    return int((hint[-period:] + 16).sum()) if period else 0


def frame(payload: bytes) -> bytes:
    """One framed record (for tests and generators)."""
    head = _U64.pack(len(payload))
    return (
        head
        + struct.pack("<I", crc32c.mask(crc32c.crc32c(head)))
        + payload
        + struct.pack("<I", crc32c.mask(crc32c.crc32c(payload)))
    )
