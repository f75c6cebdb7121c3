"""Logdirs on object storage (#28): the same answers from a local folder, memory://, s3:// (moto's server on
loopback) and gs:// (gcp-storage-emulator on loopback), for the report and the dashboard's routes; a dump that grows
while read; what a remote logdir costs; the error cases. No connection may leave loopback (tests/remote_servers.py's
socket guard, and the cloud metadata lookups pointed at a closed loopback port)."""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
import time

import pytest
from api_helpers import get, make_app, ok, url, wait_indexed
from werkzeug.test import Client

from harness import remote_servers as rs
from tensorboard_plugin_dbg.__main__ import build_parser
from tensorboard_plugin_dbg.index.catalog import Catalog
from tensorboard_plugin_dbg.reader import storage
from tensorboard_plugin_dbg.reader.storage import backends, remote

pytestmark = pytest.mark.slow  # two loopback servers (~3 s to start)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KINDS = ("local", "memory", "s3", "gs")


@pytest.fixture(scope="module")
def stores(demo_dump, tmp_path_factory):
    """kind -> the logdir URL holding the demo dump as `demo/` (a local copy for "local"), with the servers running,
    the loopback environment set and the socket guard on; everything stopped and removed after the module."""
    local = tmp_path_factory.mktemp("remote") / "logs"
    shutil.copytree(demo_dump, local / "demo", ignore=shutil.ignore_patterns(".*"))
    with rs.moto_server() as s3, rs.gcs_emulator() as gcs:
        env = rs.loopback_environment(s3, gcs)
        with rs.patched_environ(env), rs.SocketGuard() as guard:
            fss = {"memory": backends.make_fs("memory"), "s3": backends.make_fs("s3"), "gs": backends.make_fs("gs")}
            for kind in ("s3", "gs"):
                fss[kind].mkdir("logs")
            for kind, fs in fss.items():
                rs.upload_dir(fs, str(local / "demo"), f"{kind}://logs/demo")
            urls = {"local": str(local), "memory": "memory://logs", "s3": "s3://logs", "gs": "gs://logs"}
            yield {"urls": urls, "fs": fss, "env": env, "s3": s3, "guard": guard, "local": str(local)}
            fss["memory"].rm("memory://logs", recursive=True)
        assert not guard.violations, guard.violations


def _report(logdir: str) -> tuple[int, dict]:
    out = io.StringIO()
    args = build_parser().parse_args(["report", logdir, "--json"])
    code = args.handler(args, out)
    document = json.loads(out.getvalue())
    document.pop("logdir")
    return code, document


def test_report_is_the_same_from_every_store(stores):
    answers = {kind: _report(stores["urls"][kind]) for kind in KINDS}
    assert answers["local"][0] == 1  # the demo's NaN/∞
    for kind in KINDS[1:]:
        assert answers[kind] == answers["local"], kind


def _dashboard(logdir: str) -> dict:
    """The answers of the dashboard's routes for the demo run (those that depend on nothing but the dump)."""
    app, plugin = make_app(logdir)
    client = Client(app)
    try:
        runs = wait_indexed(client)
        for r in runs["runs"]:
            r["status"].pop("last_refresh")
        runs.pop("logdir")
        runs.pop("remote_cost", None)
        run = runs["runs"][0]["name"]
        first = ok(client, "graph_executions", run=run, begin=0, end=1)["rows"][0]
        answers = {"runs": runs, "first": first}
        for route, params in (
            ("alerts", {"begin": 0, "end": 200}),
            ("executions", {"begin": 0, "end": 100}),
            ("graph_executions", {"begin": 0, "end": 400}),
            ("graph_executions", {"begin": 0, "end": 400, "only_nonfinite": "true"}),
            ("graph_execution", {"index": 5}),
            ("execution", {"index": 3}),
            ("devices", {}),
            ("source_files", {}),
            ("root_cause", {}),
            ("timeline_marks", {"bins": 50}),
            ("health_map", {"begin": 0, "end": 50}),
            ("graph", {"graph_id": first["graph_id"]}),
            ("tensor", {"source": "graph", "index": 5, "output": 0}),
        ):
            answers[route + json.dumps(params)] = ok(client, route, run=run, **params)
        return answers
    finally:
        plugin.catalog().stop()


