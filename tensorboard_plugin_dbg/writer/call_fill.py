"""A compiled function's graph execution traces for several calls at once: their wall times, counts and CRCs written
into copies of the records laid out at trace time (trace_batch.py), touching only the bytes that change.

The template holds zeros where a call's wall time and counts go, so a byte that stays zero needs neither a write nor a
CRC patch (crc_patch.py: CRC-32C is affine, a zero byte adds nothing). Two facts make most of them stay zero:

- a count below 2**21 is a float64 whose four low bytes are zero (a tensor's elements: nearly always);
- a count column that is zero in every record of the calls (a healthy step's NaN and infinity counts; in
  CONCISE_HEALTH and CURT_HEALTH, every column) is zero everywhere.

So a healthy FULL_HEALTH call changes 12 count bytes a record (neg, zero, pos: their high halves) instead of 48, and
its CRCs are patched at those and at the wall time. The wall time is the same in every record of a call: its
contribution to each record's CRC is a linear map of its 64 bits (one row of `_wall_bits` per record), so a call
XORs the rows of its set bits instead of looking up 8 bytes a record in tables of as many distances (the table
memory the patch read was ~90 KiB, which on a busy two-core host competes with the training step's for the caches).
The count bytes of every record lie at the same distance from its end (the device name follows them), so their
tables are few. Measured on bench/jax_overhead.py's conv step (61 traces a call), thread CPU: a pass of 2 calls
60 -> 43 us, of 4 70 -> 54 us in a hot loop; beside the running step 43 -> 34-37 us a call (the writer thread's
whole work 124-128 -> 107-112 us a step).
"""

from __future__ import annotations

import numpy as np

from ..reader import crc32c
from .crc_patch import distance_tables

_HIGH = np.arange(4, 8)  # the high half of a little-endian float64


class CallFill:
    """Fills calls' records laid out like `template` (records at `starts`, payloads `lengths` long) at `wall`
    (records x 8) and `counts` (records x columns*8: float64 counts, column after column), then CRCs them at `crc`
    (records x 4)."""

    def __init__(
        self,
        template: np.ndarray,
        starts: np.ndarray,
        lengths: np.ndarray,
        wall: np.ndarray,
        counts: np.ndarray,
        crc: np.ndarray,
    ) -> None:
        self.template, self._wall, self._counts, self._crc = template, wall, counts, crc
        self._ends = (starts + lengths)[:, None]
        self._base = crc32c.crc32c_many(template, starts, lengths)
        self.records = len(starts)
        # the CRC contribution of each bit of the wall time, per record: byte j's bit k at column 8 * j + k
        distance = self._ends - wall
        unique, inverse = np.unique(distance, return_inverse=True)
        tables = distance_tables(unique)  # unique distances x 256
        bits = tables[:, 1 << np.arange(8)]  # unique distances x 8 (one table entry per single-bit byte)
        self._wall_bits = bits[inverse.reshape(distance.shape)].reshape(self.records, 64)
        self._variants: dict[tuple[tuple[bool, ...], bool], _Counts] = {}

    def fill(self, walls: np.ndarray, counts: np.ndarray | None) -> np.ndarray:
        """The calls' records (calls x template length, uint8): `walls` (calls,) float64, `counts` (calls x records x
        columns) int64 or None."""
        calls = len(walls)
        buf = np.tile(self.template, (calls, 1))
        wall_bytes = np.ascontiguousarray(walls, "<f8").view(np.uint8).reshape(calls, 8)
        buf[:, self._wall] = wall_bytes[:, None, :]
        set_bits = np.unpackbits(wall_bytes, axis=1, bitorder="little")  # calls x 64
        crcs = self._base ^ np.bitwise_xor.reduce(self._wall_bits * set_bits[:, None, :], axis=-1)
        if counts is not None and counts.size:
            values = np.ascontiguousarray(counts, "<f8")
            columns = tuple(bool(c) for c in np.asarray(values.any(axis=(0, 1))).tolist())
            if not any(columns):  # the template's zeros already
                return self._framed(buf, crcs)
            high = not values.view("<u4")[..., ::2].any()  # every count below 2**21: its low half is zeros
            variant = self._variants.get((columns, high))
            if variant is None:
                variant = self._variants[(columns, high)] = _Counts(self, columns, high)
            changed = values.view(np.uint8).reshape(calls, self.records, -1)[..., variant.bytes]
            buf[:, variant.positions] = changed
            crcs ^= variant.contributions(changed)
        return self._framed(buf, crcs)

    def _framed(self, buf: np.ndarray, crcs: np.ndarray) -> np.ndarray:
        masked = np.ascontiguousarray(crc32c.mask(crcs), "<u4")
        buf[:, self._crc] = masked.view(np.uint8).reshape(len(buf), self.records, 4)
        return buf


class _Counts:
    """Where the count bytes that may be nonzero go (the columns with a nonzero count, their high halves only when
    `high`) and what each adds to its record's CRC."""

    def __init__(self, fill: CallFill, columns: tuple[bool, ...], high: bool) -> None:
        halves = _HIGH if high else np.arange(8)
        self.bytes = np.concatenate([8 * c + halves for c, kept in enumerate(columns) if kept]).astype(np.int64)
        self.positions = fill._counts[:, self.bytes]  # records x changed bytes
        distance = fill._ends - self.positions
        unique, inverse = np.unique(distance, return_inverse=True)  # every record's counts end alike: few tables
        self._tables = distance_tables(unique).reshape(-1)
        self._rows = inverse.reshape(distance.shape).astype(np.int64) * 256

    def contributions(self, changed: np.ndarray) -> np.ndarray:
        """What the changed bytes (calls x records x bytes) add to each record's CRC (calls x records)."""
        return np.bitwise_xor.reduce(self._tables[self._rows + changed], axis=-1)
