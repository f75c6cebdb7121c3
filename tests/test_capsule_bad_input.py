"""NaN capsule on programs written by others (#35, "Bad input"): fit with steps_per_execution (a call of the train
function runs several steps: the capsule is the step that triggered, its real batch index), a GAN whose train_step
applies two optimizers of its own, a checkpoint saved at the trigger step, and skip mode's per-sample loss. Real Keras
programs under tests/programs/, cached like the dumps."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

from tensorboard_plugin_dbg import capsule
from tensorboard_plugin_dbg.reader import capsule_files
from tests import capsule_helpers
from tests.capsule_helpers import BATCHES_PER_EPOCH, assert_capsule_is_the_step, result, run

pytestmark = pytest.mark.slow


def assert_batch_bit_for_bit(c: capsule.Capsule, out: str) -> None:
    expected = np.load(os.path.join(out, "batch.npz"))
    assert sorted(c.batch) == sorted(expected.files)
    for name in expected.files:
        assert c.batch[name].tobytes() == expected[name].tobytes(), name


def assert_holds_the_gans_pre_step_state(c: capsule.Capsule, out: str) -> None:
    """capsule_gan.py's own copies before the poisoned step: every model variable ("w:") and both optimizers'."""
    pre = np.load(os.path.join(out, "pre_step.npz"))
    for key in pre.files:
        kind, name = key.split(":", 1)
        held = c.weights if kind == "w" else c.optimizer
        assert np.array_equal(held[name], pre[key]), key


@pytest.mark.parametrize("jit", [(), ("--jit",)], ids=["no_xla", "xla"])
def test_steps_per_execution_captures_the_inner_step_that_triggered_with_its_real_index(jit):
    """steps_per_execution=5, a NaN in batch 7 (the third step of the call that starts at batch 5): the capsule holds
    batch 7 bit for bit, says batch 7 and step 7, and holds the variables as they were before it (stop mode: no
    later step applied anything, so the model's trainable and optimizer variables after fit are those). With XLA
    too (before: a ValueError at set_model, the XLA step handed its batch back with its outputs)."""
    out = run("capsule_fit", "--steps-per-execution", "5", "--poison-step", "7", *jit)
    c = capsule.load(os.path.join(out, "capsules"))
    assert (c.manifest["epoch"], c.manifest["batch_index"], c.step) == (0, 7, 7)
    assert_batch_bit_for_bit(c, out)
    assert (c.batch["x"] < 0).sum() == 1
    after = np.load(os.path.join(out, "after.npz"))
    for key in after.files:
        held = c.weights if key.startswith("w:") else c.optimizer
        assert np.array_equal(held[key[2:]], after[key]), key
    assert result(out)["steps"] == 7 and result(out)["captured"] == [c.path]


def test_xla_captures_a_nan_in_the_epochs_last_shorter_batch_bit_for_bit():
    """XLA, 92 samples in batches of 8: the epoch's last batch holds 4 rows, and its row 3 is poisoned. The step's
    batch buffers have the full batch's fixed shape (a compiled step cannot change a variable's shape): the capsule
    holds the 4 rows, bit for bit, not 8, and the pre-step state; with previous_batch=True the previous step's batch
    (8 rows) too."""
    out = run("capsule_fit", "--jit", "--samples", "92", "--poison-step", "11", "--previous-batch")
    c = assert_capsule_is_the_step(out, 11)
    assert c.batch["x"].shape == (4, 5) and (c.batch["x"] < 0).sum() == 1
    previous = c.manifest["forensics"]["previous"]
    assert (previous["epoch"], previous["batch_index"], previous["samples"]) == (0, 10, 8)


def test_steps_per_execution_skip_lists_each_skipped_batch_by_its_real_index_across_epochs():
    """Skip mode, steps_per_execution=5 over 12 batches an epoch (calls of 5, 5 and 2 steps): the poisoned batch 7
    of both epochs, each by its index (the epoch's short last call does not shift the second epoch's count)."""
    out = run("capsule_fit", "--steps-per-execution", "5", "--poison-step", "7", "--on-nan", "skip")
    with open(os.path.join(out, "capsules", "skipped.jsonl")) as f:
        skipped = [json.loads(line) for line in f]
    assert [(s["epoch"], s["batch_index"]) for s in skipped] == [(0, 7), (1, 7)]
    ended = result(out)
    assert ended["epochs"] == 2 and ended["steps"] == 2 * 12 - 2
    c = capsule.load(os.path.join(out, "capsules"))
    assert (c.manifest["batch_index"], c.step) == (7, 7)
    assert_batch_bit_for_bit(c, out)


def test_a_gan_whose_train_step_applies_two_optimizers_of_its_own_is_watched():
    """capsule_gan.py: fit, a custom train_step applying self.d_optimizer then self.g_optimizer (compile() left
    model.optimizer a default never applied), a NaN in a real sample of batch 4. Before: no capture, no warning, the
    weights NaN. Now: the discriminator's update is held back and the generator's too (training stops), the capsule
    holds batch 4 bit for bit, the trigger names the discriminator's gradient, the model's variables and both
    optimizers' state as they were before the step, and every weight is finite after fit."""
    out = run("capsule_gan")
    ended = result(out)
    c = capsule.load(os.path.join(out, "capsules"))
    assert ended["captured"] == [c.path] and ended["finite"] and ended["iterations"] == [4, 4]
    assert (c.manifest["epoch"], c.manifest["batch_index"], c.step) == (0, 4, 4)
    assert c.trigger["kind"] == "gradient" and c.trigger["name"].startswith("sequential/")  # the discriminator
    batch = np.load(os.path.join(out, "batch.npz"))["x"]
    assert c.batch["batch"].tobytes() == batch.tobytes()
    assert_holds_the_gans_pre_step_state(c, out)
    assert {"adam/iteration", "adam_1/iteration"} <= set(c.optimizer)  # both optimizers' state
    assert ended["warnings"] == []


