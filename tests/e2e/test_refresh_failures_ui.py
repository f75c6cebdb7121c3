"""End-to-end (issue #7): a refresh failure is shown to the user, and the next pass recovers from it.

The demo dump's graph_execution_traces file is replaced by a directory: every refresh pass fails to read it. In
Debian's Chromium against a real tensorboard, the status line and the Graph Execution panel must name that file (not
claim the run has no traces), and the details list must hold it with the retry note. Then the file is put back: the
next pass (the refresher runs every second; the UI keeps polling while a read problem stands) reads it, and the
traces appear while the problem leaves the status line.
"""

from __future__ import annotations

import re
import shutil

from e2e_helpers import screenshot
from e2e_page import assert_no_console_errors, by_testid, open_dashboard, wait_text

from harness.tensorboard_process import TensorBoardProcess


def test_unreadable_traces_file_is_named_then_recovered(page, tmp_path, demo_dump):
    run = tmp_path / "logdir" / "run"
    shutil.copytree(demo_dump, run)
    [traces] = [p for p in run.iterdir() if p.name.endswith(".graph_execution_traces")]
    aside = tmp_path / "traces.bak"
    traces.rename(aside)
    traces.mkdir()  # opening it fails with EISDIR on every pass
    name = re.escape(traces.name)
    with TensorBoardProcess(str(tmp_path / "logdir")) as tb:
        frame = open_dashboard(page, tb)
        status = wait_text(by_testid(frame, "status"), name)
        problem = by_testid(frame, "status-problem").first
        assert problem.get_attribute("data-code") == "unreadable_file", status
        assert "sev-error" in (problem.get_attribute("class") or ""), "an error is painted as one"
        # The panel says the file could not be read and why, instead of "This run has no graph execution traces."
        ge_panel = by_testid(frame, "panel-graph-execution")
        reason = wait_text(by_testid(frame, "panel-graph-execution-status"), name)
        assert "directory" in reason and "no graph execution traces" not in reason.lower(), reason
        assert ge_panel.get_attribute("data-state") == "error"
        # No alert can be claimed absent while the traces are unreadable (the demo's eager alerts may still show).
        if by_testid(frame, "panel-alerts").get_attribute("data-state") != "content":
            alerts_reason = by_testid(frame, "panel-alerts-status").inner_text()
            assert traces.name in alerts_reason and "No alerts" not in alerts_reason, alerts_reason
        screenshot(page, "refresh-failure-1-unreadable-traces")
        # The details list keeps the file and the retry note (no byte offset: nothing in the file was reached).
        by_testid(frame, "status-details-toggle").click()
        details = wait_text(by_testid(frame, "notice-list"), name)
        assert "every refresh" in details and f"{name} @ byte" not in details, details
        screenshot(page, "refresh-failure-2-details-list")
        by_testid(frame, "status-details-toggle").click()
        assert not by_testid(frame, "notice-list").is_visible()

        traces.rmdir()
        aside.rename(traces)
        count = wait_text(by_testid(frame, "ge-count"), r"^[1-9][\d,]* traces$", timeout_ms=60_000)
        frame.locator("[data-testid=ge-list] .vl-row").first.wait_for(timeout=20_000)
        assert ge_panel.get_attribute("data-state") == "content", count
        wait_text(by_testid(frame, "status"), r"^(?!.*" + name + r")", timeout_ms=20_000)
        assert by_testid(frame, "status-problem").count() == 0, by_testid(frame, "status").inner_text()
        by_testid(frame, "alert-row").first.wait_for(timeout=20_000)  # the demo's alerts come from the traces
        screenshot(page, "refresh-failure-3-recovered")
        assert_no_console_errors(page)
