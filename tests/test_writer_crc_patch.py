"""writer/crc_patch.py: the CRCs of records laid out once, patched where their bytes change, equal the CRCs of the
changed bytes computed whole (crc32c_many, native and numpy paths), for records of different lengths and changing
bytes at different distances from their ends."""

from __future__ import annotations

import numpy as np
import pytest

from tensorboard_plugin_dbg.reader import crc32c
from tensorboard_plugin_dbg.writer.crc_patch import CrcPatch


@pytest.mark.parametrize("native", [True, False])
def test_patched_crcs_equal_the_crcs_of_the_changed_records(monkeypatch, native):
    if not native:
        monkeypatch.setattr(crc32c, "NATIVE", None)
    rng = np.random.default_rng(41)
    lengths = np.array([12, 300, 57, 1, 1000, 64])
    starts = np.concatenate(([3], 3 + np.cumsum(lengths + 5)[:-1]))  # gaps between records, as framing leaves
    template = rng.integers(0, 256, int(starts[-1] + lengths[-1] + 7), dtype=np.uint8)
    # changing bytes: the first, one in the middle and the last of each record (distances 1 .. length)
    positions = np.stack([starts, starts + lengths // 2, starts + lengths - 1], 1)
    template[positions] = 0
    patch = CrcPatch(template, starts, lengths, positions)
    for _ in range(5):
        buf = template.copy()
        buf[positions] = rng.integers(0, 256, positions.shape, dtype=np.uint8)
        want = crc32c.crc32c_many(buf, starts, lengths)
        assert not np.array_equal(want, crc32c.crc32c_many(template, starts, lengths))
        np.testing.assert_array_equal(patch(buf), want)