@pytest.mark.parametrize("jit", [(), ("--jit",)], ids=["eager_step", "xla"])
def test_replay_of_the_gan_capsule_restores_both_optimizers_and_names_the_users_line(tmp_path, jit):
    """The GAN's capsule replayed: before, only model.optimizer (the default compile() left, never applied) was
    restored and the replay could not run ("the program's optimizer has variables the capsule lacks"). Now every
    optimizer the train step applies holds the captured state when the step runs (the program keeps what the replay
    left at its exit: each variable equal to its own pre-step copy), the step runs as the program ran it (both
    applies checked, the discriminator's first; under XLA the compiled pass too: before, it kept the last apply's
    tensors only and read the generator's finite gradients), the verdict is reproduced and the report names the
    program's line."""
    code, text, folder = capsule_helpers.replay(tmp_path, "capsule_gan", *jit)
    assert code == 0, text
    verdict = capsule_files.read_verdict(capsule.load(folder).path)
    assert verdict["verdict"] == "reproduced" and verdict["same_trigger"], verdict
    assert verdict["trigger"]["name"].startswith("sequential/")  # the discriminator's gradient, as captured
    if jit:
        assert verdict["compiled"]["trigger"]["name"] == verdict["trigger"]["name"], verdict
    pre = np.load(os.path.join(run("capsule_gan", *jit), "pre_step.npz"))
    replayed = np.load(tmp_path / "out" / "replayed.npz")
    assert sorted(pre.files) == sorted(replayed.files)
    assert {k[0] for k in pre.files if k.endswith("_momentum")} == {"d", "g"}  # both optimizers' slots
    for key in pre.files:
        assert replayed[key].tobytes() == pre[key].tobytes(), key
    assert "capsule_gan.py:" in text and "both = tf.concat([fake, real], axis=0)  # CULPRIT" in text, text
    capsule_helpers.assert_replay_holds_no_capsule_machinery(folder, text)


def test_a_train_step_applying_no_optimizer_the_capsule_can_see_is_said_plainly():
    """The same GAN with its optimizers kept outside the model: nothing is watched, and fit says so (a warning naming
    the model and what the capsule looks at), never a silent no-op."""
    ended = result(run("capsule_gan", "--hidden"))
    assert ended["captured"] == [] and not ended["finite"]  # the NaN went through: nothing held it back
    assert len(ended["warnings"]) == 1 and "NOT checked" in ended["warnings"][0] and "gan" in ended["warnings"][0]


@pytest.mark.parametrize(
    ("freq", "step"),
    [("5", 4), ("epoch", BATCHES_PER_EPOCH - 1)],
    ids=["save_freq_at_the_trigger_step", "epoch_end_save_at_the_trigger_step"],
)
def test_a_checkpoint_saved_at_the_trigger_step_holds_no_nan(freq, step):
    """ModelCheckpoint saving right after the trigger step (save_freq=5 with the NaN in batch 4; save_freq="epoch"
    with the NaN in the epoch's last batch, the capsule written at the same epoch end). A BatchNormalization meets
    the NaN in the forward pass: before, its moving statistics went NaN although the update was held back, and so did
    every checkpoint and the model after fit. Now the held-back step's forward pass is undone too: every checkpoint and
    the model hold finite values, and the capsule is whole (the batch bit for bit, the pre-step state)."""
    out = run("capsule_fit", "--bn-first", "--checkpoint", freq, "--poison-step", str(step))
    assert_capsule_is_the_step(out, step)
    ended = result(out)
    assert ended["checkpoints"] and all(ended["checkpoints"].values()), ended["checkpoints"]
    assert ended["finite_after"] and ended["steps"] == step


