"""End-to-end (issue #19, "truthful at a glance"): health counts on every chip, the tensor detail pane, graph names,
the root-cause card's text, the runs picker and overview, the keys, and the layout at three window sizes.

Screenshots (test-artifacts/glance-*.png) are the closing note's pictures of the root-cause card, the health chips
and the multi-run picker."""

from __future__ import annotations

import os
import re
import shutil
import time

import dumps
from e2e_helpers import ARTIFACTS, screenshot
from e2e_page import assert_no_console_errors, by_testid, open_dashboard, wait_text

from harness.tensorboard_process import TensorBoardProcess
from tensorboard_plugin_dbg.analysis import report_text, root_cause
from tensorboard_plugin_dbg.index.catalog import Catalog

SIZES = ((1024, 700), (1440, 900), (2560, 1440))


def _shot(locator, name: str) -> None:
    os.makedirs(ARTIFACTS, exist_ok=True)
    locator.screenshot(path=os.path.join(ARTIFACTS, name + ".png"))


def test_health_counts_on_every_chip(page, demo_logdir, demo_facts):
    """The demo's softmax output (some zeros of 1,280: how many, the CPU's kernels decide) feeds Log: its counts show,
    and the zeros stand out. Every count is TF's reader's, from the dump (dump_facts.py)."""
    log, probs = demo_facts["log"], demo_facts["probs"]
    assert probs["zero"] > 0 and log["neg_inf"] == probs["zero"]  # the demo's premise: some outputs underflow
    neg_inf, negatives = f"-∞ {log['neg_inf']:,}", f"−×{log['neg']:,}"
    zeros, positives = f"0×{probs['zero']:,}", f"+×{probs['pos']:,}"
    with TensorBoardProcess(demo_logdir) as tb:
        frame = open_dashboard(page, tb)
        card = by_testid(frame, "root-cause")
        wait_text(card, r"Root cause")
        _shot(card, "glance-root-cause-card")
        # Root-cause card: the output's counts and the input's zeros, marked as zeros flowing into Log.
        wait_text(card.locator(".rc-line").first, re.escape(neg_inf))
        assert negatives in card.locator(".rc-line").first.inner_text()
        rc_input = by_testid(frame, "rc-input")
        assert zeros in rc_input.inner_text() and positives in rc_input.inner_text()
        assert rc_input.locator(".chip-warn").count() == 1
        # The graph's name, not its id; no "Log Log".
        title = card.locator(".rc-title").inner_text()
        assert "Log Log" not in title and "train_step" in title, title

        card.click()
        focused = frame.locator("[data-testid=ge-list] .vl-row.focused")
        wait_text(focused, r"Log")
        assert focused.get_attribute("data-ge-index") == str(demo_facts["log_index"])
        # Every count is in the row: on a chip, or (where the cell is too narrow) in the "+N" chip's tooltip.
        shown = lambda row: row.inner_text() + (row.locator(".chips").get_attribute("title") or "")  # noqa: E731
        assert negatives in shown(focused) and neg_inf in focused.inner_text()
        # The Softmax row (#56, its input) shows its zeros: not a plain green "finite" chip.
        probs_row = frame.locator(f"[data-testid=ge-list] .vl-row[data-ge-index='{demo_facts['probs_index']}']")
        assert zeros in shown(probs_row) and positives in shown(probs_row)
        assert probs_row.locator(".chip-ok").count() == 0
        _shot(frame.locator("[data-testid=ge-list]"), "glance-health-chips")
        # Detail pane of the selected tensor: every count and the mode.
        detail = wait_text(by_testid(frame, "tensor-detail"), r"FULL_HEALTH")
        counts = (f"negative {log['neg']:,}", f"zero {log['zero']:,}", f"positive {log['pos']:,}")
        for part in ("float32", "rank 2", f"{log['size']:,} elements", neg_inf, *counts):
            assert part in detail, (part, detail)
        # Graph Structure: the graph's name, and the input's health with the zeros marked.
        meta = wait_text(by_testid(frame, "gs-focus-op"), r"train_step")
        assert "573639ca" not in meta and "-" * 8 not in meta, meta
        gs_in = by_testid(frame, "gs-input")
        wait_text(gs_in, re.escape(zeros))
        assert gs_in.locator(".chip-warn").count() == 1
        # Library frames unfold and fold again.
        frames = by_testid(frame, "stack-frame")
        wait_text(frame.locator("[data-testid=stack-frame].selected"), r"buggy_mlp\.py")
        folded = frames.count()
        fold = by_testid(frame, "stack-fold").first
        hidden = int(fold.inner_text().split()[1])
        fold.click()
        assert frames.count() == folded + hidden
        by_testid(frame, "stack-refold").first.click()
        assert frames.count() == folded
        assert_no_console_errors(page)


