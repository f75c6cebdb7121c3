"""End-to-end: a 1 M-row dump written by bench/generate.py. Scroll to the end, jump to an index, filter to
non-finite, keyboard down; only visible rows are ever in the DOM. (10 M is covered by the unit tests.)"""

from __future__ import annotations

import re
import time

from big_dump import LOGDIR, TRACES, _make_big_dump  # noqa: F401  (their old import path)
from e2e_helpers import screenshot
from e2e_page import assert_no_console_errors, by_testid, open_dashboard, wait_text

from harness.tensorboard_process import TensorBoardProcess


def _rows(frame) -> list[int]:
    return [
        int(i)
        for i in frame.locator("[data-testid=ge-list] .vl-row[data-ge-index]").evaluate_all(
            "els => els.map(e => e.dataset.geIndex)"
        )
    ]


def _wait_rows(frame, pred, what: str, timeout: float = 20) -> list[int]:
    deadline = time.monotonic() + timeout
    rows: list[int] = []
    while time.monotonic() < deadline:
        rows = _rows(frame)
        if rows and pred(rows):
            return rows
        time.sleep(0.1)
    raise AssertionError(f"{what}: rows in DOM {rows[:5]}…{rows[-5:]}")


def test_million_rows(page):
    logdir = _make_big_dump()
    with TensorBoardProcess(logdir) as tb:
        frame = open_dashboard(page, tb)
        count = by_testid(frame, "ge-count")
        wait_text(count, r"^1,000,000 traces$", timeout_ms=120_000)
        assert len(_rows(frame)) < 100, "only visible rows are in the DOM"

        # Scroll to the very end with the scrollbar (the spacer is capped, the position scaled).
        t = time.monotonic()
        frame.evaluate("""() => { const s = document.querySelector('[data-testid=ge-list] .vl-scroller');
                                  s.scrollTop = s.scrollHeight; s.dispatchEvent(new Event('scroll')); }""")
        rows = _wait_rows(frame, lambda r: max(r) == TRACES - 1, "the last row after scrolling to the end")
        scroll_s = time.monotonic() - t
        assert len(rows) < 100
        height = frame.evaluate("document.querySelector('[data-testid=ge-list] .vl-scroller').scrollHeight")
        assert height < 20_000_000, height
        screenshot(page, "big-1-scrolled-to-end")

        # Jump to an index: it is focused, centred and its op is shown.
        t = time.monotonic()
        jump = by_testid(frame, "jump-index")
        jump.fill("654321")
        jump.press("Enter")
        focused = frame.locator("[data-testid=ge-list] .vl-row.focused")
        _wait_rows(frame, lambda r: 654321 in r, "row 654321 after the jump")
        focused.wait_for(timeout=20_000)
        assert focused.get_attribute("data-ge-index") == "654321"
        jump_s = time.monotonic() - t
        op_name = (focused.locator(".ge-op").get_attribute("title") or "").split(" (")[0]  # whole (the text is cut)
        wait_text(by_testid(frame, "gs-focus-op"), "^" + re.escape(op_name))
        screenshot(page, "big-2-jumped")

        # Keyboard: down moves the focus to the next trace.
        by_testid(frame, "ge-list").focus()
        page.keyboard.press("ArrowDown")
        wait_text(frame.locator("[data-testid=ge-list] .vl-row.focused .ge-idx"), r"^654322$")

        # Only non-finite: a smaller total, and every visible row carries a -∞/+∞/NaN chip.
        t = time.monotonic()
        by_testid(frame, "filter-nonfinite").check()
        text = wait_text(count, r"^[\d,]+ of 1,000,000$", timeout_ms=30_000)
        filtered = int(text.split(" of ")[0].replace(",", ""))
        assert 0 < filtered < TRACES
        _wait_rows(frame, lambda r: True, "filtered rows")
        filter_s = time.monotonic() - t
        visible = frame.locator("[data-testid=ge-list] .vl-row[data-ge-index]")
        n = visible.count()
        assert n > 5
        for i in range(n):
            assert visible.nth(i).locator(".chip-neginf, .chip-posinf, .chip-nan").count() >= 1
        # Filtered lists scroll to their end too.
        frame.evaluate("""() => { const s = document.querySelector('[data-testid=ge-list] .vl-scroller');
                                  s.scrollTop = s.scrollHeight; s.dispatchEvent(new Event('scroll')); }""")
        _wait_rows(frame, lambda r: max(r) >= TRACES - 1000, "the end of the filtered list")
        screenshot(page, "big-3-nonfinite-filter")
        print(f"1M rows: scroll-to-end {scroll_s:.2f}s, jump {jump_s:.2f}s, filter {filter_s:.2f}s")
        assert_no_console_errors(page)
