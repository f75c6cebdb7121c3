"""End-to-end: what the screenshots at 1024×700 showed reading wrong (issue #30): Graph Structure's list mode showed a
stray "hops" label next to "Draw graph" (its input hidden, not its label)."""

from __future__ import annotations

from e2e_page import assert_no_console_errors, by_testid, open_dashboard, wait_text

from harness.tensorboard_process import TensorBoardProcess


def test_list_mode_shows_no_hops_label(page_at, demo_logdir):
    page = page_at(1024, 700)
    with TensorBoardProcess(demo_logdir) as tb:
        frame = open_dashboard(page, tb)
        by_testid(frame, "alert-row").first.click()
        wait_text(by_testid(frame, "gs-focus-op"), r"^Log")
        toolbar = frame.locator(".gs-toolbar")
        assert "hops" not in toolbar.inner_text(), toolbar.inner_text()
        assert_no_console_errors(page)
