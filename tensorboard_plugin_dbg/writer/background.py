"""Records written off the training thread: a bounded queue of write tasks run in order by one daemon thread.

A recorded call hands its payload (still being computed by the device) to this thread and returns at once, so the
training thread neither waits for the host copy of the counts nor pays for framing and writing them. The queue is
bounded (DEPTH calls): a writer that falls behind makes the training thread wait instead of holding ever more
payloads. A task that fails is reported on stderr once; later tasks still run.
"""

from __future__ import annotations

import queue
import sys
import threading
from collections.abc import Callable

DEPTH = 4  # calls waiting to be written at most (what a killed program may lose, on top of the one being written)


class Background:
    def __init__(self) -> None:
        self._tasks: queue.Queue[Callable[[], None]] = queue.Queue(maxsize=DEPTH)
        self._failed = False
        self._thread = threading.Thread(target=self._run, name="tensorboard_plugin_dbg writer", daemon=True)
        self._thread.start()

    def submit(self, task: Callable[[], None]) -> None:
        """Runs `task` after those submitted before it (at once when called from a task)."""
        if threading.current_thread() is self._thread:
            task()
        else:
            self._tasks.put(task)

    def drain(self) -> None:
        """Waits until every task submitted so far has run (no wait from a task itself)."""
        if threading.current_thread() is not self._thread:
            self._tasks.join()

    def _run(self) -> None:
        while True:
            task = self._tasks.get()
            try:
                task()
            except Exception as err:  # noqa: BLE001 - a write that fails must not stop the training thread
                if not self._failed:
                    self._failed = True
                    print(f"tensorboard_plugin_dbg: writing the debug dump failed: {err!r}", file=sys.stderr)
            finally:
                self._tasks.task_done()
