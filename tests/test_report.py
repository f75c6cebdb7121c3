"""The headless report: `python -m tensorboard_plugin_dbg report LOGDIR [--run RUN] [--json]`.

Run as a real subprocess (exit codes 0/1/2, no TensorFlow imported) and in-process through `main()` for the
per-program file:line checks, on dumps written by real TensorFlow.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import dumps
import pytest
from run_helpers import culprit_line, demo_log_line

from tensorboard_plugin_dbg.__main__ import main


def report(*args: str) -> subprocess.CompletedProcess:
    code = (
        "import sys, runpy; sys.argv = ['tensorboard_plugin_dbg', *sys.argv[1:]]\n"
        "try:\n    runpy.run_module('tensorboard_plugin_dbg', run_name='__main__')\n"
        "finally:\n    assert 'tensorflow' not in sys.modules, 'the report imported TensorFlow'\n"
    )
    # `-c` + runpy is `python -m tensorboard_plugin_dbg` plus a check, at exit, that TensorFlow was never imported.
    return subprocess.run(
        [sys.executable, "-c", code, "report", *args],
        cwd=dumps.ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env=dumps.env_for_tf(),
        check=False,
    )


def test_demo_report_names_log_line(demo_logdir):
    proc = report(demo_logdir)
    assert proc.returncode == 1, proc.stderr
    log_line = demo_log_line()
    assert f"buggy_mlp.py:{log_line}" in proc.stdout
    assert "op Log in train_step (tf.function)" in proc.stdout and "tf.math.log(probs)" in proc.stdout
    assert "probs:0 — finite" in proc.stdout
    assert "AssertionError" not in proc.stderr


def test_plain_module_invocation_and_json(demo_logdir):
    proc = subprocess.run(
        [sys.executable, "-m", "tensorboard_plugin_dbg", "report", demo_logdir, "--json"],
        cwd=dumps.ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env=dumps.env_for_tf(),
        check=False,
    )
    assert proc.returncode == 1, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["exit_code"] == 1 and len(doc["runs"]) == 1
    run = doc["runs"][0]
    assert run["status"] == "found" and run["producer"]["op_type"] == "Log"
    assert run["producer"]["output_health"]["neg_inf"] > 0


def test_clean_exits_zero():
    proc = report(dumps.make_dump("clean_mlp", "FULL_HEALTH"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "CLEAN" in proc.stdout and "1 run: 1 clean (exit 0)" in proc.stdout


def test_unreadable_inputs_exit_two(tmp_path):
    missing = report(str(tmp_path / "nope"))
    assert missing.returncode == 2 and "no such directory" in missing.stderr
    empty = report(str(tmp_path))
    assert empty.returncode == 2 and "no tfdbg2 dump found" in empty.stderr.lower()
    # said once (issue #40 item 14: not "no tfdbg2 dump found (No tfdbg2 dump found under …)")
    assert empty.stderr.lower().count("no tfdbg2 dump found") == 1, empty.stderr
    assert empty.stderr.count(str(tmp_path)) == 1, empty.stderr
    unknown_run = report(dumps.make_dump("clean_mlp", "FULL_HEALTH"), "--run", "no-such-run")
    assert unknown_run.returncode == 2 and "no run named" in unknown_run.stderr


def test_logdir_of_several_runs_and_run_filter(tmp_path):
    logdir = tmp_path / "logs"
    logdir.mkdir()
    # Copies: each run sits in its own folder under the logdir, as a user would lay them out.
    shutil.copytree(dumps.make_dump("clean_mlp", "FULL_HEALTH"), logdir / "clean")
    shutil.copytree(dumps.make_dump("nan_sqrt", "FULL_HEALTH"), logdir / "sqrt")
    proc = report(str(logdir), "--json")
    doc = json.loads(proc.stdout)
    assert proc.returncode == 1, proc.stderr
    by_status = {r["run"]: r["status"] for r in doc["runs"]}
    assert sorted(by_status.values()) == ["clean", "found"], by_status
    clean_name = next(name for name, status in by_status.items() if status == "clean")
    only_clean = report(str(logdir), "--run", clean_name)
    assert only_clean.returncode == 0, only_clean.stdout + only_clean.stderr


@pytest.mark.parametrize("program", ["nan_div", "nan_sqrt", "nan_exp", "nan_while", "nan_keras", "nan_eager"])
def test_report_names_culprit_file_line(program, capsys):
    code = main(["report", dumps.make_dump(program, "FULL_HEALTH")])
    out = capsys.readouterr().out
    assert code == 1, out
    assert f"{os.path.basename(dumps.program_path(program))}:{culprit_line(program)} " in out, out
    assert "# CULPRIT" in out


def test_report_curt_health_says_unknowable(capsys):
    code = main(["report", dumps.make_dump("nan_div", "CURT_HEALTH")])
    out = capsys.readouterr().out
    assert code == 1
    assert "inputs' health cannot be known: CURT_HEALTH" in out
    assert f"nan_div.py:{culprit_line('nan_div')} " in out


def test_report_shape_mode_cannot_tell(capsys):
    code = main(["report", dumps.make_dump("nan_div", "SHAPE"), "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 2 and doc["runs"][0]["status"] == "unknown"


def test_subcommand_is_required(capsys):
    with pytest.raises(SystemExit) as exc:
        main([])
    assert exc.value.code == 2


@pytest.mark.parametrize(
    ("graph_name", "said"),
    [("scratch_graph", "op Log in scratch_graph (Keras graph)"), ("train_step", "op Log in train_step (tf.function)")],
)
def test_report_says_what_a_graph_is_keras_scratch_graph_is_no_tf_function(graph_name, said):
    from typing import cast

    from tensorboard_plugin_dbg.analysis import report_text
    from tensorboard_plugin_dbg.wire import types as wire

    producer = cast(wire.RootCauseProducer, {"op_name": "Log", "op_type": "Log", "graph_name": graph_name})
    assert report_text._where(producer) == said
