"""End-to-end (#17, device placement): on a real two-device dump (tests/programs/devices.py), Graph Execution's
device facet picks CPU:1 and the list shows exactly the traces the API says ran there, each with its device in the
device column; the URL keeps the facet (a reload brings it back); the timeline's tooltip names each eager
execution's device."""

from __future__ import annotations

import re
from urllib.parse import quote

import dumps
import pytest
from e2e_helpers import screenshot
from e2e_page import assert_no_console_errors, by_testid, dashboard_frame, open_dashboard, read_runs, wait_text

from harness.tensorboard_process import TensorBoardProcess

pytestmark = pytest.mark.e2e

CPU1 = "/job:localhost/replica:0/task:0/device:CPU:1"
API = "/data/plugin/dbg/"


def _shown_rows(frame) -> list[tuple[int, str, str]]:
    """(trace index, device cell text, device cell title) of every row the list draws."""
    return frame.evaluate(
        """() => [...document.querySelectorAll('[data-testid=ge-list] .vl-row[data-ge-index]')]
            .filter(r => r.offsetParent !== null)
            .map(r => [Number(r.dataset.geIndex), r.querySelector('.ge-device').textContent,
                       r.querySelector('.ge-device').title])
            .sort((a, b) => a[0] - b[0])"""
    )


def test_device_facet_shows_exactly_the_traces_on_cpu1(page):
    with TensorBoardProcess(dumps.make_dump("devices")) as tb:
        frame = open_dashboard(page, tb)
        run = read_runs(tb)[0]["name"]  # read to its end: a half-read run's totals are partial
        total = tb.get_json(API + f"graph_executions?run={run}&begin=0&end=1000")["total"]
        on_cpu1 = tb.get_json(API + f"graph_executions?run={run}&begin=0&end=1000&device={quote(CPU1)}")
        want = [r["index"] for r in on_cpu1["rows"]]
        assert want and len(want) < total and {r["device_name"] for r in on_cpu1["rows"]} == {CPU1}

        facet = by_testid(frame, "filter-device")
        facet.wait_for(state="visible", timeout=20_000)  # two devices: the facet is shown
        assert by_testid(frame, "filter-host").is_hidden()  # one host: nothing to pick
        options = facet.locator("option").all_text_contents()
        assert options[0] == "any device" and any(o.startswith("CPU:1 (") for o in options), options
        facet.select_option(CPU1)
        wait_text(by_testid(frame, "ge-count"), rf"^{len(want)} of {total}$")
        frame.wait_for_function(
            "n => document.querySelectorAll('[data-testid=ge-list] .vl-row[data-ge-index]').length >= n", arg=len(want)
        )
        shown = _shown_rows(frame)
        assert [i for i, _, _ in shown] == want
        assert all(text == "CPU:1" and title.startswith(CPU1 + " on ") for _, text, title in shown), shown
        screenshot(page, "devices-1-filtered-to-cpu1")

        # Focus a row of the filtered list: the facet and the focus are in the URL, and a reload brings both back.
        frame.locator(f"[data-testid=ge-list] .vl-row[data-ge-index='{want[-1]}']").click()
        frame.locator(f"[data-testid=ge-list] .vl-row.focused[data-ge-index='{want[-1]}']").wait_for(timeout=20_000)
        assert "device=" in frame.evaluate("location.hash")
        page.reload()  # TensorBoard's page: its `dbg` query parameter mirrors the plugin's URL state
        frame = dashboard_frame(page)
        frame.wait_for_function("document.body && document.body.dataset.ready === '1'", timeout=60_000)
        wait_text(by_testid(frame, "ge-count"), rf"^{len(want)} of {total}$")
        assert by_testid(frame, "filter-device").input_value() == CPU1
        frame.locator(f"[data-testid=ge-list] .vl-row.focused[data-ge-index='{want[-1]}']").wait_for(timeout=20_000)
        assert by_testid(frame, "ge-note").is_hidden()  # nothing was cleared

        # The timeline's boxes: each eager execution's tooltip names its device (the NaN-making Sqrt on CPU:1).
        execs = tb.get_json(API + f"executions?run={run}&begin=0&end=100")["executions"]
        sqrt = next(e for e in execs if e["op_type"] == "Sqrt")
        assert sqrt["device"] == CPU1
        box = frame.locator(f"[data-testid=tl-box][data-index='{sqrt['index']}']")
        box.wait_for(timeout=20_000)
        assert re.search(rf"Sqrt — non-finite output\non {re.escape(CPU1)}$", box.get_attribute("title") or "")
        for e in execs:
            title = frame.locator(f"[data-testid=tl-box][data-index='{e['index']}']").get_attribute("title") or ""
            assert title.endswith(f"on {e['device']}"), (e, title)
        assert_no_console_errors(page)
