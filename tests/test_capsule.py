"""NaN capsule (#26): real Keras programs (tests/programs/capsule_fit.py with model.fit, capsule_loop.py with its own
tf.function loop) poison one sample at a known step; the capsule must hold that step's batch bit for bit and every
variable as it was before the step (the programs keep their own copies), the update must not be applied, and the
replay must re-run the step under tfdbg2 and name the culprit line."""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile

import numpy as np
import pytest
from werkzeug.test import Client

from tensorboard_plugin_dbg import capsule
from tensorboard_plugin_dbg.__main__ import main
from tensorboard_plugin_dbg.analysis import capsule_array
from tensorboard_plugin_dbg.capsule import announce, spike, writer
from tensorboard_plugin_dbg.reader import capsule_arrays, capsule_files, tensor_content
from tests import dumps
from tests.api_helpers import get, load_schema, make_app, ok, schema_errors, url, wait_indexed
from tests.capsule_helpers import (
    BATCHES_PER_EPOCH,
    assert_capsule_is_the_step,
    assert_replay_holds_no_capsule_machinery,
    replay,
    result,
    run,
)

pytestmark = pytest.mark.slow


def test_fit_stops_at_the_poisoned_step_with_its_batch_and_the_state_before_it():
    out = run("capsule_fit")
    c = assert_capsule_is_the_step(out, 4)
    ended = result(out)
    assert ended["captured"] == [c.path] and ended["steps"] == 4  # stopped; the poisoned update was not applied
    assert (c.manifest["epoch"], c.manifest["batch_index"], c.manifest["source"]) == (0, 4, "fit")
    trigger = c.trigger
    assert trigger["kind"] in ("loss", "gradient") and trigger["health"]["nan"] > 0
    assert c.manifest["program"]["argv"][0].endswith("capsule_fit.py")
    assert {"tensorflow", "keras", "numpy"} <= set(c.manifest["versions"])
    assert c.manifest["devices"] and "seed_generator/seed_generator_state" in c.weights
    assert (c.batch["x"] < 0).sum() == 1


def test_the_tfdbg_circular_buffer_is_flushed_into_the_capsule_as_a_run(tmp_path):
    """tfdbg_buffer=N: the last N tfdbg2 events flushed into CAPSULE/tfdbg/ at the trigger, a run of the capsules'
    logdir holding the poisoned step's executions (at most N), and the capsule itself as without it."""
    buffer = 50
    out = run("capsule_fit", "--tfdbg-buffer", str(buffer))
    c = assert_capsule_is_the_step(out, 4)
    logdir = tmp_path / "capsules"
    shutil.copytree(os.path.join(out, "capsules"), logdir)
    app, _ = make_app(str(logdir))
    client = Client(app)
    runs = {r["name"]: r for r in wait_indexed(client)["runs"]}
    name = f"{os.path.basename(c.path)}/tfdbg"
    assert list(runs) == [name]
    counts = runs[name]["counts"]
    assert 0 < counts["graph_executions"] <= buffer and counts["executions"] <= buffer


def test_dict_inputs_and_sample_weights_are_captured_by_name():
    out = run("capsule_fit", "--dict", "--sample-weight")
    c = assert_capsule_is_the_step(out, 4)
    assert sorted(c.batch) == ["sample_weight", "x/a", "x/b", "y"]
    nested = c.batch_structure()
    assert isinstance(nested, tuple) and set(nested[0]) == {"a", "b"}


def test_a_nested_tuple_batch_keeps_its_nesting():
    out = run("capsule_fit", "--nested")
    c = assert_capsule_is_the_step(out, 4)
    x = c.batch_structure()[0]
    assert isinstance(x["pair"], tuple) and isinstance(x["pair"][1], tuple) and x["pair"][1][0].shape == (8, 1)


