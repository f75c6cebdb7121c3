"""End-to-end (#27) in Chromium against a real `tensorboard`, on a pair whose step size differs from the first step
(tests/programs/cmp_many_steps.py: hundreds of traces differ): with "Compare with…" on, Graph Execution shows each
row's difference and "divergent only" pages through every differing trace — a row past the first 200 shows the op
and the difference the `compare_rows` route answers for it — and Graph Structure rings the drawn ops by
difference, the first divergence's op thicker; every text stays readable in both themes."""

from __future__ import annotations

import json
import urllib.parse
import urllib.request

import pytest
from compare_e2e import comparing
from contrast_js import CONTRAST_JS
from e2e_helpers import screenshot
from e2e_page import assert_no_console_errors, by_testid, wait_text

from harness.tensorboard_process import TensorBoardProcess

pytestmark = pytest.mark.e2e

ROW_HEIGHT = 24  # frontend/src/panels/graph_execution/graph_execution.ts


def _api(tb: TensorBoardProcess, route: str, **params) -> dict:
    query = urllib.parse.urlencode(params)
    with urllib.request.urlopen(f"{tb.url}/data/plugin/dbg/{route}?{query}", timeout=60) as resp:
        return json.loads(resp.read())


@pytest.fixture()
def compared(page, tmp_path):
    """The dashboard showing run `changed` compared with run `base`, the comparison's card drawn."""
    with comparing(page, tmp_path, "cmp_many_steps", "FULL_TENSOR") as (tb, frame):
        by_testid(frame, "compare-fold").click()  # the card out of the way of the panels under it
        by_testid(frame, "compare-finding").wait_for(state="hidden", timeout=5_000)
        yield tb, frame


def test_divergent_only_pages_past_200_with_the_servers_differences(page, compared):
    tb, frame = compared
    first_row = frame.locator("[data-testid=ge-list] .vl-row[data-ge-index='0'] [data-testid=ge-difference]")
    wait_text(first_row, r"^=$")  # the first step's first tensors are equal
    by_testid(frame, "filter-divergent").check()
    wanted = _api(tb, "compare_rows", b="changed", a="base", begin=200, end=400, divergent_only="true")
    assert wanted["total"] > 250
    wait_text(by_testid(frame, "ge-count"), rf"^{wanted['total']:,} of {wanted['unfiltered_total']:,}$")
    position = 250
    row, difference = wanted["rows"][position - 200], wanted["differences"][position - 200]
    scroller = frame.locator("[data-testid=ge-list] .vl-scroller")
    scroller.evaluate(f"(el) => {{ el.scrollTop = {(position - 3) * ROW_HEIGHT}; }}")
    shown = frame.locator(f"[data-testid=ge-list] .vl-row[data-ge-index='{row['index']}']")
    shown.wait_for(timeout=20_000)
    name = shown.locator(".ge-op")  # the whole name in its title; the text cut to the column, keeping its end
    assert (name.get_attribute("title") or "").startswith(row["op_name"])
    assert row["op_name"].endswith(name.inner_text().lstrip("…"))
    cell = shown.locator("[data-testid=ge-difference]")
    assert cell.get_attribute("data-status") == "differs" and difference["status"] == "differs"
    assert cell.inner_text().replace("Δ", "").strip() == difference["text"]
    assert difference["summary"] in cell.get_attribute("title")
    screenshot(page, "compare-rows-1-divergent-only-past-200")
    shown.click()  # a row of the filtered list focuses as any row does
    frame.locator(f"[data-testid=ge-list] .vl-row.focused[data-ge-index='{row['index']}']").wait_for(timeout=20_000)
    assert_no_console_errors(page)


# Each ring must leave its node's fill and labels seen (issue #39 item 4): unfilled (a `.gs-node.h-finite rect`
# rule filled it, hiding the labels) and drawn before (under) every label of its node.
RINGS_JS = r"""
() => [...document.querySelectorAll('.gs-cmp-ring')].flatMap((ring) => {
  const kids = [...ring.parentNode.children];
  const fill = getComputedStyle(ring).fill;
  const above = kids.filter((k) => k.tagName === 'text' && kids.indexOf(k) < kids.indexOf(ring));
  const out = [];
  if (fill !== 'none') out.push({ ring: ring.parentNode.dataset.id, fill });
  if (above.length) out.push({ ring: ring.parentNode.dataset.id, over: above.map((t) => t.textContent) });
  return out;
})
"""


def test_graph_structure_rings_the_first_divergence_and_equal_ops(page, compared):
    _tb, frame = compared
    by_testid(frame, "compare-fold").click()  # unfold, follow the finding, fold again
    by_testid(frame, "compare-finding").click()  # focuses B's step/x (the injected constant)
    by_testid(frame, "compare-fold").click()
    wait_text(by_testid(frame, "gs-focus-op"), r"^step/x")
    by_testid(frame, "gs-mode").click()  # draw the graph
    first = frame.locator("[data-testid=gs-node][data-cmp-first=true]")
    first.wait_for(timeout=20_000)
    assert first.get_attribute("data-id").endswith(":step/x")
    assert "cmp-differs" in first.get_attribute("class") and first.get_attribute("data-diff") == "differs"
    stroke = first.locator(".gs-cmp-ring").evaluate("(r) => getComputedStyle(r).stroke")
    # walk to the Mul the constant feeds: its other input, the gradient, is equal at the first step
    frame.locator("[data-testid=gs-node][data-id$=':step']").focus()
    page.keyboard.press("Enter")
    wait_text(by_testid(frame, "gs-focus-op"), r"^step\b")
    first.wait_for(timeout=20_000)  # still ringed as the first divergence in the new drawing
    equal = frame.locator("[data-testid=gs-node][data-diff=same]")
    equal.first.wait_for(timeout=20_000)
    assert "cmp-differs" not in equal.first.get_attribute("class")
    assert equal.first.locator(".gs-cmp-ring").evaluate("(r) => getComputedStyle(r).stroke") != stroke
    assert by_testid(frame, "gs-cmp-legend").is_visible()
    failures = {}
    for theme in ("light", "dark"):
        if theme == "dark":
            page.evaluate("document.body.classList.add('dark-mode')")
            frame.wait_for_function("document.body.classList.contains('dbg-dark')", timeout=5000)
        screenshot(page, f"compare-rows-2-graph-{theme}")
        failures[theme] = frame.evaluate(CONTRAST_JS, None) + frame.evaluate(RINGS_JS)
    assert failures == {"light": [], "dark": []}, failures
    assert_no_console_errors(page)
