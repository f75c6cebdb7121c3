"""Boundary: a capsule names a program, a folder and environment variables (docs/THREAT_MODEL.md). `replay` prints
the exact command, folder and every variable it adds before running; a recorded command runs only once confirmed
(`--yes`; no tty and no --yes: exit 2, nothing run); only the variables the writer records on purpose are applied; the
child's output is kept in a log whose path is printed; an earlier replay is kept until the new one succeeded; a
malformed manifest is exit 2 with a sentence. The child here is a small Python script standing for the user's
program (it writes the verdict a NanCapsule in replay mode would write): no TensorFlow needed."""

from __future__ import annotations

import io
import json
import os
import shlex
import shutil
import subprocess
import sys

import pytest

from tensorboard_plugin_dbg import capsule
from tensorboard_plugin_dbg.analysis import capsule_summary, capsule_text
from tensorboard_plugin_dbg.reader import capsule_files
from tests import dumps

CHILD = """
import json, os, sys
marker = sys.argv[1]
with open(marker, "w") as f:
    json.dump({k: v for k, v in os.environ.items() if k.startswith(("TBDBG", "PYTHONPATH", "TF_", "EVIL"))}, f)
print("hello from the child program")
capsule = os.environ.get("TBDBG_CAPSULE_REPLAY")
if capsule and os.path.isdir(capsule):
    with open(os.path.join(capsule, "replay.json"), "w") as f:
        json.dump({"verdict": "reproduced", "same_trigger": True}, f)
"""


@pytest.fixture
def crafted(tmp_path) -> dict:
    """A real capsule (capsule_fit's) whose manifest names CHILD, with hostile extra variables."""
    source = capsule.load(os.path.join(dumps.make_dump("capsule_fit"), "capsules")).path
    folder = tmp_path / "capsules" / os.path.basename(source)
    shutil.copytree(source, folder)
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    marker = tmp_path / "ran.json"
    env = {"TF_DETERMINISTIC_OPS": "1", "PYTHONPATH": str(tmp_path / "evil"), "TBDBG_CAPSULE_REPLAY": "/elsewhere"}
    env["EVIL_VARIABLE"] = "x"
    _edit_manifest(
        folder,
        program={"executable": sys.executable, "argv": [str(script), str(marker)], "cwd": str(tmp_path), "env": env},
    )
    return {"folder": str(folder), "marker": marker, "script": str(script)}


def _edit_manifest(folder, **fields) -> None:
    path = os.path.join(folder, capsule_files.MANIFEST)
    with open(path) as f:
        manifest = json.load(f)
    manifest.update(fields)
    with open(path, "w") as f:
        json.dump(manifest, f)


def _replay(*args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "TF_DETERMINISTIC_OPS")}
    env["PYTHONPATH"] = os.environ.get("PYTHONPATH", "")  # the worktree's package, as the test runs it
    command = [sys.executable, "-m", "tensorboard_plugin_dbg", "replay", *args]
    return subprocess.run(command, capture_output=True, text=True, stdin=subprocess.DEVNULL, env=env, timeout=120)


def test_a_recorded_command_without_a_tty_or_yes_is_printed_and_not_run(crafted):
    proc = _replay(crafted["folder"])
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert crafted["script"] in proc.stdout and "--yes" in proc.stdout and "Traceback" not in proc.stderr
    assert not crafted["marker"].exists()  # nothing ran


def test_yes_shows_command_folder_and_variables_and_applies_only_recorded_ones(crafted, tmp_path):
    proc = _replay(crafted["folder"], "--yes")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    seen = json.loads(crafted["marker"].read_text())
    assert seen["TBDBG_CAPSULE_REPLAY"] == crafted["folder"] and seen["TF_DETERMINISTIC_OPS"] == "1"
    assert seen.get("PYTHONPATH") != str(tmp_path / "evil") and "EVIL_VARIABLE" not in seen
    out = proc.stdout
    assert f"folder: {tmp_path}" in out and crafted["script"] in out
    assert f"TBDBG_CAPSULE_REPLAY={crafted['folder']}" in out and "TF_DETERMINISTIC_OPS=1" in out
    assert "PYTHONPATH" in out and "not applied" in out  # the refused ones are named too
    log = out.split("output: ", 1)[1].split()[0]
    assert "hello from the child program" in open(log).read()


@pytest.mark.parametrize("order", ["after", "before"])
def test_mode_before_or_after_the_capsule(crafted, order):
    args = (
        [crafted["folder"], "--mode", "FULL_TENSOR"]
        if order == "after"
        else ["--mode", "FULL_TENSOR", crafted["folder"]]
    )
    proc = _replay(*args, "--yes")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert json.loads(crafted["marker"].read_text())["TBDBG_CAPSULE_REPLAY_MODE"] == "FULL_TENSOR"


