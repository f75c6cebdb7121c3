"""End-to-end: the Debugger dashboard in Debian's Chromium against a real `tensorboard` on real TF dumps.

The helpers the e2e tests share to open and read the dashboard are in e2e_page.py.
"""

from __future__ import annotations

import os
import shutil

from e2e_helpers import ROOT, screenshot
from e2e_page import (  # noqa: F401  (the old import path of these helpers: `from test_dashboard import ...`)
    READY_TIMEOUT_MS,
    assert_no_console_errors,
    by_testid,
    dashboard_frame,
    open_dashboard,
    wait_text,
)

from harness.tensorboard_process import TensorBoardProcess


def test_demo_journey(page, demo_logdir):
    """One click on the NaN/∞ alert: Log's -∞ trace selected, probs as its input, the tf.math.log line highlighted."""
    with TensorBoardProcess(demo_logdir) as tb:
        frame = open_dashboard(page, tb)
        # Every panel is there and the alert types are listed with counts.
        for name in (
            "panel-alerts",
            "panel-timeline",
            "panel-graph-structure",
            "panel-graph-execution",
            "panel-source-code",
            "panel-stack-trace",
        ):
            assert by_testid(frame, name).is_visible(), name
        wait_text(by_testid(frame, "alert-types"), r"NaN / ∞\s+\d+")
        screenshot(page, "demo-1-opened")

        first = by_testid(frame, "alert-row").first
        first.wait_for(timeout=20_000)
        assert "Log" in first.inner_text()
        # The op Log (type Log) shows its type once: its name cell spans the type column, none is left blank.
        assert "Log Log" not in " ".join(first.inner_text().split()), first.inner_text()
        assert first.locator(".alert-op-wide").count() == 1 and first.locator(".alert-type").count() == 0
        first.click()  # THE one click

        # Graph Execution: the Log row is selected, with its -∞ chip.
        focused = frame.locator("[data-testid=ge-list] .vl-row.focused")
        wait_text(focused, r"Log")
        assert "-∞" in focused.inner_text()
        assert frame.locator("[data-testid=ge-list] .vl-row.focused .chip-neginf").count() == 1
        # Graph Structure: Log in the middle, probs as its input.
        wait_text(by_testid(frame, "gs-focus-op"), r"^Log")
        wait_text(by_testid(frame, "gs-input"), r"probs")
        # Stack Trace: the innermost user frame is selected, in the demo program.
        selected_frame = frame.locator("[data-testid=stack-frame].selected")
        wait_text(selected_frame, r"buggy_mlp\.py:\d+")
        # Source Code: the tf.math.log(probs) line is highlighted.
        wait_text(frame.locator(".cm-focus-line"), r"tf\.math\.log\(probs\)")
        wait_text(by_testid(frame, "source-path"), r"buggy_mlp\.py$")
        path = screenshot(page, "demo-2-alert-clicked")
        if os.environ.get("DBG_UPDATE_SCREENSHOT"):
            # the README's picture is a tracked file: a test run leaves the tree as it was unless asked
            os.makedirs(os.path.join(ROOT, "docs"), exist_ok=True)
            shutil.copyfile(path, os.path.join(ROOT, "docs", "screenshot.png"))
        assert_no_console_errors(page)
