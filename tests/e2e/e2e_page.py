"""The one way the e2e tests open the Debugger dashboard in Chromium, find the plugin's iframe and read it (these
helpers lived in test_dashboard.py, which still re-exports them for tests written against that path)."""

from __future__ import annotations

import re
import time

from harness.tensorboard_process import TensorBoardProcess

READY_TIMEOUT_MS = 60_000
# How long the catalog may take to list and read a test's runs on a loaded 2-core host (normally about a second).
RUNS_READ_TIMEOUT_S = 120


def open_dashboard(page, tb: TensorBoardProcess | str, suffix: str = "", wait_ready: bool = True):
    """Opens TensorBoard (a process or its URL) at the Debugger tab and returns the plugin's iframe Frame, once its
    ready marker is set (`wait_ready`) or once its root is drawn. The one way the e2e tests open the dashboard."""
    page.goto((tb if isinstance(tb, str) else tb.url) + "/" + suffix + "#dbg")
    frame = dashboard_frame(page)
    if wait_ready:
        frame.wait_for_function("document.body && document.body.dataset.ready === '1'", timeout=READY_TIMEOUT_MS)
    return frame


def read_runs(tb: TensorBoardProcess, names: tuple[str, ...] = (), timeout_s: float = RUNS_READ_TIMEOUT_S) -> list:
    """The plugin's runs once it lists them (every one of `names`, or at least one) and has read each to its end
    (`status.done`). Asked right after TensorBoard starts, or even after the dashboard's ready marker, the list may
    still be empty or a run half read (its counts and pages partial) on a loaded host: ask this, not `runs` itself,
    before reading a run's figures from the API."""
    deadline = time.monotonic() + timeout_s
    runs: list = []
    while time.monotonic() < deadline:
        runs = tb.get_json("/data/plugin/dbg/runs")["runs"]
        listed = {r["name"] for r in runs}
        if runs and set(names) <= listed and all(r["status"]["done"] for r in runs):
            return runs
        time.sleep(0.1)
    raise AssertionError(f"the runs {names or '(any)'} were not listed and read in {timeout_s} s: {runs}")


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