def test_an_explicit_program_runs_without_confirmation(crafted):
    proc = _replay(
        crafted["folder"], "--mode", "FULL_TENSOR", "--", sys.executable, crafted["script"], str(crafted["marker"])
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert crafted["marker"].exists()


def test_an_earlier_replay_is_kept_until_the_new_one_succeeded(crafted):
    replay_dir = os.path.join(crafted["folder"], capsule_files.REPLAY_DIR)
    os.makedirs(replay_dir)
    with open(os.path.join(replay_dir, "tfdbg_events.1.host.metadata"), "wb") as f:
        f.write(b"earlier")
    verdict = {"verdict": "not_reproduced", "reason": "earlier"}
    with open(os.path.join(crafted["folder"], capsule_files.VERDICT), "w") as f:
        json.dump(verdict, f)
    proc = _replay(crafted["folder"], "--", sys.executable, "-c", "pass")  # ends without replaying the step
    assert proc.returncode == 2, proc.stdout
    assert os.listdir(replay_dir) == ["tfdbg_events.1.host.metadata"]
    assert capsule_files.read_verdict(crafted["folder"]) == verdict
    assert _replay(crafted["folder"], "--yes").returncode == 0
    assert capsule_files.read_verdict(crafted["folder"])["verdict"] == "reproduced"
    assert not os.path.exists(os.path.join(replay_dir, "tfdbg_events.1.host.metadata"))


@pytest.mark.parametrize(
    "program",
    [
        {"executable": sys.executable, "argv": "not a list"},
        {"executable": 3, "argv": []},
        {"executable": sys.executable, "argv": [1, 2]},
        {"executable": sys.executable, "argv": [], "env": ["A=1"]},
        {"executable": sys.executable, "argv": [], "cwd": {"x": 1}},
        "a string",
    ],
)
def test_a_malformed_program_is_exit_2_with_a_sentence(crafted, program):
    _edit_manifest(crafted["folder"], program=program)
    for args in ([crafted["folder"], "--yes"], ["report", crafted["folder"]]):
        proc = (
            _replay(*args)
            if args[0] != "report"
            else subprocess.run(
                [sys.executable, "-m", "tensorboard_plugin_dbg", *args], capture_output=True, text=True, timeout=120
            )
        )
        assert proc.returncode == 2 or "DAMAGED" in proc.stdout, proc.stdout + proc.stderr
        assert "Traceback" not in proc.stderr and "program" in proc.stdout + proc.stderr
    assert not crafted["marker"].exists()


def test_control_characters_in_the_recorded_command_are_escaped(crafted):
    script = crafted["script"]
    _edit_manifest(
        crafted["folder"],
        program={"executable": sys.executable, "argv": [script, "\x1b[2K\r  replay it: looks-safe\u202e"], "cwd": "/"},
    )
    replayed = _replay(crafted["folder"])
    reported = subprocess.run(
        [sys.executable, "-m", "tensorboard_plugin_dbg", "report", crafted["folder"]], capture_output=True, text=True
    )
    for proc in (replayed, reported):
        assert "\x1b" not in proc.stdout and "\r" not in proc.stdout and "\u202e" not in proc.stdout, proc.stdout
    assert "\\u001b[2K\\u000d" in replayed.stdout and "\\u202e" in replayed.stdout, replayed.stdout
    assert "looks-safe" not in reported.stdout  # report's replay command names nothing from the manifest


@pytest.mark.parametrize(
    "text",
    ['{"format": "tbdbg-nan-capsule", "format_version": 1, "x": ' + "[" * 5000 + "]" * 5000 + "}", "[1, 2]", "{"],
)
def test_a_malformed_manifest_is_a_sentence_for_replay_and_report(crafted, text):
    with open(os.path.join(crafted["folder"], capsule_files.MANIFEST), "w") as f:
        f.write(text)
    replay = _replay(crafted["folder"], "--yes")
    report = subprocess.run(
        [sys.executable, "-m", "tensorboard_plugin_dbg", "report", crafted["folder"]], capture_output=True, text=True
    )
    for proc in (replay, report):
        assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stdout + proc.stderr
        assert "manifest.json" in proc.stdout + proc.stderr


def test_the_cards_copied_command_asks_before_running_anything_the_capsule_names(crafted, tmp_path):
    """#37 (#40 item 3's card): "Copy replay command" gave `cd CWD && EXECUTABLE -m tensorboard_plugin_dbg replay
    FOLDER -- EXECUTABLE ARGV`, all from the manifest: pasted, `--` ran the recorded program unasked (and the recorded
    interpreter ran before replay could ask). The card's, report's and the notice's command now name the viewer's
    interpreter and the folder only: pasted without a terminal, nothing runs and replay exits 2."""
    impostor = tmp_path / "python-impostor"
    impostor.write_text(f'#!/bin/sh\ntouch {tmp_path / "impostor-ran"}\nexec {sys.executable} "$@"\n')
    impostor.chmod(0o755)
    _edit_manifest(
        crafted["folder"],
        program={
            "executable": str(impostor),
            "argv": [crafted["script"], str(crafted["marker"])],
            "cwd": str(tmp_path),
        },
    )
    logdir = os.path.dirname(crafted["folder"])
    card = capsule_summary.summary(crafted["folder"], logdir)
    command = card["replay_command"]
    assert "--" not in shlex.split(command) and str(impostor) not in command and "cd " not in command, command
    with io.StringIO() as out:
        capsule_text.report_capsules(logdir, out)
        assert f"replay it: {command}\n" in out.getvalue()
    env = {**os.environ, "PYTHONPATH": os.environ.get("PYTHONPATH", "")}
    proc = subprocess.run(
        ["/bin/sh", "-c", command], capture_output=True, text=True, stdin=subprocess.DEVNULL, env=env, timeout=120
    )
    assert proc.returncode == 2 and "--yes" in proc.stdout, proc.stdout + proc.stderr
    assert not crafted["marker"].exists() and not (tmp_path / "impostor-ran").exists()  # nothing ran