def test_root_cause_copy_text_matches_report(page, demo_logdir):
    """The card's "copy as text" gives the report's root-cause section, word for word."""
    run = Catalog(demo_logdir).runs()[0]
    expected = report_text.run_section(report_text.run_result(run))
    with TensorBoardProcess(demo_logdir) as tb:
        frame = open_dashboard(page, tb)
        wait_text(by_testid(frame, "root-cause"), r"Root cause")
        got = by_testid(frame, "rc-copy").get_attribute("data-text")
        assert got == expected
        assert "run dump:" in got.splitlines()[0]


def test_runs_picker_default_and_overview(page, demo_dump, demo_facts, tmp_path):
    """Three runs: the clean one is first alphabetically, but the dashboard opens on the run whose first NaN is
    earliest; the picker says each run's alert count or "clean"; the overview lists them and sorts."""
    logdir = str(tmp_path / "logdir")
    shutil.copytree(dumps.make_dump("clean_mlp"), os.path.join(logdir, "a_clean"))
    shutil.copytree(dumps.make_dump("nan_div"), os.path.join(logdir, "b_div"))
    shutil.copytree(demo_dump, os.path.join(logdir, "c_demo"))
    with TensorBoardProcess(logdir) as tb:
        frame = open_dashboard(page, tb)
        picker = by_testid(frame, "run-picker")
        demo_label = f"c_demo — {demo_facts['alerts']:,} alerts"
        wait_text(picker, r"a_clean — clean\s+b_div — \d+ alerts\s+" + demo_label)
        _shot(frame.locator(".dbg-header"), "glance-run-picker")
        labels = picker.locator("option").all_inner_texts()
        assert labels[0] == "a_clean — clean", labels
        assert labels[1].startswith("b_div — ") and "alert" in labels[1], labels
        assert labels[2] == demo_label, labels
        earliest = _earliest_nan_run(logdir)
        frame.wait_for_function(f"document.querySelector('[data-testid=run-picker]').value === '{earliest}'")
        # The unit of the count, where the count is shown.
        wait_text(by_testid(frame, "status"), r"alerts \(traced tensors / eager executions\)")
        assert (
            "1 NaN/∞ alert = one per non-finite traced tensor or eager execution"
            in by_testid(frame, "alert-types").inner_text()
        )
        by_testid(frame, "runs-overview-open").click()
        table = by_testid(frame, "runs-overview")
        wait_text(table, r"c_demo")
        wait_text(table.locator("tr[data-run=c_demo]"), r"Log.*buggy_mlp\.py:\d+")
        rows = lambda: table.locator("tbody tr").evaluate_all("rs => rs.map(r => r.dataset.run)")  # noqa: E731
        assert rows()[0] == earliest and rows()[-1] == "a_clean"  # by first NaN, clean last
        table.locator("th[data-key=alerts]").click()
        assert rows() == ["a_clean", "b_div", "c_demo"]  # 0, 4, then the demo's (over a hundred)
        table.locator("th[data-key=alerts]").click()
        assert rows() == ["c_demo", "b_div", "a_clean"]
        _shot(table, "glance-runs-overview")
        table.locator("tr[data-run=a_clean]").click()
        wait_text(by_testid(frame, "root-cause"), r"No NaN")
        assert picker.input_value() == "a_clean"
        assert_no_console_errors(page)