def test_xla_fit_stays_compiled_and_captures_the_poisoned_step():
    """jit_compile=True: the check and the held-back update are inside the XLA-compiled step (a cond, no
    tf.py_function: XLA cannot compile one), model.jit_compile stays True, and the capsule is still that step's batch
    bit for bit with the pre-step state (the step kept its batch in device variables, capsule/stash.py)."""
    out = run("capsule_fit", "--jit")
    c = assert_capsule_is_the_step(out, 4)
    ended = result(out)
    assert ended["jit_compile"] is True and ended["steps"] == 4 and c.manifest["compiled"] is True
    graph = ended["graph"]
    assert graph["xla"] and {"If", "IsFinite"} <= set(graph["ops"])  # the check is in the compiled step
    assert not [op for op in graph["ops"] if "PyFunc" in op]
    assert (c.batch["x"] < 0).sum() == 1 and c.trigger["health"]["nan"] > 0
    assert graph["step_outputs"] == [1]  # the step hands back its loss alone (before: the batch's x and y too)
    # each variable an XLA step may write costs it every call, the rare branch taken or not: the counters and flags,
    # the trigger ring, the health counts and the held batch's shapes are one record (before: four variables there,
    # and eight before that), beside the held batch (a buffer per leaf); aside: a copy of each non-trainable variable
    # as the step began, and the per-layer history (#36, off with layer_history=0)
    held = ["nan_capsule_batch"] * 2 + ["nan_capsule_record"]
    aside = ("nan_capsule_layer_", "nan_capsule_shadow")
    ours = [n for n in graph["capsule_variables"] if not n.startswith(aside)]
    assert ours == held


def test_the_host_reads_the_trigger_counter_every_few_steps_not_every_step():
    """No device-to-host copy per step: a clean run of 2 epochs x 12 steps reads the counter once per check_every=16
    steps, at each epoch's end, at the train's end and when the program asks `triggered`."""
    ended = result(run("capsule_fit", "--jit", "--clean"))
    steps = 2 * BATCHES_PER_EPOCH
    assert ended["steps"] == steps and ended["captured"] == []
    assert 4 <= ended["host_reads"] <= steps // 16 + 4  # a poll at an epoch's end restarts the count of 16


def test_a_loss_spike_is_a_trigger_under_xla_and_the_update_is_held_back():
    """capsule_spike.py: targets 1000x too large in batch 110 (no NaN anywhere), NanCapsule(spike=10), jit_compile on:
    the capsule is that step (batch bit for bit, pre-step weights), its update not applied, the rule in the manifest."""
    out = run("capsule_spike", "--jit")
    c = assert_capsule_is_the_step(out, 110)
    assert result(out)["steps"] == 110 and result(out)["jit_compile"] is True
    trigger = c.trigger
    assert trigger["kind"] == "loss_spike" and trigger["value"] > 10 * trigger["window_max"] > 0
    assert re.fullmatch(r"loss spike: \S+ vs max \S+ over the last 100 steps", trigger["text"])
    assert c.manifest["rules"]["spike"] == 10.0 and c.manifest["rules"]["window"] == 100
    # the stderr block says the spike as such (it once read "non-finite loss spike: ..." of a finite loss)
    assert announce.block(c.path, c.manifest).startswith(f"NanCapsule: {trigger['text']} at step 110, epoch 0, batch")


def test_the_first_armed_step_can_trigger_and_the_arming_steps_never_do():
    assert_capsule_is_the_step(out := run("capsule_spike", "--poison-step", "100"), 100)
    assert result(out)["steps"] == 100
    early = result(run("capsule_spike", "--poison-step", "60"))  # within the 100 arming steps: no trigger
    assert early["captured"] == [] and early["steps"] == 130


@pytest.mark.parametrize("factor", [1.0, 0.5, -3, float("nan"), float("inf"), "10", True])
def test_a_spike_factor_that_is_not_a_number_above_1_is_a_value_error(factor):
    with pytest.raises(ValueError, match="above 1"):
        spike.validated("spike", factor)
    assert spike.validated("grad_spike", None) is None and spike.validated("spike", 10) == 10.0


@pytest.mark.parametrize(
    ("case", "says"),
    [("central_storage", "CentralStorageStrategy is not supported")],
)
def test_what_the_capsule_cannot_watch_is_a_clear_error_at_set_model(case, says):
    """Never a silent no-op or a capsule of the wrong batch: fit under CentralStorageStrategy (two logical CPU
    devices) raises, naming what is not supported (MirroredStrategy is watched: tests/test_capsule_distribute.py;
    steps_per_execution with XLA too: tests/test_capsule_bad_input.py)."""
    error = result(run("capsule_unsupported", case))["error"]
    assert error["type"] == "ValueError" and says in error["message"], error


