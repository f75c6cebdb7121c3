"""The `compare_rows` and `compare_traces` routes (#27: Graph Execution's difference column and "divergent only"
list, Graph Structure's colours) through TensorBoard's real WSGI app, on pairs of real TensorFlow dumps: a page's
per-row differences are the full comparison's (the `compare` route's list, read to its end), "divergent only" pages
through every differing trace past the first 200, and a few traces' differences are those of their rows."""

from __future__ import annotations

import re
import shutil

import pytest
from api_helpers import get, load_schema, make_app, ok, schema_errors, url, wait_indexed
from compare_helpers import pair
from werkzeug.test import Client

PAGE = 200


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    logdir = tmp_path_factory.mktemp("compare_rows_logdir")
    for name, mode in (
        ("cmp_many_steps", "FULL_TENSOR"),
        ("cmp_nan_b", "FULL_HEALTH"),
        ("cmp_added_op", "FULL_TENSOR"),
    ):
        a, b = pair(name, mode)
        shutil.copytree(a, logdir / f"{name}_a")
        shutil.copytree(b, logdir / f"{name}_b")
    app, _plugin = make_app(str(logdir))
    c = Client(app)
    wait_indexed(c)
    return c


def _full_comparison(client, name: str) -> dict[int, dict]:
    """B's graph trace index -> its item in the `compare` route's divergent list, read page by page to its end."""
    items: dict[int, dict] = {}
    begin = 0
    while True:
        body = ok(client, "compare", b=f"{name}_b", a=f"{name}_a", begin=begin, end=begin + PAGE)
        items.update({d["b"]["index"]: d for d in body["divergent"] if d["b"]["source"] == "graph"})
        begin = body["end"]
        if begin >= body["total"]:
            return items


def _rows(client, name: str, **params) -> list[tuple[dict, dict]]:
    """Every (row, difference) of compare_rows under `params`, page by page."""
    out: list[tuple[dict, dict]] = []
    begin = 0
    while True:
        body = ok(client, "compare_rows", b=f"{name}_b", a=f"{name}_a", begin=begin, end=begin + PAGE, **params)
        assert len(body["rows"]) == len(body["differences"])
        out += list(zip(body["rows"], body["differences"]))
        begin = body["end"]
        if begin >= body["total"]:
            return out


def test_divergent_only_pages_through_every_differing_trace(client):
    expected = _full_comparison(client, "cmp_many_steps")
    assert len(expected) > PAGE  # the pair is made so: every tensor after the first update differs
    listed = _rows(client, "cmp_many_steps", divergent_only="true")
    assert [row["index"] for row, _d in listed] == sorted(expected)
    for row, difference in listed:
        metric = expected[row["index"]]["metric"]
        assert difference["status"] == "differs" and difference["summary"] == metric["summary"]
        assert difference["magnitude"] == metric["max_abs"]
        assert row["op_name"] == expected[row["index"]]["b"]["op_name"]


def test_a_page_has_the_full_comparisons_differences(client):
    expected = _full_comparison(client, "cmp_many_steps")
    body = ok(client, "compare_rows", b="cmp_many_steps_b", a="cmp_many_steps_a", begin=150, end=350)
    assert schema_errors(load_schema(), "CompareRowsResponse", body) == []
    assert body["base"] == "cmp_many_steps_a" and body["total"] == body["unfiltered_total"]
    for row, difference in zip(body["rows"], body["differences"]):
        if row["index"] in expected:
            assert difference["status"] == "differs", row
            assert difference["summary"] == expected[row["index"]]["metric"]["summary"]
        else:
            assert difference["status"] == "same" and difference["text"].startswith(("=", "≈")), (row, difference)
    assert {d["status"] for d in body["differences"]} == {"same", "differs"}


def test_filters_combine_with_divergent_only(client):
    expected = _full_comparison(client, "cmp_many_steps")
    want = sorted(i for i, d in expected.items() if d["b"]["op_type"] == "MatMul")
    listed = _rows(client, "cmp_many_steps", divergent_only="true", op_type="MatMul")
    assert want and [row["index"] for row, _d in listed] == want


def test_health_counts_and_only_in_b(client):
    expected = _full_comparison(client, "cmp_nan_b")
    listed = _rows(client, "cmp_nan_b", divergent_only="true")
    assert [row["index"] for row, _d in listed] == sorted(expected)
    for _row, difference in listed:
        assert "→" in difference["text"] and difference["magnitude"] is None
        # the cell in the health chips' notation (read whole in a narrow column), the summary in words
        assert not re.search(r"negative|positive|zero|, ", difference["text"]), difference
    added = [(row, d) for row, d in _rows(client, "cmp_added_op") if row["op_name"] == "squash"]
    assert added and all(d["status"] == "only_in_b" and d["text"] == "only in changed" for _row, d in added)
    assert all(d["summary"].startswith("no aligned trace in baseline cmp_added_op_a") for _row, d in added)


def test_divergent_only_lists_the_traces_only_the_changed_run_holds(client):
    """An op the changed run adds is a divergence: "divergent only" lists its traces (the column says "only in
    changed"), so the finding that names it (follows_from_only_in_b) is in the list a user ticked, and its click
    keeps the filter (it had been cleared to show it)."""
    every = _rows(client, "cmp_added_op")
    want = [row["index"] for row, d in every if d["status"] in ("differs", "only_in_b")]
    assert {d["status"] for row, d in every if row["index"] in want} == {"differs", "only_in_b"}
    listed = _rows(client, "cmp_added_op", divergent_only="true")
    assert [row["index"] for row, _d in listed] == want
    first = ok(client, "compare", b="cmp_added_op_b", a="cmp_added_op_a", begin=0, end=1)["first_divergence"]
    assert first["kind"] == "follows_from_only_in_b" and first["b"]["op_name"] == "squash"
    assert first["b"]["index"] in want
    squash = _rows(client, "cmp_added_op", divergent_only="true", op_name="squash")
    assert squash and all(d["status"] == "only_in_b" for _row, d in squash)


def test_compare_traces_answers_as_the_rows_do(client):
    rows = _rows(client, "cmp_nan_b")
    picked = rows[::3][:40]
    indices = ",".join(str(row["index"]) for row, _d in picked)
    body = ok(client, "compare_traces", b="cmp_nan_b_b", a="cmp_nan_b_a", indices=indices)
    assert schema_errors(load_schema(), "CompareTracesResponse", body) == []
    assert body["indices"] == [row["index"] for row, _d in picked]
    assert body["differences"] == [d for _row, d in picked]


@pytest.mark.parametrize(
    "route,params",
    [
        ("compare_traces", {"indices": "99999999"}),
        ("compare_traces", {"indices": "1,x"}),
        ("compare_rows", {"begin": 0, "end": 10, "a": "cmp_nan_b_a", "b": "cmp_added_op_b"}),
        ("compare_rows", {"begin": 0, "end": 10, "a": "nope"}),
    ],
)
def test_bad_requests_are_400(client, route, params):
    query = {"b": "cmp_nan_b_b", "a": "cmp_nan_b_a", **params}
    status, _headers, body = get(client, url(route, **query))
    assert status == 400 and body["error"]["code"] == "bad_parameter", body
