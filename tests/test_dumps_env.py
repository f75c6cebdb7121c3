"""tests/dumps.py, the one place that runs TensorFlow programs for the tests (issue #25): the caller's
TF_ENABLE_ONEDNN_OPTS reaches the program unchanged, and dumps written with oneDNN on, off or at the default never
share a cache entry (their counts differ: the CPU's kernels decide how many softmax outputs underflow)."""

from __future__ import annotations

import dumps
import pytest


@pytest.mark.parametrize("value", ["0", "1"])
def test_onednn_setting_passes_through_unchanged(monkeypatch, value):
    monkeypatch.setenv("TF_ENABLE_ONEDNN_OPTS", value)
    assert dumps.env_for_tf()["TF_ENABLE_ONEDNN_OPTS"] == value


def test_onednn_unset_stays_unset(monkeypatch):
    monkeypatch.delenv("TF_ENABLE_ONEDNN_OPTS", raising=False)
    assert "TF_ENABLE_ONEDNN_OPTS" not in dumps.env_for_tf()


def test_each_onednn_setting_has_its_own_cache_key(monkeypatch):
    keys = set()
    for value in ("0", "1", None):
        if value is None:
            monkeypatch.delenv("TF_ENABLE_ONEDNN_OPTS", raising=False)
        else:
            monkeypatch.setenv("TF_ENABLE_ONEDNN_OPTS", value)
        keys.add(dumps._key("demo", ()))
        assert dumps._key("demo", ()) in keys  # the same setting: the same key
    assert len(keys) == 3


def test_a_salt_forces_fresh_dumps_and_unset_changes_nothing(monkeypatch):
    """DBG_TEST_DUMP_SALT (test-only, unset on CI) gives each value its own cache entry, so the tests can be run
    against fresh dumps; unset or empty, the key is the one CI has always used."""
    monkeypatch.delenv(dumps.SALT_ENV, raising=False)
    plain = dumps._key("demo", ())
    monkeypatch.setenv(dumps.SALT_ENV, "")
    assert dumps._key("demo", ()) == plain
    salted = set()
    for salt in ("a", "b"):
        monkeypatch.setenv(dumps.SALT_ENV, salt)
        salted.add(dumps._key("demo", ()))
        assert dumps._key("demo", ()) in salted
    assert len(salted) == 2 and plain not in salted


def test_make_dump_waits_for_another_process_building_the_same_dump(monkeypatch, tmp_path):
    """A second pytest session building the same dump waits on the lock beside the cache entry and then reuses the
    finished dump, instead of wiping the folder the first one is writing (the program here does not exist, so a
    make_dump that did not wait would try to run it and fail)."""
    import subprocess
    import sys
    import threading

    monkeypatch.setattr(dumps, "CACHE", str(tmp_path))
    name = "no_such_program_for_the_lock_test"
    entry = tmp_path / dumps._key(name, ())
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import fcntl, os, sys, time\n"
            "entry = sys.argv[1]\n"
            "handle = open(entry + '.lock', 'a'); fcntl.flock(handle, fcntl.LOCK_EX)\n"
            "print('locked', flush=True); sys.stdin.readline()\n"
            "os.makedirs(os.path.join(entry, 'dump')); open(os.path.join(entry, '.complete'), 'w').close()\n",
            str(entry),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdin is not None and holder.stdout is not None and holder.stdout.readline().strip() == "locked"
    result: list[object] = []
    waiter = threading.Thread(target=lambda: result.append(_call(name)))
    waiter.start()
    # the holder keeps the lock until told (it used to sleep 1.5 s: this thread, held up for a second on a busy
    # machine, found the lock already released and the check below failed)
    waiter.join(0.5)
    assert waiter.is_alive(), "make_dump did not wait for the process holding the lock"
    holder.stdin.write("done\n")
    holder.stdin.close()
    waiter.join(30)
    holder.wait(30)
    assert result == [str(entry / "dump")]


def _call(name):
    try:
        return dumps.make_dump(name)
    except RuntimeError as e:
        return e


def test_a_programs_sibling_imports_are_in_its_cache_key(monkeypatch, tmp_path):
    """`capsule_spike.py` imports `capsule_fit.py`: editing the sibling alone must not serve the dump written with its
    old text."""
    (tmp_path / "helper_prog.py").write_text("VALUE = 1\n")
    (tmp_path / "main_prog.py").write_text("import os\nfrom helper_prog import VALUE  # noqa\n")
    monkeypatch.setattr(dumps, "PROGRAMS", str(tmp_path))
    before = dumps._key("main_prog", ())
    (tmp_path / "helper_prog.py").write_text("VALUE = 2\n")
    assert dumps._key("main_prog", ()) != before
    after = dumps._key("main_prog", ())
    (tmp_path / "unrelated.py").write_text("X = 3\n")  # a program it does not import changes nothing
    assert dumps._key("main_prog", ()) == after
