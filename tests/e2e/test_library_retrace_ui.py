"""End-to-end (#38 item 4) in Chromium against a real `tensorboard`: Keras's step, remade by a compile() before each
`fit`, is retraced by the user's calls. The Alerts panel lists one retracing finding whose row names the user's
`fit` line and what to change; one click on it highlights that line in Source Code; the card, on a run with no
NaN/∞, copies the same finding in the report's text."""

from __future__ import annotations

import dumps
import pytest
from e2e_helpers import program_line, screenshot, wait_focused_source_line
from e2e_page import assert_no_console_errors, by_testid, open_dashboard, wait_text

from harness.tensorboard_process import TensorBoardProcess

pytestmark = pytest.mark.e2e

PROGRAM = "tests/programs/retrace_keras_compile.py"


def test_a_library_retrace_names_the_users_call_in_the_rules_panel(page):
    line, _text = program_line(PROGRAM, "# CALL")
    where = f"{dumps.program_path('retrace_keras_compile')}:{line}"
    with TensorBoardProcess(dumps.make_dump("retrace_keras_compile")) as tb:
        frame = open_dashboard(page, tb)
        kind = frame.locator("[data-testid=alert-type][data-type=retracing]")
        wait_text(kind, r"Repeated function traces\s+1", timeout_ms=30_000)
        kind.click()
        row = by_testid(frame, "alert-row").first
        wait_text(row, r"multi_step_on_iterator \(not your code")
        evidence = row.get_attribute("title") or ""
        assert f"each trace made by your call at {where}" in evidence, evidence
        assert "compile once, before the loop" in evidence, evidence
        card = by_testid(frame, "root-cause")
        wait_text(card, r"No non-finite values", timeout_ms=30_000)
        copied = by_testid(card, "rc-copy").get_attribute("data-text") or ""
        assert f"at {where}" in copied and "multi_step_on_iterator (not your code" in copied, copied
        row.click()
        wait_focused_source_line(frame, PROGRAM, "# CALL")
        screenshot(page, "library-retrace-1-users-call")
        assert_no_console_errors(page)