def test_dashboard_routes_are_the_same_from_every_store(stores):
    answers = {kind: _dashboard(stores["urls"][kind]) for kind in KINDS}
    for kind in KINDS[1:]:
        for key, answer in answers["local"].items():
            assert answers[kind][key] == answer, (kind, key)


def test_remote_cost_listing_and_idle_refresh(stores):
    """One listing per refresh, sizes from it; once read, a refresh fetches nothing; the runs answer says the cost."""
    catalog = Catalog(stores["urls"]["s3"])
    assert catalog.runs()[0].info()["status"]["done"]
    before = remote.COST.snapshot()
    logged = rs.server_log(stores["s3"]).count("\n")
    for _ in range(3):
        catalog.refresh()
    lists, gets, heads, nbytes = (a - b for a, b in zip(remote.COST.snapshot(), before))
    assert (lists, gets, heads, nbytes) == (3, 0, 0, 0)
    # and as the server saw them: three listings of the bucket, no object read or asked about
    requests = rs.server_log(stores["s3"]).splitlines()[logged:]
    assert len(requests) == 3 and all('"GET /logs?list-type=2' in line for line in requests), requests
    app, plugin = make_app(stores["urls"]["s3"])
    try:
        cost = wait_indexed(Client(app))["remote_cost"]
        assert cost["gets"] > 0 and cost["bytes"] > 0 and cost["lists"] > 0
    finally:
        plugin.catalog().stop()


def _trace_file(local: str) -> str:
    return next(n for n in os.listdir(os.path.join(local, "demo")) if n.endswith(".graph_execution_traces"))


def _traces_read(client: Client) -> int | None:
    runs = ok(client, "runs")["runs"]
    return runs[0]["counts"]["graph_executions"] if runs else None


