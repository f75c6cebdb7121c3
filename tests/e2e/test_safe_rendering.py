"""End-to-end: markup recorded in a dump (op names, source path, source lines, frame function names) is shown as
text and never runs, in Debian's Chromium against a real tensorboard on tests/programs/xss_names.py's dump.

Every payload is `<img src=x onerror=window.__xss=1>` (or a <script> doing the same): had any been parsed as HTML,
the broken image's onerror would set window.__xss in the plugin's frame. The test opens the dashboard, clicks the
alert (which fills every panel: graph execution row, graph structure with the markup-named input, stack trace,
source code of the markup-named file), and then checks the flag in both frames, that no such element exists, and
that the literal text is on screen.
"""

from __future__ import annotations

import os
import re

import dumps
from e2e_helpers import screenshot
from e2e_page import (
    assert_no_console_errors,
    by_testid,
    open_dashboard,
    wait_text,
)

from harness.tensorboard_process import TensorBoardProcess

XSS = "<img src=x onerror=window.__xss=1>"


def _no_injection(frame) -> None:
    assert frame.evaluate("typeof window.__xss") == "undefined"
    assert frame.locator("img[src='x']").count() == 0
    assert frame.evaluate("[...document.scripts].filter(s => s.textContent.includes('__xss')).length") == 0
    assert frame.evaluate("document.querySelectorAll('[onerror]').length") == 0


def test_markup_in_dump_is_text_not_html(page):
    dump = dumps.make_dump("xss_names")
    with TensorBoardProcess(os.path.dirname(dump)) as tb:
        frame = open_dashboard(page, tb)
        first = by_testid(frame, "alert-row").first
        first.wait_for(timeout=20_000)
        wait_text(first, "Log")
        first.click()
        # the row cuts a long name in the middle (the tooltip holds it whole): both ends shown as text, not markup
        focused = frame.locator("[data-testid=ge-list] .vl-row.focused")
        wait_text(focused, r"<img.*….*>_log")  # cut to the column's width
        assert focused.locator(".ge-op").get_attribute("title").startswith("<img src=x onerror=window.__xss=1>_log")
        wait_text(by_testid(frame, "gs-input"), r"<img src=x onerror=window\.__xss=1>_probs")
        wait_text(by_testid(frame, "source-path"), r"<img src=x onerror=window\.__xss=1>/xss_user\.py")
        wait_text(frame.locator(".cm-focus-line"), r"tf\.math\.log")
        # Markup in the source text and in a frame's function name, as text.
        body = frame.locator("body").inner_text()
        assert XSS + "_log" in body and XSS + "/xss_user.py" in body
        assert frame.get_by_text(XSS + "_log").first.is_visible()
        stack = by_testid(frame, "panel-stack-trace").inner_text()
        assert XSS in stack, stack[:2000]
        page.wait_for_timeout(500)  # a broken image's onerror fires asynchronously
        screenshot(page, "safe-rendering")
        _no_injection(frame)
        assert page.evaluate("typeof window.__xss") == "undefined"
        assert page.locator("img[src='x']").count() == 0
        assert_no_console_errors(page)


def test_unreadable_file_and_damage_show_in_the_status_line(page, tmp_path, demo_dump):
    """Refresh problems reach the user: a directory where the graphs file should be (reading it fails on every
    pass) and a damaged execution record are named in the dashboard's status line, and the rest is served."""
    import shutil

    run = tmp_path / "logdir" / "run"
    shutil.copytree(demo_dump, run)
    [graphs] = [p for p in run.iterdir() if p.name.endswith(".graphs")]
    graphs.unlink()
    graphs.mkdir()
    [execution] = [p for p in run.iterdir() if p.name.endswith(".execution")]
    data = bytearray(execution.read_bytes())
    data[200] ^= 0xFF
    execution.write_bytes(bytes(data))
    with TensorBoardProcess(str(tmp_path / "logdir")) as tb:
        frame = open_dashboard(page, tb)
        # Wait for the file's name, not for a word of the backend's message (its wording is the backend's to choose).
        text = wait_text(by_testid(frame, "status"), re.escape(graphs.name))
        assert graphs.name in text and "Damaged record" in text, text
        by_testid(frame, "alert-row").first.wait_for(timeout=20_000)  # the traces are still served
        screenshot(page, "status-refresh-failure")
        _no_injection(frame)
