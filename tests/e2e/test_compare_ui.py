"""End-to-end (#27): "Compare with…" in Chromium against a real `tensorboard`: the run with a changed shift (B)
compared with its baseline (A) shows the first divergence at the injected line, and one click on the finding
focuses the trace and highlights that line in Source Code. Also: the page `compare --html` writes, opened from
disk, shows the finding (it fetches nothing)."""

from __future__ import annotations

import dumps
import pytest
from compare_e2e import comparing
from compare_helpers import injected_line, pair
from e2e_helpers import screenshot, wait_focused_source_line
from e2e_page import assert_no_console_errors, by_testid, wait_text

from tensorboard_plugin_dbg.__main__ import main

pytestmark = pytest.mark.e2e


def test_compare_with_focuses_the_injected_line(page, tmp_path):
    program = dumps.program_path("cmp_nan_b")
    with comparing(page, tmp_path, "cmp_nan_b", "FULL_HEALTH") as (_, frame):
        finding = by_testid(frame, "compare-finding")
        line = injected_line("cmp_nan_b")
        wait_text(by_testid(frame, "compare-side-B"), rf"centered:0 \(Sub\).*cmp_nan_b\.py:{line}")
        wait_text(by_testid(frame, "compare-side-A"), rf"cmp_nan_b\.py:{line}")
        assert by_testid(frame, "compare-item").count() >= 2  # the divergent-only list
        finding.click()
        focused = frame.locator("[data-testid=ge-list] .vl-row.focused")
        wait_text(focused, r"centered")
        assert focused.locator("[data-testid=ge-divergent]").count() == 1  # Graph Execution's difference mark
        assert "negative 0 → 2" in focused.locator("[data-testid=ge-divergent]").get_attribute("title")
        wait_focused_source_line(frame, program, "# INJECTED")
        screenshot(page, "compare-1-first-divergence")
        by_testid(frame, "compare-picker").select_option("")  # stop comparing: the card goes
        by_testid(frame, "compare-card").wait_for(state="hidden", timeout=10_000)
        assert_no_console_errors(page)


def test_html_page_opened_in_chromium_shows_the_finding(page, tmp_path):
    a, b = pair("cmp_added_op", "FULL_TENSOR")
    html = tmp_path / "compare.html"
    assert main(["compare", a, b, "--html", str(html)]) == 1
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    page.goto(html.as_uri())
    finding = page.locator("#finding")
    wait_text(finding, rf"(?s)First divergence.*cmp_added_op\.py:{injected_line('cmp_added_op')}")
    assert "squash" in finding.inner_text()
    assert [u for u in requests if not u.startswith("file:")] == []  # nothing fetched
    screenshot(page, "compare-2-html-page")


def test_values_a_b_and_difference_of_the_first_divergence(page, tmp_path):
    with comparing(page, tmp_path, "cmp_constant", "FULL_TENSOR") as (_, frame):
        by_testid(frame, "compare-values-open").click()
        table = by_testid(frame, "compare-values")
        table.wait_for(timeout=20_000)
        # the injected constant: 2.0 in A, 2.5 in B (tests/programs/cmp_constant.py)
        wait_text(table, r"0\s+2\s+2\.5\s+-0\.5")
        # Tensor Values opens on B's side with A, B and A − B (tests/e2e/test_compare_values_ui.py checks its values)
        by_testid(by_testid(frame, "tv-compare"), "tv-compare-diff").locator("td").first.wait_for(timeout=20_000)
        screenshot(page, "compare-3-values")
        assert_no_console_errors(page)