def test_a_trigger_at_the_very_first_step():
    out = run("capsule_fit", "--poison-step", "0")
    c = assert_capsule_is_the_step(out, 0)
    assert result(out)["steps"] == 0 and int(c.optimizer["adam/iteration"]) == 0


def test_skip_mode_goes_on_and_lists_every_skipped_batch():
    out = run("capsule_fit", "--on-nan", "skip")
    ended = result(out)
    assert ended["epochs"] == 2 and len(ended["captured"]) == 1  # one capsule, training went on
    with open(os.path.join(out, "capsules", "skipped.jsonl")) as f:
        skipped = [json.loads(line) for line in f]
    # the poisoned sample comes back in the second epoch: both its updates left out, nothing else
    assert [(s["epoch"], s["batch_index"]) for s in skipped] == [(0, 4), (1, 4)]
    assert ended["steps"] == 2 * BATCHES_PER_EPOCH - 2
    assert skipped[0]["capsule"] == ended["captured"][0] and skipped[1]["capsule"] is None


def test_raise_mode_raises_after_writing_the_capsule():
    ended = result(out := run("capsule_fit", "--on-nan", "raise"))
    assert ended["ended"] == "raised" and os.path.basename(ended["captured"][0]) in ended["message"]
    assert_capsule_is_the_step(out, 4)


def test_a_run_without_nan_writes_nothing_and_mixed_precision_overflow_is_not_a_trigger():
    clean = run("capsule_fit", "--clean")
    assert result(clean)["captured"] == [] and not os.path.exists(os.path.join(clean, "capsules"))
    mixed = run("capsule_fit", "--clean", "--mixed")
    ended = result(mixed)
    assert ended["scale"] < 2.0**40  # the LossScaleOptimizer did meet overflowing steps and skipped them
    assert ended["captured"] == [] and not os.path.exists(os.path.join(mixed, "capsules"))
    assert ended["epochs"] == 2


def test_fit_called_once_per_epoch_keeps_its_watched_train_function():
    """A loop that calls fit once per epoch with the same NanCapsule: the check is traced once (a new trace each call
    took ~0.4 s and left every later step slower), and the second call still watches (the trigger is in epoch 2).
    Then a fit without the callback runs a function of its own (unwatched), one with it the watched one again, and
    one after a compile a new one."""
    step = BATCHES_PER_EPOCH + 4  # the program's first epoch is clean; the second is poisoned at its batch 4
    out = run("capsule_fit", "--fit-per-epoch")
    ended = result(out)
    assert_capsule_is_the_step(out, step)
    assert ended["steps"] == step  # the update of the poisoned step was not applied
    assert ended["train_functions"] == [0, 0, 1, 0, 2]


def test_custom_loop_in_a_tf_function():
    out = run("capsule_loop")
    c = assert_capsule_is_the_step(out, 3)
    assert c.trigger["kind"] == "loss" and c.manifest["source"] == "custom_loop"
    assert result(out)["iterations"] == 3
    assert c.manifest["compiled"] is False and "Bitcast" not in result(out)["ops"]  # the ring's plain reductions
    assert sorted(c.batch) == ["0/raw", "1"]


def test_the_every_step_check_is_one_unlowered_cond():
    """Lowered to Switch/Merge, the check's cond would move TensorFlow's executor off its fast path for graphs
    without control flow, for every op of the train step (the watch's overhead, bench/capsule.py)."""
    assert result(run("capsule_loop"))["checks"] == [{"type": "If", "lowered": False}]


@pytest.mark.parametrize("mode", [(), ("--eager",)])
def test_custom_loop_keeps_batchnorm_statistics_and_seed_states_from_before_the_forward_pass(mode):
    """begin_step() reads the non-trainable variables as the step starts: the capsule's BatchNorm moving statistics
    and Dropout seed state are those before the poisoned step (its NaN moves the statistics in the forward pass)."""
    out = run("capsule_loop", "--batchnorm", *mode)
    c = assert_capsule_is_the_step(out, 3)
    moving = [n for n in c.weights if "moving_mean" in n or "moving_variance" in n]
    seeds = [n for n in c.weights if "seed" in n]
    assert moving and seeds, sorted(c.weights)
    assert all(np.isfinite(c.weights[n]).all() for n in moving)
    assert set(moving + seeds) <= set(c.manifest["pre_step_state"])


