"""End-to-end (#40 item 9) in Chromium against a real `tensorboard`: `?` shows the dashboard's keys and links the
README (served by the plugin), and Escape closes the topmost overlay, one at a time — Tensor Values, then the help,
then the compare card (folded, the comparison kept) — and then nothing more."""

from __future__ import annotations

import os
import time

import dumps
import pytest
from compare_e2e import comparing
from e2e_helpers import screenshot
from e2e_page import assert_no_console_errors, by_testid

pytestmark = pytest.mark.e2e


def _overlays(frame) -> dict[str, bool]:
    return frame.evaluate(
        """() => ({
          help: !document.querySelector('[data-testid=help]').hidden,
          card: !document.querySelector('[data-testid=compare-card]').classList.contains('folded'),
          tensor: !!document.querySelector('[data-testid=tv-close]') &&
                  document.querySelector('[data-testid=tv-close]').offsetParent !== null,
        })"""
    )


def test_question_mark_and_escape_one_overlay_at_a_time(page, tmp_path):
    with comparing(page, tmp_path, "cmp_nan_b", "FULL_HEALTH") as (tb, frame):
        frame.locator("body").press("?")
        help_box = by_testid(frame, "help")
        help_box.wait_for(state="visible", timeout=5_000)
        text = help_box.inner_text()
        assert "n / p" in text and "next / previous alert" in text and "Esc" in text
        readme = by_testid(help_box, "help-readme")
        href = readme.evaluate("(a) => a.href")
        assert href == tb.url + "/data/plugin/dbg/readme", href
        answer = page.request.get(href)
        assert answer.status == 200 and "text/plain" in answer.headers["content-type"]
        with open(os.path.join(dumps.ROOT, "README.md"), encoding="utf-8") as f:
            assert answer.text() == f.read()  # the checkout's README, as a link from the dashboard opens it
        screenshot(page, "help-1-keys")
        # Tensor Values over everything (opened last)
        frame.locator("[data-testid=ge-list] .vl-row [data-testid=ge-values]").first.click()
        by_testid(frame, "tv-close").wait_for(state="visible", timeout=20_000)
        assert _overlays(frame) == {"help": True, "card": True, "tensor": True}
        for left in ({"help": True, "card": True, "tensor": False}, {"help": False, "card": True, "tensor": False}):
            page.keyboard.press("Escape")
            _wait_overlays(frame, left)
        page.keyboard.press("Escape")  # the card folds; the comparison stays on
        frame.wait_for_function("document.querySelector('[data-testid=compare-card]').classList.contains('folded')")
        assert by_testid(frame, "compare-picker").input_value() == "base"
        page.keyboard.press("Escape")  # nothing left over the dashboard: nothing changes
        frame.wait_for_timeout(300)
        assert _overlays(frame) == {"help": False, "card": False, "tensor": False}
        assert by_testid(frame, "compare-card").is_visible()
        assert_no_console_errors(page)


def _wait_overlays(frame, want: dict[str, bool], timeout_s: float = 10) -> None:
    deadline = time.monotonic() + timeout_s
    while (got := _overlays(frame)) != want and time.monotonic() < deadline:
        time.sleep(0.05)
    assert got == want
