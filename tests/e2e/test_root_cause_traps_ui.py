"""End-to-end (#29): the root-cause card on the third round's cases, in Chromium against a real `tensorboard`: the
tf.where trap names the where/log line as fix, tape.gradient as during, and says why in one sentence; a NaN that
came with the data inside Keras fit names the batch, the element and the dataset's line; one click highlights the
line to fix."""

from __future__ import annotations

import dumps
import pytest
from e2e_helpers import screenshot, wait_focused_source_line
from e2e_page import assert_no_console_errors, by_testid, open_dashboard, wait_text

from harness.tensorboard_process import TensorBoardProcess

pytestmark = pytest.mark.e2e


def test_where_trap_card(page):
    program = dumps.program_path("nan_where_grad")
    with TensorBoardProcess(dumps.make_dump("nan_where_grad", "FULL_HEALTH", "log")) as tb:
        frame = open_dashboard(page, tb)
        card = by_testid(frame, "root-cause")
        card.wait_for(timeout=30_000)
        wait_text(card, r"Root cause", timeout_ms=30_000)
        wait_text(card, r"· 2nd trace")  # the op's 2nd trace (#38 item 7: "execution" is the timeline's word)
        wait_text(by_testid(frame, "rc-forward"), r"gradient of\s+Log\s+Log")
        wait_text(card.locator("[data-testid=rc-fix]"), r"fix\s+nan_where_grad\.py:\d+\s*return tf\.where\(z > 0, tf")
        wait_text(card.locator("[data-testid=rc-source]"), r"during\s+nan_where_grad\.py:\d+\s*return tape\.gradient")
        wait_text(by_testid(frame, "rc-why"), r"masked .* Log .* ∞ × 0 = NaN")
        card.click()
        wait_focused_source_line(frame, program, "# FIX-log")
        screenshot(page, "traps-1-where")
        assert_no_console_errors(page)


def test_keras_fit_data_card(page):
    program = dumps.program_path("nan_fit_data")
    with TensorBoardProcess(dumps.make_dump("nan_fit_data", "FULL_TENSOR", "dataset")) as tb:
        frame = open_dashboard(page, tb)
        card = by_testid(frame, "root-cause")
        card.wait_for(timeout=30_000)
        wait_text(by_testid(frame, "rc-data"), r"the data carried it: batch 1 · non-finite at \(5, 2\)", 30_000)
        wait_text(card, r"made by TensorSliceDataset")
        card.click()
        wait_focused_source_line(frame, program, "# DATASET")
        screenshot(page, "traps-2-fit-data")
        assert_no_console_errors(page)
