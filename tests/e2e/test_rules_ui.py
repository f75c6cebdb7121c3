"""End-to-end (#18) in Chromium against a real `tensorboard`: a rule's findings in the Alerts panel; muting a
library's NaN constant from its alert row (with a reason) updates the counts and moves the root cause, survives a
reload of the permalink and un-mutes in one click; the health map's NaN cell focuses its trace."""

from __future__ import annotations

import dumps
import pytest
from e2e_helpers import screenshot
from e2e_page import assert_no_console_errors, by_testid, open_dashboard, read_runs, wait_text

from harness.tensorboard_process import TensorBoardProcess

pytestmark = pytest.mark.e2e


def _card(frame, pattern: str):
    card = by_testid(frame, "root-cause")
    card.wait_for(timeout=30_000)
    return wait_text(card, pattern, timeout_ms=30_000)


def test_rule_findings_are_listed_by_type(page):
    with TensorBoardProcess(dumps.make_dump("dead_relu")) as tb:
        frame = open_dashboard(page, tb)
        dead = frame.locator("[data-testid=alert-type][data-type=dead_relu]")
        wait_text(dead, r"Dead ReLU\s+1", timeout_ms=30_000)
        # the Sum the dead ReLU zeroes is named under it, not a finding of its own (#38)
        assert frame.locator("[data-testid=alert-type][data-type=all_zero]").count() == 0
        dead.click()
        row = by_testid(frame, "alert-row").first
        wait_text(row, r"hidden_relu")
        row.click()
        # the op name is cut to its column keeping its end (#39 item 7): whole in its title
        wait_text(frame.locator("[data-testid=ge-list] .vl-row.focused"), r"_relu")
        assert (
            frame.locator("[data-testid=ge-list] .vl-row.focused .ge-op")
            .get_attribute("title")
            .startswith("hidden_relu")
        )
        assert "FULL_TENSOR" in by_testid(frame, "rule-needs").inner_text()
        screenshot(page, "rules-1-dead-relu")
        assert_no_console_errors(page)


def test_mute_from_the_alert_row_moves_the_root_cause_and_survives_reload(page):
    with TensorBoardProcess(dumps.make_dump("nan_library_const")) as tb:
        frame = open_dashboard(page, tb)
        _card(frame, r"missing_sentinel")
        nan_type = frame.locator("[data-testid=alert-type][data-type=InfNanAlert]")
        wait_text(nan_type, r"NaN / ∞\s+8")
        row = by_testid(frame, "alert-row").filter(has_text="missing_sentinel/value").first
        row.hover()
        row.locator("[data-testid=alert-mute]").click()
        form = by_testid(frame, "mute-form")
        form.locator("[data-testid=mute-scope]").select_option("op_name")
        form.locator("[data-testid=mute-reason]").fill("a library's missing-value sentinel")
        form.locator("[data-testid=mute-confirm]").click()
        chip = by_testid(frame, "mute-chip")
        wait_text(chip, r"op_name=missing_sentinel/value\s+hides 2", timeout_ms=30_000)
        wait_text(nan_type, r"NaN / ∞\s+6")
        text = _card(frame, r"user_sqrt")
        assert "muted producer" in text
        assert frame.locator("[data-testid=alert-row]", has_text="missing_sentinel/value").count() == 0
        screenshot(page, "rules-2-muted")

        assert "mutes" in page.url  # the parent page's permalink carries the mutes
        page.reload()
        frame = _frame_after_reload(page)
        wait_text(by_testid(frame, "mute-chip"), r"hides 2", timeout_ms=30_000)
        _card(frame, r"user_sqrt")

        by_testid(frame, "unmute").click()
        _card(frame, r"missing_sentinel")
        wait_text(frame.locator("[data-testid=alert-type][data-type=InfNanAlert]"), r"NaN / ∞\s+8")
        assert by_testid(frame, "mute-chip").count() == 0
        assert_no_console_errors(page)


def _frame_after_reload(page):
    from e2e_page import dashboard_frame

    frame = dashboard_frame(page)
    frame.wait_for_function("document.body && document.body.dataset.ready === '1'", timeout=60_000)
    return frame


def test_health_map_nan_cell_focuses_its_trace(page):
    with TensorBoardProcess(dumps.make_dump("nan_library_const")) as tb:
        frame = open_dashboard(page, tb)
        run = read_runs(tb)[0]["name"]  # read to its end: the map below is the whole run's
        by_testid(frame, "open-health-map").click()
        canvas = by_testid(frame, "health-map-canvas")
        canvas.wait_for(timeout=20_000)
        frame.wait_for_function(
            "document.querySelector('[data-testid=health-map-canvas]').dataset.cellWidth !== undefined"
        )
        geo = canvas.evaluate("c => ({...c.dataset})")
        m = tb.get_json(f"/data/plugin/dbg/health_map?run={run}&begin=0&end=60&columns=200")
        r = next(i for i, row in enumerate(m["rows"]) if row["op_name"] == "user_sqrt")
        c = next(j for j, n in enumerate(m["rows"][r]["nonfinite"]) if n > 0)
        x = int(geo["labelWidth"]) + c * int(geo["cellWidth"]) + int(geo["cellWidth"]) // 2
        y = int(geo["headerHeight"]) + r * int(geo["cellHeight"]) + int(geo["cellHeight"]) // 2
        screenshot(page, "rules-3-health-map")
        canvas.click(position={"x": x, "y": y})
        wait_text(frame.locator("[data-testid=ge-list] .vl-row.focused"), r"sqrt")
        focused_op = frame.locator("[data-testid=ge-list] .vl-row.focused .ge-op")
        assert (focused_op.get_attribute("title") or "").startswith("user_sqrt")
        by_testid(frame, "close-health-map").click()
        wait_text(by_testid(frame, "op-sparkline"), r"first NaN/∞ at its 2nd trace")
        screenshot(page, "rules-4-sparkline")
        assert_no_console_errors(page)


def test_a_permalink_with_an_exponential_regex_mute_opens_and_the_dashboard_works(page):
    """#37: a link someone sent carrying `re:^(.|.)*!` (exponential on a backtracking engine: it froze the whole
    tensorboard) on long Keras op names: the dashboard opens with the mute applied (RE2, linear time), its chip shows,
    the root cause names the Log layer, and the server answers other requests right after."""
    import json
    import urllib.parse

    mutes_json = json.dumps([{"op_name": "re:^(.|.)*!", "reason": "sent by a colleague"}])
    state = urllib.parse.quote("mutes=" + urllib.parse.quote(mutes_json), safe="")
    with TensorBoardProcess(dumps.make_dump("nan_keras")) as tb:
        frame = open_dashboard(page, tb, suffix=f"?dbg={state}")
        wait_text(by_testid(frame, "mute-chip"), r"re:\^\(\.\|\.\)\*!", timeout_ms=30_000)
        _card(frame, r"Log")
        assert tb.get_json("/data/plugin/dbg/runs", timeout=10)["runs"]
        assert_no_console_errors(page)
