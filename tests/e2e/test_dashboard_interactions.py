"""End-to-end: each panel's interactions on the demo dump (timeline, graph navigation, stack folding, source
picker, filters, keyboard, splitters, theme)."""

from __future__ import annotations

import re

from e2e_helpers import program_line, screenshot, wait_focused_source_line
from e2e_page import assert_no_console_errors, by_testid, open_dashboard, wait_text
from timeline_page import wait_landed

from harness.tensorboard_process import TensorBoardProcess

# The lines the Source Code panel must highlight, found in the programs themselves.
DEMO_CALL = ("tests/programs/demo.py", "train(sys.argv[1]")  # the demo program's <module> frame
# The op that made the first -inf.
LOG_LINE = ("tensorboard_plugin_dbg/demo/buggy_mlp.py", "labels * tf.math.log(probs)")


def _focused(frame):
    return frame.locator("[data-testid=ge-list] .vl-row.focused")


def test_panel_interactions(page, demo_logdir):
    with TensorBoardProcess(demo_logdir) as tb:
        frame = open_dashboard(page, tb)

        # Timeline: page forward to an alert box; clicking it shows the execution, its outputs' health and stack.
        wait_text(by_testid(frame, "tl-range"), r"of 39")
        # The minimap's alert marks are drawn just after the ready marker (timeline.ts), so wait for them.
        frame.wait_for_function(
            "Number(document.querySelector('[data-testid=tl-minimap]').dataset.markedBins) > 0", timeout=10_000
        )
        # The landing reveals the root cause's call after the ready marker: paging before it raced the reveal
        # (which moved the page under the clicks, to the last one, where next is disabled). Page from there.
        wait_landed(frame, tb)
        while frame.locator(".tl-box.alert").count() == 0:
            assert by_testid(frame, "tl-next").is_enabled(), "no alert box on any timeline page"
            before = by_testid(frame, "tl-range").inner_text()
            by_testid(frame, "tl-next").click()
            wait_text(by_testid(frame, "tl-range"), "^(?!" + re.escape(before) + "$)")
        box = frame.locator(".tl-box.alert").first
        box.click()
        detail = wait_text(by_testid(frame, "tl-detail"), r"train_step")
        assert "NaN" in detail or "∞" in detail, detail
        wait_text(by_testid(frame, "gs-focus-op"), r"train_step")
        by_testid(frame, "stack-frame").first.wait_for()
        assert "ex=" in frame.evaluate("location.hash")
        screenshot(page, "ui-1-timeline-execution")

        # n / p: next and previous alert from the keyboard.
        frame.locator("body").press("n")
        wait_text(_focused(frame), r"\bLog\b")
        frame.locator("body").press("n")
        wait_text(_focused(frame), r"\bmul\b")
        frame.locator("body").press("p")
        wait_text(_focused(frame), r"\bLog\b")
        log_index = int(_focused(frame).get_attribute("data-ge-index"))

        # Graph Structure: click the input probs -> the list moves to probs' nearest trace (just before Log).
        frame.locator("[data-testid=gs-input-op]", has_text="probs").click()
        wait_text(by_testid(frame, "gs-focus-op"), r"^probs")
        probs_index = int(_focused(frame).get_attribute("data-ge-index"))
        assert probs_index < log_index and log_index - probs_index < 5
        # A consumer click moves down again.
        frame.locator("[data-testid=gs-consumer-op]", has_text="Log").first.click()
        wait_text(by_testid(frame, "gs-focus-op"), r"^Log")
        screenshot(page, "ui-2-graph-navigation")

        # Filters: op type (whole name, any case), op name contains; the count says "N of M". The type column shows
        # the type, also where it equals the name; its title holds the type.
        by_testid(frame, "filter-op-type").fill("log")
        wait_text(by_testid(frame, "ge-count"), r"^6 of 282$")
        types = frame.locator("[data-testid=ge-list] .vl-row .ge-type").evaluate_all("els => els.map(e => e.title)")
        assert types and set(types) == {"Log"}, types
        by_testid(frame, "filter-op-type").fill("")
        by_testid(frame, "filter-op-name").fill("matmul")
        wait_text(by_testid(frame, "ge-count"), r"^\d+ of 282$")
        # MatMul's input x is a function-input placeholder TF never traces: the UI says so.
        frame.locator("[data-testid=ge-list] .vl-row .ge-op", has_text=re.compile(r"^MatMul$")).first.click()
        wait_text(by_testid(frame, "gs-focus-op"), r"^MatMul")
        x_input = frame.locator("[data-testid=gs-input]", has_text="no trace").first
        assert "x" in x_input.inner_text()
        x_input.locator("[data-testid=gs-input-op]").click()
        wait_text(by_testid(frame, "gs-hint"), r"no trace")
        screenshot(page, "ui-3-filters-untraced-input")
        by_testid(frame, "filter-op-name").fill("")
        wait_text(by_testid(frame, "ge-count"), r"^282 traces$")

        # Keyboard in the list: down / up move the focus.
        frame.locator("[data-testid=ge-list] .vl-row[data-ge-index='3']").click()
        wait_text(_focused(frame).locator(".ge-idx"), r"^3$")
        by_testid(frame, "ge-list").press("ArrowDown")
        wait_text(_focused(frame).locator(".ge-idx"), r"^4$")
        by_testid(frame, "ge-list").press("ArrowUp")
        wait_text(_focused(frame).locator(".ge-idx"), r"^3$")

        # Stack Trace: library frames are folded; expanding shows them; a click shows the frame in Source Code.
        frame.locator("body").press("n")
        wait_text(_focused(frame), r"\bLog\b")
        folds = by_testid(frame, "stack-fold")
        folds.first.wait_for()
        n_before = by_testid(frame, "stack-frame").count()
        hidden = int(re.search(r"(\d+) library frames", folds.first.inner_text()).group(1))
        folds.first.click()
        assert by_testid(frame, "stack-frame").count() == n_before + hidden
        outer = by_testid(frame, "stack-frame").first  # outermost: the demo's <module>
        outer.click()
        wait_text(by_testid(frame, "source-path"), r"demo\.py$")
        call_line = wait_focused_source_line(frame, *DEMO_CALL)
        assert re.search(r"demo\.py:(\d+)", outer.inner_text()).group(1) == str(call_line), outer.inner_text()
        screenshot(page, "ui-4-stack-frame-source")

        # Source Code: switch files with the picker; lines that created ops are marked.
        picker = by_testid(frame, "source-picker")
        options = picker.locator("option").evaluate_all("os => os.map(o => [o.value, o.textContent])")
        target = next(v for v, t in options if t.endswith("buggy_mlp.py"))
        picker.select_option(target)
        wait_text(by_testid(frame, "source-path"), r"buggy_mlp\.py$")
        # The file is shown from its top (no frame of it is selected); the tf.math.log line made ops: it is marked.
        op_lines = [t.strip() for t in frame.locator(".cm-op-line").all_inner_texts()]
        assert program_line(*LOG_LINE)[1].strip() in op_lines, op_lines

        # Splitters resize the panes.
        bar = by_testid(frame, "split-left").bounding_box()
        before = by_testid(frame, "panel-alerts").bounding_box()["width"]
        page.mouse.move(bar["x"] + 2, bar["y"] + 50)
        page.mouse.down()
        page.mouse.move(bar["x"] + 102, bar["y"] + 50, steps=5)
        page.mouse.up()
        after = by_testid(frame, "panel-alerts").bounding_box()["width"]
        assert after > before + 50, (before, after)

        # Theme: follows TensorBoard's dark mode live.
        page.evaluate("document.body.classList.add('dark-mode')")
        frame.wait_for_function("document.body.classList.contains('dbg-dark')", timeout=5000)
        screenshot(page, "ui-5-dark-mode")
        page.evaluate("document.body.classList.remove('dark-mode')")
        frame.wait_for_function("!document.body.classList.contains('dbg-dark')", timeout=5000)
        assert_no_console_errors(page)


def test_window_too_short_for_the_alert_list(page, demo_logdir):
    """A window so short that the alert list under the root-cause card gets no height at all: the dashboard still
    reports ready (the list's first page counts as drawn), and the rows appear once the window grows."""
    page.set_viewport_size({"width": 1280, "height": 150})
    with TensorBoardProcess(demo_logdir) as tb:
        frame = open_dashboard(page, tb)  # waits for body[data-ready=1]
        height = frame.evaluate("document.querySelector('[data-testid=alert-list]').getBoundingClientRect().height")
        assert height == 0, f"the alert list should have no room in this window, it has {height}px"
        assert by_testid(frame, "alert-row").count() == 0
        page.set_viewport_size({"width": 1280, "height": 800})
        first = by_testid(frame, "alert-row").first
        first.wait_for(timeout=20_000)
        assert "Log" in first.inner_text()
        screenshot(page, "short-window-then-grown")
        assert_no_console_errors(page)
