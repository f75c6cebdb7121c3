"""Helpers the unit tests share about a dump's run: the one run of a dump folder, TensorFlow's own reading of a dump
(the oracle, in a subprocess), and the program lines tests expect a finding at. They lived in test_root_cause.py
and test_index_oracle.py, which still re-export them."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import dumps

from tensorboard_plugin_dbg.index.catalog import Catalog


def culprit_line(program: str, marker: str = "# CULPRIT") -> int:
    with open(dumps.program_path(program)) as f:
        lines = [i for i, text in enumerate(f, 1) if marker in text]
    assert len(lines) == 1, f"{program} must mark exactly one line with {marker!r}"
    return lines[0]


def demo_log_line() -> int:
    """The demo's code line calling tf.math.log (indented code, not its module docstring or a comment)."""
    with open(dumps.DEMO_SOURCE) as f:
        lines = [i for i, text in enumerate(f, 1) if re.match(r"^\s+[^#\s].*\btf\.math\.log\(", text)]
    assert len(lines) == 1, lines
    return lines[0]


def only_run(dump_dir: str):
    runs = Catalog(dump_dir).runs()
    assert len(runs) == 1, [r.name for r in runs]
    return runs[0]


_cache: dict = {}


def oracle(dump_dir: str, values: bool = True) -> dict:
    key = (dump_dir, values)
    if key not in _cache:
        args = [sys.executable, os.path.join(dumps.ROOT, "tests", "oracle.py"), dump_dir]
        proc = subprocess.run(
            args + ([] if values else ["--no-values"]),
            capture_output=True,
            text=True,
            check=False,
            timeout=120,
            env=dumps.env_for_tf(),
        )
        assert proc.returncode == 0, proc.stderr[-3000:]
        _cache[key] = json.loads(proc.stdout)
    return _cache[key]


def run_of(dump_dir: str):
    catalog = Catalog(os.path.dirname(dump_dir))
    runs = catalog.runs()
    assert [r.name for r in runs] == [os.path.basename(dump_dir)]
    return runs[0]