def test_custom_loop_in_an_xla_compiled_tf_function():
    """The helper inside tf.function(jit_compile=True): the check compiles with the step (no tf.py_function), and
    the capsule is the step's batch with the pre-step state, BatchNorm statistics and seed states included. The watch
    knows the step is XLA-compiled (no `compile` call says so in a custom loop: the trace's XLA context does): the
    manifest says `compiled` (replay then knows how the run ran) and the per-layer ring takes its XLA forms (max |w|
    as one integer max over the bits: a Bitcast, capsule/layer_history.py)."""
    out = run("capsule_loop", "--jit", "--batchnorm")
    c = assert_capsule_is_the_step(out, 3)
    ended = result(out)
    assert ended["iterations"] == 3 and {"If", "IsFinite"} <= set(ended["ops"])
    assert c.manifest["compiled"] is True and "Bitcast" in ended["ops"]
    assert not [op for op in ended["ops"] if "PyFunc" in op]
    assert {n for n in c.weights if "moving_mean" in n} <= set(c.manifest["pre_step_state"])


def test_custom_loop_eager_skip():
    out = run("capsule_loop", "--eager", "--on-nan", "skip")
    ended = result(out)
    assert ended["steps"] == 16 and ended["iterations"] == 14  # 2 epochs of 8 batches, 2 left out
    assert_capsule_is_the_step(out, 3)


def test_load_needs_no_tensorflow():
    folder = os.path.join(run("capsule_fit"), "capsules")
    code = (
        "import sys; from tensorboard_plugin_dbg import capsule; c = capsule.load(sys.argv[1]);"
        "print(c.step, 'tensorflow' in sys.modules, 'keras' in sys.modules)"
    )
    proc = subprocess.run([sys.executable, "-c", code, folder], capture_output=True, text=True, env=dumps.env_for_tf())
    assert proc.stdout.split() == ["4", "False", "False"], proc.stderr


# --- replay -------------------------------------------------------------------------------------------------------


def test_replay_reproduces_and_names_the_line(tmp_path):
    code, text, folder = replay(tmp_path, "capsule_fit")
    assert code == 0, text
    assert "replay: reproduced" in text
    assert "capsule_fit.py:" in text and "return tf.sqrt(x)  # CULPRIT" in text
    assert_replay_holds_no_capsule_machinery(folder, text)
    report = subprocess.run(
        [sys.executable, "-m", "tensorboard_plugin_dbg", "report", folder],
        capture_output=True,
        text=True,
        env=dumps.env_for_tf(),
    )
    assert "reproduced" in report.stdout and "# CULPRIT" in report.stdout and report.returncode == 1


def test_replay_of_an_xla_fit_capsule_names_the_line(tmp_path):
    """The step ran with XLA: the replay re-runs it compiled as it ran (no dump), then un-compiled under tfdbg2."""
    code, text, folder = replay(tmp_path, "capsule_fit", "--jit")
    assert code == 0, text
    assert "return tf.sqrt(x)  # CULPRIT" in text
    assert_replay_holds_no_capsule_machinery(folder, text)
    verdict = capsule_files.read_verdict(capsule.load(folder).path)
    assert verdict["verdict"] == "reproduced" and verdict["compiled"]["ran"]
    assert verdict["compiled"]["trigger"]["health"]["nan"] > 0


def test_a_nan_only_the_compiled_pass_meets_is_reproduced_only_under_xla(tmp_path):
    """A program whose replay passes differ (its poison fires at the process's first train step call only: the
    compiled pass meets it, the dumped un-compiled pass does not): the distinct verdict and exit code 3."""
    code, text, folder = replay(tmp_path, "capsule_fit", "--jit", "--random-poison", "--poison-step", "0")
    assert code == 3, text
    assert "replay: reproduced only under XLA" in text and "stayed finite" in text
    verdict = capsule_files.read_verdict(capsule.load(folder).path)
    assert verdict["verdict"] == "reproduced_only_under_xla" and verdict["trigger"] is None
    assert_replay_holds_no_capsule_machinery(folder, text)  # the finite dump: no line, and never the plugin's