def _wait(what: str, condition, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def test_growing_dump_reuploaded_while_the_dashboard_reads_it(stores, tmp_path):
    """The traces object re-uploaded longer and longer (cut inside records) while the refresher reads: each step
    serves what a local copy of that prefix holds, read from the offset the last pass stopped at (not from 0), and
    the end equals the local dump."""
    fs, local = stores["fs"]["s3"], stores["local"]
    name = _trace_file(local)
    with open(os.path.join(local, "demo", name), "rb") as f:
        data = f.read()
    prefix_dir = tmp_path / "prefix" / "demo"
    shutil.copytree(os.path.join(local, "demo"), prefix_dir)
    fs.mkdir("grow")
    rs.upload_dir(fs, os.path.join(local, "demo"), "s3://grow/demo")
    app, plugin = make_app("s3://grow")
    client = Client(app)
    try:
        fetched = []
        for cut in (1, 2, 3, 4, 5):
            size = len(data) if cut == 5 else len(data) * cut // 5 + 7
            (prefix_dir / name).write_bytes(data[:size])
            expect = Catalog(str(tmp_path / "prefix")).runs()[0].info()["counts"]["graph_executions"]
            before = remote.COST.snapshot()[3]
            fs.pipe_file(f"s3://grow/demo/{name}", data[:size])
            _wait(f"{expect} traces served at {size} bytes", lambda expect=expect: _traces_read(client) == expect)
            fetched.append(remote.COST.snapshot()[3] - before)
        # after the first pass, each pass fetched about what the object grew by (one cut record read again)
        assert all(f <= len(data) // 5 + 64 * 1024 for f in fetched[1:]), fetched
        final = wait_indexed(client)
        local_answer = wait_indexed(Client(make_app(stores["local"])[0]))
        assert final["runs"][0]["counts"] == local_answer["runs"][0]["counts"]
    finally:
        plugin.catalog().stop()
        fs.rm("s3://grow", recursive=True)


def test_object_deleted_or_truncated_while_read(stores):
    fs, local = stores["fs"]["s3"], stores["local"]
    name = _trace_file(local)
    fs.mkdir("gone")
    rs.upload_dir(fs, os.path.join(local, "demo"), "s3://gone/demo")
    app, plugin = make_app("s3://gone")
    client = Client(app)
    try:
        wait_indexed(client)
        fs.rm(f"s3://gone/demo/{name}")
        deadline = time.monotonic() + 10
        while not any(n["code"] == "missing_file" for n in ok(client, "runs")["runs"][0]["status"]["notices"]):
            assert time.monotonic() < deadline, ok(client, "runs")
            time.sleep(0.1)
        # what was fetched before is dropped with the object: a page of its records is now a clear 4xx
        status, _, body = get(client, url("graph_executions", run="demo", begin=0, end=50))
        assert 400 <= status < 500 and "error" in body, (status, body)
        with open(os.path.join(local, "demo", name), "rb") as f:
            fs.pipe_file(f"s3://gone/demo/{name}", f.read(1000))  # back, shorter than what was read
        deadline = time.monotonic() + 10
        while not any("shrank" in n["message"] for n in ok(client, "runs")["runs"][0]["status"]["notices"]):
            assert time.monotonic() < deadline, ok(client, "runs")
            time.sleep(0.1)
        # as from a local file that shrank: the rows stay, each health says its record can no longer be read
        rows = ok(client, "graph_executions", run="demo", begin=200, end=250)["rows"]
        assert all(r["health"]["mode"] == "UNKNOWN" and "no longer" in r["health"]["reason"] for r in rows), rows[0]
    finally:
        plugin.catalog().stop()
        fs.rm("s3://gone", recursive=True)


def test_missing_bucket_is_a_clear_error(stores):
    code, document = _report("s3://no-such-bucket")
    assert code == 2 and "not found" in document["error"], document
    catalog = Catalog("gs://no-such-bucket")
    assert any("Cannot list gs://no-such-bucket" in n["message"] for n in catalog.notices())


def _report_process(logdir: str, env: dict[str, str], timeout: float) -> tuple[int, str, float]:
    started = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "tensorboard_plugin_dbg", "report", logdir],
        env={**os.environ, **env, "PYTHONPATH": ROOT},
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    return proc.returncode, proc.stderr + proc.stdout, time.monotonic() - started


def test_unreachable_endpoint_fails_fast_and_clearly(stores):
    dead = f"http://127.0.0.1:{rs.closed_port()}"
    for logdir, env in (
        ("s3://logs", {"AWS_ENDPOINT_URL": dead}),
        ("gs://logs", {"STORAGE_EMULATOR_HOST": dead, "DBG_REMOTE_TIMEOUT": "3"}),
    ):
        code, text, seconds = _report_process(logdir, env, timeout=60)
        assert code == 2 and ("cannot reach" in text or "no answer within" in text), text
        assert seconds < 30, seconds


def test_denied_credentials_are_a_clear_error(stores):
    with rs.moto_server({"INITIAL_NO_AUTH_ACTION_COUNT": "0"}) as strict:
        code, text, _ = _report_process("s3://logs", {"AWS_ENDPOINT_URL": strict}, timeout=60)
    assert code == 2 and "denied" in text, text


def test_a_deleted_local_dump_file_is_a_4xx_not_a_500(demo_dump, tmp_path):
    """The page read of a traces file deleted after it was indexed (this was a 500: os.open's FileNotFoundError)."""
    shutil.copytree(demo_dump, tmp_path / "logs" / "demo", ignore=shutil.ignore_patterns(".*"))
    app, plugin = make_app(str(tmp_path / "logs"))
    client = Client(app)
    try:
        wait_indexed(client)
        os.remove(tmp_path / "logs" / "demo" / _trace_file(str(tmp_path / "logs")))
        status, _, body = get(client, url("graph_executions", run="demo", begin=0, end=50))
        assert status == 404 and "cannot be read back" in body["error"]["message"], (status, body)
    finally:
        plugin.catalog().stop()


def test_local_paths_never_touch_the_remote_layer(demo_logdir):
    assert not storage.is_remote(demo_logdir) and storage.normalize(demo_logdir) == demo_logdir
    assert storage.is_remote("s3://b/x") and not storage.is_remote("file:///tmp/x")
