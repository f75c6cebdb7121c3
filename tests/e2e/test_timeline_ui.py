"""End-to-end (#17): the Python Execution Timeline in Chromium on a real dump (tests/programs/timeline_calls.py: 600
steps of eager op, tf.function call, eager op; 1,140 NaN/∞ alerts, the last far past the first page).

The minimap marks every alert (its last bins too, where the old first-page marks stopped); the wheel, the +/−
buttons and a range dragged on the minimap zoom; a tf.function call opens from its box: Graph Execution lists just
that call's traces with its first NaN/∞ focused, and Graph Structure draws the graph around it."""

from __future__ import annotations

from urllib.parse import quote

import dumps
import pytest
from e2e_helpers import screenshot
from e2e_page import assert_no_console_errors, by_testid, open_dashboard, read_runs, wait_text
from timeline_page import landed_call as _landed_call
from timeline_page import wait_range as _wait_range

from harness.tensorboard_process import TensorBoardProcess

pytestmark = pytest.mark.e2e
CALL_TRACES = 5  # sub, Log, mul/y, mul, Sum: every call of `step` writes these


def _indexed_run(tb) -> str:
    return read_runs(tb)[0]["name"]


def _red_columns(frame) -> list[int]:
    """x of each canvas column of the minimap holding a painted (alert) pixel, as a percentage of its width."""
    return frame.evaluate(
        """() => {
          const c = document.querySelector('[data-testid=tl-minimap] canvas');
          const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
          const xs = new Set();
          for (let x = 0; x < c.width; x++)
            for (let y = 0; y < c.height; y++)
              if (d[4 * (y * c.width + x) + 3] > 0) { xs.add(Math.floor(100 * x / c.width)); break; }
          return [...xs].sort((a, b) => a - b);
        }"""
    )


def test_minimap_marks_every_alert_and_the_timeline_zooms(page):
    with TensorBoardProcess(dumps.make_dump("timeline_calls")) as tb:
        frame = open_dashboard(page, tb)
        run = _indexed_run(tb)
        marks = tb.get_json(f"/data/plugin/dbg/timeline_marks?run={quote(run)}&bins=1000")
        first_page = tb.get_json(f"/data/plugin/dbg/alerts?run={quote(run)}&begin=0&end=1000")
        assert marks["alerts"] > 1000 == len(first_page["alerts"])
        minimap = by_testid(frame, "tl-minimap")
        frame.wait_for_function(
            f"document.querySelector('[data-testid=tl-minimap]').dataset.alerts === '{marks['alerts']}'",
            timeout=20_000,
        )
        assert minimap.get_attribute("data-marked-bins") == str(sum(1 for c in marks["counts"] if c))
        # Painted where the API puts them: the last alerts (steps 380..599: executions 1140..1799) reach the end.
        red = _red_columns(frame)
        want = {int(100 * marks["edges"][i] / marks["executions"]) for i, c in enumerate(marks["counts"]) if c}
        assert set(red) == want and max(red) == 99
        screenshot(page, "timeline-1-minimap")

        # the landing shows the root cause's call (#40 item 10), of all 1,800 executions
        call = _landed_call(tb, run)
        first, last, total = _wait_range(frame, lambda a, b, t: a <= call <= b and t == 1800, "the landing's call")
        shown = last - first + 1
        boxes = by_testid(frame, "tl-boxes")
        box = boxes.bounding_box()
        page.mouse.move(box["x"] + 10, box["y"] + box["height"] / 2)  # zoom out around the first box
        page.mouse.wheel(0, 300)
        _wait_range(frame, lambda a, b, _t: a <= first and b - a + 1 > shown, "zoomed out")
        by_testid(frame, "tl-zoom-in").click()
        by_testid(frame, "tl-zoom-in").click()
        first, last, _ = _wait_range(frame, lambda a, b, _t: b - a + 1 < shown, "zoomed in")
        assert frame.locator("[data-testid=tl-box]").count() == last - first + 1
        # A range dragged over 50%..60% of the minimap: executions 900..1079 fill the strip.
        mm = minimap.bounding_box()
        page.mouse.move(mm["x"] + 0.5 * mm["width"], mm["y"] + 5)
        page.mouse.down()
        page.mouse.move(mm["x"] + 0.55 * mm["width"], mm["y"] + 5, steps=4)
        page.mouse.move(mm["x"] + 0.6 * mm["width"], mm["y"] + 5, steps=4)
        page.mouse.up()
        first, last, _ = _wait_range(frame, lambda a, b, _t: abs(a - 900) <= 4, "the dragged range")
        assert abs((last - first + 1) - 180) <= 6
        assert int(frame.locator("[data-testid=tl-box]").first.get_attribute("data-index")) == first
        strip = boxes.bounding_box()  # every box of the range is on screen, not clipped by the strip
        last_box = frame.locator("[data-testid=tl-box]").last.bounding_box()
        assert last_box["x"] + last_box["width"] <= strip["x"] + strip["width"] + 1
        window = by_testid(frame, "tl-window").bounding_box()
        assert abs(window["x"] - (mm["x"] + 0.5 * mm["width"])) <= 4  # the minimap outlines the new window
        screenshot(page, "timeline-2-zoomed-range")
        assert_no_console_errors(page)


