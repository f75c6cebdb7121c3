"""Helpers shared by the capsule tests (test_capsule*.py): run a program of tests/programs (cached like the dumps),
read its result, and check a capsule against the program's own copies of the step."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import numpy as np

from tensorboard_plugin_dbg import capsule
from tensorboard_plugin_dbg.reader import capsule_files
from tests import dumps

BATCHES_PER_EPOCH = 96 // 8  # capsule_fit.py: SAMPLES // BATCH


def run(program: str, *args: str) -> str:
    """The output folder of tests/programs/PROGRAM.py ARGS (made once, cached like the dumps)."""
    return dumps.make_dump(program, *args)


def result(out: str) -> dict:
    with open(os.path.join(out, "result.json")) as f:
        return json.load(f)


def assert_capsule_is_the_step(out: str, step: int) -> capsule.Capsule:
    c = capsule.load(os.path.join(out, "capsules"))
    assert c.step == step
    expected_batch = np.load(os.path.join(out, "batch.npz"))
    assert sorted(c.batch) == sorted(expected_batch.files)
    for name in expected_batch.files:
        assert c.batch[name].dtype == expected_batch[name].dtype
        assert c.batch[name].tobytes() == expected_batch[name].tobytes(), name  # bit for bit (NaN included)
    pre = np.load(os.path.join(out, "pre_step.npz"))
    for key in pre.files:
        held = c.weights if key.startswith("w:") else c.optimizer
        assert np.array_equal(held[key[2:]], pre[key]), key
    assert len([k for k in pre.files if k.startswith("w:")]) == len(c.weights)
    return c


def assert_replay_holds_no_capsule_machinery(folder: str, text: str) -> None:
    """The replayed step runs without the capsule's check: no op of it in the dump's graphs (its cond's branch took
    the loss as a Placeholder, once named the first producer), no line of the plugin's capsule code in the report."""
    replay_dir = os.path.join(capsule.load(folder).path, capsule_files.REPLAY_DIR)
    graphs = [os.path.join(d, f) for d, _, files in os.walk(replay_dir) for f in files if f.endswith(".graphs")]
    assert graphs
    for path in graphs:
        with open(path, "rb") as f:
            assert b"nan_capsule_check" not in f.read(), path
    assert "capsule/callback.py" not in text and "capsule/watch.py" not in text


def replay(tmp_path, program: str, *args: str) -> tuple[int, str, str]:
    """`replay` run on a copy of PROGRAM's capsule (the cached one stays as written): exit, output, the copy."""
    folder = tmp_path / "capsules"
    shutil.copytree(os.path.join(run(program, *args), "capsules"), folder)
    command = [sys.executable, "-m", "tensorboard_plugin_dbg", "replay", str(folder), "--"]
    command += [sys.executable, dumps.program_path(program), str(tmp_path / "out"), *args]
    proc = subprocess.run(command, capture_output=True, text=True, env=dumps.env_for_tf(), timeout=300)
    return proc.returncode, proc.stdout + proc.stderr, str(folder)
