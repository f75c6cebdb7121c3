"""The one way the e2e tests open the Debugger dashboard in Chromium, find the plugin's iframe and read it (these
helpers lived in test_dashboard.py, which still re-exports them for tests written against that path)."""

from __future__ import annotations

import re
import time

from harness.tensorboard_process import TensorBoardProcess

READY_TIMEOUT_MS = 60_000


def open_dashboard(page, tb: TensorBoardProcess | str, suffix: str = "", wait_ready: bool = True):
    """Opens TensorBoard (a process or its URL) at the Debugger tab and returns the plugin's iframe Frame, once its
    ready marker is set (`wait_ready`) or once its root is drawn. The one way the e2e tests open the dashboard."""
    page.goto((tb if isinstance(tb, str) else tb.url) + "/" + suffix + "#dbg")
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
