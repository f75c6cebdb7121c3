"""Requests first (index/priority.py): the indexer waits while requests are answered, bounded, and never for itself."""

from __future__ import annotations

import http.client
import shutil
import threading
import time

import pytest
from werkzeug.serving import make_server

from tensorboard_plugin_dbg.api import errors
from tensorboard_plugin_dbg.api.app import ApiApp
from tensorboard_plugin_dbg.index import priority
from tensorboard_plugin_dbg.index.catalog import Catalog
from tensorboard_plugin_dbg.index.priority import RequestsFirst


def _in_thread(fn) -> threading.Thread:
    t = threading.Thread(target=fn, daemon=True)
    t.start()
    return t


def test_nothing_in_flight_means_no_wait():
    gate = RequestsFirst()
    started = time.monotonic()
    assert gate.yield_to_requests(max_wait=1.0) == 0.0
    assert time.monotonic() - started < 0.05


def test_waits_until_the_last_request_ends():
    gate = RequestsFirst()
    release = threading.Event()

    def request():
        with gate.serving():
            release.wait(5)

    threads = [_in_thread(request) for _ in range(3)]
    while gate.in_flight() < 3:
        time.sleep(0.001)
    threading.Timer(0.2, release.set).start()
    waited = gate.yield_to_requests(max_wait=5.0)
    assert 0.15 < waited < 2.0, waited
    assert gate.in_flight() == 0
    assert gate.waited == pytest.approx(waited)
    for t in threads:
        t.join(1)


def test_a_request_that_never_ends_costs_at_most_max_wait():
    gate = RequestsFirst()
    gate_held = threading.Event()
    release = threading.Event()

    def stuck():
        gate.begin()
        gate_held.set()
        release.wait(10)
        gate.end()

    t = _in_thread(stuck)
    gate_held.wait(2)
    started = time.monotonic()
    gate.yield_to_requests(max_wait=0.1)
    assert 0.08 < time.monotonic() - started < 1.0
    release.set()
    t.join(2)


def test_a_thread_answering_a_request_never_waits_for_requests():
    """A request that itself reads (e.g. the first one to touch a run) would otherwise wait for itself."""
    gate = RequestsFirst()
    other = threading.Event()
    release = threading.Event()

    def another_request():
        with gate.serving():
            other.set()
            release.wait(5)

    t = _in_thread(another_request)
    other.wait(2)
    with gate.serving():
        started = time.monotonic()
        assert gate.yield_to_requests(max_wait=2.0) == 0.0
        assert time.monotonic() - started < 0.05
    release.set()
    t.join(2)


def test_end_on_another_thread_does_not_break_the_count():
    gate = RequestsFirst()
    gate.begin()
    _in_thread(gate.end).join(2)
    assert gate.in_flight() == 0
    assert gate.yield_to_requests(max_wait=1.0) == 0.0


class _SlowCatalog:
    """Stands in for a catalog: its `runs` blocks until the test lets it answer."""

    def __init__(self):
        self.logdir = "/nowhere"
        self.entered, self.release = threading.Event(), threading.Event()

    def runs(self):
        self.entered.set()
        self.release.wait(5)
        return []

    def notices(self):
        return []


def test_a_request_is_in_flight_from_the_call_until_the_server_closes_the_answer(monkeypatch):
    gate = RequestsFirst()
    monkeypatch.setattr("tensorboard_plugin_dbg.api.app.GATE", gate)
    catalog = _SlowCatalog()
    server = make_server("127.0.0.1", 0, ApiApp(lambda: catalog), threaded=True)
    _in_thread(server.serve_forever)
    try:
        answers = []

        def get(path):
            conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
            conn.request("GET", path)
            response = conn.getresponse()
            answers.append((response.status, response.read()))
            conn.close()

        client = _in_thread(lambda: get("/data/plugin/dbg/runs"))
        assert catalog.entered.wait(5)
        assert gate.in_flight() == 1
        catalog.release.set()
        client.join(5)
        assert answers and answers[0][0] == 200
        deadline = time.monotonic() + 2
        while gate.in_flight() and time.monotonic() < deadline:
            time.sleep(0.005)
        assert gate.in_flight() == 0
        get("/data/plugin/dbg/no-such-route")  # an error answer is closed too
        assert answers[1][0] == 404 and errors.NOT_FOUND.encode() in answers[1][1]
        deadline = time.monotonic() + 2
        while gate.in_flight() and time.monotonic() < deadline:
            time.sleep(0.005)
        assert gate.in_flight() == 0
    finally:
        server.shutdown()


def test_the_indexer_yields_to_a_request_in_flight_and_still_finishes(demo_dump, tmp_path, monkeypatch):
    gate = RequestsFirst()
    monkeypatch.setattr("tensorboard_plugin_dbg.index.run_index.GATE", gate)
    logdir = tmp_path / "logdir"
    shutil.copytree(demo_dump, logdir / "run")
    held, release = threading.Event(), threading.Event()

    def request_that_outlasts_indexing():
        with gate.serving():
            held.set()
            release.wait(30)

    t = _in_thread(request_that_outlasts_indexing)
    held.wait(2)
    monkeypatch.setattr(priority, "MAX_WAIT", 0.02)
    catalog = Catalog(str(logdir))  # the first pass runs here: it waits at every step, but only so long
    run = catalog.runs()[0]
    assert run.done and len(run.traces) > 0
    assert gate.waited > 0.02  # it did yield (every file with data, at least once)
    release.set()
    t.join(2)
    cold = Catalog(str(logdir)).runs()[0]
    assert len(cold.traces) == len(run.traces) and len(cold.execs) == len(run.execs)


def test_the_plugin_takes_the_startup_heap_out_of_the_collectors_sight(tmp_path):
    """A full collection walked TensorBoard's and TensorFlow's ~340 K startup objects with the GIL held (~200 ms,
    every request waiting). The plugin freezes what exists when it is made, and again when its catalog is."""
    import gc

    from tensorboard.plugins import base_plugin

    from tensorboard_plugin_dbg.plugin import DbgPlugin, NoLogdirCatalog

    made_before = [object()]  # a tracked container: frozen by the constructor
    before = gc.get_freeze_count()
    plugin = DbgPlugin(base_plugin.TBContext(logdir=str(tmp_path)), catalog_factory=lambda _: NoLogdirCatalog())
    after_init = gc.get_freeze_count()
    assert after_init > before
    made_between = [object()]  # frozen when the catalog is made
    plugin.catalog()
    assert gc.get_freeze_count() > after_init
    assert made_before and made_between  # both alive until the counts were taken


def test_in_flight_ends_once_the_body_is_taken_or_at_close_if_never(monkeypatch):
    from werkzeug.test import EnvironBuilder

    gate = RequestsFirst()
    monkeypatch.setattr("tensorboard_plugin_dbg.api.app.GATE", gate)
    catalog = _SlowCatalog()
    catalog.release.set()
    app = ApiApp(lambda: catalog)

    def call():
        return app(EnvironBuilder(path="/data/plugin/dbg/runs").get_environ(), lambda *a: None)

    taken = call()
    assert gate.in_flight() == 1
    assert b"".join(taken).startswith(b"{")
    assert gate.in_flight() == 0  # written: the indexer may go on before the server's close()
    taken.close()
    assert gate.in_flight() == 0  # and close() does not end it twice
    dropped = call()
    assert gate.in_flight() == 1
    dropped.close()  # never iterated (the client went away): close() ends it
    assert gate.in_flight() == 0