def test_skip_mode_per_sample_loss_is_computed_with_the_pre_step_weights():
    """Skip mode (#36): the host reads the trigger up to check_every steps after it, and training went on applying
    meanwhile; the per-sample loss must still be the one of the captured batch under the weights the capsule holds
    (the program computes it itself at the poisoned step's begin), not under the weights of the read."""
    out = run("capsule_fit", "--on-nan", "skip")
    c = capsule.load(os.path.join(out, "capsules"))
    held = np.load(os.path.join(c.path, "forensics.npz"))["per_sample_loss"]
    expected = np.load(os.path.join(out, "per_sample_loss.npy"))
    assert held.shape == expected.shape == (8,)
    assert np.isnan(held[3]) and np.isnan(expected[3])  # the poisoned row
    np.testing.assert_allclose(held, expected, rtol=1e-6, equal_nan=True)


@pytest.mark.parametrize(("rule", "kind"), [((), "loss_spike"), (("--grad",), "grad_spike")])
def test_a_spike_on_the_very_first_armed_step_triggers_and_one_on_the_last_arming_step_never_does(rule, kind):
    """The rule arms over the first 100 applied steps (spike.WINDOW): a spike at step 100, the first armed step,
    under XLA, is a capsule of that step (its batch, the update held back); the same spike at step 99, the last
    arming step, is not a trigger (it enters the window and the run goes on to its end)."""
    first = run("capsule_spike", "--jit", "--poison-step", "100", *rule)
    c = assert_capsule_is_the_step(first, 100)
    assert c.trigger["kind"] == kind and result(first)["steps"] == 100
    assert c.trigger["value"] > 10 * c.trigger["window_max"] > 0
    last_arming = result(run("capsule_spike", "--jit", "--poison-step", "99", *rule))
    assert last_arming["captured"] == [] and last_arming["steps"] == 130


@pytest.mark.parametrize("per_call", ["1", "5"])
def test_without_xla_the_host_reads_the_counters_every_few_steps_not_every_step(per_call):
    """No device-to-host copy per step without XLA either (the batch stays on the device until a trigger): a clean
    run of 2 epochs x 12 steps reads the counters once per check_every=16 steps, at each epoch's end, at the train's
    end and when the program asks `triggered`, whether a call runs one step or five."""
    ended = result(run("capsule_fit", "--clean", "--steps-per-execution", per_call))
    steps = 2 * BATCHES_PER_EPOCH
    assert ended["steps"] == steps and ended["captured"] == []
    assert 4 <= ended["host_reads"] <= steps // 16 + 4


def test_a_gan_under_mirrored_strategy_is_watched_like_one_without():
    """capsule_gan.py --mirrored: the GAN's fit under MirroredStrategy on two logical CPUs (the poisoned real sample
    is row 3 of batch 4: replica 0's rows 0..4). Before: fit failed at trace time ("'Several' object has no attribute
    'build'": the replicated path built the watch's optimizer, not the one applying, and counted each apply a step).
    Then: the generator's optimizer never counted a step on the first device and the replicas' generators diverged
    (the capture call, dead on every step that applies, read that optimizer's step count: automatic control
    dependencies made its next write wait on the dead call). Now: both optimizers' updates held back on every replica,
    every replica's copies equal, the capsule is batch 4 with the whole global batch bit
    for bit, replica 0 named with rows 0..4 of 8, the discriminator's gradient the trigger, the model's and both
    optimizers' variables as they were before the step, every weight finite after fit."""
    out = run("capsule_gan", "--mirrored")
    ended = result(out)
    c = capsule.load(os.path.join(out, "capsules"))
    assert ended["captured"] == [c.path] and ended["finite"] and ended["iterations"] == [4, 4]
    assert ended["in_sync"]  # every replica's copy of every model and optimizer variable
    assert (c.manifest["epoch"], c.manifest["batch_index"], c.step) == (0, 4, 4)
    assert c.trigger["kind"] == "gradient" and c.trigger["name"].startswith("sequential/")  # the discriminator
    assert c.batch["batch"].tobytes() == np.load(os.path.join(out, "batch.npz"))["x"].tobytes()
    replicas = c.manifest["replicas"]
    assert (replicas["count"], replicas["non_finite"], replicas["rows"]) == (2, [0], {"0": [0, 4], "1": [4, 8]})
    assert_holds_the_gans_pre_step_state(c, out)
    assert {"adam/iteration", "adam_1/iteration"} <= set(c.optimizer)
    assert ended["warnings"] == []
