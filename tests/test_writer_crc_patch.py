"""writer/crc_patch.py: CRC-32C is affine, so two records of one length that differ in one byte differ in CRC by
that byte's table entry at its distance from the record's end — what writer/call_fill.py patches a template's CRCs
with. Checked against CRCs computed whole (crc32c_many, native and numpy paths), for records of different lengths
and bytes at different distances from their ends."""

from __future__ import annotations

import numpy as np
import pytest

from tensorboard_plugin_dbg.reader import crc32c
from tensorboard_plugin_dbg.writer.crc_patch import distance_tables


@pytest.mark.parametrize("native", [True, False])
def test_a_changed_byte_changes_the_crc_by_its_table_entry_at_its_distance(monkeypatch, native):
    if not native:
        monkeypatch.setattr(crc32c, "NATIVE", None)
    rng = np.random.default_rng(41)
    for length in (1, 12, 57, 300, 1000):
        record = rng.integers(0, 256, length, dtype=np.uint8)
        # the first, one in the middle and the last byte (distances length .. 1)
        positions = sorted({0, length // 2, length - 1})
        distances = np.array(sorted(length - p for p in positions))
        tables = distance_tables(distances)
        whole = int(crc32c.crc32c_many(record, np.array([0]), np.array([length]))[0])
        for p in positions:
            changed = record.copy()
            changed[p] ^= rng.integers(1, 256, dtype=np.uint8)
            want = int(crc32c.crc32c_many(changed, np.array([0]), np.array([length]))[0])
            row = int(np.searchsorted(distances, length - p))
            assert want != whole
            assert whole ^ int(tables[row, record[p] ^ changed[p]]) == want
