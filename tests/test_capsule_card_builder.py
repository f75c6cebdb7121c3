"""The one capsule card builder (#40 item 3) reads arrays where they lie, block by block: the per-sample table merged
block by block is the table a sort of the whole batch gives (any block size, samples wider than a block, empty and
scalar arrays), and members decoded into memory (compressed: a capsule from someone else) are bounded per file, not
per member."""

from __future__ import annotations

import io
import json
import os
import zipfile

import numpy as np
import pytest

from tensorboard_plugin_dbg.analysis import capsule_samples
from tensorboard_plugin_dbg.capsule import writer
from tensorboard_plugin_dbg.reader import capsule_arrays, capsule_files

_MANIFEST = {"step": 1, "trigger": {"kind": "loss", "name": "loss"}, "batch_structure": {"kind": "array", "name": "a"}}


def _whole_table(batch: dict[str, np.ndarray], shown: int) -> tuple[list[dict], int]:
    """The table as d3721ef built it: every sample's columns, one lexsort."""
    names = list(batch)
    columns = [capsule_files.per_sample_columns(batch[n]) for n in names]
    bad = np.concatenate([c[0] for c in columns])
    peak = np.concatenate([c[1] for c in columns])
    which = np.concatenate([np.full(len(c[0]), i) for i, c in enumerate(columns)])
    sample = np.concatenate([np.arange(len(c[0])) for c in columns])
    order = np.lexsort((sample, which, -peak, -bad))[:shown]
    rows = [
        {"array": names[which[i]], "sample": int(sample[i]), "nonfinite": int(bad[i]), "max_abs": float(peak[i])}
        for i in order
    ]
    return rows, len(bad)


def _batch() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(7)
    narrow = rng.normal(size=(53, 3)).astype(np.float32)
    narrow[[4, 40], [1, 2]] = [np.nan, -np.inf]
    wide = rng.normal(size=(5, 20))  # wider than the blocks below: each sample read in pieces
    wide[3, 17] = np.nan
    wide[1, 19] = 1e9
    ties = np.ones((9, 2), np.int32)  # equal rows: the order falls back to array, then sample
    return {"a": narrow, "b/0": wide, "c": ties, "empty": np.zeros((4, 0), np.float32), "s": np.float32(np.inf)}


@pytest.mark.parametrize("block", [1, 7, 64, 1 << 18])
@pytest.mark.parametrize("shown", [3, 50])
def test_the_table_merged_block_by_block_is_the_whole_sort(tmp_path, block, shown):
    batch = _batch()
    folder = writer.write_capsule(
        str(tmp_path), "cap", _MANIFEST, {"batch": batch, "weights": {}, "optimizer": {}, "rng": {}}
    )
    located = capsule_arrays.locate_group(folder, capsule_files.read_manifest(folder), "batch")
    got = capsule_samples.top_samples(located, shown, block)
    assert got == _whole_table(batch, shown)
    assert got[0][0]["nonfinite"] == 1 and got[1] == 53 + 5 + 9 + 4 + 1


def test_compressed_members_are_bounded_per_file_not_per_member(tmp_path):
    """A .npz of several deflated members, each under the decode cap: d3721ef decoded them all (remote cards: every
    one held in memory at once). Now the file's members share one budget: the card says the file would inflate too
    much."""
    folder = writer.write_capsule(
        str(tmp_path), "cap", _MANIFEST, {"batch": {"a": np.ones(3)}, "weights": {}, "optimizer": {}, "rng": {}}
    )
    path = os.path.join(folder, "weights.npz")
    member = io.BytesIO()
    np.lib.format.write_array(member, np.zeros(5 << 20, np.float32))  # 20 MiB, about 20 kB deflated
    names = [f"w{i}" for i in range(3)]
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name in names:
            z.writestr(f"{name}.npy", member.getvalue())
    manifest = capsule_files.read_manifest(folder)
    manifest["files"]["weights"].update(
        bytes=os.path.getsize(path), arrays=[{"name": n, "dtype": "float32", "shape": [5 << 20]} for n in names]
    )
    with open(os.path.join(folder, capsule_files.MANIFEST), "w") as f:
        json.dump(manifest, f)
    with pytest.raises(capsule_files.CapsuleError, match="would inflate"):
        capsule_arrays.locate_group(folder, manifest, "weights")
    one, _ = capsule_arrays.locate(folder, "weights", "w1")  # one member alone stays readable (Tensor Values)
    assert one.small is not None and one.size == 5 << 20
