"""A capsule that speaks for itself (#36), with a real Keras program (tests/programs/capsule_speaks.py): one bad
value at a known row and column of one batch, captured by the NanCapsule and replayed.

The test environment is an editable install of the project (the package is imported from the checkout, no
site-packages in its paths): the plugin's own frames (the callback wrapping Keras's train step) must still never be
taken for the user's code."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

import tensorboard_plugin_dbg
from tensorboard_plugin_dbg.analysis import capsule_rows, capsule_text, report_text
from tensorboard_plugin_dbg.index.frames import is_user_path
from tensorboard_plugin_dbg.reader import capsule_files
from tests import dumps

pytestmark = pytest.mark.slow
PACKAGE = os.path.dirname(os.path.abspath(tensorboard_plugin_dbg.__file__))


def replay(tmp_path, case: str) -> tuple[str, str]:
    """`replay` of a copy of the case's capsule folder: its output and the copied folder."""
    folder = tmp_path / "capsules"
    shutil.copytree(os.path.join(dumps.make_dump("capsule_speaks", "--case", case), "capsules"), folder)
    command = [sys.executable, "-m", "tensorboard_plugin_dbg", "replay", str(folder), "--"]
    command += [sys.executable, dumps.program_path("capsule_speaks"), str(tmp_path / "out"), "--case", case]
    proc = subprocess.run(command, capture_output=True, text=True, env=dumps.env_for_tf(), timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout + proc.stderr, str(folder)


def report(folder: str, *args: str) -> str:
    command = [sys.executable, "-m", "tensorboard_plugin_dbg", "report", folder, *args]
    return subprocess.run(command, capture_output=True, text=True, env=dumps.env_for_tf(), timeout=300).stdout


@pytest.mark.parametrize(
    ("path", "user"),
    [
        (os.path.join(PACKAGE, "capsule", "callback.py"), False),  # this checkout: an editable install
        (os.path.join(PACKAGE, "replay_cli.py"), False),
        ("/home/me/src/tensorboard-plugin-dbg/tensorboard_plugin_dbg/capsule/callback.py", False),  # another machine
        ("C:\\src\\tensorboard_plugin_dbg\\analysis\\report_text.py", False),
        (os.path.join(PACKAGE, "demo", "buggy_mlp.py"), True),  # the demo stands for a user's program
        ("/home/me/tensorboard_plugin_dbg/train.py", True),  # a project folder of the same name is the user's
    ],
)
def test_the_plugins_own_frames_are_library_code_in_an_editable_install(path, user):
    assert "site-packages" not in PACKAGE  # the premise: this test env imports the package from the checkout
    assert is_user_path(path) is user


def test_a_nan_that_came_with_the_data_never_names_the_plugins_file(tmp_path):
    text, folder = replay(tmp_path, "data-nan")
    report(folder, "--html", str(tmp_path / "r.html"))
    for shown in (text, report(folder), (tmp_path / "r.html").read_text()):
        # no file of the plugin's named (the advice's `python -m tensorboard_plugin_dbg replay` command is no file)
        assert "tensorboard_plugin_dbg/" not in shown and "original_step" not in shown, shown
        # the model's input is the captured batch: its health is read from batch.npz, the element named
        assert "the NaN came with the batch: x[5, 3] (sample 5, batch 3 of epoch 1)" in shown, shown
        assert "cannot be known" not in shown and "1 NaN among 40 elements" in shown
    assert "capsule_speaks.py:" in text and "model.fit(" in text  # the user's innermost line: the fit that traced it


def test_a_code_bug_met_by_one_finite_bad_record_names_the_line_and_the_value(tmp_path):
    text, folder = replay(tmp_path, "log")
    line = next(i for i, t in enumerate(open(dumps.program_path("capsule_speaks")), 1) if "# CULPRIT" in t)
    said = f"Log at capsule_speaks.py:{line} received x[5, 3] = -2.0 (batch 3 of epoch 1)"
    report(folder, "--html", str(tmp_path / "r.html"))
    for shown in (text, report(folder), (tmp_path / "r.html").read_text()):
        assert said in shown and "1 negative among 40 elements" in shown, shown
        assert "first producer" in shown or "Root cause" in shown or "<" in shown
        assert "cannot be known" not in shown and "inputs unknown" not in shown
    # a rule the replay's mode cannot judge: the replay command on this capsule's real folder, ready to paste
    capsule = os.path.join(folder, os.listdir(folder)[0])
    advice = f"{capsule_text.review_command(capsule)} --mode FULL_TENSOR"
    needs = [s for s in report(folder).splitlines() if s.startswith("not judged: value_explosion needs")]
    assert len(needs) == 1 and needs[0].endswith(f": {advice}") and "LOGDIR" not in needs[0], needs


def test_the_capture_says_what_where_and_the_command_that_replays_it(tmp_path):
    command = [sys.executable, dumps.program_path("capsule_speaks"), str(tmp_path / "out")]
    proc = subprocess.run(command, capture_output=True, text=True, env=dumps.env_for_tf(), timeout=300)
    assert proc.returncode == 0, proc.stderr  # fit ends early with exit 0: the block is the only word of it
    folder = str(tmp_path / "out" / "capsules" / "capsule-step000000011")
    block = proc.stderr[proc.stderr.index("NanCapsule: ") :]
    lines = block.splitlines()
    assert lines[0] == "NanCapsule: non-finite gradient of dense/kernel: 16 NaN of 80 at step 11, epoch 1, batch 3"
    assert lines[1:3] == ["  update not applied; training stopped", f"  capsule: {folder}"]
    said = lines[3].removeprefix("  replay it: ")
    assert f"{sys.executable} -m tensorboard_plugin_dbg replay {folder} -- {sys.executable} " in said
    # the card and `report` offer the command that asks before running what the manifest names (a capsule may come
    # from someone else, #37); the History fit returned keeps the block
    assert capsule_text.review_command(folder) == f"{sys.executable} -m tensorboard_plugin_dbg replay {folder}"
    with open(tmp_path / "out" / "result.json") as f:
        history = json.load(f)["history"]
    assert [h["folder"] for h in history] == [folder] and history[0]["text"] == "\n".join(lines[:6]) + "\n"
    # the command it printed replays the step
    replayed = subprocess.run(said, shell=True, capture_output=True, text=True, env=dumps.env_for_tf(), timeout=300)
    assert replayed.returncode == 0 and "replay: reproduced" in replayed.stdout, replayed.stdout + replayed.stderr
    assert "capsule_speaks.py:" in replayed.stdout and "model.fit(" in replayed.stdout  # the user's line (data NaN)
    assert "tensorboard_plugin_dbg/" not in replayed.stdout
    assert capsule_files.read_verdict(folder)["verdict"] == "reproduced"


def test_report_html_on_a_capsule_folder_holds_the_capsule_section(tmp_path):
    folder = tmp_path / "capsules"
    shutil.copytree(os.path.join(dumps.make_dump("capsule_speaks", "--case", "log"), "capsules"), folder)
    text = report(str(folder), "--html", str(tmp_path / "r.html"))  # not replayed: the capsule is all there is
    page = (tmp_path / "r.html").read_text()
    for shown in (text, page):
        assert "trigger: gradient of dense/kernel: 16 NaN of 80" in shown and "at: step 11, epoch 1, batch 3" in shown
        assert "replay: not replayed yet" in shown and "-m tensorboard_plugin_dbg replay" in shown


# --- per-sample loss at the trigger -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("case", "said"),
    [("spike", "rows 2 and 6 are non-finite (inf) of 8"), ("log", "row 5 is non-finite (NaN) of 8")],
)
def test_the_per_sample_loss_at_the_trigger_names_the_injected_rows(tmp_path, case, said):
    folder = tmp_path / "capsules"
    shutil.copytree(os.path.join(dumps.make_dump("capsule_speaks", "--case", case), "capsules"), folder)
    text = report(str(folder), "--html", str(tmp_path / "r.html"))
    assert f"per-sample loss: {said}" in text and f"per-sample loss: {said}" in (tmp_path / "r.html").read_text()
    (capsule,) = capsule_files.find_capsules(str(folder))
    manifest = capsule_files.read_manifest(capsule)
    assert manifest["forensics"]["per_sample_loss"]["loss"] == "mean_squared_error"
    rows = capsule_rows.card_fields(capsule, manifest)["rows"]
    injected = {"spike": [2, 6], "log": [5]}[case]
    assert [r["sample"] for r in rows[: len(injected)]] == injected and not np.isfinite(rows[0]["loss"])


