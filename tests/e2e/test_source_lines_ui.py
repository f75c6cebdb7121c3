"""End-to-end (#17): Source Code's op markers in Chromium on a real NaN dump. The file is opened from the picker (no
focus yet); the culprit line's marker is red and says what it holds; Enter on it opens the list of the line's ops
and Esc closes it, back on the marker; a click opens it again, the NaN op (Log) leads it, and clicking Log focuses
it everywhere: Graph Structure, the Graph Execution list (its first -inf trace) and Source Code's highlighted line."""

from __future__ import annotations

import dumps
import pytest
from e2e_helpers import program_line, screenshot, wait_focused_source_line
from e2e_page import assert_no_console_errors, by_testid, open_dashboard, wait_text

from harness.tensorboard_process import TensorBoardProcess

pytestmark = pytest.mark.e2e

PROGRAM = "tests/programs/nan_function_input.py"


def test_marker_lists_the_lines_ops_and_focuses_one(page):
    culprit, _text = program_line(PROGRAM, "# CULPRIT")
    with TensorBoardProcess(dumps.make_dump("nan_function_input")) as tb:
        frame = open_dashboard(page, tb)
        picker = by_testid(frame, "source-picker")
        picker.locator("option[value]:not([value=''])").first.wait_for(state="attached", timeout=20_000)
        options = picker.locator("option").evaluate_all("os => os.map(o => [o.value, o.textContent])")
        picker.select_option(next(v for v, t in options if t.endswith("nan_function_input.py")))
        wait_text(by_testid(frame, "source-path"), r"nan_function_input\.py$")

        marker = frame.locator(f"[data-testid=line-ops-marker][data-line='{culprit}']")
        marker.wait_for(timeout=20_000)
        assert "nonfinite" in marker.get_attribute("class")
        assert marker.inner_text() == "5"  # Log, mul, Mean, Neg and the mean's axis Const
        title = marker.get_attribute("title")
        assert f"Line {culprit}: 5 graph ops made here" in title and "with NaN/∞ output" in title, title
        # a line with no NaN op has a plain marker (the softmax line)
        softmax = program_line(PROGRAM, "tf.nn.softmax(logits)")[0]
        plain = frame.locator(f"[data-testid=line-ops-marker][data-line='{softmax}']")
        assert "nonfinite" not in plain.get_attribute("class")

        # Keyboard: Enter on the focused marker opens the list; Esc closes it and gives the focus back.
        popover = by_testid(frame, "line-ops-popover")
        marker.focus()
        marker.press("Enter")
        first = popover.locator("[data-testid=line-op]").first
        first.wait_for(timeout=20_000)
        frame.wait_for_function("document.activeElement?.dataset.testid === 'line-op'", timeout=5000)
        page.keyboard.press("Escape")
        popover.wait_for(state="hidden", timeout=5000)
        frame.wait_for_function(f"document.activeElement?.dataset.line === '{culprit}'", timeout=5000)

        # Click: the list again; Log leads it (its output went -inf), marked ●, made directly here.
        marker.click()
        first.wait_for(timeout=20_000)
        wait_text(popover, rf"Line {culprit}")
        assert first.get_attribute("data-op") == "Log" and first.get_attribute("data-health") == "nonfinite"
        assert "direct" in first.inner_text() and "●" in first.inner_text()
        names = popover.locator("[data-testid=line-op]").evaluate_all("els => els.map(e => e.dataset.op)")
        assert sorted(names) == ["Const", "Log", "Mean", "Neg", "mul"], names
        screenshot(page, "source-lines-1-marker-list")

        first.click()
        popover.wait_for(state="hidden", timeout=5000)
        wait_text(by_testid(frame, "gs-focus-op"), r"^Log")
        wait_text(frame.locator("[data-testid=ge-list] .vl-row.focused"), r"\bLog\b")
        wait_focused_source_line(frame, PROGRAM, "# CULPRIT")
        screenshot(page, "source-lines-2-op-focused")
        assert_no_console_errors(page)
