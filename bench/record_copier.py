"""Byte-wise replication of graph-execution-trace records, vectorized with numpy.

Why: TF's DebugEventsWriter, driven from Python, writes ~65 k traces/s here, so a 10 M-trace dump would take
minutes of pure proto building. Instead one *step* (one trace per traced op, in order) is serialized once with the
protobuf classes as a template; every later step is a copy of it in which only the varying bytes are replaced:
`wall_time` (8 bytes) and the six FULL_HEALTH counts (48 bytes of `tensor_content`). Record lengths never change,
so the TFRecord length header and its CRC are copied as they are; the data CRC-32C is recomputed per record.

CRC trick: CRC-32C is affine over GF(2), so for two messages of equal length crc(a) = crc(b) XOR L(a XOR b), where
L depends only on the differing bytes and their distance from the message end. With b = the template with the
varying bytes zeroed, crc(record) = crc(b) XOR (XOR over the varying bytes of TABLE[distance][byte]) — 56 table
look-ups per record, vectorized across a whole chunk.
"""

from __future__ import annotations

import os
import struct
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # the repo root, for the package
from tensorboard_plugin_dbg.reader import crc32c as _crc

# One CRC-32C implementation serves the reader and this generator: the byte table, the plain CRC and TFRecord's
# mask come from the package (tensorboard_plugin_dbg/reader/crc32c.py): the CRCs of the benchmark dumps are made
# by the code that checks them when the index reads them back, so the two cannot drift apart.
BYTE_TABLE = _crc.T8  # CRC-32C (Castagnoli, reflected) table: the register after one byte
crc32c = _crc.crc32c  # plain CRC-32C of bytes (templates and tests; the bulk path is StepTemplate.fill)
masked = _crc.mask  # TFRecord's masked CRC; works on ints and on uint32 arrays


def distance_table(max_distance: int) -> np.ndarray:
    """TABLE[d][v]: the linear CRC contribution of byte v followed by d zero bytes (state and xor-out excluded)."""
    out = np.empty((max_distance + 1, 256), dtype=np.uint32)
    state = BYTE_TABLE.copy()  # one byte v fed into a zero state
    for d in range(max_distance + 1):
        out[d] = state
        state = BYTE_TABLE[state & 0xFF] ^ (state >> np.uint32(8))
    return out


def frame(data: bytes) -> bytes:
    """One TFRecord: length, masked CRC of the length, data, masked CRC of the data."""
    header = struct.pack("<Q", len(data))
    return header + struct.pack("<I", masked(crc32c(header))) + data + struct.pack("<I", masked(crc32c(data)))


class StepTemplate:
    """The framed bytes of one step plus where, in it, each record's varying bytes are.

    `records` is one serialized DebugEvent per traced op whose wall_time field holds WALL_SENTINEL and whose
    tensor_content holds the 11 doubles of CONTENT_SENTINEL with the 6 counts (elements 5..10) varying.
    """

    def __init__(self, records: list[bytes], wall_sentinel: bytes, count_sentinel: bytes):
        parts, wall_pos, count_pos, crc_pos, base_crc, dist_wall, dist_count = [], [], [], [], [], [], []
        offset = 0
        for data in records:
            w = data.find(wall_sentinel)
            c = data.find(count_sentinel)
            assert w >= 0 and c >= 0 and data.find(wall_sentinel, w + 1) < 0, "sentinel not unique"
            zeroed = bytearray(data)
            zeroed[w : w + 8] = bytes(8)
            zeroed[c : c + 48] = bytes(48)
            rec = frame(bytes(zeroed))
            parts.append(rec)
            wall_pos.append(offset + 12 + w)
            count_pos.append(offset + 12 + c)
            crc_pos.append(offset + 12 + len(data))
            base_crc.append(crc32c(bytes(zeroed)))
            dist_wall.append(len(data) - 1 - (w + np.arange(8)))
            dist_count.append(len(data) - 1 - (c + np.arange(48)))
            offset += len(rec)
        self.bytes = np.frombuffer(b"".join(parts), dtype=np.uint8)
        self.record_ends = np.cumsum([len(p) for p in parts])
        self.wall_cols = (np.array(wall_pos)[:, None] + np.arange(8)).ravel()
        self.count_cols = (np.array(count_pos)[:, None] + np.arange(48)).ravel()
        self.crc_cols = (np.array(crc_pos)[:, None] + np.arange(4)).ravel()
        self.base_crc = np.array(base_crc, dtype=np.uint32)
        dist = np.concatenate([np.array(dist_wall), np.array(dist_count)], axis=1)  # (ops, 56)
        self.table = distance_table(int(dist.max())).ravel()
        self.flat_dist = (dist * 256).astype(np.int64)  # row offsets into the flattened table

    def fill(self, wall_times: np.ndarray, counts: np.ndarray) -> np.ndarray:
        """Framed bytes of `steps` steps: wall_times (steps, ops) float64, counts (steps, ops, 6) float64."""
        steps, n_ops = wall_times.shape
        out = np.tile(self.bytes, (steps, 1))
        varying = np.concatenate(
            [
                wall_times.astype("<f8").reshape(steps, n_ops, 1).view(np.uint8),
                counts.astype("<f8").reshape(steps, n_ops, 6).view(np.uint8).reshape(steps, n_ops, 48),
            ],
            axis=2,
        )  # (steps, ops, 56) bytes
        out[:, self.wall_cols] = varying[:, :, :8].reshape(steps, -1)
        out[:, self.count_cols] = varying[:, :, 8:].reshape(steps, -1)
        crc = np.broadcast_to(self.base_crc, (steps, n_ops)).copy()
        for k in range(56):
            crc ^= self.table[self.flat_dist[:, k][None, :] + varying[:, :, k]]
        out[:, self.crc_cols] = masked(crc).astype("<u4").view(np.uint8).reshape(steps, n_ops * 4)
        return out.reshape(-1)
