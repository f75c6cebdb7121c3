"""Refresh failures: an exception in one pass, a file deleted or truncated mid-read or after it was served, a file
that cannot be read (permission denied; a directory or FIFO in its place), a folder that cannot be listed, symlinked
dumps. Each is recorded in the run's status (or the catalog's notices for discovery) naming the file, the pass still
completes (`done`), the next pass still runs, and once the cause is gone the index equals a cold read.

Tests may run as root, where chmod 000 does not deny reads: the permission tests make `open` raise PermissionError
for one path (the exception a real EACCES raises), and run the real chmod case in a child process whose capability
bounding set lacks CAP_DAC_OVERRIDE / CAP_DAC_READ_SEARCH, so that the kernel itself refuses the read.
"""

from __future__ import annotations

import builtins
import ctypes
import json
import os
import shutil
import subprocess
import sys
import threading
import time

import pytest

from tensorboard_plugin_dbg.index import catalog as catalog_mod
from tensorboard_plugin_dbg.index import run_index
from tensorboard_plugin_dbg.index.catalog import Catalog
from tensorboard_plugin_dbg.reader import tfrecord


@pytest.fixture
def logdir(tmp_path, demo_dump):
    shutil.copytree(demo_dump, tmp_path / "logdir" / "run")
    return str(tmp_path / "logdir")


def _file(logdir: str, suffix: str) -> str:
    directory = os.path.join(logdir, "run")
    [name] = [n for n in os.listdir(directory) if n.endswith("." + suffix)]
    return os.path.join(directory, name)


def _state(run) -> dict:
    info = run.info()
    return {
        "counts": info["counts"],
        "executions": run.executions(0, 1000)["executions"],
        "rows": run.graph_executions(0, 1000)["rows"],
        "sources": run.source_files(),
    }


def _notices(run, code: str) -> list:
    return [n for n in run.info()["status"]["notices"] if n["code"] == code]


@pytest.fixture
def cold(logdir):
    return _state(Catalog(logdir).runs()[0])


def test_exception_in_one_pass_is_recorded_and_the_next_pass_reads_everything(logdir, cold, monkeypatch):
    real_scan, calls = tfrecord.scan, []

    def failing_scan(buf, base, resyncing=False, hint=None):
        calls.append(base)
        if len(calls) == 3:  # the third file of the first pass
            raise RuntimeError("injected failure")
        return real_scan(buf, base, resyncing, hint)

    monkeypatch.setattr(tfrecord, "scan", failing_scan)
    catalog = Catalog(logdir)
    run = catalog.runs()[0]
    [failed] = _notices(run, "refresh_failed")
    assert "injected failure" in failed["message"] and failed["file"].startswith("tfdbg_events.")
    assert failed["severity"] == "error" and isinstance(failed["offset"], int)
    assert _state(run) != cold  # that file was not read in this pass
    catalog.refresh()
    assert _state(run) == cold
    assert not _notices(run, "refresh_failed")  # the status is current: a file that reads again is no problem


def test_exception_in_discovery_is_a_catalog_notice_and_the_next_pass_recovers(logdir, cold, monkeypatch):
    real = catalog_mod.fsets.find_file_sets
    monkeypatch.setattr(catalog_mod.fsets, "find_file_sets", lambda *a: (_ for _ in ()).throw(OSError("walk failed")))
    catalog = Catalog(logdir)
    catalog.refresh()
    failed = [n for n in catalog.notices() if n["code"] == "refresh_failed"]
    assert len(failed) == 1 and "walk failed" in failed[0]["message"]  # one notice, not one per pass
    monkeypatch.setattr(catalog_mod.fsets, "find_file_sets", real)
    catalog.refresh()
    assert _state(catalog.runs()[0]) == cold
    assert catalog.notices() == []  # the status is current


def test_file_deleted_mid_read_then_restored(logdir, cold, monkeypatch, tmp_path):
    victim = _file(logdir, "execution")
    backup = str(tmp_path / "execution.bak")
    shutil.copyfile(victim, backup)
    real_scan = tfrecord.scan

    def scan_then_delete(buf, base, resyncing=False, hint=None):
        if os.path.exists(victim):
            os.remove(victim)  # deleted while the pass is under way, before its turn comes
        return real_scan(buf, base, resyncing, hint)

    monkeypatch.setattr(tfrecord, "scan", scan_then_delete)
    catalog = Catalog(logdir)
    run = catalog.runs()[0]
    monkeypatch.setattr(tfrecord, "scan", real_scan)
    missing = _notices(run, "missing_file")
    assert [n["file"] for n in missing] == [os.path.basename(victim)], run.info()["status"]["notices"]
    assert run.info()["counts"]["executions"] == 0 and run.info()["counts"]["graph_executions"] > 0
    shutil.copyfile(backup, victim)
    catalog.refresh()
    assert not _notices(run, "missing_file") and _state(run) == cold


