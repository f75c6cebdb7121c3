"""Refresh failures: an exception in one pass, a file deleted or truncated mid-read, a file that cannot be opened
(PermissionError; a directory in the file's place). Each is recorded in the run's status (or the catalog's notices
for discovery) naming the file, the next pass still runs, and once the cause is gone the index equals a cold read.

Tests run as root, where chmod 000 does not deny reads, so a permission error is made by making `open` raise
PermissionError for one path (the exception a real EACCES raises), and by putting a directory in the file's place.
The last test checks that the dashboard's status line shows such a problem (real tensorboard + Chromium).
"""

from __future__ import annotations

import builtins
import os
import shutil

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
    return {"counts": info["counts"], "executions": run.executions(0, 1000)["executions"],
            "rows": run.graph_executions(0, 1000)["rows"], "sources": run.source_files()}


def _notices(run, code: str) -> list:
    return [n for n in run.info()["status"]["notices"] if n["code"] == code]


@pytest.fixture
def cold(logdir):
    return _state(Catalog(logdir).runs()[0])


def test_exception_in_one_pass_is_recorded_and_the_next_pass_reads_everything(logdir, cold, monkeypatch):
    real_scan, calls = tfrecord.scan, []

    def failing_scan(buf, base, resyncing=False):
        calls.append(base)
        if len(calls) == 3:  # the third file of the first pass
            raise RuntimeError("injected failure")
        return real_scan(buf, base, resyncing)

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
    monkeypatch.setattr(catalog_mod.fsets, "find_file_sets", lambda d: (_ for _ in ()).throw(OSError("walk failed")))
    catalog = Catalog(logdir)
    assert any(n["code"] == "refresh_failed" and "walk failed" in n["message"] for n in catalog.notices())
    monkeypatch.setattr(catalog_mod.fsets, "find_file_sets", real)
    catalog.refresh()
    assert _state(catalog.runs()[0]) == cold


def test_file_deleted_mid_read_then_restored(logdir, cold, monkeypatch, tmp_path):
    victim = _file(logdir, "execution")
    backup = str(tmp_path / "execution.bak")
    shutil.copyfile(victim, backup)
    real_scan = tfrecord.scan

    def scan_then_delete(buf, base, resyncing=False):
        if os.path.exists(victim):
            os.remove(victim)  # deleted while the pass is under way, before its turn comes
        return real_scan(buf, base, resyncing)

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


def test_permission_error_is_recorded_with_file_and_next_pass_reads(logdir, cold, monkeypatch):
    victim = _file(logdir, "graphs")
    real_open = builtins.open

    def denying_open(path, *a, **k):
        if path == victim:
            raise PermissionError(13, "Permission denied", path)
        return real_open(path, *a, **k)

    monkeypatch.setattr(builtins, "open", denying_open)
    catalog = Catalog(logdir)
    run = catalog.runs()[0]
    catalog.refresh()  # a second failing pass: still recorded, nothing else lost
    failed = _notices(run, "refresh_failed")
    assert failed and all(n["file"] == os.path.basename(victim) and "Permission denied" in n["message"]
                          for n in failed)
    assert run.info()["counts"]["graph_executions"] == cold["counts"]["graph_executions"]
    monkeypatch.setattr(builtins, "open", real_open)
    catalog.refresh()
    assert _state(run) == cold and not _notices(run, "refresh_failed")


def test_directory_in_place_of_a_file_then_fixed(logdir, cold, tmp_path):
    victim = _file(logdir, "execution")
    shutil.move(victim, str(tmp_path / "saved"))
    os.mkdir(victim)
    catalog = Catalog(logdir)
    run = catalog.runs()[0]
    failed = _notices(run, "refresh_failed")
    assert failed and failed[0]["file"] == os.path.basename(victim)
    os.rmdir(victim)
    shutil.move(str(tmp_path / "saved"), victim)
    catalog.refresh()
    assert _state(run) == cold


def test_background_refresher_survives_a_failing_pass(logdir, cold, monkeypatch):
    """The thread itself: a pass that raises inside RunIndex.refresh's own loop does not stop later passes."""
    real = run_index.RunIndex._read_file
    failures = {"left": 2}

    def flaky(self, code, state):
        if failures["left"] > 0 and state.suffix == "execution":
            failures["left"] -= 1
            raise MemoryError("injected")
        return real(self, code, state)

    monkeypatch.setattr(run_index.RunIndex, "_read_file", flaky)
    catalog = Catalog(logdir, refresh_interval=0.05, first_pass=False)
    catalog.start()
    try:
        import time
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
