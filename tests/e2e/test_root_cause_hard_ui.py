"""End-to-end (#15): the root-cause card on the hard cases, in Chromium against a real `tensorboard`. One click on
the card selects the producer's trace and highlights the line a person would fix: the forward `tf.norm` line for a
NaN born in the backward pass, the softmax (not the benign -inf mask) for a masked attention, the dataset's line for
a NaN the data carried."""

from __future__ import annotations

import dumps
import pytest
from e2e_helpers import screenshot, wait_focused_source_line
from e2e_page import assert_no_console_errors, by_testid, open_dashboard, wait_text

from harness.tensorboard_process import TensorBoardProcess

pytestmark = pytest.mark.e2e


def _card(frame):
    card = by_testid(frame, "root-cause")
    card.wait_for(timeout=30_000)
    wait_text(card, r"Root cause", timeout_ms=30_000)
    return card


def test_backward_pass_card_highlights_the_forward_line(page):
    program = dumps.program_path("nan_grad_norm")
    with TensorBoardProcess(dumps.make_dump("nan_grad_norm")) as tb:
        frame = open_dashboard(page, tb)
        card = _card(frame)
        wait_text(by_testid(frame, "rc-forward"), r"gradient of\s+norm/Sqrt\s+Sqrt")
        wait_text(card.locator("[data-testid=rc-fix]"), r"fix\s+nan_grad_norm\.py:\d+\s*distance = tf\.norm")
        wait_text(card.locator("[data-testid=rc-source]"), r"during\s+nan_grad_norm\.py:\d+\s*grad = tape\.gradient")
        card.click()
        focused = frame.locator("[data-testid=ge-list] .vl-row.focused")
        wait_text(focused, r"SqrtGrad")  # the name cut to its column, keeping its end; whole in the title
        assert focused.locator(".ge-op").get_attribute("title").startswith("gradient_tape/norm/SqrtGrad")
        wait_focused_source_line(frame, program, "# CULPRIT")
        screenshot(page, "hard-1-backward-pass")
        assert_no_console_errors(page)


def test_masked_softmax_card_skips_the_mask(page):
    program = dumps.program_path("nan_masked_softmax")
    with TensorBoardProcess(dumps.make_dump("nan_masked_softmax")) as tb:
        frame = open_dashboard(page, tb)
        card = _card(frame)
        wait_text(card.locator(".rc-op"), r"^Softmax$")
        wait_text(by_testid(frame, "rc-skip"), r"SelectV2/e \(Const\) at nan_masked_softmax\.py:\d+ was absorbed")
        # The mask's -inf alerts are marked contained in the list (◌), not producers.
        rows = by_testid(frame, "alert-row")
        rows.first.wait_for(timeout=20_000)
        assert frame.locator("[data-testid=alert-row][data-role=contained]").count() >= 3
        card.click()
        wait_text(frame.locator("[data-testid=ge-list] .vl-row.focused"), r"Softmax")
        wait_focused_source_line(frame, program, "# CULPRIT")
        screenshot(page, "hard-2-masked-softmax")
        assert_no_console_errors(page)


def test_data_card_points_at_the_dataset(page):
    program = dumps.program_path("nan_data")
    with TensorBoardProcess(dumps.make_dump("nan_data", "FULL_TENSOR")) as tb:
        frame = open_dashboard(page, tb)
        card = _card(frame)
        wait_text(by_testid(frame, "rc-data"), r"the data carried it: batch 2 · non-finite at \(1, 2\)")
        card.click()
        wait_focused_source_line(frame, program, "# CULPRIT")
        screenshot(page, "hard-3-data")
        assert_no_console_errors(page)


def test_unrecorded_function_input_is_marked_unknown_not_producer(page):
    """A function called from inside another: its input is not in the dump, so the first NaN's op is "unknown" (◐),
    never the ● of an op proven to have made it from finite inputs."""
    with TensorBoardProcess(dumps.make_dump("nan_function_input", "FULL_HEALTH", "nested")) as tb:
        frame = open_dashboard(page, tb)
        card = by_testid(frame, "root-cause")
        card.wait_for(timeout=30_000)
        wait_text(card, r"First NaN/∞ \(inputs not recorded\):\s+Log", timeout_ms=30_000)
        wait_text(card, r"called from inside tf\.function `step`")
        first = by_testid(frame, "alert-row").first
        first.wait_for(timeout=20_000)
        wait_text(first, r"◐")
        assert first.get_attribute("data-role") == "unknown"
        assert frame.locator("[data-testid=alert-row][data-role=producer]").count() == 0
        assert_no_console_errors(page)
