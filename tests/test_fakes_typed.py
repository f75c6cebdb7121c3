"""The fakes type-checked against protocol.RunQueries and protocol.Catalog with mypy (issue #40 item 8)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

TESTS = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(TESTS)


def _mypy(path: str, cache: str) -> subprocess.CompletedProcess:
    # the fakes' own bodies are not annotated: only their fit to the protocols is checked (imports followed
    # silently), with the package's types
    args = [sys.executable, "-m", "mypy", "--config-file", os.devnull, "--ignore-missing-imports"]
    args += ["--follow-imports=silent", "--cache-dir", cache, "--no-error-summary", path]
    env = dict(os.environ, MYPYPATH=TESTS, PYTHONPATH=ROOT)
    return subprocess.run(args, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False)


@pytest.mark.slow  # mypy over the package, ~20 s
def test_the_fakes_follow_the_protocols(tmp_path):
    done = _mypy(os.path.join(TESTS, "fakes_typed.py"), str(tmp_path / "cache"))
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.slow
def test_a_fake_missing_a_method_is_caught(tmp_path):
    """The check can fail: a fake run whose `device_counts` is no method is refused as a RunQueries."""
    broken = tmp_path / "broken_fake.py"
    broken.write_text(
        "from api_helpers import FakeRun\n"
        "from tensorboard_plugin_dbg.index.protocol import RunQueries\n\n\n"
        "class Broken(FakeRun):\n"
        "    device_counts = None  # type: ignore[assignment]\n\n\n"
        "FAKE: type[RunQueries] = Broken\n"
    )
    done = _mypy(str(broken), str(tmp_path / "cache"))
    assert done.returncode != 0 and 'variable has type "type[RunQueries]"' in done.stdout, done.stdout + done.stderr
