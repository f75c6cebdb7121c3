"""Every CRC of a run of back-to-back TFRecord records checked in one native pass instead of two calls per record.

At 1 M trace records, checking each record's length CRC (vectorized numpy over the 8-byte headers) and data CRC
(one google-crc32c call per record) was about half of the indexing time (issue #40 item 2, cProfile). Both CRCs
are CRC-32C, which is linear over GF(2) once its initial value and final xor are taken out ("raw" CRC): for a
reflected CRC, a message followed by its own raw CRC (4 bytes, little-endian) has raw CRC 0, and the raw CRC of a
concatenation of such segments is 0 too. A stored CRC unmasked and xor'ed with what the initial value and final
xor add for its length (the standard CRC of that many zero bytes) is the raw CRC of what it covers. So: copy the
records' bytes, put that in place of each stored CRC (header and data), and one native CRC of the copy tells
whether every record checks: its raw CRC is 0, i.e. its standard CRC equals that of as many zero bytes.

A damaged record makes the whole check fail (a random corruption cancels out with probability 2^-32, the same
odds as one record's own CRC missing it); the caller then checks the records one by one, as before, to find it.
"""

from __future__ import annotations

import numpy as np

from . import crc32c

_MASK_DELTA = 0xA282EAD8  # TFRecord's CRC mask (crc32c.mask)
_HEAD = 12  # uint64 length + its masked CRC
_MIN_RECORDS = 64  # fewer records: one call each is as cheap


def _unmask(masked: np.ndarray) -> np.ndarray:
    rot = masked.astype(np.uint32) - np.uint32(_MASK_DELTA)
    return (rot >> np.uint32(17)) | (rot << np.uint32(15))


def records_intact(
    buf: np.ndarray, starts: np.ndarray, lengths: np.ndarray, words: crc32c.Words | None = None
) -> bool | None:
    """Whether the records whose payloads are buf[starts[i] : starts[i] + lengths[i]] all check (both CRCs): True,
    or False when at least one does not. None when this pass cannot tell (no native CRC library, too few records,
    records not back to back or running past `buf`): check them one by one. `words`: the buffer's word copies
    (crc32c.Words), when the caller has them: the stored CRCs are then one gather each."""
    if crc32c.NATIVE is None or len(starts) < _MIN_RECORDS:
        return None
    starts = np.asarray(starts, np.int64)
    lengths = np.asarray(lengths, np.int64)
    ends = starts + lengths + 4
    lo, hi = int(starts[0]) - _HEAD, int(ends[-1])
    if lo < 0 or hi > len(buf) or (starts[1:] - _HEAD != ends[:-1]).any():
        return None
    fields = np.concatenate([starts - 4, starts + lengths])  # the length CRCs, then the data CRCs
    if words is not None and words.size == len(buf):
        stored = words.u32(fields)
    else:
        stored = np.ascontiguousarray(buf[fields[:, None] + np.arange(4)]).view("<u4").ravel()
    # what the standard init and xorout add to a raw CRC: that of as many zero bytes (8 for a length field)
    covered = crc32c.zeros_crcs(np.concatenate([np.full(len(starts), 8, np.int64), lengths]))
    raw = (_unmask(stored) ^ covered).astype("<u4")
    region = np.array(buf[lo:hi], np.uint8)  # a copy: the stored CRCs are replaced in it, a byte plane at a time
    at = fields - lo
    for k in range(4):
        region[at + k] = (raw >> np.uint32(8 * k)).astype(np.uint8)
    return bool(crc32c.NATIVE[0](region) == int(crc32c.zeros_crcs(np.array([hi - lo]))[0]))
