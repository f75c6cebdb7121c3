"""Names chosen by the user's program become .npz member names (#37 item 11): `np.savez(path, **arrays)` raised inside
the training step for a variable named `file` and silently dropped one named `allow_pickle`. Members are now written
one by one under their own names; capsule.load, the cards and capsule_array read them (the layout is numpy's own:
NAME.npy members, so capsules written before read the same)."""

from __future__ import annotations

import numpy as np

from tensorboard_plugin_dbg import capsule
from tensorboard_plugin_dbg.analysis import capsule_array
from tensorboard_plugin_dbg.capsule import writer

NAMES = ("file", "allow_pickle", "args", "kwds", "dense/kernel")


def test_arrays_named_like_savez_parameters_are_written_and_read(tmp_path):
    manifest = {
        "step": 2,
        "trigger": {"kind": "loss", "name": "loss"},
        "batch_structure": {"kind": "array", "name": "x"},
    }
    weights = {name: np.full((2, 3), i, np.float32) for i, name in enumerate(NAMES)}
    groups = {"batch": {"file": np.arange(4.0)}, "weights": weights, "optimizer": {}, "rng": {}}
    writer.write_capsule(str(tmp_path), "cap", manifest, groups)
    loaded = capsule.load(str(tmp_path))
    assert sorted(loaded.weights) == sorted(NAMES) and list(loaded.batch) == ["file"]
    for i, name in enumerate(NAMES):
        assert np.array_equal(loaded.weights[name], weights[name])
        answer = capsule_array.capsule_array(str(tmp_path), "cap", "weights", name, "...", 8)
        assert answer["shape"] == [2, 3] and answer["stats"]["max"] == i
