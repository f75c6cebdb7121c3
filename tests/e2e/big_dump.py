"""The 1 M-trace dump the big e2e tests open (bench/generate.py, cached across sessions). It lived in
test_dashboard_big.py, which still re-exports it."""

from __future__ import annotations

import os
import subprocess
import sys

import dumps

TRACES = 1_000_000
LOGDIR = os.path.join(dumps.ROOT, ".pytest_cache", "dumps", "bench-1m", "logdir")


def _make_big_dump() -> str:
    # bench/generate.py reuses a complete dump with the same parameters, so only the first session pays (~20 s).
    out = os.path.join(LOGDIR, "big")
    proc = subprocess.run(
        [sys.executable, os.path.join(dumps.ROOT, "bench", "generate.py"), "--traces", str(TRACES), "--out", out],
        cwd=dumps.ROOT,
        env=dumps.env_for_tf(),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return LOGDIR