def test_the_per_sample_sentence_names_the_rows_that_carry_the_loss_or_says_it_is_spread():
    values = np.full(64, 0.01)
    values[[17, 40]] = [20.0, 11.0]
    assert capsule_rows.sentence(values, {}) == "rows 17 and 40 carry 98 % of the loss (64 samples)"
    assert capsule_rows.sentence(np.ones(10), {}).startswith("spread: the top row (0) carries 10 % of the loss")
    one = np.full(64, 0.01)
    one[2] = 90.0
    assert capsule_rows.sentence(one, {}) == "row 2 carries 99 % of the loss (64 samples)"
    # a capsule written before the per-sample loss existed
    assert capsule_rows.sentence(None, {"files": {}}) == "not recorded by this capsule's version"


@pytest.mark.parametrize("jit", [("--previous",), ("--jit", "--previous")], ids=["no_xla_previous_batch", "xla"])
def test_the_previous_steps_batch_gets_its_per_sample_loss_too(tmp_path, jit):
    """The spike case, with XLA and without, with previous_batch=True (a copy every step, off by default):
    batch 3 of epoch 1 carries the two overflowing targets; the step before it (batch 2, kept on the device and
    held with the trigger's batch, capsule/stash.py) is clean: its per-sample loss is finite, with the same
    weights, and `report` says so (before, without XLA: "not kept" whatever the option)."""
    if jit == ("--previous",):  # the default without XLA says why it holds none
        plain = os.path.join(dumps.make_dump("capsule_speaks", "--case", "spike"), "capsules")
        (plain_capsule,) = capsule_files.find_capsules(plain)
        why = capsule_files.read_manifest(plain_capsule)["forensics"]["previous"]["why"]
        assert why.startswith("not kept: without XLA, NanCapsule(previous_batch=True) keeps it")
    folder = tmp_path / "capsules"
    shutil.copytree(os.path.join(dumps.make_dump("capsule_speaks", "--case", "spike", *jit), "capsules"), folder)
    (capsule,) = capsule_files.find_capsules(str(folder))
    manifest = capsule_files.read_manifest(capsule)
    previous = manifest["forensics"]["previous"]
    assert (previous["epoch"], previous["batch_index"], previous["samples"]) == (1, 2, 8)
    values = capsule_rows.per_sample_loss(capsule, manifest, "previous_per_sample_loss")
    trigger = capsule_rows.per_sample_loss(capsule, manifest)
    assert values.shape == (8,) and np.all(np.isfinite(values)) and not np.all(np.isfinite(trigger))
    said = f"previous step's per-sample loss: batch 2 of epoch 1, the same weights: {capsule_rows.sentence(values, {})}"
    assert said in report(str(folder))
    assert capsule_rows.card_fields(capsule, manifest)["previous"] == said.split(": ", 1)[1]


def test_keras_numbered_scratch_graphs_are_keras_graphs_in_the_report():
    """Under tf.distribute Keras numbers its shape-inference graphs (`scratch_graph_1`): still not a tf.function."""
    assert report_text.graph_kind("scratch_graph_1") == report_text.graph_kind("scratch_graph") == "Keras graph"
    assert report_text.graph_kind("scratch_graph_step") == "tf.function"
