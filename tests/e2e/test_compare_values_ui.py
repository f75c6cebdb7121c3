"""End-to-end (#27): Tensor Values while comparing, in Chromium against a real `tensorboard`. With run B compared
with its baseline A, a click on a divergent row of Graph Execution (one after the first divergence) focuses it;
the row's "values" opens Tensor Values, which shows baseline, changed and their difference side by side (named so),
and the largest |baseline − changed| it names is the one the `compare_values` route answers for that tensor and
window (and numpy's, from the route's own A and B values). (A tensor only the changed run holds, "no counterpart in
the baseline": tests/test_compare_values.py, through the route.)"""

from __future__ import annotations

import json
import math
import urllib.request
from urllib.parse import urlencode

import numpy as np
import pytest
from compare_e2e import comparing
from e2e_helpers import screenshot
from e2e_page import assert_no_console_errors, by_testid, wait_text

pytestmark = pytest.mark.e2e


def _route(tb, **params) -> dict:
    with urllib.request.urlopen(f"{tb.url}/data/plugin/dbg/compare_values?{urlencode(params)}", timeout=30) as r:
        return json.loads(r.read())


def _num(v):
    return {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}.get(v, v) if isinstance(v, str) else v


_CARD_OVER_PANE_JS = """() => {
  const pane = document.querySelector('.tv-pane');
  const r = pane.getBoundingClientRect();
  const top = document.elementFromPoint(r.right - 24, r.top + 60);
  return pane.contains(top) ? false : (top ? top.className || top.tagName : 'nothing');
}"""


TALL = (1920, 1600)  # tall enough that the compare card (fixed at the top right, sized to its content) leaves rows free


def test_divergent_row_shows_a_b_and_difference(page, tmp_path):
    with comparing(page, tmp_path, "cmp_constant", "FULL_TENSOR", viewport=TALL) as (tb, frame):
        # a divergent row of Graph Execution (marked Δ) that is not the first divergence: the last one listed
        divergent = frame.locator("[data-testid=ge-list] .vl-row").filter(
            has=frame.locator("[data-testid=ge-divergent]")
        )
        divergent.first.wait_for(timeout=20_000)
        row = divergent.last
        index = int(row.get_attribute("data-index") or -1)
        row.click()
        wait_text(frame.locator("[data-testid=ge-list] .vl-row.focused"), rf"^\s*{index}\b")
        row.locator("[data-testid=ge-values]").click()
        pane = by_testid(frame, "tv-compare")
        for key in ("a", "b", "diff"):  # three views side by side
            by_testid(pane, f"tv-compare-{key}").locator("td").first.wait_for(timeout=20_000)
        shape = _route(tb, b="changed", a="base", source="graph", index=index)["b"]["shape"]
        whole = ",".join(f"0:{n}" for n in shape) or "..."  # the pane's window: the whole of these small tensors
        answer = _route(tb, b="changed", a="base", source="graph", index=index, slice=whole)
        diff = [_num(v) for v in answer["difference"]["values"]]
        want = np.array([_num(v) for v in answer["a"]["slice"]["values"]]) - np.array(
            [_num(v) for v in answer["b"]["slice"]["values"]]
        )
        assert np.array_equal(diff, want) and np.abs(want).max() > 0
        shown = by_testid(pane, "tv-compare-max")
        wait_text(shown, r"max \|baseline − changed\|")
        # the views by run name and role (#39 item 6): never "A"/"B", which collide with runs named so
        wait_text(by_testid(pane, "tv-compare-a").locator(".tv-label"), r"^baseline base$")
        wait_text(by_testid(pane, "tv-compare-b").locator(".tv-label"), r"^changed changed$")
        wait_text(by_testid(pane, "tv-compare-diff").locator(".tv-label"), r"^baseline − changed$")
        assert float(shown.get_attribute("data-value")) == pytest.approx(float(np.abs(want).max()), abs=0)
        argmax = ",".join(str(i) for i in answer["difference"]["argmax"])
        for key in ("a", "b", "diff"):  # the largest difference's cell marked in all three
            marked = by_testid(pane, f"tv-compare-{key}").locator("td.cv-argmax")
            assert marked.get_attribute("data-index") == argmax
        cells = by_testid(pane, "tv-compare-diff").locator("td")
        assert [float(cells.nth(k).inner_text()) for k in range(len(diff))] == pytest.approx(diff, rel=1e-5)
        # the compare card (fixed at the top right) stays under the Tensor Values pane, not over its right part
        covered = frame.evaluate(_CARD_OVER_PANE_JS)
        assert covered is False, covered
        screenshot(page, "compare-4-tensor-values")
        assert_no_console_errors(page)