def test_replay_of_a_spike_capsule_reproduces_the_spike(tmp_path):
    code, text, folder = replay(tmp_path, "capsule_spike", "--jit")
    assert code == 0, text
    verdict = capsule_files.read_verdict(capsule.load(folder).path)
    assert verdict["verdict"] == "reproduced" and verdict["trigger"]["kind"] == "loss_spike"
    assert verdict["trigger"]["value"] > verdict["trigger"]["threshold"]
    assert "loss spike: " in text
    # said, though the trigger is the same (a CLEAN dump right after "reproduced" read as a contradiction)
    value, threshold = (f"{verdict['trigger'][k]:.3g}" for k in ("value", "threshold"))
    said = f"the replayed loss ({value}) is again above the rule's threshold ({threshold}); a spike is finite"
    assert f"replay: reproduced (the step triggers again: the code or the data, not chance): {said}" in text, text
    assert_replay_holds_no_capsule_machinery(folder, text)


def test_replay_of_a_custom_loop(tmp_path):
    code, text, folder = replay(tmp_path, "capsule_loop")
    assert code == 0, text
    assert 'logged = tf.math.log(features["raw"] + 1.0)  # CULPRIT' in text and "capsule_loop.py:" in text
    assert_replay_holds_no_capsule_machinery(folder, text)


def test_a_nan_that_depended_on_state_outside_the_capsule_is_not_reproduced(tmp_path):
    code, text, folder = replay(tmp_path, "capsule_fit", "--random-poison")
    assert code == 1, text
    assert "NOT reproduced" in text and "stayed finite" in text
    assert capsule_files.read_verdict(capsule.load(folder).path)["verdict"] == "not_reproduced"
    assert_replay_holds_no_capsule_machinery(folder, text)


def test_replay_of_a_program_without_nan_capsule_cannot_replay(tmp_path):
    folder = tmp_path / "capsules"
    shutil.copytree(os.path.join(run("capsule_fit"), "capsules"), folder)
    proc = subprocess.run(
        [sys.executable, "-m", "tensorboard_plugin_dbg", "replay", str(folder), "--", sys.executable, "-c", "pass"],
        capture_output=True,
        text=True,
        env=dumps.env_for_tf(),
    )
    assert proc.returncode == 2 and "without replaying the step" in proc.stdout


# --- damaged capsules ---------------------------------------------------------------------------------------------


@pytest.fixture
def capsule_copy(tmp_path) -> str:
    source = capsule.load(os.path.join(run("capsule_fit"), "capsules")).path
    target = tmp_path / "capsules" / os.path.basename(source)
    shutil.copytree(source, target)
    return str(target)


