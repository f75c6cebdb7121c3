"""Stress: many request threads on several runs while they index, under a watchdog (tests/stress_harness.py).

The harness runs in its own process, so a deadlock is caught by its watchdog (which prints every thread's stack and
exits 3) rather than by CI's time limit. The second test breaks the documented lock order on purpose and checks
that the watchdog does catch the deadlock that follows: the first test's pass is then worth something.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import dumps
import pytest

HARNESS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "stress_harness.py")
PROGRAMS = ("demo", "nan_div", "nan_sqrt", "nan_eager", "clean_mlp")


@pytest.fixture(scope="module")
def many_runs(tmp_path_factory) -> str:
    logdir = tmp_path_factory.mktemp("stress")
    for name in PROGRAMS:
        os.symlink(dumps.make_dump(name), logdir / name)
    return str(logdir)


def _harness(logdir: str, *args: str, timeout: float) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": dumps.ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.run(
        [sys.executable, HARNESS, logdir, *args], capture_output=True, text=True, timeout=timeout, env=env
    )


@pytest.mark.slow
def test_requests_on_many_runs_while_indexing_finish(many_runs):
    proc = _harness(many_runs, "--seconds", "8", "--threads", "8", "--deadline", "90", timeout=180)
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-3000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    alerts = dict(zip(result["runs"], result["alerts"]))
    assert sorted(alerts) == sorted(PROGRAMS)
    assert alerts["clean_mlp"] == 0 and all(alerts[p] > 0 for p in PROGRAMS if p != "clean_mlp")


@pytest.mark.slow
def test_watchdog_catches_a_broken_lock_order(many_runs):
    proc = _harness(
        many_runs, "--seconds", "8", "--threads", "8", "--deadline", "20", "--reverse-lock-order", timeout=120
    )
    assert proc.returncode == 3, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "WATCHDOG" in proc.stdout and "build_under_ingest" in proc.stdout


@pytest.mark.slow
def test_opposite_comparisons_hammered_concurrently_finish(tmp_path):
    """A vs B and B vs A at once (issue #39 item 3): each comparison reads both runs; built under one run's lock, the
    two directions waited for each other's lock. A comparison is built holding no run's lock (compare route)."""
    for variant in ("a", "b"):
        os.symlink(dumps.make_dump("cmp_clip_health", variant, "FULL_HEALTH"), tmp_path / variant)
    args = ("--seconds", "6", "--threads", "8", "--deadline", "90", "--compare", "a", "b")
    proc = _harness(str(tmp_path), *args, timeout=180)
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-3000:]
