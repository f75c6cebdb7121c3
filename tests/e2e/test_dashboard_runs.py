"""End-to-end: a logdir with two runs (picker, URL remembers run and focus across a reload) and an empty logdir."""

from __future__ import annotations

import os
import shutil

import dumps
from e2e_helpers import screenshot
from e2e_page import assert_no_console_errors, by_testid, open_dashboard, wait_text

from harness.tensorboard_process import TensorBoardProcess


def test_two_runs_picker_and_url(page, demo_dump, demo_facts, tmp_path):
    logdir = str(tmp_path / "logdir")
    shutil.copytree(dumps.make_dump("clean_mlp"), os.path.join(logdir, "a_clean"))
    shutil.copytree(demo_dump, os.path.join(logdir, "b_demo"))
    with TensorBoardProcess(logdir) as tb:
        frame = open_dashboard(page, tb)
        picker = by_testid(frame, "run-picker")
        picker.wait_for(state="visible", timeout=20_000)  # two runs (the catalog may list them after ready)
        # Each run says what it holds; the dashboard opens on the run with the NaN, not the alphabetically first.
        demo_label = f"b_demo — {demo_facts['alerts']:,} alerts"  # a count TF's reader gives (dump_facts.py)
        wait_text(picker, r"a_clean — clean\s+" + demo_label)  # (each says "indexing n %" until read)
        assert picker.locator("option").all_inner_texts() == ["a_clean — clean", demo_label]
        frame.wait_for_function("document.querySelector('[data-testid=run-picker]').value === 'b_demo'")
        picker.select_option("a_clean")
        # The clean run: no alerts, and the panel says why; the root-cause card says it is clean.
        wait_text(by_testid(frame, "panel-alerts-status"), r"No alerts")
        wait_text(by_testid(frame, "root-cause"), r"No non-finite")
        screenshot(page, "runs-1-clean-run")

        picker.select_option("b_demo")
        wait_text(by_testid(frame, "alert-types"), r"NaN / ∞\s+\d+")
        by_testid(frame, "root-cause").click()  # one click on the root cause focuses the producer
        wait_text(by_testid(frame, "gs-focus-op"), r"^Log")
        wait_text(frame.locator(".cm-focus-line"), r"tf\.math\.log\(probs\)")
        focused = frame.locator("[data-testid=ge-list] .vl-row.focused").get_attribute("data-ge-index")
        assert "run=b_demo" in frame.evaluate("location.hash")
        screenshot(page, "runs-2-demo-run-root-cause")

        # A reload of the whole page restores run and focus.
        page.reload()
        frame = _reopened(page)
        assert by_testid(frame, "run-picker").input_value() == "b_demo"
        wait_text(frame.locator("[data-testid=ge-list] .vl-row.focused"), r"Log")
        assert frame.locator("[data-testid=ge-list] .vl-row.focused").get_attribute("data-ge-index") == focused
        wait_text(frame.locator(".cm-focus-line"), r"tf\.math\.log\(probs\)")
        screenshot(page, "runs-3-restored-after-reload")

        # A reload of the iframe alone restores it too (its own location.hash holds the state).
        frame.evaluate("window.__before_reload = 1; location.reload()")
        frame.wait_for_function(
            "!window.__before_reload && document.body && document.body.dataset.ready === '1'", timeout=60_000
        )
        assert by_testid(frame, "run-picker").input_value() == "b_demo"
        wait_text(frame.locator("[data-testid=ge-list] .vl-row.focused"), r"Log")
        assert frame.locator("[data-testid=ge-list] .vl-row.focused").get_attribute("data-ge-index") == focused
        assert_no_console_errors(page)


def _reopened(page):
    from e2e_page import dashboard_frame

    frame = dashboard_frame(page)
    frame.wait_for_function("document.body && document.body.dataset.ready === '1'", timeout=60_000)
    return frame


def test_empty_logdir_explains_why(page, tmp_path):
    logdir = str(tmp_path / "empty")
    os.makedirs(logdir)
    with TensorBoardProcess(logdir) as tb:
        frame = open_dashboard(page, tb)
        status = wait_text(by_testid(frame, "status"), r"\S")
        assert "dump" in status.lower(), status
        assert not by_testid(frame, "run-picker").is_visible()
        for name in (
            "panel-alerts",
            "panel-graph-execution",
            "panel-timeline",
            "panel-source-code",
            "panel-stack-trace",
            "panel-graph-structure",
        ):
            state = by_testid(frame, name).get_attribute("data-state")
            assert state == "empty", (name, state)
        text = by_testid(frame, "panel-graph-execution-status").inner_text()
        assert "dump" in text.lower(), text
        screenshot(page, "runs-4-empty-logdir")
        assert_no_console_errors(page)
