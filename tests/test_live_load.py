"""Smoke run of bench/load.py (the load benchmark): a few concurrent clients against a real tensorboard on the demo
dump, from its first request (which starts indexing). Checks only that it runs and that no request failed; the
latency figures are the benchmark's to report (`python bench/load.py`, 50 clients on 1 M traces)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.mark.slow  # bench/load.py against a real tensorboard: ~8 s
def test_load_smoke(demo_logdir, tmp_path):
    out = tmp_path / "load.json"
    proc = subprocess.run(
        [
            sys.executable,
            os.path.join(ROOT, "bench", "load.py"),
            "--logdir",
            demo_logdir,
            "--clients",
            "8",
            "--requests",
            "10",
            "--think",
            "0.01",
            "--json",
            str(out),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    report = json.loads(out.read_text())
    assert report["error_count"] == 0 and report["requests"] == 80, report
    assert report["graph_executions"] > 0 and report["latency"]["n"] == 80
    assert "latency all:" in proc.stdout and "errors: 0" in proc.stdout
