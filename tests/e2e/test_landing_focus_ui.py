"""End-to-end (#40 item 10) in Chromium against a real `tensorboard`: a run opened with no focus lands on its root
cause in every panel — Graph Execution shows the root cause's trace (in view, marked), Graph Structure its op,
Source Code its line, Stack Trace its frame — while no focus is made: the URL holds none and the arrows still
start from the list's first trace."""

from __future__ import annotations

import json
import shutil
import urllib.request

import dumps
import pytest
from e2e_helpers import screenshot, wait_focused_source_line
from e2e_page import assert_no_console_errors, by_testid, open_dashboard, read_runs, wait_text

from harness.tensorboard_process import TensorBoardProcess

pytestmark = pytest.mark.e2e


def test_arrival_focuses_every_panel_on_the_root_cause(page, tmp_path):
    shutil.copytree(dumps.make_dump("cmp_nan_b", "b", "FULL_HEALTH"), tmp_path / "run")
    with TensorBoardProcess(str(tmp_path)) as tb:
        frame = open_dashboard(page, tb)
        read_runs(tb, ("run",))  # the root cause of the whole run, not of what was read so far
        with urllib.request.urlopen(f"{tb.url}/data/plugin/dbg/root_cause?run=run", timeout=60) as r:
            producer = json.load(r)["producer"]
        index = producer["alert"]["source_index"]
        wait_text(by_testid(frame, "root-cause"), rf"Root cause: {producer['op_name']}")
        marked = frame.locator("[data-testid=ge-list] .vl-row.previewed")  # shown as focused, not a focus
        frame.wait_for_function(
            f"document.querySelector('[data-testid=ge-list] .vl-row.previewed')?.dataset.geIndex === '{index}'",
            timeout=20_000,
        )
        assert marked.count() == 1 and frame.locator("[data-testid=ge-list] .vl-row.focused").count() == 0
        focus_bg = frame.evaluate("getComputedStyle(document.body).getPropertyValue('--focus').trim()")
        assert marked.evaluate("(r) => getComputedStyle(r).backgroundColor") != "rgba(0, 0, 0, 0)", focus_bg
        wait_text(by_testid(frame, "gs-focus-op"), rf"\b{producer['op_name']}\b")
        assert "Select a trace" not in by_testid(frame, "panel-graph-structure").inner_text()
        wait_focused_source_line(frame, dumps.program_path("cmp_nan_b"), 'name="root"')
        wait_text(frame.locator("[data-testid=stack-frame].selected"), r"cmp_nan_b\.py")
        assert "ge=" not in frame.evaluate("location.hash")  # a landing, not a focus: nothing in the URL or history
        screenshot(page, "landing-root-cause")
        frame.locator("body").click(position={"x": 2, "y": 2})
        page.keyboard.press("ArrowDown")  # the keys start from the top, as before any landing
        frame.wait_for_function(
            "document.querySelector('[data-testid=ge-list] .vl-row.focused')?.dataset.geIndex === '0'", timeout=10_000
        )
        assert_no_console_errors(page)
