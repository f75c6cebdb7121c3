"""`python -m tensorboard_plugin_dbg.demo` without its extra (issue #25): one line naming the extra to install, a
non-zero exit, and nothing written or replaced (no half-written dump)."""

from __future__ import annotations

import os
import subprocess
import sys

import dumps
import pytest

from tensorboard_plugin_dbg.demo import __main__ as demo_main

# Runs the demo's entry point with one module's import blocked (sys.modules[name] = None: `import name` fails).
BLOCKED_RUN = (
    "import sys; sys.modules[sys.argv.pop(1)] = None; "
    "from tensorboard_plugin_dbg.demo.__main__ import main; raise SystemExit(main(sys.argv[1:]))"
)


def _run_demo_without(module: str, cwd: str, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=dumps.ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run(
        [sys.executable, "-c", BLOCKED_RUN, module, *args, "--no-tensorboard"],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize(("module", "package"), [("sklearn", "scikit-learn"), ("tensorflow", "tensorflow-cpu")])
def test_demo_without_extra_says_which_and_writes_nothing(tmp_path, module, package):
    proc = _run_demo_without(module, str(tmp_path))  # the default logdir: ./dbg-demo-logdir
    assert proc.returncode == 1, proc
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr  # one line, no traceback
    assert package in lines[0] and 'pip install "tensorboard-plugin-dbg[demo]"' in lines[0], lines
    assert 'pip install ".[demo]"' in lines[0], lines
    assert proc.stdout == ""
    assert os.listdir(tmp_path) == []  # no dbg-demo-logdir, nothing else


def test_demo_without_extra_keeps_the_previous_dump(tmp_path):
    previous = tmp_path / "logdir" / "buggy_mlp"
    previous.mkdir(parents=True)
    (previous / "kept").write_text("x")
    proc = _run_demo_without("sklearn", str(tmp_path), "--logdir", str(tmp_path / "logdir"))
    assert proc.returncode == 1 and "scikit-learn" in proc.stderr, proc
    assert os.listdir(previous) == ["kept"]


def test_missing_extra_names_a_package_not_installed(monkeypatch):
    monkeypatch.setattr(demo_main, "EXTRA_MODULES", (("sklearn", "scikit-learn"), ("no_such_module_dbg", "no-such")))
    assert demo_main.missing_extra() == ["no-such"]
