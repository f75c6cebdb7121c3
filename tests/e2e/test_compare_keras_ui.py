"""End-to-end, compare as a user meets it (issue #39, done when): a real Keras program trained with Model.fit and a
changed version of it (a clip layer added before the ReLU, tests/programs/cmp_keras_fit.py), both recorded in
FULL_HEALTH, in one logdir as runs named `A` and `B` — the names role letters used to collide with. In Chromium
against a real `tensorboard`, at 1440 and 1024 px, light and dark: the card names the runs with their roles, says
the first change in counts is the clip (the changed run's line, not the MatMul whose counts moved), Graph Execution's
Δ cells name the runs' roles, the tolerances typed on the card go to every compare request and into the permalink,
and a click on the finding reaches the changed line in Source Code."""

from __future__ import annotations

import re
import urllib.parse

import dumps
import pytest
from compare_e2e import comparing
from compare_helpers import injected_line
from e2e_helpers import screenshot, wait_focused_source_line
from e2e_page import assert_no_console_errors, by_testid, wait_text

pytestmark = pytest.mark.e2e

PROGRAM = "cmp_keras_fit"


def _theme(page, frame, dark: bool) -> None:
    # TensorBoard's own dark theme (a class on its body): the plugin follows it, not prefers-color-scheme
    page.evaluate(f"document.body.classList.toggle('dark-mode', {str(dark).lower()})")
    frame.wait_for_function(f"document.body.classList.contains('dbg-dark') === {str(dark).lower()}", timeout=5000)


@pytest.mark.parametrize("width", [1440, 1024])
def test_keras_change_found_and_read_by_name(page, tmp_path, width):
    line = injected_line(PROGRAM)
    with comparing(page, tmp_path, PROGRAM, "FULL_HEALTH", (width, 900), ("A", "B")) as (_, frame):
        wait_text(by_testid(frame, "compare-head"), r"^changed B vs baseline A \(FULL_HEALTH\): matched \d+")
        wait_text(by_testid(frame, "compare-headline"), r"^First change in counts \(value changes .* not seen\)")
        # the first change is the clip the changed run adds (its line), not the MatMul whose counts moved later
        wait_text(by_testid(frame, "compare-side-B"), rf"^changed B: classifier\S*/clip\S*/clip_by_value.*:{line}")
        wait_text(by_testid(frame, "compare-side-A"), r"^baseline A: classifier\S*/out\S*/MatMul:0 \(MatMul\)")
        card = by_testid(frame, "compare-card").inner_text()
        assert not re.search(r"\b(only in B|vs run A|B = |A = )", card), card
        # Graph Execution: the Δ column by role; the changed run's clip traces are "only in changed", read whole
        by_testid(frame, "filter-divergent").wait_for(timeout=20_000)
        head = frame.locator(".ge-diff-head")
        assert head.inner_text() == "Δ vs baseline" and "baseline A" in (head.get_attribute("title") or "")
        by_testid(frame, "filter-op-name").fill("clip")
        by_testid(frame, "filter-op-name").press("Enter")
        only = frame.locator("[data-testid=ge-difference][data-status=only_in_b]")
        only.first.wait_for(timeout=20_000)
        assert set(only.all_inner_texts()) == {"only in changed"}
        assert "baseline A has no aligned trace" in (only.first.get_attribute("title") or "")
        assert only.evaluate_all("(cs) => cs.filter((c) => c.scrollWidth > c.clientWidth + 1).length") == 0
        # the finding's click reaches the changed line in every panel (Source Code highlights it)
        by_testid(frame, "compare-finding").click()
        wait_focused_source_line(frame, dumps.program_path(PROGRAM), "# INJECTED")
        for dark in (False, True):
            _theme(page, frame, dark)
            screenshot(page, f"compare-keras-{width}-{'dark' if dark else 'light'}")
        assert_no_console_errors(page)


def test_tolerances_typed_on_the_card_go_to_every_request(page, tmp_path):
    with comparing(page, tmp_path, PROGRAM, "FULL_HEALTH", (1440, 900), ("A", "B")) as (_, frame):
        asked: list[str] = []
        page.on("request", lambda r: asked.append(r.url))
        by_testid(frame, "compare-atol").fill("-1")  # not a tolerance: marked, nothing sent
        by_testid(frame, "compare-atol").press("Enter")
        assert by_testid(frame, "compare-atol").get_attribute("aria-invalid") == "true"
        by_testid(frame, "compare-atol").fill("0.5")
        by_testid(frame, "compare-rtol").fill("0.25")
        by_testid(frame, "compare-rtol").press("Enter")
        by_testid(frame, "compare-finding").wait_for(timeout=60_000)
        frame.wait_for_function("location.hash.includes('atol=0.5') && location.hash.includes('rtol=0.25')")
        # Tensor Values of the finding: compare_values at the same tolerances as the card and the rows
        with page.expect_request(lambda r: "/compare_values?" in r.url, timeout=30_000):
            frame.locator("[data-testid=ge-list] .vl-row [data-testid=ge-values]").first.click()
        by_testid(frame, "tv-compare").wait_for(timeout=30_000)
        routes = {}
        for url in asked:
            parsed = urllib.parse.urlparse(url)
            route = parsed.path.rsplit("/", 1)[-1]
            if route.startswith("compare"):
                routes.setdefault(route, []).append(urllib.parse.parse_qs(parsed.query))
        assert {"compare", "compare_rows", "compare_values"} <= set(routes), routes.keys()
        for route, queries in routes.items():
            assert all(q.get("atol") == ["0.5"] for q in queries), (route, queries)  # never the refused -1
            assert queries[-1].get("rtol") == ["0.25"], (route, queries)  # atol went first (its field's blur)
        assert by_testid(frame, "compare-atol").get_attribute("aria-invalid") == "false"
        assert_no_console_errors(page)
