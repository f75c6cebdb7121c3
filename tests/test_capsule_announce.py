"""The capture's stderr block (#36, capsule/announce.py) on a manifest: a capsule whose batch its XLA buffer could
not hold (manifest `batch_missing`) cannot be replayed, and the block says why instead of offering a command that
would only fail."""

from __future__ import annotations

from tensorboard_plugin_dbg.capsule import announce

FOLDER = "/runs/capsules/capsule-step000000003"
MANIFEST = {
    "step": 3,
    "epoch": 0,
    "batch_index": 3,
    "on_nan": "stop",
    "trigger": {"kind": "loss", "name": "loss", "health": {"nan": 1, "size": 1}},
    "program": {"executable": "/venv/bin/python", "argv": ["train.py"], "cwd": "/work"},
}


def test_a_capsule_with_its_batch_offers_the_replay_command():
    lines = announce.block(FOLDER, MANIFEST).splitlines()
    assert lines[3] == f"  replay it: cd /work && /venv/bin/python -m tensorboard_plugin_dbg replay {FOLDER} -- " + (
        "/venv/bin/python train.py"
    )


def test_a_capsule_without_its_batch_says_why_it_cannot_be_replayed_instead_of_a_command():
    missing = "the batch was larger than the XLA buffers kept on the device: x [8, 5] > [4, 5]"
    lines = announce.block(FOLDER, {**MANIFEST, "batch_missing": missing}).splitlines()
    assert not [line for line in lines if "replay it:" in line or " replay " in line]
    assert lines[3] == f"  cannot be replayed: the capsule holds no batch ({missing})"
    assert lines[2] == f"  capsule: {FOLDER}" and lines[4].startswith("  then: tensorboard --logdir /runs/capsules")
