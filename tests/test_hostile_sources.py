"""Source routes serve only text recorded in the dump and never open a path taken from a request or a record.

Through TensorBoard's real WSGI app: every file the process opens while answering (builtins.open and os.open are
spied) must be one of the run's dump files, whatever the request says; a source record naming a file that exists on
this machine with other content is answered with the dump's text; and markup in op names, paths and lines comes
back as plain JSON strings (escaping is the browser test's job: tests/e2e/test_safe_rendering.py).
"""

from __future__ import annotations

import builtins
import os
import shutil
from urllib.parse import quote

import dumps
import pytest
from api_helpers import get, make_app, ok, url, wait_indexed
from fuzz_records import source_record
from werkzeug.test import Client

XSS = "<img src=x onerror=window.__xss=1>"
HOSTILE_PARAMS = [
    "../../../../etc/passwd",
    "/etc/passwd",
    "%2e%2e%2f%2e%2e%2fetc%2fpasswd",
    "0/../../etc/passwd",
    "file:///etc/passwd",
    "\\..\\..\\etc\\passwd",
    "-1",
    "99999",
    "1e9",
    XSS,
]


class OpenSpy:
    """Records every path opened through builtins.open / os.open while installed."""

    def __init__(self, monkeypatch):
        self.paths: list[str] = []
        real_open, real_os_open = builtins.open, os.open

        def spy_open(file, *a, **k):
            if isinstance(file, (str, bytes, os.PathLike)):
                self.paths.append(os.path.abspath(os.fsdecode(file)))
            return real_open(file, *a, **k)

        def spy_os_open(path, *a, **k):
            self.paths.append(os.path.abspath(os.fsdecode(path)))
            return real_os_open(path, *a, **k)

        monkeypatch.setattr(builtins, "open", spy_open)
        monkeypatch.setattr(os, "open", spy_os_open)


@pytest.fixture(scope="module")
def planted(tmp_path_factory, demo_dump):
    """The demo dump plus one source record whose path is a real file on disk holding different text."""
    root = tmp_path_factory.mktemp("planted")
    on_disk = root / "secret.py"
    on_disk.write_text("ON_DISK_SECRET = 1\n")
    dump = root / "logdir" / "run"
    shutil.copytree(demo_dump, dump)
    [sources] = [p for p in dump.iterdir() if p.name.endswith(".source_files")]
    with open(sources, "ab") as f:
        f.write(source_record(str(on_disk).encode(), [b"IN_DUMP = 1", XSS.encode()]))
    app, _ = make_app(str(root / "logdir"))
    client = Client(app)
    body = wait_indexed(client)
    return client, body["runs"][0]["name"], str(on_disk), str(dump)


def test_planted_path_is_served_from_the_dump_and_never_opened(planted, monkeypatch):
    client, run, on_disk, dump = planted
    files = ok(client, "source_files", run=run)["files"]
    index = [f["index"] for f in files if f["path"] == on_disk]
    assert index, "the planted source record is listed"
    spy = OpenSpy(monkeypatch)
    answer = ok(client, "source_file", run=run, index=index[0])
    assert answer["lines"] == ["IN_DUMP = 1", XSS] and answer["path"] == on_disk
    for f in files[:5]:  # the others too: their paths exist on this machine (the venv's TF modules)
        ok(client, "source_file", run=run, index=f["index"], begin_line=1, end_line=20)
    assert on_disk not in spy.paths
    outside = [p for p in spy.paths if not p.startswith(os.path.abspath(dump) + os.sep)]
    assert not outside, outside


@pytest.mark.parametrize("value", HOSTILE_PARAMS)
def test_hostile_parameters_open_nothing_outside_the_dump(planted, monkeypatch, value):
    client, run, _, dump = planted
    spy = OpenSpy(monkeypatch)
    for route, params in (
        ("source_file", {"run": run, "index": value}),
        ("source_file", {"run": value, "index": "0"}),
        ("source_file", {"run": run, "index": "0", "begin_line": value}),
        ("source_files", {"run": value}),
        ("stack_frames", {"run": run, "ids": value}),
        ("op", {"run": run, "graph_id": value, "op_name": value}),
    ):
        query = "&".join(f"{k}={quote(v, safe='%')}" for k, v in params.items())
        status, _, body = get(client, f"/data/plugin/dbg/{route}?{query}")
        assert status in (200, 400, 404), (route, params, body)
        assert "root:" not in str(body)  # /etc/passwd's text never comes back
    outside = [p for p in spy.paths if not p.startswith(os.path.abspath(dump) + os.sep)]
    assert not outside, outside


def test_markup_comes_back_as_plain_strings():
    dump = dumps.make_dump("xss_names")
    app, _ = make_app(os.path.dirname(dump))
    client = Client(app)
    run = wait_indexed(client)["runs"][0]["name"]
    rows = ok(client, "graph_executions", run=run, begin=0, end=10)["rows"]
    assert {r["op_name"] for r in rows} >= {XSS + "_log", XSS + "_mul"}
    files = ok(client, "source_files", run=run)["files"]
    [user] = [f for f in files if XSS in f["path"]]
    lines = ok(client, "source_file", run=run, index=user["index"])["lines"]
    assert any(XSS in line for line in lines) and any("<script>" in line for line in lines)
    cause = ok(client, "root_cause", run=run)
    assert cause["status"] == "found" and cause["producer"]["op_name"] == XSS + "_log"
    status, _, body = get(client, url("op", run=run, graph_id=rows[0]["graph_id"], op_name=XSS + "_log"))
    assert status == 200 and body["inputs"][0]["op_name"] == XSS + "_probs"


def test_run_in_a_non_utf8_directory_is_listed_and_reachable(tmp_path, demo_dump):
    """A directory name that is not UTF-8 (with markup in it, too): the run's name is valid Unicode, so a client
    can send it back, and every route answers for it."""
    logdir = tmp_path / "logdir"
    logdir.mkdir()
    shutil.copytree(os.fsencode(demo_dump), os.path.join(os.fsencode(logdir), b"run\xff\xfe<img src=x>"))
    app, _ = make_app(str(logdir))
    client = Client(app)
    name = wait_indexed(client)["runs"][0]["name"]
    name.encode("utf-8")  # no lone surrogates: a browser can put it in a URL
    assert name.startswith("run") and "<img src=x>" in name
    assert ok(client, "source_files", run=name)["files"]
    assert ok(client, "graph_executions", run=name, begin=0, end=10)["rows"]
    # What a browser sends: the name as UTF-8, percent-encoded.
    status, _, body = get(client, "/data/plugin/dbg/root_cause?run=" + quote(name))
    assert status == 200, body