def test_file_truncated_mid_read_then_completed(logdir, cold, monkeypatch, tmp_path):
    victim = _file(logdir, "graph_execution_traces")
    with open(victim, "rb") as f:
        full = f.read()
    real_open = builtins.open

    def truncating_open(path, mode="r", *a, **k):
        if path == victim and "r" in mode and os.path.getsize(victim) == len(full):
            with real_open(victim, "r+b") as f:  # cut mid-record between getsize and read
                f.truncate(len(full) // 2 + 7)
        return real_open(path, mode, *a, **k)

    monkeypatch.setattr(builtins, "open", truncating_open)
    catalog = Catalog(logdir)
    monkeypatch.setattr(builtins, "open", real_open)
    run = catalog.runs()[0]
    served = run.info()["counts"]["graph_executions"]
    assert 0 < served < cold["counts"]["graph_executions"]
    assert run.graph_executions(0, served)["rows"] == cold["rows"][:served]  # the intact half, unchanged
    assert not _notices(run, "refresh_failed") and not _notices(run, "damaged_record")
    with open(victim, "wb") as f:  # the writer finishes the file
        f.write(full)
    catalog.refresh()
    assert _state(run) == cold


def test_permission_error_is_an_unreadable_file_notice_and_the_next_pass_reads(logdir, cold, monkeypatch):
    victim = _file(logdir, "graphs")
    real_open = builtins.open

    def denying_open(path, *a, **k):
        if path == victim:
            raise PermissionError(13, "Permission denied", path)
        return real_open(path, *a, **k)

    monkeypatch.setattr(builtins, "open", denying_open)
    catalog = Catalog(logdir)
    run = catalog.runs()[0]
    catalog.refresh()  # a second failing pass: still one notice for the file, nothing else lost
    [notice] = _notices(run, "unreadable_file")
    assert "offset" not in notice  # nothing in the file was reached: no byte to point at
    assert notice["file"] == os.path.basename(victim) and notice["severity"] == "error"
    assert os.path.basename(victim) in notice["message"] and "permission denied" in notice["message"]
    assert not _notices(run, "refresh_failed")
    info = run.info()
    assert info["status"]["done"], "an unreadable file must not leave the run indexing forever"
    assert info["counts"]["executions"] == cold["counts"]["executions"]  # the run's other files are served
    assert info["counts"]["graph_executions"] == cold["counts"]["graph_executions"]
    assert info["counts"]["ops"] == 0
    monkeypatch.setattr(builtins, "open", real_open)
    catalog.refresh()
    assert _state(run) == cold and not _notices(run, "unreadable_file")


_CHMOD_CHILD = """
import json, os, sys
from tensorboard_plugin_dbg.index.catalog import Catalog
logdir, victim, folder = sys.argv[1:4]
os.chmod(victim, 0)
os.chmod(folder, 0)
try:
    open(victim, "rb").close()
    print(json.dumps({"denied": False}))
    sys.exit()
except PermissionError:
    pass
catalog = Catalog(logdir)
catalog.refresh()
first = {"runs": [r.name for r in catalog.runs()], "info": catalog.run("run").info(), "notices": catalog.notices()}
os.chmod(victim, 0o644)
os.chmod(folder, 0o755)
catalog.refresh()
second = {"runs": [r.name for r in catalog.runs()], "info": catalog.run("run").info(), "notices": catalog.notices()}
print(json.dumps({"denied": True, "first": first, "second": second}, default=str))
"""


def _without_dac_override():
    """Runs in the child before exec: a root process keeps only its bounding set's capabilities across exec, so
    without these two, file permissions apply to it as to any user."""
    libc = ctypes.CDLL(None, use_errno=True)
    for cap in (1, 2):  # CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH
        libc.prctl(24, cap, 0, 0, 0)  # PR_CAPBSET_DROP; if it fails, the child reports "denied": false


def test_real_chmod_000_file_and_folder(logdir, cold, demo_dump):
    victim = _file(logdir, "graphs")
    folder = os.path.join(logdir, "hidden")
    shutil.copytree(demo_dump, folder)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    proc = subprocess.run(
        [sys.executable, "-c", _CHMOD_CHILD, logdir, victim, folder],
        check=False,
        cwd=root,
        env={**os.environ, "PYTHONPATH": root},
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=_without_dac_override if os.geteuid() == 0 else None,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout)
    if not out["denied"]:
        pytest.skip(
            "this machine lets the process read a chmod 000 file (root without a droppable "
            "CAP_DAC_OVERRIDE); the monkeypatched tests cover the logic"
        )
    first, second = out["first"], out["second"]
    assert first["runs"] == ["run"]  # the folder that cannot be listed hides nothing else
    [unlisted] = [n for n in first["notices"] if n["code"] == "unreadable_file"]
    assert unlisted["file"] == "hidden" and "hidden" in unlisted["message"]
    [unreadable] = [n for n in first["info"]["status"]["notices"] if n["code"] == "unreadable_file"]
    assert unreadable["file"] == os.path.basename(victim) and "permission denied" in unreadable["message"]
    assert first["info"]["status"]["done"]
    assert first["info"]["counts"]["graph_executions"] == cold["counts"]["graph_executions"]
    # permissions restored: the next pass reads the file and lists the folder
    assert second["runs"] == ["hidden", "run"] and not second["notices"]
    assert second["info"]["counts"] == cold["counts"]
    assert not [n for n in second["info"]["status"]["notices"] if n["severity"] != "info"]


@pytest.mark.parametrize("suffix", ["execution", "graph_execution_traces"])
def test_directory_in_place_of_a_file_then_fixed(logdir, cold, tmp_path, suffix):
    victim = _file(logdir, suffix)
    shutil.move(victim, str(tmp_path / "saved"))
    os.mkdir(victim)
    catalog = Catalog(logdir)
    run = catalog.runs()[0]
    catalog.refresh()
    status = run.info()["status"]
    assert status["done"], "a directory in a file's place must not leave the run indexing forever"
    [notice] = _notices(run, "unreadable_file")  # one notice, not one per pass
    assert notice["file"] == os.path.basename(victim) and "directory" in notice["message"]
    assert os.path.basename(victim) in notice["message"]
    codes = {n["code"] for n in status["notices"]}
    assert not codes & {"refresh_failed", "still_indexing", "no_graph_executions", "no_executions"}, codes
    os.rmdir(victim)
    shutil.move(str(tmp_path / "saved"), victim)
    catalog.refresh()
    assert _state(run) == cold and not _notices(run, "unreadable_file")


def test_fifo_in_place_of_files_does_not_hang(logdir, cold, tmp_path):
    """open() on a FIFO blocks until a writer comes: discovery (metadata) and reading (traces) must not wait."""
    victims = [_file(logdir, "metadata"), _file(logdir, "graph_execution_traces")]
    for i, victim in enumerate(victims):
        shutil.move(victim, str(tmp_path / f"saved{i}"))
        os.mkfifo(victim)
    box = {}
    worker = threading.Thread(target=lambda: box.update(catalog=Catalog(logdir)), daemon=True)
    worker.start()
    worker.join(60)
    assert "catalog" in box, "the first pass hung on a FIFO"
    run = box["catalog"].runs()[0]
    assert run.info()["status"]["done"]
    assert sorted(n["file"] for n in _notices(run, "unreadable_file")) == sorted(map(os.path.basename, victims))
    assert run.info()["counts"]["executions"] == cold["counts"]["executions"]
    for i, victim in enumerate(victims):
        os.remove(victim)
        shutil.move(str(tmp_path / f"saved{i}"), victim)
    box["catalog"].refresh()
    assert _state(run) == cold and not _notices(run, "unreadable_file")


def test_file_truncated_or_deleted_after_it_was_served(logdir, cold, tmp_path):
    traces, execution = _file(logdir, "graph_execution_traces"), _file(logdir, "execution")
    for path in (traces, execution):
        shutil.copyfile(path, str(tmp_path / os.path.basename(path)))
    catalog = Catalog(logdir)
    run = catalog.runs()[0]
    with open(traces, "r+b") as f:
        f.truncate(1000)
    os.remove(execution)
    catalog.refresh()
    info = run.info()
    assert info["counts"] == cold["counts"] and info["status"]["done"]  # nothing already served is lost
    [cut] = _notices(run, "unreadable_file")
    assert cut["file"] == os.path.basename(traces) and cut["offset"] == 1000 and "shrank" in cut["message"]
    [gone] = _notices(run, "missing_file")
    assert gone["file"] == os.path.basename(execution) and "deleted" in gone["message"]
    for path in (traces, execution):
        shutil.copyfile(str(tmp_path / os.path.basename(path)), path)
    catalog.refresh()
    assert _state(run) == cold
    assert not [n for n in run.info()["status"]["notices"] if n["severity"] != "info"]


def test_symlinked_dumps_are_followed_once_and_loops_end(tmp_path, demo_dump, cold):
    outside = tmp_path / "outside"
    shutil.copytree(demo_dump, outside / "dump")
    shutil.copytree(demo_dump, outside / "other")
    root = tmp_path / "links"
    shutil.copytree(demo_dump, root / "real")
    os.symlink(outside / "dump", root / "linked")  # a run folder that is a link to a dump kept elsewhere
    os.symlink(root / "real", root / "alias")  # the same dump as real/ again
    os.symlink(root, root / "real" / "loop")  # a loop back to the logdir
    os.symlink(root / "self", root / "self")  # a link to itself
    for name, target in (("files", outside / "dump"), ("files_real", root / "real"), ("files_only", outside / "other")):
        os.mkdir(root / name)  # a folder of symlinked dump files
        for f in os.listdir(target):
            if f.startswith("tfdbg_events."):
                os.symlink(target / f, root / name / f)
    catalog = Catalog(str(root))
    catalog.refresh()
    # files/ and files_real/ are the dumps of linked/ and real/ again; files_only/ reaches a dump nothing else does
    assert [r.name for r in catalog.runs()] == ["files_only", "linked", "real"]
    for run in catalog.runs():
        assert _state(run) == cold and run.info()["status"]["done"], run.name
        assert not [n for n in run.info()["status"]["notices"] if n["severity"] != "info"], run.name
    assert catalog.notices() == []


def test_folder_that_cannot_be_listed_is_a_catalog_notice(logdir, cold, monkeypatch):
    blocked, real_scandir = os.path.join(logdir, "run"), os.scandir

    def denying_scandir(path="."):
        if os.fspath(path) == blocked:
            raise PermissionError(13, "Permission denied", path)
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", denying_scandir)
    catalog = Catalog(logdir)
    catalog.refresh()
    [notice] = [n for n in catalog.notices() if n["code"] == "unreadable_file"]
    assert notice["file"] == "run" and "Permission denied" in notice["message"] and notice["severity"] == "error"
    assert not catalog.runs()
    monkeypatch.setattr(os, "scandir", real_scandir)
    catalog.refresh()
    assert _state(catalog.runs()[0]) == cold and catalog.notices() == []


def test_a_run_whose_whole_refresh_raises_is_recorded_and_the_thread_goes_on(logdir, cold, monkeypatch):
    real, failures = run_index.RunIndex.refresh, {"left": 2}

    def flaky(self):
        if failures["left"] > 0:
            failures["left"] -= 1
            raise RuntimeError("whole pass failed")
        return real(self)

    monkeypatch.setattr(run_index.RunIndex, "refresh", flaky)
    catalog = Catalog(logdir)
    [failed] = _notices(catalog.runs()[0], "refresh_failed")
    assert "whole pass failed" in failed["message"] and "file" not in failed
    catalog.refresh_interval = 0.05
    catalog.start()
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not (catalog.runs()[0].done and failures["left"] == 0):
            time.sleep(0.05)
        run = catalog.runs()[0]
        assert _state(run) == cold and not _notices(run, "refresh_failed")
    finally:
        catalog.stop()


def test_background_refresher_survives_a_failing_pass(logdir, cold, monkeypatch):
    """The thread itself: a pass that raises inside RunIndex.refresh's own loop does not stop later passes."""
    real = run_index.RunIndex.read_file
    failures = {"left": 2}

    def flaky(self, code, state):
        if failures["left"] > 0 and state.suffix == "execution":
            failures["left"] -= 1
            raise MemoryError("injected")
        return real(self, code, state)

    monkeypatch.setattr(run_index.RunIndex, "read_file", flaky)
    catalog = Catalog(logdir, refresh_interval=0.05, first_pass=False)
    catalog.start()
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            runs = catalog.runs()
            if runs and failures["left"] == 0 and runs[0].done and _state(runs[0]) == cold:
                break
            time.sleep(0.05)
        run = catalog.runs()[0]
        assert _state(run) == cold
        assert failures["left"] == 0 and not _notices(run, "refresh_failed")
    finally:
        catalog.stop()
