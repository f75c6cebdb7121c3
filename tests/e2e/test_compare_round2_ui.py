"""End-to-end, compare's second round (issue #39) in Chromium against a real `tensorboard`: the card names runs by
name with their roles (baseline / changed), gives one divergent count split into traces + executions that Graph
Execution's "divergent only" filter repeats and lists, and in a health mode headlines the first change in counts."""

from __future__ import annotations

import re

import pytest
from compare_e2e import comparing
from e2e_helpers import screenshot
from e2e_page import assert_no_console_errors, by_testid, dashboard_frame, wait_text

pytestmark = pytest.mark.e2e


def test_card_names_runs_and_counts_agree_with_the_filter(page, tmp_path):
    with comparing(page, tmp_path, "cmp_clip_health", "FULL_HEALTH") as (_, frame):
        head = by_testid(frame, "compare-head")
        wait_text(head, r"changed changed vs baseline base \(FULL_HEALTH\)")
        total, traces, execs = map(
            int, re.search(r"divergent (\d+) \((\d+) traces \+ (\d+) executions?\)", head.inner_text()).groups()
        )
        assert total == traces + execs and execs > 0
        assert "B = " not in head.inner_text() and "A = " not in head.inner_text()
        wait_text(by_testid(frame, "compare-side-B"), r"changed changed: clip")
        wait_text(by_testid(frame, "compare-side-A"), r"baseline base: ")
        wait_text(by_testid(frame, "compare-headline"), r"First change in counts \(value changes .* not seen\)")
        toggle = frame.locator("label.filter-divergent")
        # the filter lists the differing traces and the clip's, only in changed (an added op is a change)
        label = wait_text(toggle, rf"divergent only \({traces} traces \+ {execs} executions? \+ \d+ only in changed\)")
        added = int(re.search(r"(\d+) only in changed", label).group(1))
        assert 0 < added <= int(re.search(r"only in changed (\d+)", head.inner_text()).group(1))
        by_testid(frame, "compare-fold").click()  # the card's place is item 5's test (test_card_hides_no_panel)
        by_testid(frame, "filter-divergent").check()
        wait_text(by_testid(frame, "ge-count"), rf"^{traces + added} of ")
        assert_no_console_errors(page)


def test_divergent_only_keeps_its_filter_when_the_finding_is_only_in_changed(page, tmp_path):
    """The first change is the clip the changed run adds ("only in changed"): with "divergent only" ticked, its
    click focuses the clip's row in the filtered list, the filter kept (it was cleared, with a note, to show it)."""
    with comparing(page, tmp_path, "cmp_clip_health", "FULL_HEALTH") as (_, frame):
        finding = by_testid(frame, "compare-finding")
        wait_text(by_testid(frame, "compare-side-B"), r"changed changed: clip")
        by_testid(frame, "filter-divergent").check()
        wait_text(by_testid(frame, "ge-count"), r"^\d+ of ")
        finding.click()
        focused = frame.locator("[data-testid=ge-list] .vl-row.focused")
        wait_text(focused.locator(".ge-op"), r"clip")
        assert focused.locator("[data-testid=ge-difference]").get_attribute("data-status") == "only_in_b"
        assert by_testid(frame, "filter-divergent").is_checked()
        assert not by_testid(frame, "ge-note").is_visible(), by_testid(frame, "ge-note").inner_text()
        wait_text(by_testid(frame, "ge-count"), r"^\d+ of ")  # still the filtered list
        screenshot(page, "compare-round2-divergent-only-finding")
        assert_no_console_errors(page)


# Rectangles of every panel and the card; answers the panels (by heading) whose box the card's box overlaps
COVERED_JS = r"""
() => {
  const card = document.querySelector('[data-testid=compare-card]').getBoundingClientRect();
  const hit = (r) =>
    r.left < card.right - 1 && card.left < r.right - 1 && r.top < card.bottom - 1 && card.top < r.bottom - 1;
  return [...document.querySelectorAll('.panel')]
    .filter((p) => p.offsetParent !== null && hit(p.getBoundingClientRect()))
    .map((p) => (p.querySelector('h2, .panel-title, header') || p).textContent.trim().slice(0, 40));
}
"""


