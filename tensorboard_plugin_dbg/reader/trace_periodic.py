"""The periodic shortcut of the trace decoder (reader/trace_fast.py), within a chunk and from one chunk to the next.

A training loop writes the same sequence of traces every step, so record i and record i - T (one step earlier)
usually differ only in their wall time and content vector: the bytes that decide a trace's kind are equal. One
XOR of the records against those one step earlier, masked to those bytes, proves it for many records at once;
the records it proves take their predecessor's kind and content offset, the others are decoded in full.
  * within a chunk: the first step (the template) is decoded, the later steps inherit from it (inherit_periodic);
  * from chunk to chunk: the index reads a file in chunks of a few steps (ingest.CHUNK, STEPS), so decoding
    every template in full put a sixth of all records through the full identification (hashing, the identity
    store, word compares: the largest part of decoding). Chunks follow each other, so the last T records of one
    chunk are one step before the first T of the next: a Carry keeps their bytes and kinds, and the next template
    is proved against them the same way; only what differs is decoded.
A record only ever takes the kind of a record of the same length whose bytes, but for the wall time and the content
vector, are equal to its own at the same offsets: those bytes are what the kind is decoded from, so a mismatch of
any kind (another op, another phase of the step, a damaged chunk in between) only costs a full decode.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def find_period(lens: np.ndarray, tries: int = 16) -> int:
    """Smallest period of the sequence `lens` (0 when none shows). Candidates are the distances between
    occurrences of its rarest value (once per period when the sequence is periodic), each checked in full."""
    if len(lens) < 32:
        return 0
    values, counts = np.unique(lens, return_counts=True)
    rare = values[np.argmin(counts)]
    at = np.flatnonzero(lens == rare)
    for t in (at[1 : tries + 1] - at[0]).tolist():
        if np.array_equal(lens[t:], lens[:-t]):
            return int(t)
    return 0


def periodic_block(starts: np.ndarray, lengths: np.ndarray) -> tuple[int, int]:
    """(period T, records n) of the contiguous stretch [0, n) in which record i has the same length as record
    i - T and lies exactly one cycle of bytes after it; (0, 0) when there is none worth using (n < 2T)."""
    period = find_period(lengths[:8192])
    if not period or len(starts) < 4 * period:
        return 0, 0
    cycle = int(starts[period] - starts[0])
    same = (starts[period:] - starts[:-period] == cycle) & (lengths[period:] == lengths[:-period])
    bad = np.flatnonzero(~same)
    upto = int(bad[0] + period) if len(bad) else len(starts)
    return (period, upto) if upto >= 2 * period else (0, 0)


def paint(lo: np.ndarray, hi: np.ndarray, size: int) -> np.ndarray:
    """uint8 mask of `size` bytes, 0xFF inside the intervals [lo, hi) (clipped to the mask), 0 elsewhere.
    Disjoint intervals (the usual case) are laid out with one np.repeat of uint8 runs; overlapping ones go
    through a difference array (int64 temporaries the size of the mask: several times slower)."""
    lo, hi = np.clip(lo, 0, size), np.clip(hi, 0, size)
    order = np.argsort(lo, kind="stable")
    lo, hi = lo[order], np.maximum(hi[order], lo[order])
    if len(lo) and np.all(hi[:-1] <= lo[1:]):
        runs = np.empty(2 * len(lo) + 1, np.int64)  # gap, interval, gap, interval, ..., gap
        runs[0] = lo[0]
        runs[1:-1:2] = hi - lo
        runs[2:-1:2] = lo[1:] - hi[:-1]
        runs[-1] = size - hi[-1]
        values = np.zeros(len(runs), np.uint8)
        values[1::2] = 0xFF
        return np.repeat(values, runs)
    edges = np.bincount(lo, minlength=size + 1) - np.bincount(hi, minlength=size + 1)
    return np.where(np.cumsum(edges[:size]) > 0, 0xFF, 0).astype(np.uint8)


def identity_mask(
    starts: np.ndarray, ends: np.ndarray, kind: np.ndarray, content: np.ndarray, clen: np.ndarray, base: int, size: int
) -> np.ndarray:
    """Mask of the bytes [base, base + size) that must not change for a record to inherit: for each decoded record
    its wall_time tag and everything after the wall time but its content vector (the identity spans of
    trace_fast, whole after the wall time when there is no content vector: clen -1); every byte of a record not
    decoded (kind -1, CRC included), so that nothing inherits from it."""
    good, bad = kind >= 0, kind < 0
    s, e = starts - base, ends - base
    cut0 = np.where(clen >= 0, content - base, e)  # the content vector is [cut0, cut1)
    cut1 = np.where(clen >= 0, content - base + clen, e)
    lo = np.concatenate([s[bad] - 12, s[good], s[good] + 9, cut1[good]])
    hi = np.concatenate([e[bad] + 4, s[good] + 1, cut0[good], e[good]])
    return paint(lo, hi, size)


def inherit_periodic(
    buf: np.ndarray,
    starts: np.ndarray,
    ends: np.ndarray,
    period: int,
    count: int,
    kind: np.ndarray,
    content: np.ndarray,
    clen: np.ndarray,
    mask: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Records [period, count) whose identity bytes equal those of the record one cycle earlier take its kind
    (and content offset). The comparison is one XOR over the block of full cycles, one more for the partial cycle
    after them (a chunk rarely ends at a step's end); `mask`: the template's identity_mask when already known.
    Returns the records left to decode, and the inheriting records with their donors."""
    base = int(starts[0]) - 12
    cycle = int(starts[period] - starts[0])
    cycles, rest = divmod(count, period)
    block = buf[base : base + cycles * cycle].reshape(cycles, cycle)
    if mask is None or len(mask) != cycle:
        mask = identity_mask(
            starts[:period], ends[:period], kind[:period], content[:period], clen[:period], base, cycle
        )
    diff = np.bitwise_xor(block[1:], block[:-1])
    np.bitwise_and(diff, mask, out=diff)
    rel_starts = (starts[:period] - 12 - base).astype(np.intp)
    changed = np.bitwise_or.reduceat(diff, rel_starts, axis=1) != 0  # (cycles - 1, period)
    if rest:  # the partial cycle: its records up to the last one's CRC, against the same bytes one cycle earlier
        at = base + cycles * cycle
        size = int(ends[count - 1]) + 4 - at
        part = np.bitwise_xor(buf[at : at + size], buf[at - cycle : at - cycle + size])
        np.bitwise_and(part, mask[:size], out=part)
        row = np.ones((1, period), bool)  # records past `count` do not exist: "changed", dropped below
        row[0, :rest] = np.bitwise_or.reduceat(part, rel_starts[:rest]) != 0
        changed = np.concatenate([changed, row])
    if not changed.reshape(-1)[: count - period].any():  # the usual case: every step as the one before it
        return _inherit_all(starts, period, count, kind, content, clen)
    rows = len(changed) + 1
    src = np.zeros((rows, period), np.int64)
    src[0] = np.arange(period)
    index = np.arange(rows * period).reshape(rows, period)
    src[1:] = np.where(changed, index[1:], 0)
    src = np.maximum.accumulate(src, axis=0)  # each record inherits from the latest re-decoded one above it
    inherit = index[1:][~changed]
    donor = src[1:][~changed]
    # a donor in a later cycle is itself decoded below; inherit from cycle-0 donors now, the rest after
    kind[inherit] = np.where(donor < period, kind[donor], -1)
    content[inherit] = np.where(donor < period, content[donor] - starts[donor] + starts[inherit], 0)
    clen[inherit] = np.where(donor < period, clen[donor], -1)
    redo = index[1:][changed]
    return redo[redo < count], inherit, donor