def _earliest_nan_run(logdir: str) -> str:
    first = {}
    for run in Catalog(logdir).runs():
        rc = root_cause.analyze(run)
        if rc["producer"]:
            first[run.name] = rc["producer"]["alert"]["wall_time"]
    return min(first, key=first.__getitem__)


def test_logdir_run_named_after_folder(page, demo_dump):
    with TensorBoardProcess(demo_dump) as tb:
        frame = open_dashboard(page, tb)
        status = wait_text(by_testid(frame, "status"), r"^dump · ")
        assert not status.startswith(". "), status
        by_testid(frame, "root-cause").click()  # a focus writes the run into the URL
        frame.wait_for_function("location.hash.includes('run=dump&')")
        assert_no_console_errors(page)


def test_keys_work_on_open_and_layout_sizes(page, demo_logdir):
    """n / p work before any click; prev is disabled at the first alert; at each window size the health column is
    on screen and the card fits."""
    with TensorBoardProcess(demo_logdir) as tb:
        frame = open_dashboard(page, tb)
        prev = by_testid(frame, "alert-prev")
        # No click inside the frame first: the keys reach TensorBoard's page, and the dashboard hears them there.
        assert page.evaluate("document.activeElement.tagName") != "IFRAME"
        page.keyboard.press("ArrowDown")  # the Graph Execution list's first trace
        frame.wait_for_function(
            "document.querySelector('[data-testid=ge-list] .vl-row.focused')?.dataset.geIndex === '0'"
        )
        page.keyboard.press("n")
        wait_text(frame.locator("[data-testid=ge-list] .vl-row.focused"), r"Log")
        assert prev.is_disabled()
        page.keyboard.press("n")
        frame.wait_for_function("document.querySelector('[data-testid=alert-prev]').disabled === false")
        page.keyboard.press("p")
        frame.wait_for_function("document.querySelector('[data-testid=alert-prev]').disabled === true")
        # One Tab stop per widget: the timeline's boxes and Graph Structure's links are reached with arrows.
        assert frame.locator("[data-testid=tl-box]:not([tabindex='-1']), .gs-op-link:not([tabindex='-1'])").count() == 0
        by_testid(frame, "tl-boxes").focus()
        page.keyboard.press("End")
        wait_text(by_testid(frame, "tl-detail"), r"^#38 ")  # the demo's 39 executions: the last
        # The timeline's detail shows the output's counts, and Graph Structure every count of it with its mode.
        wait_text(by_testid(frame, "tl-detail").locator(".chip").first, r"[−0+]×[\d,]+|[-+]∞|NaN")
        outputs = Catalog(demo_logdir).runs()[0].execution(38, max_elements=0)["outputs"]
        details = by_testid(frame, "tensor-detail")
        wait_text(details.first, r"mode FULL_HEALTH")
        assert details.count() == len(outputs)
        for i, h in enumerate(outputs):
            text = details.nth(i).inner_text()
            assert f"zero {h['zero']:,}" in text and f"positive {h['pos']:,}" in text, (text, h)
        page.keyboard.press("Home")
        wait_text(by_testid(frame, "tl-detail"), r"^#0 ")
        page.keyboard.press("PageDown")
        wait_text(by_testid(frame, "tl-detail"), r"^#([2-9]|[1-9]\d+) ")  # a window further
        page.keyboard.press("n")  # back on the alerts; keys pressed fast are taken in order
        page.keyboard.press("p")
        frame.wait_for_function("document.querySelector('[data-testid=alert-prev]').disabled === true")
        # Only the current focus is highlighted: focusing a trace from the list unfocuses the alert.
        assert frame.locator("[data-testid=alert-list] .vl-row.focused").count() == 1
        frame.locator("[data-testid=ge-list] .vl-row[data-ge-index='50']").click()
        frame.wait_for_function(
            "document.querySelector('[data-testid=ge-list] .vl-row.focused')?.dataset.geIndex === '50'"
        )
        assert frame.locator("[data-testid=alert-list] .vl-row.focused").count() == 0
        highlighted = frame.locator(".vl-row").evaluate_all(
            "rs => rs.filter(r => getComputedStyle(r).backgroundColor === "
            "getComputedStyle(document.querySelector('.vl-row.focused')).backgroundColor).length"
        )
        assert highlighted == 1, highlighted
        frame.locator("[data-testid=ge-list] .vl-row[data-ge-index='57']").click()
        for w, h in SIZES:
            page.set_viewport_size({"width": w, "height": h})
            box, panel, card = _settled_layout(frame, h)
            assert box and panel and box["x"] + 20 <= panel["x"] + panel["width"], (w, h, box, panel)
            # A short Alerts pane (1024×700) shows the card short (op and line, then the health chips); taller ones
            # show it whole.
            assert card is not None
            assert (card["height"] < 70) == (h == 700), (w, h, card)
            screenshot(page, f"glance-layout-{w}x{h}")
        assert_no_console_errors(page)