def test_a_function_call_opens_from_the_timeline(page):
    with TensorBoardProcess(dumps.make_dump("timeline_calls")) as tb:
        frame = open_dashboard(page, tb)
        boxes = by_testid(frame, "tl-boxes")
        call = _landed_call(tb, _indexed_run(tb))
        first, _, _ = _wait_range(frame, lambda a, b, _t: a <= call <= b, "the landing's call")  # then nothing moves
        frame.locator(f"[data-testid=tl-box][data-index='{first}']").click()
        # Arrows to execution 40 (step 13's call, whose log is -inf), then Enter opens it.
        for _ in range(abs(40 - first)):
            boxes.press("ArrowRight" if first < 40 else "ArrowLeft")
        wait_text(by_testid(frame, "tl-detail"), r"#40 __inference_step")
        boxes.press("Enter")
        chip = by_testid(frame, "ge-call")
        wait_text(chip, r"call #40 step")
        wait_text(by_testid(frame, "ge-count"), rf"^{CALL_TRACES} of 3,000")
        rows = frame.locator("[data-testid=ge-list] .vl-row[data-ge-index]")
        call_rows = [13 * CALL_TRACES + k for k in range(CALL_TRACES)]  # the 14th call's traces
        frame.wait_for_function(
            "document.querySelectorAll('[data-testid=ge-list] .vl-row[data-ge-index]').length === 5", timeout=20_000
        )
        assert [int(r.get_attribute("data-ge-index")) for r in rows.all()] == call_rows
        focused = frame.locator("[data-testid=ge-list] .vl-row.focused")
        wait_text(focused, r"\bLog\b")
        assert int(focused.get_attribute("data-ge-index")) == call_rows[1]
        by_testid(frame, "gs-drawn").wait_for(timeout=20_000)  # Graph Structure draws the call's graph
        frame.locator("[data-testid=gs-node].focused[data-id$=':Log']").wait_for(timeout=20_000)
        assert frame.locator("[data-testid=tl-box].opened").get_attribute("data-index") == "40"
        screenshot(page, "timeline-3-call-opened")
        # Another call by double-click (the first: finite), then close the call: every trace is listed again.
        boxes.press("Home")  # back to the start of the run
        frame.locator("[data-testid=tl-box][data-index='1']").dblclick()
        wait_text(chip, r"call #1 step")
        frame.wait_for_function(
            "document.querySelector('[data-testid=ge-list] .vl-row.focused')?.dataset.geIndex === '0'",
            timeout=20_000,
        )
        by_testid(frame, "ge-call-close").click()
        wait_text(by_testid(frame, "ge-count"), r"^3,000 traces")
        assert chip.is_hidden()
        # The detail's button opens the focused call too.
        frame.locator("[data-testid=tl-box][data-index='4']").click()
        by_testid(frame, "tl-open-call").click()
        wait_text(chip, r"call #4 step")
        assert_no_console_errors(page)
