"""Compare in the health modes (issue #39 item 1): equal counts are weak evidence. A pair where B clips values
before a relu (tests/programs/cmp_clip_health.py): the clip moves values but not signs, so the tensors after it keep
their counts until the log's; the B-only clip ops upstream are the first divergence, not the log. The same pair in
FULL_TENSOR, where "same" is the values, gives the same answer from its own evidence."""

from __future__ import annotations

import dumps
import pytest
from compare_helpers import compare_json, injected_line


@pytest.mark.parametrize("mode", ["FULL_HEALTH", "FULL_TENSOR"])
def test_b_only_ops_upstream_of_same_counts_are_the_divergence(mode):
    a = dumps.make_dump("cmp_clip_health", "a", mode)
    b = dumps.make_dump("cmp_clip_health", "b", mode)
    code, doc = compare_json(a, b)
    assert code == 1, doc
    first = doc["first_divergence"]
    assert first["kind"] == "follows_from_only_in_b", first
    assert first["b"]["line"] == injected_line("cmp_clip_health") and first["b"]["op_name"].startswith("clip")
    assert [s["op_name"] for s in first["only_in_b_ops"]][-1] == "clip"


@pytest.mark.parametrize("mode", ["FULL_HEALTH", "CONCISE_HEALTH"])
def test_health_headline_says_counts_not_values(mode):
    a = dumps.make_dump("cmp_clip_health", "a", mode)
    b = dumps.make_dump("cmp_clip_health", "b", mode)
    _code, doc = compare_json(a, b)
    assert doc["headline"].startswith("First change in counts"), doc["headline"]
    assert "value changes that keep the counts are not seen" in doc["headline"]
    _code, full = compare_json(
        dumps.make_dump("cmp_clip_health", "a", "FULL_TENSOR"), dumps.make_dump("cmp_clip_health", "b", "FULL_TENSOR")
    )
    assert full["headline"].startswith("First divergence")


def test_divergent_count_is_split_into_traces_and_executions():
    _code, doc = compare_json(
        dumps.make_dump("cmp_clip_health", "a", "FULL_HEALTH"), dumps.make_dump("cmp_clip_health", "b", "FULL_HEALTH")
    )
    n = doc["counts"]
    assert n["divergent"] == n["divergent_traces"] + n["divergent_executions"] and n["divergent_executions"] > 0


def test_html_page_says_what_it_cut_and_what_was_compared(tmp_path):
    import io

    from compare_helpers import _main

    a = dumps.make_dump("cmp_clip_health", "a", "FULL_HEALTH")
    b = dumps.make_dump("cmp_clip_health", "b", "FULL_HEALTH")
    page = tmp_path / "compare.html"
    assert _main(io.StringIO(), ["compare", a, b, "--html", str(page), "--limit", "2"]) == 1
    text = page.read_text()
    _code, doc = compare_json(a, b)
    assert f"Cut: the first 2 of {doc['counts']['divergent']} are listed" in text and "--limit N" in text
    assert "<th>occurrence</th>" in text and a in text and b in text and "FULL_HEALTH" in text
    assert "tolerances" in text and "date" in text and "tensorboard-plugin-dbg" in text
    assert "First change in counts" in text


def test_report_html_shows_the_summary_and_the_not_judged_lines_once(tmp_path):
    import html
    import io

    from compare_helpers import _main

    b = dumps.make_dump("cmp_nan_b", "b", "FULL_HEALTH")
    page = tmp_path / "report.html"
    text_out = io.StringIO()
    assert _main(text_out, ["report", b, "--html", str(page)]) == 1
    shown = html.unescape(page.read_text())
    lines = [line.strip() for line in text_out.getvalue().splitlines() if line.strip()]
    assert "exit status 1" not in shown and lines[-1] in shown  # the summary line, "... (exit 1)"
    for line in lines:  # every line of the text report is on the page, the not-judged ones included
        assert line in shown, line
    run_line = next(line for line in lines if line.startswith("run "))
    assert shown.count(run_line) == 1
