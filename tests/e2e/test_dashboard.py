"""End-to-end: the Debugger dashboard in Debian's Chromium against a real `tensorboard` on real TF dumps.

Helpers here are shared by the other test_dashboard_*.py files (pytest puts this folder on sys.path).
"""

from __future__ import annotations

import os
import re
import shutil
import time

from e2e_helpers import ROOT, screenshot

from harness.tensorboard_process import TensorBoardProcess

READY_TIMEOUT_MS = 60_000


def open_dashboard(page, tb: TensorBoardProcess, suffix: str = "", wait_ready: bool = True):
    """Opens TensorBoard at the Debugger tab and returns the plugin's iframe Frame (after the ready marker)."""
    page.goto(tb.url + "/" + suffix + "#dbg")
    frame = dashboard_frame(page)
    if wait_ready:
        frame.wait_for_function("document.body && document.body.dataset.ready === '1'", timeout=READY_TIMEOUT_MS)
    return frame


def dashboard_frame(page, timeout: float = 60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for f in page.frames:
            if "plugin_entry.html" in f.url and "name=dbg" in f.url:
                try:
                    f.wait_for_selector("[data-testid=dbg-root]", timeout=2000)
                    return f
                except Exception:
                    pass
        page.wait_for_timeout(200)
    raise AssertionError(f"the dbg iframe did not render; frames: {[f.url for f in page.frames]}")


def assert_no_console_errors(page) -> None:
    errors = [e for e in page.console_watch.errors if "favicon" not in e]
    assert not errors, "browser console errors:\n" + "\n".join(errors)


def by_testid(frame, name: str):
    return frame.locator(f"[data-testid={name}]")


def wait_text(locator, pattern: str, timeout_ms: int = 20_000) -> str:
    """Waits until the locator's text matches the regex; returns the text."""
    deadline = time.monotonic() + timeout_ms / 1000
    text = ""
    while time.monotonic() < deadline:
        try:
            text = locator.inner_text(timeout=1000)
        except Exception:
            text = ""
        if re.search(pattern, text):
            return text
        time.sleep(0.1)
    raise AssertionError(f"text {text!r} never matched {pattern!r}")


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
