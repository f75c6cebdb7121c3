"""Boundary: user patterns (docs/THREAT_MODEL.md). A `re:` mute comes from a request parameter, a permalink someone
sent or `report --mute`; it runs on RE2 (google-re2, linear time), so `re:^(.|.)*!` — exponential on Python's
backtracking engine, which holds the GIL and froze every route of TensorBoard — answers at once on long Keras op
names. Each check runs in a child process or a real `tensorboard` with a deadline, so a regression fails, never
hangs. The permalink in Chromium: tests/e2e/test_rules_ui.py."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.parse

import dumps
import pytest

from harness.tensorboard_process import TensorBoardProcess
from tensorboard_plugin_dbg.analysis.rules import mutes

pytestmark = pytest.mark.slow
EXPONENTIAL = "re:^(.|.)*!"  # never matches (no '!'): a backtracking engine tries 2^len(name) paths first
ENDS_MATMUL = "re:^(.|.)*MatMul$"
DEADLINE_S = 60  # generous on a shared 2-core machine; the backtracking engine needs hours on these names


def test_user_regex_runs_in_linear_time_on_a_long_name():
    code = (
        "import time;from tensorboard_plugin_dbg.analysis.rules import mutes;"
        f'm=mutes.parse_json(\'[{{"op_name": "{EXPONENTIAL}"}}]\')[0];t=time.monotonic();'
        "assert not m.matches_op('MatMul', 'sequential/' + 'dense_12/' * 500 + 'MatMul', '1');"
        "print(time.monotonic()-t)"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=DEADLINE_S)
    assert proc.returncode == 0, proc.stderr
    assert float(proc.stdout) < 1.0


@pytest.mark.parametrize("pattern", ["re:(a)\\1", "re:(?=x)y", "re:("])
def test_patterns_re2_cannot_run_are_refused_in_words(pattern):
    with pytest.raises(mutes.MuteError, match="regular expression"):
        mutes.parse_json(json.dumps([{"op_name": pattern}]))


def test_report_mute_with_an_exponential_pattern_finishes():
    dump = dumps.make_dump("nan_keras")
    args = ["report", dump, "--mute", f"op_name={EXPONENTIAL}", "--mute", f"op_name={ENDS_MATMUL},reason=r"]
    command = [sys.executable, "-m", "tensorboard_plugin_dbg", *args]
    proc = subprocess.run(command, capture_output=True, text=True, timeout=DEADLINE_S)
    assert proc.returncode == 1, proc.stdout + proc.stderr  # holds NaN/∞, the report printed whole
    assert "first producer: op" in proc.stdout and "Log" in proc.stdout


def test_the_route_answers_and_the_server_stays_responsive():
    """The alerts route with the exponential mute (and one that matches every MatMul) on a real tensorboard: it
    answers within the deadline, the MatMul mute hides something, and the run list answers right after."""
    with TensorBoardProcess(dumps.make_dump("nan_keras")) as tb:
        deadline = time.monotonic() + DEADLINE_S
        runs = tb.get_json("/data/plugin/dbg/runs", timeout=DEADLINE_S)["runs"]
        while not runs or not all(r["status"]["done"] for r in runs):
            assert time.monotonic() < deadline, runs
            time.sleep(0.3)
            runs = tb.get_json("/data/plugin/dbg/runs", timeout=DEADLINE_S)["runs"]
        param = urllib.parse.quote(json.dumps([{"op_name": EXPONENTIAL}, {"op_name": ENDS_MATMUL, "reason": "r"}]))
        run = urllib.parse.quote(runs[0]["name"])
        started = time.monotonic()
        answer = tb.get_json(f"/data/plugin/dbg/root_cause?run={run}&mutes={param}", timeout=DEADLINE_S)
        assert time.monotonic() - started < DEADLINE_S and "producer" in json.dumps(answer)
        assert tb.get_json("/data/plugin/dbg/runs", timeout=10)["runs"]
