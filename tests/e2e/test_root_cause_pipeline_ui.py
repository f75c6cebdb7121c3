"""End-to-end (#38 item 3): a NaN born inside a tf.data map function. The card names the map function's division
and its line (the fix, focused on click); the line that built the dataset is shown as context, never as "fix"."""

from __future__ import annotations

import dumps
import pytest
from e2e_helpers import screenshot, wait_focused_source_line
from e2e_page import assert_no_console_errors, by_testid, open_dashboard, wait_text

from harness.tensorboard_process import TensorBoardProcess

pytestmark = pytest.mark.e2e


def test_a_nan_born_in_the_pipeline_is_fixed_in_the_map_function(page):
    with TensorBoardProcess(dumps.make_dump("nan_data_map", "fit")) as tb:
        frame = open_dashboard(page, tb)
        card = by_testid(frame, "root-cause")
        wait_text(card.locator(".rc-op"), r"^truediv$", timeout_ms=30_000)  # the card, once the run is read
        wait_text(by_testid(frame, "rc-data"), r"born in the input pipeline, reached batch 2")
        context = card.locator("[data-testid=rc-context]")
        wait_text(context, r"the dataset built by TensorSliceDataset at\s+nan_data_map\.py:\d+")
        assert card.locator("[data-testid=rc-fix]").count() == 0  # the dataset's line is not the fix
        wait_text(card.locator("[data-testid=rc-source]"), r"nan_data_map\.py:\d+\s*return \(x - mean\) / std")
        wait_text(card.locator(".rc-nth"), r"· 6th trace")  # #38 item 7: its 6th trace, not "execution 6"
        card.click()
        wait_focused_source_line(frame, dumps.program_path("nan_data_map"), "# CULPRIT")
        wait_text(by_testid(frame, "op-sparkline"), r"health over 8 trace\(s\) · first NaN/∞ at its 6th trace")
        screenshot(page, "pipeline-1-born-in-map")
        assert_no_console_errors(page)
