"""Smoke run of the benchmark (bench/run.py) at 100 k traces: it must complete and fill both columns.

No thresholds here: the figures depend on the machine; `bench/run.py` itself reports pass/fail per target.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from harness import chromium

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _row(markdown: str, metric_prefix: str) -> list[str]:
    for line in markdown.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells and cells[0].startswith(metric_prefix):
            return cells
    raise AssertionError(f"no row {metric_prefix!r} in:\n{markdown}")


@pytest.mark.slow  # a 100 k benchmark of both systems: ~15-90 s
def test_bench_100k_smoke(tmp_path):
    prefix = str(tmp_path / "smoke")
    args = [sys.executable, os.path.join(ROOT, "bench", "run.py"), "--traces", "100000", "--reps", "5", "--out", prefix]
    if chromium.find() is None:
        args.append("--no-browser")
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="", TF_CPP_MIN_LOG_LEVEL="2")
    proc = subprocess.run(args, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    with open(prefix + ".md") as f:
        table = f.read()
    assert "| metric | dbg (ours) | Debugger V2 (reference) |" in table
    for metric in (
        "all alerts served",
        "indexing time",
        "100-row page at middle, median",
        "peak RSS (VmHWM)",
        "peak RSS growth over the 20 k dump once every alert is served",  # issue #25's figure
    ):
        cells = _row(table, metric)
        assert cells[1] not in ("", "—") and cells[2] not in ("", "—"), cells
    assert "B/trace, target ≤ 32 B: " in table  # the same figure on its own line, with its verdict
    assert os.path.exists(prefix + ".json")