def test_goto_validated_filters_never_cleared_silently_and_back(page, demo_logdir):
    """Go-to-# says what is wrong inline; showing a trace the filters hide clears them with a note; the browser's
    Back and the in-app back each step back one focus; only the focused row is highlighted as focused."""
    with TensorBoardProcess(demo_logdir) as tb:
        frame = open_dashboard(page, tb)
        jump = by_testid(frame, "jump-index")
        jump.fill("9999")
        jump.press("Enter")
        assert "0–281" in wait_text(by_testid(frame, "jump-error"), r"\S")
        assert frame.locator("[data-testid=ge-list] .vl-row.focused").count() == 0
        by_testid(frame, "filter-op-type").fill("softmax")  # any case
        wait_text(by_testid(frame, "ge-count"), r"^\d+ of 282$")
        jump.fill("57")
        assert not by_testid(frame, "jump-error").is_visible()
        jump.press("Enter")
        focused = frame.locator("[data-testid=ge-list] .vl-row.focused")
        wait_text(focused, r"Log")
        assert "Filters cleared to show trace #57" in wait_text(by_testid(frame, "ge-note"), r"\S")
        assert by_testid(frame, "filter-op-type").input_value() == ""
        back = by_testid(frame, "focus-back")
        assert back.is_disabled()
        for i in (56, 55):
            frame.locator(f"[data-testid=ge-list] .vl-row[data-ge-index='{i}']").click()
            frame.wait_for_function(f"document.querySelector('.vl-row.focused')?.dataset.geIndex === '{i}'")
        assert frame.locator("[data-testid=ge-list] .vl-row.focused").count() == 1
        back.click()
        frame.wait_for_function("document.querySelector('.vl-row.focused')?.dataset.geIndex === '56'")
        page.evaluate("history.back()")  # the browser's Back, on TensorBoard's page
        frame.wait_for_function("document.querySelector('.vl-row.focused')?.dataset.geIndex === '57'")
        frame.wait_for_function("document.querySelector('[data-testid=focus-back]').disabled === true")
        assert_no_console_errors(page)


def _settled_layout(frame, height: int, timeout_s: float = 20) -> tuple:
    """(focused row's chips, Graph Execution panel, root-cause card) boxes once the layout after a resize shows the
    chips inside the panel and the card short exactly at 700 px high: the panels re-lay out in animation frames after
    the resize, later on a busy host than any fixed pause promises. The caller asserts on what it got."""
    deadline = time.monotonic() + timeout_s
    while True:
        box = frame.locator("[data-testid=ge-list] .vl-row.focused .chips").bounding_box()
        panel = by_testid(frame, "panel-graph-execution").bounding_box()
        card = by_testid(frame, "root-cause").bounding_box()
        settled = box and panel and card and box["x"] + 20 <= panel["x"] + panel["width"]
        if (settled and (card["height"] < 70) == (height == 700)) or time.monotonic() > deadline:
            return box, panel, card
        frame.page.wait_for_timeout(100)