def _inherit_all(
    starts: np.ndarray, period: int, count: int, kind: np.ndarray, content: np.ndarray, clen: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """inherit_periodic's answer when no record of [period, count) changed: each takes the kind, content offset
    and length of its record in the first cycle (no per-cycle donor table to build)."""
    inherit = np.arange(period, count)
    donor = inherit % period
    kind[inherit], clen[inherit] = kind[donor], clen[donor]
    content[inherit] = content[donor] - starts[donor] + starts[inherit]
    return np.zeros(0, np.int64), inherit, donor


class Carry:
    """The last step of a file's chunk decoded last (index/state.FileState.carry): its records' bytes (header to
    CRC), where each starts in them, their lengths, fast-path kinds (-1: not identified), content offsets (from
    the record's start), content lengths, and their identity_mask. Empty until a chunk shows a period."""

    def __init__(self) -> None:
        self.data: np.ndarray | None = None
        # all set together with `data` (see carry()); Any: numpy arrays once set
        self.rel: Any = None
        self.lengths: Any = None
        self.kind: Any = None
        self.content: Any = None
        self.clen: Any = None
        self.mask: Any = None
        self.layout: Any = None  # what the decoder derived from the last chunk's kinds alone (trace_fast._layout)
        self.last_block: Any = None  # the last chunk's record places, lengths and periodic_block (block())

    def block(self, starts: np.ndarray, lengths: np.ndarray) -> tuple[int, int]:
        """periodic_block(starts, lengths), kept for the next chunk whose records lie and measure the same (chunks
        of whole steps: index/ingest.chunk_bytes), which then costs two compares instead of a sort."""
        rel = starts - starts[0] if len(starts) else starts
        last = self.last_block
        if last is not None and np.array_equal(lengths, last[1]) and np.array_equal(rel, last[0]):
            return last[2]
        got = periodic_block(starts, lengths)
        self.last_block = (rel, lengths.copy(), got)
        return got

    def inherit(
        self,
        buf: np.ndarray,
        starts: np.ndarray,
        lengths: np.ndarray,
        period: int,
        kind: np.ndarray,
        content: np.ndarray,
        clen: np.ndarray,
    ) -> np.ndarray:
        """Gives the chunk's first `period` records the kind, content offset and length of the carried record in
        the same place when their identity bytes are equal; returns the records among them left to decode."""
        everything = np.arange(period)
        if self.data is None or self.rel is None or len(self.rel) != period:
            return everything
        head = int(starts[0]) - 12
        if not (
            np.array_equal(starts[:period] - 12 - head, self.rel) and np.array_equal(lengths[:period], self.lengths)
        ):
            return everything  # another step layout, or not the same phase of the step
        diff = np.bitwise_xor(buf[head : head + len(self.data)], self.data)
        np.bitwise_and(diff, self.mask, out=diff)
        same = (np.bitwise_or.reduceat(diff, self.rel) == 0) & (self.kind >= 0)
        got = np.flatnonzero(same)
        kind[got], clen[got] = self.kind[got], self.clen[got]
        content[got] = starts[got] + self.content[got]
        return np.flatnonzero(~same)

    def keep(
        self,
        buf: np.ndarray,
        starts: np.ndarray,
        ends: np.ndarray,
        period: int,
        kind: np.ndarray,
        content: np.ndarray,
        clen: np.ndarray,
    ) -> None:
        """Carries the chunk's last `period` records (nothing when the chunk showed no period)."""
        if not period or len(starts) < period:
            self.data = None
            return
        s, e = starts[-period:], ends[-period:]
        head = int(s[0]) - 12
        before = (self.rel, self.lengths, self.kind, self.clen, self.content) if self.data is not None else None
        self.data = buf[head : int(e[-1]) + 4].copy()
        self.rel = (s - 12 - head).astype(np.intp)
        self.lengths = e - s
        self.kind, self.clen = kind[-period:].copy(), clen[-period:].copy()
        self.content = content[-period:] - s
        now = (self.rel, self.lengths, self.kind, self.clen, self.content)
        # the mask depends on these alone: the same step layout as the chunk before (the usual case) keeps its mask
        if before is None or self.mask is None or not all(map(np.array_equal, before, now)):
            self.mask = identity_mask(s, e, self.kind, content[-period:], self.clen, head, len(self.data))
