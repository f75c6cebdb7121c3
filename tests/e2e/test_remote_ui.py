"""End-to-end (#28): `tensorboard --logdir EMPTY_LOCAL --dbg_logdir s3://…` against moto's S3 server on loopback
(with TensorFlow installed, TensorBoard's own reader cannot open s3://: the Debugger's flag is the way there). The
dashboard shows the demo run read from the bucket, with the same counts as the API, and the status line says what
remote reading cost."""

from __future__ import annotations

import pytest
from e2e_helpers import screenshot
from e2e_page import assert_no_console_errors, by_testid, open_dashboard, read_runs, wait_text

from harness import remote_servers as rs
from harness.tensorboard_process import TensorBoardProcess
from tensorboard_plugin_dbg.reader.storage import backends

pytestmark = pytest.mark.e2e

API = "/data/plugin/dbg/"


def test_dashboard_reads_a_dump_in_an_s3_bucket(page, demo_dump, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    with rs.moto_server() as s3, rs.patched_environ(rs.loopback_environment(s3, None)), rs.SocketGuard() as guard:
        fs = backends.make_fs("s3")
        fs.mkdir("dumps")
        rs.upload_dir(fs, demo_dump, "s3://dumps/demo")
        # plugins="dbg": harness/tb_launch.py loads DbgLoader, which defines --dbg_logdir
        args = ("--dbg_logdir", "s3://dumps")
        with TensorBoardProcess(str(empty), plugins="dbg", extra_args=args, socket_guard=True) as tb:
            assert tb.guarded()  # the tensorboard process refuses connects beyond loopback too
            frame = open_dashboard(page, tb)
            read_runs(tb, ("demo",))  # listed and read to its end: its alert count is final
            runs = tb.get_json(API + "runs")
            assert runs["logdir"] == "s3://dumps" and [r["name"] for r in runs["runs"]] == ["demo"], runs
            alerts = runs["runs"][0]["counts"]["alerts"]
            assert alerts > 0
            status = wait_text(by_testid(frame, "status"), r"remote: \d+ requests · \d+\.\d MiB")
            assert f"{alerts:,} alerts" in status, status
            screenshot(page, "remote-1-s3-dashboard")
            assert_no_console_errors(page)
        assert not tb.violations(), tb.violations()
    assert not guard.violations, guard.violations
