"""Every run under a logdir, discovered recursively and kept fresh by one background refresher thread.

Each pass: find file sets (new directories and hosts are picked up), group them into runs, then let every run read
what its files gained. A failing pass is recorded on the catalog (and the run) and the next pass still runs.
"""

from __future__ import annotations

import os
import threading
import time
import traceback
from collections.abc import Callable

from ..reader import file_sets as fsets
from ..reader import storage
from ..wire import types as wire
from . import capsule_notice, run_status
from .errors import NotFound
from .run_index import RunIndex
from .state import Problem, notice_of


class Catalog:
    """protocol.Catalog over a logdir. The first pass runs in the constructor so queries see data at once."""

    def __init__(
        self,
        logdir: str,
        refresh_interval: float = 1.0,
        first_pass: bool = True,
        on_complete: Callable[[RunIndex], None] | None = None,
    ):
        """`on_complete(run)`: see RunIndex (the layers above warm their whole-run values with it). `logdir`: a
        local path or a URL (reader/storage: gs://, s3://, any fsspec scheme)."""
        self.logdir = storage.normalize(logdir)
        self.on_complete = on_complete
        self.refresh_interval = refresh_interval
        self._runs: dict[str, RunIndex] = {}
        self._by_key: dict[tuple[str, str], RunIndex] = {}  # (directory, run id or prefix) -> run
        self._capsules_seen = False  # has_capsules()
        self._run_ids: dict[tuple[str, str], str | None] = {}  # (directory, prefix) -> run id
        self._lock = threading.Lock()
        self._discover_lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._problems: list[Problem] = []
        self.passes = 0
        if first_pass:
            self.refresh()

    # ------------------------------------------------------------------------------------ refresher
    def start(self) -> None:
        with self._lock:
            if self._thread is not None and self._thread.is_alive():
                return
            self._stop.clear()
            self._thread = threading.Thread(target=self._loop, name=f"dbg-refresh:{self.logdir}", daemon=True)
            self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)

    def _loop(self) -> None:
        while not self._stop.is_set():
            started = time.monotonic()
            self.refresh()
            self._stop.wait(max(0.05, self.refresh_interval - (time.monotonic() - started)))

    def refresh(self) -> None:
        """One discovery + read pass over every run. Never raises."""
        try:
            with self._discover_lock:  # a manual refresh() may race the refresher thread
                # The notices say what the latest pass met: a cause that went away takes its notice with it, and
                # one that stays is one notice, not one per pass.
                self._problems = self._discover()
        except Exception as exc:  # noqa: BLE001
            self._problems = [
                {
                    "code": "refresh_failed",
                    "severity": "error",
                    "message": f"scanning {self.logdir} failed: {exc!r}",
                    "trace": traceback.format_exc(limit=3),
                }
            ]
        for run in list(self._runs.values()):
            run_status.refresh_run(run)  # never raises; records the run's failures in its status
        self.passes += 1

    def _discover(self) -> list[Problem]:
        """Updates the runs from the file sets found now; returns the notices for folders that cannot be listed."""
        errors: list[tuple[str, OSError]] = []
        remote = storage.is_remote(self.logdir)
        found = fsets.find_file_sets(self.logdir, errors) if remote or os.path.isdir(self.logdir) else []
        for fs in found:
            key = (fs.directory, fs.prefix)
            run_id = self._run_ids.get(key)
            if run_id is None:
                run_id = self._run_ids[key] = fsets.read_run_id(fs)
            fs.run_id = run_id
        grouped = fsets.group_runs(self.logdir, found)
        runs = dict(self._runs)
        for name, sets in grouped.items():
            run_key = (sets[0].directory, sets[0].run_id or sets[0].prefix)
            run = self._by_key.get(run_key)
            if run is None and sets[0].run_id is not None:
                # A run first seen before its metadata was readable was keyed by its prefix.
                run = self._by_key.pop((sets[0].directory, sets[0].prefix), None)
                if run is not None:
                    self._by_key[run_key] = run
            if run is None:
                run = RunIndex(name, self.logdir, sets, on_complete=self.on_complete)
                self._by_key[run_key] = run
            else:
                run.add_file_sets(sets)
            for old_name in [k for k, v in runs.items() if v is run and k != name]:
                del runs[old_name]
            run.name = name
            runs[name] = run
        self._runs = runs
        problems = [_unlisted_notice(self.logdir, path, exc) for path, exc in errors[:20]]
        refused = storage.refused_notice(self.logdir) if remote and not errors else None
        if refused:  # keys with '..' segments and the like: never read (a notice, not a silent gap)
            problems.append({"code": "unreadable_file", "severity": "warning", "file": ".", "message": refused})
        return problems

    # ------------------------------------------------------------------------------------ queries
    def runs(self) -> list[RunIndex]:
        return [self._runs[k] for k in sorted(self._runs)]

    def run(self, name: str) -> RunIndex:
        run = self._runs.get(name)
        if run is None:
            raise NotFound(f"run {name!r} not found under {self.logdir}")
        return run

    def has_runs(self) -> bool:
        return bool(self._runs)

    def has_capsules(self) -> bool:
        if not self._capsules_seen:  # once seen, for good: each look is a walk of the logdir's first levels
            self._capsules_seen = bool(capsule_notice.local_capsules(self.logdir))
        return self._capsules_seen

    def notices(self) -> list[wire.Notice]:
        out = [notice_of(p) for p in self._problems]
        if not self._runs and self.passes == 0:
            # Before the first pass has looked, "no dump found" would be a guess (and a wrong one for a big logdir).
            out.append({"code": "scanning", "severity": "info", "message": f"Scanning {self.logdir} for tfdbg2 dumps…"})
        elif not self._runs and (capsules := capsule_notice.capsules_notice(self.logdir)) is not None:
            out.append(capsules)  # a capsule folder before its replay: the capsule, not "no dump found"
        elif not self._runs:
            out.append(
                {
                    "code": "no_dump_found",
                    "severity": "info",
                    "message": (
                        f"No tfdbg2 dump found under {self.logdir} (searched every folder recursively for "
                        "tfdbg_events.*.metadata / .execution / .graph_execution_traces files). Write one with "
                        "tf.debugging.experimental.enable_dump_debug_info(logdir, tensor_debug_mode='FULL_HEALTH', "
                        "circular_buffer_size=-1)."
                    ),
                }
            )
        return out


def _unlisted_notice(logdir: str, path: str, exc: OSError) -> Problem:
    if storage.is_remote(logdir):
        return {
            "code": "unreadable_file",
            "severity": "error",
            "file": ".",
            "message": (
                f"Cannot list {logdir}: {exc.strerror or repr(exc)}. Runs already read still show; the listing is "
                f"tried again on every refresh (each request waits at most {storage.REQUEST_TIMEOUT_S:g} s)."
            ),
        }
    rel = os.path.relpath(path, logdir).replace(os.sep, "/")
    rel = rel.encode("utf-8", "surrogateescape").decode("utf-8", "replace")  # JSON-safe, as run names are
    return {
        "code": "unreadable_file",
        "severity": "error",
        "file": rel,
        "message": (
            f"Cannot list the folder {rel} ({exc.strerror or exc!r}): dumps inside it are not shown. It is tried "
            "again on every refresh."
        ),
    }
