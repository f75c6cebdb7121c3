"""fit under XLA on batches that change size (#35): the capsule's device buffers are sized from the fit's first
call's batches (capsule/stash.py), so a later, larger batch (a generator's) does not fit them. Such a trigger still
writes its capsule (the state before the step), says at that step and in the manifest that the batch is missing and
why, grows the buffers for later triggers, and replay says it cannot. The first call's batches, taken on the host and
re-fed to the compiled step, change nothing the model trains on (tests/programs/capsule_growing.py records the ids
of the samples each step trained on)."""

from __future__ import annotations

import os

import numpy as np
import pytest

from tensorboard_plugin_dbg import capsule
from tensorboard_plugin_dbg.capsule import announce
from tensorboard_plugin_dbg.reader import capsule_files
from tests import capsule_helpers
from tests.capsule_helpers import result, run

pytestmark = pytest.mark.slow

PROGRAM = "capsule_growing"
EPOCH_SAMPLES = 36  # capsule_growing.py: sum(SIZES)


def _assert_pre_step_state(c: capsule.Capsule, out: str) -> None:
    pre = np.load(os.path.join(out, "pre_step.npz"))
    for key in pre.files:
        held = c.weights if key.startswith("w:") else c.optimizer
        assert np.array_equal(held[key[2:]], pre[key]), key


def test_a_later_batch_larger_than_the_xla_buffers_still_writes_its_capsule_and_says_what_it_lacks():
    out = run(PROGRAM)
    ended = result(out)
    c = capsule.load(os.path.join(out, "capsules"))
    assert ended["captured"] == [c.path] and ended["steps"] == 3 and c.step == 3  # stopped, the update held back
    _assert_pre_step_state(c, out)
    assert c.trigger["health"]["nan"] > 0 and c.batch == {}
    missing = c.manifest["batch_missing"]
    assert "x [8, 5] > [4, 5]" in missing and "y [8, 1] > [4, 1]" in missing  # capsule_growing.py's SIZES: 4, 4, 8
    assert len(ended["warnings"]) == 1 and c.path in ended["warnings"][0] and missing in ended["warnings"][0]
    said = announce.block(c.path, c.manifest)  # the stderr block at the capture: no replay command it cannot run
    assert "\n  replay it:" not in said and "tensorboard_plugin_dbg replay" not in said
    assert f"cannot be replayed: the capsule holds no batch ({missing})" in said


def test_the_buffers_grow_at_such_a_trigger_so_a_later_one_holds_its_batch_bit_for_bit():
    """Skip mode: the poisoned batch of 8 comes again as the second epoch's batch 3: that capsule holds it."""
    out = run(PROGRAM, "--skip")
    ended = result(out)
    first, second = (capsule.load(folder) for folder in ended["captured"])
    where = [(c.manifest["epoch"], c.manifest["batch_index"]) for c in (first, second)]
    assert where == [(0, 3), (1, 3)] and "batch_missing" in first.manifest
    assert "batch_missing" not in second.manifest and len(ended["warnings"]) == 1
    why = second.manifest["forensics"]["previous"]["why"]  # a copy every step: opt-in under XLA too
    assert why.startswith("not kept: under XLA, NanCapsule(previous_batch=True) keeps it")
    expected = np.load(os.path.join(out, "batch.npz"))
    assert sorted(second.batch) == ["x", "y"]
    for name in ("x", "y"):
        assert second.batch[name].tobytes() == expected[name].tobytes(), name


def test_replay_of_a_capsule_without_its_batch_says_it_cannot(tmp_path):
    code, text, folder = capsule_helpers.replay(tmp_path, PROGRAM)
    verdict = capsule_files.read_verdict(capsule.load(folder).path)
    assert code == 2 and verdict["verdict"] == "cannot_replay", text
    assert verdict["reason"].startswith("the capsule holds no batch: the trigger's batch (x [8, 5] > [4, 5]")


@pytest.mark.parametrize("data", [("--shuffle", "--validation"), ("--numpy", "--shuffle"), ("--numpy",)])
def test_the_first_calls_refed_batches_leave_every_step_its_own_samples(data):
    """A clean fit, with and without the NanCapsule: the same samples in the same steps, in the same order (the
    pipeline shuffled per epoch, or fit's own shuffle of arrays; with validation_data), each sample once an epoch."""
    watched = result(run(PROGRAM, "--clean", *data))["ids"]
    plain = result(run(PROGRAM, "--clean", "--no-capsule", *data))["ids"]
    assert watched == plain and len(watched) == 2 * EPOCH_SAMPLES
    for epoch in range(2):
        ids = watched[epoch * EPOCH_SAMPLES : (epoch + 1) * EPOCH_SAMPLES]
        assert sorted(ids) == list(range(1, EPOCH_SAMPLES + 1))
