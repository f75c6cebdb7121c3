"""The one cache of a run's derived whole-run values, and the one lock order.

Every value computed from a whole run — the index's tables (rows by kind, the sorted alert list, filter results)
and the analysis's (classification, root cause, alert roles) — is kept here, per run, under a name and the key it
was built for (the column lengths or the index version it read). A value whose key no longer matches is stale, never
wrong: concurrent appends only make it stale.

Lock order (the only locks a run has, outermost first):
  1. `RunIndex.ingest_lock` — held by the refresher for a whole pass, including the warm-up of derived values
     when a dump is fully read. Requests never take it.
  2. `DerivedCache.lock` (this module) — one reentrant lock per run, held while a value is built. A build may
     derive another value of the same run (reentrant), read records (3), but never take lock 1, and never touch
     another run's cache.
  3. The record cache lock in `RunIndex.read_event` — a leaf: nothing is taken while it is held.
A thread holds at most one run's lock 2: a build never reads another run's derived values. Work that reads two
runs (a comparison, api/routes/compare.py) is built holding no run's lock and stored with `put`.
Five module-level locks exist, each a leaf guarding one small process-wide table (nothing is read or locked while
one is held): json_encoding._gz_lock, storage._stores_lock, alert_list._STARTED_LOCK, capsule_summary._cache_lock,
capsule_array._summaries_lock. None is held while a run's value is built, so two
runs' builds never wait for each other. (Before this module the analysis kept a
second cache under a process-wide lock that was taken inside this one on one path and outside it on another, which
deadlocked under concurrent requests: tests/test_stress_locks.py.)
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

T = TypeVar("T")


class DerivedCache:
    """name -> (key, value) for one run. A name is any hashable value: a string, or e.g. ("filter", a TraceFilter)."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self._values: dict[Hashable, tuple[Hashable, Any]] = {}

    def peek(self, name: Hashable, key: Hashable) -> Any | None:
        """The value of `name` built for `key`, or None; never builds, never waits."""
        entry = self._values.get(name)
        return entry[1] if entry is not None and entry[0] == key else None

    def latest(self, name: Hashable) -> tuple[Any, Any] | None:
        """(key, value) of the last build of `name`, whatever its key; never waits."""
        return self._values.get(name)

    def put(self, name: Hashable, key: Hashable, value: Any) -> None:
        """Stores a value computed without the lock (cheap values that two threads may compute twice)."""
        self._values[name] = (key, value)

    def get(self, name: Hashable, key: Hashable, build: Callable[[], T], stale_ok: bool = False) -> T:
        """The value of `name` for `key`, built by `build()` once when missing or stale.

        One builder at a time per run: without it, 50 concurrent requests after a refresh pass each rebuilt the
        same table (a sort over every row) at once and held the GIL for seconds (bench/load.py). `stale_ok`: while
        another thread builds, the previous value will do (while the dump is read, every batch makes the tables
        stale, and requests that arrive during a rebuild get the previous version, as if they had come a moment
        earlier, instead of queueing behind it one after another)."""
        entry = self._values.get(name)
        if entry is not None and entry[0] == key:
            return entry[1]
        if stale_ok and entry is not None:
            if not self.lock.acquire(blocking=False):
                return entry[1]
        else:
            self.lock.acquire()
        try:
            return self._build(name, key, build)
        finally:
            self.lock.release()

    def _build(self, name: Hashable, key: Hashable, build: Callable[[], T]) -> T:
        entry = self._values.get(name)  # another thread may have built it while this one waited
        if entry is not None and entry[0] == key:
            return entry[1]
        value = build()
        self._values[name] = (key, value)
        return value