def test_a_truncated_file_is_named(capsule_copy):
    path = os.path.join(capsule_copy, "weights.npz")
    with open(path, "r+b") as f:
        f.truncate(os.path.getsize(path) // 2)
    with pytest.raises(capsule.CapsuleError, match=r"weights\.npz: truncated"):
        capsule.load(capsule_copy)
    assert main(["replay", capsule_copy, "--", sys.executable, "-c", "pass"]) == 2


def test_a_missing_file_and_an_unknown_version_are_named(capsule_copy, capsys):
    os.remove(os.path.join(capsule_copy, "optimizer.npz"))
    with pytest.raises(capsule.CapsuleError, match=r"optimizer\.npz: missing"):
        capsule.load(capsule_copy)
    manifest_path = os.path.join(capsule_copy, "manifest.json")
    with open(manifest_path) as f:
        manifest = json.load(f)
    with open(manifest_path, "w") as f:
        json.dump(dict(manifest, format_version=99), f)
    with pytest.raises(capsule.CapsuleError, match="unknown format version 99"):
        capsule.load(capsule_copy)
    assert main(["report", os.path.dirname(capsule_copy)]) == 2
    assert "DAMAGED" in capsys.readouterr().out


def test_a_folder_without_capsules(tmp_path):
    with pytest.raises(capsule.CapsuleError, match="not a NaN capsule"):
        capsule.load(str(tmp_path))


def test_the_capsules_route_lists_sound_and_damaged_capsules(tmp_path):
    """The dashboard's answer: a sound capsule with the poisoned sample first, a damaged one marked (never a 500),
    a manifest with fields of the wrong type marked too."""
    logdir = tmp_path / "logdir"
    source = os.path.join(run("capsule_fit", "--nan-input"), "capsules")
    for name in ("a", "b", "c"):
        shutil.copytree(source, logdir / name)
    b = capsule.load(str(logdir / "b")).path
    os.remove(os.path.join(b, "batch.npz"))
    c = capsule.load(str(logdir / "c")).path
    with open(os.path.join(c, "manifest.json")) as f:
        manifest = json.load(f)
    with open(os.path.join(c, "manifest.json"), "w") as f:
        json.dump(dict(manifest, trigger="loss"), f)
    app, _ = make_app(str(logdir))
    answer = ok(Client(app), "capsules")
    assert schema_errors(load_schema(), "CapsulesResponse", answer) == []
    by_path = {os.path.dirname(c["path"]): c for c in answer["capsules"]}
    sound = by_path["a"]
    assert sound["status"] == "ok" and sound["step"] == 4 and sound["replay_run"] is None
    assert "replay" in sound["replay_command"] and sound["verdict"] is None
    first = sound["samples"][0]
    assert (first["array"], first["sample"], first["nonfinite"]) == ("x", 3, 1)  # which sample did it: the NaN one
    assert all(s["nonfinite"] == 0 for s in sound["samples"][1:])
    assert sound["bad_weights"] == []
    assert by_path["b"]["status"] == "damaged" and "batch.npz: missing" in by_path["b"]["error"]
    assert by_path["c"]["status"] == "damaged" and "'trigger' is not a dict" in by_path["c"]["error"]


def test_replay_dumps_of_several_capsules_get_distinct_stable_run_names(tmp_path):
    """Several capsules in one folder (two trainings that stopped at the same step: the writer suffixes the second
    folder), each replayed: each replay dump is a run of its own, named after its capsule's folder, the same names
    from one dashboard start to the next, and each card points at its own capsule's replay run."""
    source = capsule.load(os.path.join(run("capsule_fit"), "capsules")).path
    replay_dump = dumps.make_dump("clean_mlp")  # any tfdbg2 dump stands in for a replay's
    logdir = tmp_path / "capsules"
    names = [os.path.basename(source), os.path.basename(source) + "-2"]
    for name in names:
        shutil.copytree(source, logdir / name)
        shutil.copytree(replay_dump, logdir / name / capsule_files.REPLAY_DIR)
    answers = []
    for _start in range(2):
        app, _ = make_app(str(logdir))
        client = Client(app)
        runs = sorted(r["name"] for r in wait_indexed(client)["runs"])
        cards = {c["path"]: c["replay_run"] for c in ok(client, "capsules")["capsules"]}
        answers.append((runs, cards))
    expected = sorted(f"{n}/{capsule_files.REPLAY_DIR}" for n in names)
    assert answers[0][0] == expected
    assert answers[0][1] == {n: f"{n}/{capsule_files.REPLAY_DIR}" for n in names}
    assert answers[1] == answers[0]


# --- Tensor Values on a capsule's arrays (route capsule_array) -----------------------------------------------------


def _as_array(values: list, dtype: np.dtype) -> np.ndarray:
    """A slice's JSON values back to numpy (the encoder spells non-finite floats as strings)."""
    return np.array([float(v) if isinstance(v, str) else v for v in values], dtype=dtype)


@pytest.fixture
def served_capsule(tmp_path):
    """(client, capsule card path, capsule folder) for capsule_fit --nan-input's capsule (one NaN in the batch)."""
    logdir = tmp_path / "logdir"
    shutil.copytree(os.path.join(run("capsule_fit", "--nan-input"), "capsules"), logdir / "caps")
    client = Client(make_app(str(logdir))[0])
    (card,) = ok(client, "capsules")["capsules"]
    return client, card["path"], str(logdir / card["path"])


def test_capsule_array_serves_a_batch_array_bit_for_bit_with_the_injected_nan(served_capsule):
    client, path, folder = served_capsule
    expected = np.load(os.path.join(folder, "batch.npz"))["x"]
    answer = ok(client, "capsule_array", capsule=path, group="batch", name="x", slice="...")
    assert schema_errors(load_schema(), "CapsuleArrayResponse", answer) == []
    assert (answer["step"], answer["dtype"], answer["shape"]) == (4, "float32", list(expected.shape))
    got = _as_array(answer["slice"]["values"], expected.dtype).reshape(expected.shape)
    finite = np.isfinite(expected)
    assert np.array_equal(np.isnan(got), np.isnan(expected))
    assert got[finite].tobytes() == expected[finite].tobytes()  # bit for bit (JSON keeps a float32 exactly)
    # tests/programs/capsule_fit.py --nan-input puts one NaN in sample POISONED_ROW=3, feature 2
    assert answer["stats"]["nan"] == 1 and answer["nonfinite"]["positions"] == [[3, 2]]
    assert answer["stats"]["min"] == float(expected[finite].min()) and answer["stats"]["max"] == float(
        expected[finite].max()
    )
    assert answer["stats"]["pos"] + answer["stats"]["zero"] + answer["stats"]["neg"] == int(finite.sum())


def test_capsule_array_serves_weights_and_optimizer_state_by_variable_path(served_capsule):
    client, path, folder = served_capsule
    weights = np.load(os.path.join(folder, "weights.npz"))
    kernel = weights["dense/kernel"]
    answer = ok(client, "capsule_array", capsule=path, group="weights", name="dense/kernel", slice="1:3,::2")
    assert answer["shape"] == list(kernel.shape) and answer["slice"]["shape"] == [2, (kernel.shape[1] + 1) // 2]
    assert _as_array(answer["slice"]["values"], kernel.dtype).tobytes() == kernel[1:3, ::2].tobytes()
    assert answer["stats"]["count"] == kernel.size and answer["stats"]["nan"] == 0
    assert answer["stats"]["mean"] == pytest.approx(float(kernel.mean(dtype=np.float64)), rel=1e-9)
    optimizer = np.load(os.path.join(folder, "optimizer.npz"))
    name = next(n for n in optimizer.files if optimizer[n].ndim >= 1)
    slot = ok(client, "capsule_array", capsule=path, group="optimizer", name=name, slice="...")
    assert slot["shape"] == list(optimizer[name].shape)
    assert _as_array(slot["slice"]["values"], optimizer[name].dtype).tobytes() == optimizer[name].ravel().tobytes()


def test_capsule_array_unknown_capsule_or_name_is_404_and_bad_parameters_400(served_capsule):
    client, path, _ = served_capsule
    for params, status, code in (
        (dict(capsule="nope", group="batch", name="x"), 404, "not_found"),
        (dict(capsule="../" + path, group="batch", name="x"), 404, "not_found"),
        (dict(capsule=path, group="batch", name="no/such/array"), 404, "not_found"),
        (dict(capsule=path, group="weights", name="x"), 404, "not_found"),  # x is the batch's, not a variable
        (dict(capsule=path, group="rng", name="x"), 400, "bad_parameter"),
        (dict(capsule=path, group="batch", name="x", slice="8"), 400, "bad_parameter"),  # 8 samples: 0..7
        (dict(capsule=path, group="batch", name="x", bins=0), 400, "bad_parameter"),
        (dict(group="batch", name="x"), 400, "missing_parameter"),
    ):
        got, _, body = get(client, url("capsule_array", **params))
        assert (got, body["error"]["code"]) == (status, code), (params, body)


def test_a_damaged_capsule_array_is_a_404_naming_the_file_never_a_500(served_capsule):
    client, path, folder = served_capsule
    batch = os.path.join(folder, "batch.npz")
    with open(batch, "r+b") as f:  # the member's zip header overwritten, the file's size kept
        data = f.read()
        f.seek(data.index(b"PK\x03\x04"))
        f.write(b"XXXX")
    status, _, body = get(client, url("capsule_array", capsule=path, group="batch", name="x"))
    assert status == 404 and "batch.npz" in body["error"]["message"], body
    weights = os.path.join(folder, "weights.npz")
    with open(weights, "r+b") as f:
        f.truncate(os.path.getsize(weights) - 100)
    status, _, body = get(client, url("capsule_array", capsule=path, group="weights", name="dense/kernel"))
    assert status == 404 and "weights.npz: truncated" in body["error"]["message"], body
    os.remove(os.path.join(folder, "optimizer.npz"))
    status, _, body = get(client, url("capsule_array", capsule=path, group="optimizer", name="adam/iteration"))
    assert status == 404 and "optimizer.npz: missing" in body["error"]["message"], body


def test_an_array_is_read_where_it_lies_and_a_compressed_one_decoded(served_capsule):
    """Uncompressed members (what the writer makes) are located in the .npz, not loaded; a compressed member, a
    Fortran-order array and strings (a capsule rewritten by hand) are decoded and served alike."""
    _, _, folder = served_capsule
    loc, _manifest = capsule_arrays.locate(folder, "weights", "dense/kernel")
    kernel = np.load(os.path.join(folder, "weights.npz"))["dense/kernel"]
    assert loc.small is None and loc.path.endswith("weights.npz") and loc.content_offset > 0
    assert tensor_content.read_range(loc, 0, kernel.size).tobytes() == kernel.tobytes()
    batch = dict(np.load(os.path.join(folder, "batch.npz")))
    extra = {"x": batch["x"], "y": np.asfortranarray(np.tile(batch["y"], (1, 3)))}
    np.savez_compressed(os.path.join(folder, "batch.npz"), **extra)
    with open(os.path.join(folder, "manifest.json")) as f:
        manifest = json.load(f)
    manifest["files"]["batch"]["bytes"] = os.path.getsize(os.path.join(folder, "batch.npz"))
    with open(os.path.join(folder, "manifest.json"), "w") as f:
        json.dump(manifest, f)
    for name, array in extra.items():
        loc, _ = capsule_arrays.locate(folder, "batch", name)
        assert loc.small is not None and loc.shape == array.shape
        got = tensor_content.read_range(loc, 0, array.size)
        assert np.array_equal(got, np.ascontiguousarray(array).ravel(), equal_nan=True), name


def test_a_bfloat16_variable_is_served_widened_as_a_dumped_bfloat16_value(tmp_path):
    """numpy saves a bfloat16 array (ml_dtypes) as raw 2-byte voids; the manifest's dtype names it, and Tensor Values
    shows its values widened to float32 (exact), as for a bfloat16 FULL_TENSOR value."""
    ml_dtypes = pytest.importorskip("ml_dtypes")
    kernel = (np.arange(12, dtype=np.float32).reshape(3, 4) / 3).astype(ml_dtypes.bfloat16)
    kernel[1, 2] = np.nan
    manifest = {
        "step": 2,
        "trigger": {"kind": "loss", "name": "loss"},
        "batch_structure": {"kind": "array", "name": "x"},
    }
    groups = {
        "batch": {"x": np.zeros((3, 1), np.float32)},
        "weights": {"dense/kernel": kernel},
        "optimizer": {},
        "rng": {},
    }
    writer.write_capsule(str(tmp_path), "cap", manifest, groups)
    answer = capsule_array.capsule_array(str(tmp_path), "cap", "weights", "dense/kernel", "...", 8)
    assert (answer["dtype"], answer["shape"], answer["stats"]["nan"]) == ("bfloat16", [3, 4], 1)
    got = _as_array(answer["slice"]["values"], np.dtype(np.float32)).reshape(3, 4)
    assert np.array_equal(got, kernel.astype(np.float32), equal_nan=True)


# --- a capsule array as a .npy download (route capsule_array.npy) --------------------------------------------------


def test_capsule_array_npy_is_the_npz_members_bytes(served_capsule):
    """The download of a batch array and of a variable: byte for byte the `.npy` member of the capsule's npz (the
    injected NaN included), offered under a name saying the capsule's step, the group and the array."""
    client, path, folder = served_capsule
    for group, name in (("batch", "x"), ("weights", "dense/kernel")):
        with zipfile.ZipFile(os.path.join(folder, f"{group}.npz")) as npz:
            member = npz.read(name + ".npy")
        resp = client.get(url("capsule_array.npy", capsule=path, group=group, name=name))
        assert resp.status_code == 200 and resp.headers["Content-Type"] == "application/octet-stream"
        assert resp.get_data() == member, (group, name)
        assert int(resp.headers["Content-Length"]) == len(member)
        disposition = resp.headers["Content-Disposition"]
        assert f"capsule-step4_{group}_{name.replace('/', '_')}.npy" in disposition, disposition
    assert (
        np.isnan(
            np.load(io.BytesIO(client.get(url("capsule_array.npy", capsule=path, group="batch", name="x")).get_data()))
        ).sum()
        == 1
    )
    status, _, body = get(client, url("capsule_array.npy", capsule=path, group="batch", name="nope"))
    assert status == 404 and body["error"]["code"] == "not_found", body
