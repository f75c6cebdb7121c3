"""Shared fixtures: real-TensorFlow dumps (made once per session, see tests/dumps.py); and the session's hygiene.

Hygiene: a test run leaves nothing behind. The session gets a temporary directory of its own (TMPDIR for this
process and every subprocess it starts, `tempfile.tempdir`, pytest's `tmp_path` base, Hypothesis' storage), removed
when the session ends. If anything other than pytest's own `tmp_path` folders is still in it at the end, or the run
left a file in the checkout that git does not ignore, or a new entry in the folders of $HOME where tools keep their
configuration and caches (~/.keras, ~/.cache, ~/.config...: see home_hygiene.py), the session fails and names what was
left.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import dump_facts
import dumps
import home_hygiene

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Set at import, before any test module or fixture asks for a temporary name; pytest imports this first.
_OUTER_TMPDIR = tempfile.gettempdir()
_OUTER_TMPDIR_ENV = os.environ.get("TMPDIR")
SESSION_TMP = tempfile.mkdtemp(prefix="dbg-test-session-", dir=_OUTER_TMPDIR)
os.environ["TMPDIR"] = SESSION_TMP
tempfile.tempdir = SESSION_TMP
# Keras writes keras.json into ~/.keras on import (TensorFlow imports it: the oracles' readers, tf.distribute, every
# program a test runs, TensorBoard), Chromium its crash database into ~/.config/chromium and dconf's into ~/.cache,
# JAX and fontconfig their caches into ~/.cache: this process and every subprocess keep them in the session's folder.
SESSION_HOME = os.path.join(SESSION_TMP, "home")
os.environ["KERAS_HOME"] = os.path.join(SESSION_HOME, "keras")
os.environ["XDG_CONFIG_HOME"] = os.path.join(SESSION_HOME, "config")
os.environ["XDG_CACHE_HOME"] = os.path.join(SESSION_HOME, "cache")
# Hypothesis would write .hypothesis/ (example database, charmap cache) into the working directory.
os.environ["HYPOTHESIS_STORAGE_DIRECTORY"] = os.path.join(SESSION_TMP, "hypothesis")

from hypothesis import configuration as _hyp_configuration  # noqa: E402
from hypothesis import settings  # noqa: E402

_hyp_configuration.set_hypothesis_home_dir(os.environ["HYPOTHESIS_STORAGE_DIRECTORY"])
settings.register_profile("dbg-tests", database=None)
settings.load_profile("dbg-tests")


def _untracked() -> set[str]:
    """Files in the checkout that git neither tracks nor ignores (empty when this is not a git checkout)."""
    try:
        out = subprocess.run(
            ["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=all"],
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return set()
    return {line[3:] for line in out.splitlines() if line.startswith("??")}


_UNTRACKED_BEFORE = _untracked()
_HOME_BEFORE = home_hygiene.entries()


def leftovers() -> list[str]:
    """What this session left behind so far: entries of its temporary directory that are not pytest's `tmp_path`
    folders, Hypothesis' storage or the tools' home folders, new files in the checkout that git does not ignore, and
    new entries in $HOME's configuration and cache folders."""
    left = [
        os.path.join(SESSION_TMP, name)
        for name in sorted(os.listdir(SESSION_TMP))
        if not name.startswith("pytest-of-") and name not in ("hypothesis", "home")
    ]
    left += sorted(os.path.join(ROOT, p) for p in _untracked() - _UNTRACKED_BEFORE)
    return left + home_hygiene.new_since(_HOME_BEFORE)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    left = leftovers()
    tempfile.tempdir = None
    if _OUTER_TMPDIR_ENV is None:
        os.environ.pop("TMPDIR", None)
    else:
        os.environ["TMPDIR"] = _OUTER_TMPDIR_ENV
    shutil.rmtree(SESSION_TMP, ignore_errors=True)
    if left:
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        message = "the test run left these behind (each test must remove what it makes):\n  " + "\n  ".join(left)
        if reporter is not None:
            reporter.write_sep("=", "LEFT BEHIND", red=True)
            reporter.write_line(message)
        else:
            print(message, file=sys.stderr)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.fixture(scope="session")
def demo_dump() -> str:
    """The demo program's FULL_HEALTH dump: a directory holding one file set (-inf from Log, then NaN)."""
    return dumps.make_dump("demo")


@pytest.fixture(scope="session")
def demo_logdir(demo_dump: str) -> str:
    """A logdir whose only run is the demo dump (the dump's parent folder)."""
    return os.path.dirname(demo_dump)


@pytest.fixture(scope="session")
def demo_facts(demo_dump: str) -> dict:
    """The demo dump's counts that the CPU and TF's kernels decide, as TF's reader reads them (tests/dump_facts.py):
    the Log trace with -inf and its softmax input, and the alert count."""
    return dump_facts.demo_facts(demo_dump)
