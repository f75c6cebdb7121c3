"""End-to-end (#36): the capsule card's per-layer history in Chromium against a real `tensorboard`. The capsule of
tests/programs/capsule_layer_history.py (dense_3's kernel gradient grown for 4 steps before a NaN batch, not
replayed) opens on its card: the heatmap (variables x the last 32 steps, log scale) names the first out of band,
marks the cell where it left its band, and paints a non-finite norm in the NaN colour — at 1440 and 1024, light and
dark."""

from __future__ import annotations

import os
import shutil

import dumps
import pytest
from e2e_helpers import screenshot
from e2e_page import assert_no_console_errors, by_testid, open_dashboard, wait_text

from harness.tensorboard_process import TensorBoardProcess

pytestmark = pytest.mark.e2e

PIXEL = """(canvas, [row, col]) => {
  const ctx = canvas.getContext('2d');
  return Array.from(ctx.getImageData(col, row, 1, 1).data.slice(0, 3));
}"""


def test_the_card_draws_the_layer_history_and_marks_the_first_out_of_band(page, tmp_path):
    logdir = tmp_path / "capsules"
    shutil.copytree(os.path.join(dumps.make_dump("capsule_layer_history"), "capsules"), logdir)
    with TensorBoardProcess(str(logdir)) as tb:
        (info,) = tb.get_json("/data/plugin/dbg/capsules")["capsules"]
        history = info["layer_history"]
        assert history["first"].endswith("dense_3/kernel") and history["lead"] == 4
        frame = open_dashboard(page, tb)
        card = by_testid(by_testid(frame, "capsules-panel"), "capsule-card")
        card.wait_for(timeout=30_000)
        layers = by_testid(card, "capsule-layers")
        wait_text(layers, r"layers: first out of band: sequential/dense_3/kernel, 4 steps before the trigger")
        assert by_testid(layers, "capsule-layers-first").inner_text() == history["first"]
        canvas = by_testid(layers, "capsule-layers-canvas")
        box = canvas.bounding_box()
        rows, steps = len(history["variables"]), history["steps"]
        assert (round(box["width"]), round(box["height"])) == (steps * 8, rows * 13)
        # the mark sits on the first out-of-band variable's row, at the step it left its band
        mark = by_testid(layers, "capsule-layers-mark").bounding_box()
        first = history["variables"].index(history["first"])
        assert abs(mark["x"] + 1 - (box["x"] + (steps - 1 - 4) * 8)) <= 1.5
        assert abs(mark["y"] + 1 - (box["y"] + first * 13)) <= 1.5
        # a non-finite norm (null on the wire) is painted in the NaN colour, the grown cell at the ramp's bright end
        cells = enumerate(history["grad_norm"])
        row, col = next((r, c) for r, values in cells for c, v in enumerate(values) if v is None)
        handle = canvas.element_handle()
        assert handle.evaluate(PIXEL, [row, col]) == [0xD8, 0x1B, 0x60]
        peak = handle.evaluate(PIXEL, [first, steps - 2])  # the 4th growth step: the largest finite norm
        assert peak[0] > 200 and peak[1] > 200 and peak[2] < 100  # yellow
        for width, height in ((1440, 900), (1024, 768)):
            page.set_viewport_size({"width": width, "height": height})
            layers.scroll_into_view_if_needed()
            screenshot(page, f"capsule-layers-{width}")
        page.evaluate("document.body.classList.add('dark-mode')")
        frame.wait_for_function("document.body.classList.contains('dbg-dark')", timeout=5000)
        screenshot(page, "capsule-layers-1024-dark")
        page.set_viewport_size({"width": 1440, "height": 900})
        screenshot(page, "capsule-layers-1440-dark")
        assert_no_console_errors(page)


def test_the_per_sample_table_keeps_each_batch_array_apart(page, tmp_path):
    """capsule_speaks.py (data NaN at x[5, 3] of a batch of 8): the table opens on x with sample 5 first (1
    non-finite), min / negatives / zeros beside it; the y tab lists y's 8 rows alone; a row opens Tensor Values, and
    closing Tensor Values returns to the Capsules panel."""
    logdir = tmp_path / "capsules"
    shutil.copytree(os.path.join(dumps.make_dump("capsule_speaks", "--jit", "--previous"), "capsules"), logdir)
    with TensorBoardProcess(str(logdir)) as tb:
        frame = open_dashboard(page, tb)
        card = by_testid(by_testid(frame, "capsules-panel"), "capsule-card")
        card.wait_for(timeout=30_000)
        # the previous step's batch (#36 item 4; kept on the host under XLA): its per-sample loss beside the trigger's
        wait_text(by_testid(card, "capsule-loss"), r"previous step: batch 2 of epoch 1, the same weights: ")
        table = by_testid(card, "capsule-samples")
        wait_text(table.locator("tbody tr").first, r"^x\s*5\s*1\s")
        assert by_testid(card, "capsule-samples-where").inner_text() == "1–8 of 8 (x)"
        assert table.locator("th").all_inner_texts() == [
            "batch array", "sample", "non-finite", "min", "max |x|", "negatives", "zeros"
        ]  # fmt: skip
        tabs = by_testid(card, "capsule-sample-tab")
        assert tabs.all_inner_texts() == ["x", "y"]
        tabs.nth(1).click()
        wait_text(by_testid(card, "capsule-samples-where"), r"^1–8 of 8 \(y\)$")
        cells = table.locator("tbody tr td:first-child").all_inner_texts()
        assert cells == ["y"] * 8  # y's rows alone: never mixed with x's
        screenshot(page, "capsule-samples-y")
        tabs.nth(0).click()
        wait_text(table.locator("tbody tr").first, r"^x\s*5\s*1\s")
        table.locator("tbody tr").first.click()
        pane = by_testid(frame, "tensor-values")
        wait_text(pane.locator(".tv-title"), r"capsule step 11 · batch · x · sample 5\s*float32")
        panel = by_testid(frame, "capsules-panel")
        assert not panel.is_visible()  # Tensor Values in front ...
        by_testid(frame, "tv-close").click()  # ... and closing it returns to the Capsules panel, on the card
        panel.wait_for(state="visible", timeout=5000)
        assert not pane.is_visible() and by_testid(panel, "capsule-card").is_visible()
        assert_no_console_errors(page)
