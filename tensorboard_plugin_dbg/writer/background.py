"""Records written off the training thread: a bounded queue of write tasks run in order by one daemon thread.

A recorded call hands its payload (still being computed by the device) to this thread and returns at once, so the
training thread neither waits for the host copy of the counts nor pays for framing and writing them. The thread is
woken once per WAKE tasks (or after LINGER seconds), not per task: each wake-up is two context switches, and on a
busy two-core host a woken thread waits for a time slice while the training thread's next step waits for it (the
GIL), so a write per call cost more in hand-offs than in writing. It then runs every task queued, and `after`
(the files' flush: two write calls per batch, not per call). Consecutive tasks taken together that share a `joins`
key (a recorded jitted function's calls) are run as one, by the first's `together(tasks)`: one vectorized pass
over their records instead of one per call (each pass on a busy host pays its cold caches again). The queue is
bounded (DEPTH tasks): a writer that falls behind makes the training thread wait instead of holding ever more
payloads. A task that fails is reported on stderr once; later tasks still run.
"""

from __future__ import annotations

import collections
import functools
import sys
import threading
from collections.abc import Callable
from typing import Any, Protocol, cast

DEPTH = 4  # calls waiting to be written at most (what a killed program may lose, on top of those being written)
WAKE = 2  # tasks queued before the thread is woken (fewer are run after LINGER seconds, or at drain)
LINGER = 0.05  # seconds a task waits at most for the thread when fewer than WAKE are queued
LOST_AT_MOST = 2 * DEPTH  # a SIGKILL's window: those queued, and those taken and being written (DEPTH at most)


class Joinable(Protocol):
    """A task that may run together with the tasks of its `joins` key queued right after it."""

    joins: object

    def __call__(self) -> None: ...

    def together(self, tasks: list[Any]) -> None: ...


class Background:
    def __init__(self, after: Callable[[], None] | None = None) -> None:
        self._after = after  # run once the tasks taken together have run
        self._queued: collections.deque[Callable[[], None]] = collections.deque()
        self._cond = threading.Condition()
        self._unfinished = 0  # queued or being run
        self._failed = False
        self._draining = 0  # callers in drain(): the thread runs what is queued without lingering
        self._thread = threading.Thread(target=self._run, name="tensorboard_plugin_dbg writer", daemon=True)
        self._thread.start()

    def submit(self, task: Callable[[], None]) -> None:
        """Runs `task` after those submitted before it (at once when called from a task)."""
        if threading.current_thread() is self._thread:
            task()
            return
        with self._cond:
            while len(self._queued) >= DEPTH:
                self._cond.notify_all()
                self._cond.wait()
            self._queued.append(task)
            self._unfinished += 1
            if len(self._queued) >= WAKE:
                self._cond.notify_all()

    def drain(self) -> None:
        """Waits until every task submitted so far has run (no wait from a task itself)."""
        if threading.current_thread() is self._thread:
            return
        with self._cond:
            self._draining += 1
            while self._unfinished:
                self._cond.notify_all()
                self._cond.wait()
            self._draining -= 1

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._queued:
                    self._cond.wait(LINGER)
                if len(self._queued) < WAKE and not self._draining:  # woken by time: one more chance to batch
                    self._cond.wait(LINGER)
                tasks = list(self._queued)
                self._queued.clear()
                self._cond.notify_all()  # room in the queue for a waiting caller
            for group in _joined(tasks):
                self._one(group[0] if len(group) == 1 else functools.partial(cast(Joinable, group[0]).together, group))
            if self._after is not None:
                self._one(self._after)
            with self._cond:
                self._unfinished -= len(tasks)
                self._cond.notify_all()

    def _one(self, task: Callable[[], None]) -> None:
        try:
            task()
        except Exception as err:  # noqa: BLE001 - a write that fails must not stop the training thread
            if not self._failed:
                self._failed = True
                print(f"tensorboard_plugin_dbg: writing the debug dump failed: {err!r}", file=sys.stderr)


def _joined(tasks: list[Callable[[], None]]) -> list[list[Callable[[], None]]]:
    """The tasks in order, those next to each other with one `joins` key (not None) in one group."""
    groups: list[list[Callable[[], None]]] = []
    for task in tasks:
        key = getattr(task, "joins", None)
        if key is not None and groups and getattr(groups[-1][0], "joins", None) is key:
            groups[-1].append(task)
        else:
            groups.append([task])
    return groups