@pytest.mark.parametrize("width", [1440, 1024])
def test_card_hides_no_panel(page, tmp_path, width):
    with comparing(page, tmp_path, "cmp_clip_health", "FULL_TENSOR", viewport=(width, 800)) as (_, frame):
        card = by_testid(frame, "compare-card")
        for folded in (False, True):
            assert frame.evaluate(COVERED_JS) == [], (width, folded)
            box = card.bounding_box()
            assert box is not None and box["width"] > 150 and box["height"] > 20
            screenshot(page, f"compare-round2-dock-{width}-{'folded' if folded else 'open'}")
            by_testid(frame, "compare-fold").click()
        by_testid(frame, "filter-divergent").check()  # clickable: nothing over it
        # item 7: every Δ cell read whole (no ellipsis); at 1024 the low-value columns made room for it
        cells = frame.locator("[data-testid=ge-difference][data-status=differs]")
        cells.first.wait_for(timeout=20_000)
        assert cells.evaluate_all("(cs) => cs.filter((c) => c.scrollWidth > c.clientWidth + 1).length") == 0
        # Graph Execution's share of a 1440 px screen is narrower than all its columns: dtype (and slot, shape,
        # device) go while comparing, at 1024 the op type too (it read "floa…", "Rea…", and cut the Δ cell)
        row = frame.locator(".ge-row:not(.ge-head)").first
        assert not row.locator(".ge-dtype").is_visible()
        assert row.locator(".ge-type").is_visible() == (width == 1440)
        assert_no_console_errors(page)


# Per shown Graph Execution row: its health chips' texts and whether a chip or the Δ cell is cut by its cell's edge
HEALTH_CELLS_JS = r"""
() => [...document.querySelectorAll('[data-testid=ge-list] .vl-row')].filter((r) => r.querySelector('.chips'))
  .map((r) => {
    const cell = r.querySelector('.ge-health').getBoundingClientRect();
    const chips = [...r.querySelectorAll('.chips .chip')];
    const diff = r.querySelector('[data-testid=ge-difference]');
    return {
      index: r.dataset.geIndex,
      chips: chips.map((c) => c.textContent),
      cut: chips.some((c) => c.getBoundingClientRect().right > cell.right + 1) ? 'chip' :
        diff !== null && diff.scrollWidth > diff.clientWidth + 1 ? diff.textContent : '',
    };
  })
"""


@pytest.mark.parametrize("width", [1280, 1024])
def test_health_chips_are_read_beside_the_difference_column(page, tmp_path, width):
    """Comparing narrows Graph Execution's health cell: at 1024 px its chips had shrunk to "…" (at 1280 to "2 more")
    beside the Δ column. Each row shows its first count chip at least, nothing cut, the Δ cell whole."""
    with comparing(page, tmp_path, "cmp_clip_health", "FULL_HEALTH", viewport=(width, 800)) as (_, frame):
        by_testid(frame, "compare-fold").click()
        frame.locator("[data-testid=ge-list] .vl-row .chips .chip").first.wait_for(timeout=20_000)
        rows = frame.evaluate(HEALTH_CELLS_JS)
        screenshot(page, f"compare-round2-health-{width}")
        assert len(rows) >= 8, rows
        unread = [r for r in rows if not r["chips"] or r["chips"][0] == "…" or r["chips"][0].endswith(" more")]
        assert not unread and not [r for r in rows if r["cut"]], (width, unread, rows)
        assert_no_console_errors(page)


def test_reload_keeps_the_comparison(page, tmp_path):
    with comparing(page, tmp_path, "cmp_clip_health", "FULL_HEALTH") as (_, frame):
        frame.wait_for_function("location.hash.includes('cmp=base')", timeout=10_000)
        page.reload()  # TensorBoard's page: its `dbg` query parameter mirrors the plugin's URL state
        frame = dashboard_frame(page)
        frame.wait_for_function("document.body && document.body.dataset.ready === '1'", timeout=60_000)
        wait_text(by_testid(frame, "compare-head"), r"changed changed vs baseline base")
        assert by_testid(frame, "compare-picker").input_value() == "base"
        by_testid(frame, "compare-picker").select_option("")  # stop comparing: out of the URL too
        frame.wait_for_function("!location.hash.includes('cmp=')", timeout=10_000)
        assert_no_console_errors(page)
