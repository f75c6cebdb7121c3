"""`tensorboard --logdir gs://…` (#28 item 4, not --dbg_logdir) against gcp-storage-emulator on loopback: the stock
`tensorboard` command, our plugin from its entry point, answers the Debugger's runs and a root cause from the
bucket, while TensorBoard's core tries gs:// itself through TensorFlow's file system (its auth pointed at a closed
loopback port by GCE_METADATA_HOST, its curl at a dead loopback proxy): nothing hangs and nothing leaves loopback.

The whole process tree runs under `strace -e connect,sendto,sendmmsg` when strace is installed: every socket it
connects is loopback (or a local socket) and no DNS query is sent — the Python socket guard alone could not see
TensorFlow's C++ client or a DNS lookup. `--load_fast=false` keeps TensorBoard's core on that Python/TensorFlow
path: with the default, its Rust data server (tensorboard-data-server 0.7.2) looks up metadata.google.internal in
DNS itself, whatever GCE_METADATA_HOST says (strace shows the query), so no loopback-only test can run it on gs://.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import time

import pytest

from harness import remote_servers as rs
from harness.tensorboard_process import TensorBoardProcess
from tensorboard_plugin_dbg.reader.storage import backends

pytestmark = pytest.mark.slow  # gcp-storage-emulator and a real tensorboard (~20 s)

API = "/data/plugin/dbg/"
LOCAL_ADDRESS = re.compile(r'inet_addr\("127\.|inet_pton\(AF_INET6, "(::1|::ffff:127\.)')


class TracedTensorBoard(TensorBoardProcess):
    """The stock `tensorboard`, its connects and sends written by strace to `trace` (when strace is installed)."""

    def __init__(self, trace: str | None, *args: object, **kwargs: object):
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.trace = trace

    def _tensorboard_pid(self) -> int | None:
        """strace's child: tensorboard itself (None when not traced or already gone)."""
        if self.trace is None or self.proc is None:
            return None
        try:
            with open(f"/proc/{self.proc.pid}/task/{self.proc.pid}/children") as f:
                children = f.read().split()
        except OSError:
            return None
        return int(children[0]) if children else None

    def __exit__(self, *exc: object) -> None:
        pid = self._tensorboard_pid()  # also when starting failed: TensorBoardProcess.__enter__ calls this
        if pid:  # stopping strace would leave tensorboard running: stop tensorboard, strace then ends with it
            os.kill(pid, signal.SIGTERM)
            _wait_gone(pid)
        super().__exit__(*exc)
        if pid:
            self._remove_info_file(pid)  # tensorboard's pid-N.info (super() knows strace's pid only)

    def command(self) -> list[str]:
        if self.trace is None:
            return super().command()
        return ["strace", "-f", "-qq", "-e", "trace=connect,sendto,sendmmsg", "-o", self.trace, *super().command()]


def _wait_gone(pid: int, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while os.path.exists(f"/proc/{pid}") and time.monotonic() < deadline:
        time.sleep(0.05)
    if os.path.exists(f"/proc/{pid}"):
        os.kill(pid, signal.SIGKILL)


def _connects_beyond_loopback(trace: str) -> list[str]:
    with open(trace) as f:
        lines = [line for line in f if " connect(" in line and ("AF_INET," in line or "AF_INET6," in line)]
    return [line for line in lines if not LOCAL_ADDRESS.search(line)]


def _dns_queries(trace: str) -> list[str]:
    with open(trace) as f:  # a DNS query names its host as length-prefixed labels: "\10metadata\6google..."
        return [line for line in f if ("sendto(" in line or "sendmmsg(" in line) and "\\0\\0\\1\\0\\1" in line]


def test_tensorboard_logdir_gs_serves_the_debugger_and_stays_on_loopback(demo_dump, tmp_path):
    trace = str(tmp_path / "strace.txt") if shutil.which("strace") else None
    with rs.gcs_emulator() as gcs, rs.patched_environ(rs.loopback_environment(None, gcs)), rs.SocketGuard() as guard:
        fs = backends.make_fs("gs")
        fs.mkdir("logs")
        rs.upload_dir(fs, demo_dump, "gs://logs/demo")
        args = ("--load_fast", "false")
        with TracedTensorBoard(trace, "gs://logs", extra_args=args, socket_guard=True, startup_timeout=120) as tb:
            runs = _wait_done(tb)
            assert runs["logdir"] == "gs://logs" and [r["name"] for r in runs["runs"]] == ["demo"], runs
            assert runs["runs"][0]["counts"]["alerts"] > 0
            answer = tb.get_json(API + "root_cause?run=demo")
            assert answer["status"] == "found" and answer == _local_root_cause(demo_dump, tmp_path), answer
            assert tb.get(API + "root_cause?run=nope").status == 404
            assert tb.get("/data/runs", timeout=30).status == 200  # TensorBoard's core answers, its gs:// reads failed
            records = tb.guard_records()
        assert any(line.startswith("guard on:") for line in records) and tb.violations() == [], records
    assert not guard.violations, guard.violations
    if trace is not None:
        assert _connects_beyond_loopback(trace) == []
        assert _dns_queries(trace) == []


def _local_root_cause(demo_dump: str, tmp_path) -> dict:  # noqa: ANN001 - a pathlib.Path
    """The root-cause answer for a local copy of the same dump (in-process, as tests/test_remote_logdir.py)."""
    from api_helpers import make_app, ok, wait_indexed
    from werkzeug.test import Client

    local = tmp_path / "local"
    shutil.copytree(demo_dump, local / "demo", ignore=shutil.ignore_patterns(".*"))
    app, plugin = make_app(str(local))
    try:
        client = Client(app)
        wait_indexed(client)
        return dict(ok(client, "root_cause", run="demo"))
    finally:
        plugin.catalog().stop()


def _wait_done(tb: TensorBoardProcess) -> dict:
    deadline = time.monotonic() + 60
    while True:
        runs = tb.get_json(API + "runs", timeout=30)
        if runs["runs"] and runs["runs"][0]["status"]["done"]:
            return runs
        assert time.monotonic() < deadline, runs
        time.sleep(0.2)
