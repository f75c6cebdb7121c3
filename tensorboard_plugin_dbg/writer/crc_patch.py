"""CRC-32C of records laid out once whose bytes change from call to call at known places only (trace_batch.py).

CRC-32C is affine over GF(2): for two messages of one length, crc(a) ^ crc(b) depends only on a ^ b, each byte of
it by its value and its distance to the message's end. So a record's CRC is its template's (zeros where bytes
change), computed once, XORed with one table entry per changing byte (writer/call_fill.py): a call's CRCs are one
gather and one XOR reduction, where a native call per record (with a numpy slice each) cost a jitted step's writer
thread ~40 % of its time.
"""

from __future__ import annotations

import numpy as np

_POLY = 0x82F63B78  # CRC-32C, reflected


def _byte_table() -> np.ndarray:
    """The one-byte table of the reflected CRC-32C register (no initial value)."""
    table = np.arange(256, dtype=np.uint32)
    for _ in range(8):
        table = np.where(table & 1, (table >> 1) ^ np.uint32(_POLY), table >> 1).astype(np.uint32)
    return table


def distance_tables(distances: np.ndarray) -> np.ndarray:
    """For each distance d (bytes from a changing byte to the end of its message, d >= 1, ascending): what a byte
    of each value contributes to the CRC there (len(distances) x 256 uint32)."""
    one = _byte_table()
    out = np.zeros((len(distances), 256), np.uint32)
    row = one.copy()  # the contribution at distance 1: the byte is the last one
    at = 1
    for i, d in enumerate(distances.tolist()):
        while at < d:  # one more zero byte after it
            row = one[row & np.uint32(0xFF)] ^ (row >> np.uint32(8))
            at += 1
        out[i] = row
    return out
