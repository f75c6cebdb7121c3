"""End-to-end (#38 items 8 and 9): the caption under the alert kinds says what one alert of each kind listed is (a
run with rule findings only is not told "1 alert = one per non-finite traced tensor"); a diverging LSTM's card says
the float32 overflow and which loss overflowed (item 5)."""

from __future__ import annotations

import dumps
import pytest
from e2e_helpers import screenshot
from e2e_page import assert_no_console_errors, by_testid, open_dashboard, wait_text
from run_helpers import culprit_line

from harness.tensorboard_process import TensorBoardProcess

pytestmark = pytest.mark.e2e


def test_a_rule_finding_is_captioned_as_a_finding(page):
    with TensorBoardProcess(dumps.make_dump("vanishing_grad")) as tb:
        frame = open_dashboard(page, tb)
        types = by_testid(frame, "alert-types")
        wait_text(types, r"Gradient vanishing", timeout_ms=30_000)
        wait_text(types, r"1 rule finding = one per op's output the rule holds for, where it first held")
        assert "non-finite traced tensor" not in types.inner_text()
        assert_no_console_errors(page)


def test_a_diverging_run_card_says_the_overflow(page):
    with TensorBoardProcess(dumps.make_dump("lstm_diverges")) as tb:
        frame = open_dashboard(page, tb)
        card = by_testid(frame, "root-cause")
        wait_text(card.locator(".rc-op"), r"compile_loss/mse/Square", timeout_ms=30_000)
        wait_text(card, r"overflow of float32's range \(its largest finite value is 3\.4e38\)")
        wait_text(card, r"diverging training")
        # #38 item 5: which loss the anonymous op is, and the compile() line that chose it
        line = culprit_line("lstm_diverges")
        wait_text(by_testid(card, "rc-loss"), rf"the loss: `mse`, given to compile\(\) at lstm_diverges\.py:{line}")
        screenshot(page, "wave4-diverging-lstm")
        assert_no_console_errors(page)
