"""writer/background.py: a recorded call's writes run off the training thread, in order, bounded, and a failing write
neither stops later ones nor reaches the caller."""

from __future__ import annotations

import threading
import time

from tensorboard_plugin_dbg.writer import background


def test_tasks_run_in_order_and_drain_waits_for_them():
    worker = background.Background()
    done: list[int] = []
    gate = threading.Event()
    worker.submit(gate.wait)
    for i in range(background.DEPTH - 1):
        worker.submit(lambda i=i: done.append(i))
    assert done == []  # the training thread went on while the first task waits
    gate.set()
    worker.drain()
    assert done == list(range(background.DEPTH - 1))


def test_a_full_queue_makes_the_caller_wait():
    worker = background.Background()
    gate = threading.Event()
    worker.submit(gate.wait)  # taken by the thread (at the latest after LINGER): the queue is empty again
    while worker._queued:
        time.sleep(0.001)
    for _ in range(background.DEPTH):
        worker.submit(lambda: None)
    blocked = threading.Thread(target=worker.submit, args=(lambda: None,))
    blocked.start()
    blocked.join(0.3)
    assert blocked.is_alive()  # one more than DEPTH waiting: the caller waits
    gate.set()
    blocked.join(5)
    assert not blocked.is_alive()
    worker.drain()


def test_a_failing_write_is_said_once_and_later_writes_still_run(capsys):
    worker = background.Background()
    done: list[str] = []

    def fail() -> None:
        raise OSError("disk full")

    worker.submit(fail)
    worker.submit(fail)
    worker.submit(lambda: done.append("later"))
    worker.drain()
    assert done == ["later"]
    assert capsys.readouterr().err.count("writing the debug dump failed: OSError('disk full')") == 1


def test_a_lone_task_runs_without_a_drain_and_the_files_are_flushed_after_the_tasks_taken():
    """The thread is woken per WAKE tasks; one task alone (the last call before a pause in training) still runs,
    after LINGER, and `after` (the files' flush) follows the tasks of each batch, not each task."""
    order: list[str] = []
    ran = threading.Event()
    worker = background.Background(after=lambda: (order.append("after"), ran.set()))
    worker.submit(lambda: order.append("lone"))
    assert ran.wait(5)  # no drain(): woken by time
    assert order == ["lone", "after"]
    gate = threading.Event()
    worker.submit(gate.wait)  # alone: taken after LINGER
    while worker._queued:
        time.sleep(0.001)
    for name in ("b", "c"):  # queued while the thread waits on the gate: taken together
        worker.submit(lambda name=name: order.append(name))
    gate.set()
    worker.drain()
    assert order == ["lone", "after", "after", "b", "c", "after"]  # one flush per batch: [lone], [gate], [b, c]


class _Joining:
    """A task joining the others of its key queued right after it (a recorded function's calls)."""

    def __init__(self, key: object, name: str, log: list[object]) -> None:
        self.joins, self.name, self.log = key, name, log

    def __call__(self) -> None:
        self.log.append(self.name)

    def together(self, tasks: list[_Joining]) -> None:
        self.log.append(tuple(t.name for t in tasks))


def test_consecutive_tasks_of_one_key_run_together_in_order():
    log: list[object] = []
    worker = background.Background()
    gate = threading.Event()
    worker.submit(gate.wait)
    while worker._queued:  # the thread waits on the gate: the next tasks are taken together
        time.sleep(0.001)
    f, g = object(), object()
    for task in (_Joining(f, "f1", log), _Joining(f, "f2", log), lambda: log.append("eager")):
        worker.submit(task)
    gate.set()
    worker.drain()
    gate.clear()
    worker.submit(gate.wait)
    while worker._queued:
        time.sleep(0.001)
    for task in (_Joining(f, "f3", log), _Joining(g, "g1", log), _Joining(g, "g2", log)):
        worker.submit(task)
    gate.set()
    worker.drain()
    assert log == [("f1", "f2"), "eager", "f3", ("g1", "g2")]  # a lone call runs as itself; keys never mix
