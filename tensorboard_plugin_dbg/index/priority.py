"""Requests first: the indexer steps aside while API requests are being answered.

TensorBoard answers every request on its own thread, and all of them share one GIL with the refresher thread that
indexes a dump. A chunk of indexing holds the GIL for milliseconds at a time, and a request thread that gives the
GIL up (a socket write, a file read) waits up to `sys.getswitchinterval()` (5 ms) to get it back each time — so a
request that needs 1 ms of CPU took 10–100 ms while a big dump was being read, and 50 clients saw a p99 of 220–460
ms (bench/load.py). Here the API marks each request in flight, and the indexer, between chunks, waits until none
is (at most `max_wait`, so a stream of requests slows indexing but can never stop it).

The indexer must only wait where it holds nothing a request could need: between chunks, never inside a derived
value's build (requests wait on its lock, and would then wait for the indexer that waits for them). A thread that
is itself answering a request never waits here (e.g. a request that reads a run for the first time).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

MAX_WAIT = 0.05  # seconds the indexer yields per step at most: a flood of requests costs it ≤ this per chunk


class RequestsFirst:
    """Counts the requests in flight; `yield_to_requests` waits for the count to reach zero."""

    def __init__(self):
        self._cond = threading.Condition(threading.Lock())
        self._in_flight = 0
        self._local = threading.local()
        self.waited = 0.0  # seconds the indexer spent waiting, in all (reported by the benchmarks)

    @contextmanager
    def serving(self) -> Iterator[None]:
        self.begin()
        try:
            yield
        finally:
            self.end()

    def begin(self) -> None:
        with self._cond:
            self._in_flight += 1
        self._local.depth = getattr(self._local, "depth", 0) + 1

    def end(self) -> None:
        self._local.depth = max(0, getattr(self._local, "depth", 0) - 1)  # a server may close on another thread
        with self._cond:
            self._in_flight -= 1
            if self._in_flight == 0:
                self._cond.notify_all()

    def in_flight(self) -> int:
        return self._in_flight

    def yield_to_requests(self, max_wait: float | None = None) -> float:
        """Waits (at most `max_wait` s, default MAX_WAIT) until no request is in flight; returns the seconds waited."""
        if not self._in_flight or getattr(self._local, "depth", 0):
            return 0.0
        started = time.monotonic()
        with self._cond:
            self._cond.wait_for(lambda: self._in_flight == 0, timeout=MAX_WAIT if max_wait is None else max_wait)
        waited = time.monotonic() - started
        self.waited += waited
        return waited


GATE = RequestsFirst()  # one per process: every run's indexer yields to every request
