"""End-to-end: the Tensor Values view on a real FULL_TENSOR dump (tests/programs/tensor_values.py) in Chromium at
1440 x 900 — opened from an alert, the NaN's position clicked to focus its grid cell, the .npy downloaded and its
bytes checked; the op's input side by side; a 4-d tensor's plane moved with the dims picker."""

from __future__ import annotations

import sys

import dumps
import numpy as np
from e2e_helpers import screenshot
from e2e_page import assert_no_console_errors, by_testid, open_dashboard, wait_text

from harness.tensorboard_process import TensorBoardProcess

sys.path.insert(0, dumps.PROGRAMS)
import tensor_values as program  # noqa: E402 - the program's own expected arrays


def _focused_cell(frame):
    return frame.locator("[data-testid=tv-grid] .vg-cell.vg-focus")


def _download(page, frame, tmp_path, name: str) -> np.ndarray:
    with page.expect_download() as info:
        by_testid(frame, "tv-download").click()
    path = tmp_path / name
    info.value.save_as(path)
    return np.load(path)


def test_tensor_values_from_an_alert(browser, tmp_path):
    context = browser.new_context(viewport={"width": 1440, "height": 900}, accept_downloads=True)
    page = context.new_page()
    from conftest import ConsoleWatch

    page.console_watch = ConsoleWatch(page)
    with TensorBoardProcess(dumps.make_dump("tensor_values")) as tb:
        frame = open_dashboard(page, tb)
        # The Log op's alert: -inf at (1, 2) and NaN at (2, 3) of log(LOG_INPUT).
        row = frame.locator("[data-testid=alert-row]", has_text="culprit")
        row.locator("[data-testid=alert-values]").click()
        pane = by_testid(frame, "tensor-values")
        pane.wait_for(state="visible")
        wait_text(pane.locator(".tv-title"), r"culprit.*float32 \[3, 4\]")
        positions = by_testid(frame, "tv-position")
        positions.first.wait_for()
        assert positions.all_inner_texts() == ["[1, 2]", "[2, 3]"]
        assert np.isnan(np.log(program.LOG_INPUT[2, 3].astype(np.float64) + 0j).real) or program.LOG_INPUT[2, 3] < 0
        # The NaN's position: click it, the grid focuses that cell and it shows NaN.
        frame.locator("[data-testid=tv-position][data-pos='2,3']").click()
        wait_text(_focused_cell(frame), r"^NaN$")
        cell = _focused_cell(frame)
        assert cell.get_attribute("data-index") == "2,3" and "v-nan" in cell.get_attribute("class")
        assert cell.is_visible()
        # The -inf one too (its own colour class).
        frame.locator("[data-testid=tv-position][data-pos='1,2']").click()
        wait_text(_focused_cell(frame), r"^−∞$")
        assert "v-neginf" in _focused_cell(frame).get_attribute("class")
        stats = wait_text(by_testid(frame, "tv-stats"), r"NaN\s+1")
        assert "−∞\t1" in stats or "−∞ 1" in stats or "−∞\n1" in stats, stats
        screenshot(page, "tensor-values-1-alert")

        got = _download(page, frame, tmp_path, "culprit.npy")
        with np.errstate(all="ignore"):
            want = np.log(program.LOG_INPUT)
        assert got.dtype == np.float32 and got.shape == (3, 4)
        assert np.isnan(got[2, 3]) and got[1, 2] == -np.inf
        finite = np.isfinite(want)
        assert np.allclose(got[finite], want[finite], rtol=1e-6, atol=0)

        # Its input side by side: shifted:0, and opening it shows LOG_INPUT exactly.
        card = by_testid(frame, "tv-input")
        wait_text(card, r"shifted:0[\s\S]*float32 \[3, 4\]")
        card.locator("[data-testid=tv-input-open]").click()
        wait_text(pane.locator(".tv-title"), r"shifted")
        got = _download(page, frame, tmp_path, "shifted.npy")
        assert got.tobytes() == program.LOG_INPUT.tobytes() and got.dtype == np.float32
        by_testid(frame, "tv-close").click()
        pane.wait_for(state="hidden")
        assert_no_console_errors(page)
    context.close()


def test_tensor_values_4d_plane_and_exact_download(browser, tmp_path):
    context = browser.new_context(viewport={"width": 1440, "height": 900}, accept_downloads=True)
    page = context.new_page()
    from conftest import ConsoleWatch

    page.console_watch = ConsoleWatch(page)
    want = program.expected()["f32_4d"]
    with TensorBoardProcess(dumps.make_dump("tensor_values")) as tb:
        frame = open_dashboard(page, tb)
        row = frame.locator("[data-testid=ge-list] .vl-row", has_text="v_f32_4d")
        row.locator("[data-testid=ge-values]").click()
        pane = by_testid(frame, "tensor-values")
        wait_text(pane.locator(".tv-title"), r"v_f32_4d.*\[2, 3, 4, 5\]")
        # First non-finite position (0, 1, 2, 3) is focused: axes 0 and 1 fixed at 0 and 1.
        wait_text(_focused_cell(frame), r"^NaN$")
        assert by_testid(frame, "tv-fixed-0").input_value() == "0"
        assert by_testid(frame, "tv-fixed-1").input_value() == "1"
        # Move axis 0 to 1: the grid shows x[1, 1, :, :].
        by_testid(frame, "tv-fixed-0").fill("1")
        by_testid(frame, "tv-fixed-0").press("Enter")
        target = frame.locator("[data-testid=tv-grid] .vg-cell[data-index='1,1,2,3']")
        wait_text(target, r"\d")
        assert float(target.inner_text()) == float(f"{want[1, 1, 2, 3]:.6g}")
        screenshot(page, "tensor-values-2-4d")
        got = _download(page, frame, tmp_path, "f32_4d.npy")
        assert got.dtype == np.float32 and got.tobytes() == want.tobytes()
        assert_no_console_errors(page)
    context.close()
