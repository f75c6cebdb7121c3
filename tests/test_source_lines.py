"""Source <-> graph (index/line_ops.py, analysis/source_lines.py, routes source_line_counts and line_ops) on dumps
written by real TensorFlow.

Oracle: TensorFlow's own DebugDataReader (tests/op_stacks_oracle.py, in a subprocess): every graph op's creation
stack as (path, line) pairs and each op's first non-finite trace. From those the test derives, per user file, the
line each op is listed at (the innermost frame in that file) and whether it is direct (that frame is the op's
innermost user frame), and compares every line's list, paged through the route, with it.
"""

from __future__ import annotations

import collections

import dumps
import pytest
from api_helpers import get, make_app, url, wait_indexed
from op_stacks_oracle import oracle
from werkzeug.test import Client

from tensorboard_plugin_dbg.analysis import source_lines
from tensorboard_plugin_dbg.index.catalog import Catalog
from tensorboard_plugin_dbg.index.frames import is_user_path

PROGRAMS = ("nested", "nan_function_input", "keras_fit", "nan_two_files")


def _expected(stacks: dict) -> dict[tuple[str, int], dict[tuple[str, str], bool]]:
    """(path, line) -> {(graph_id, op_name): direct} from TF's creation stacks."""
    out: dict[tuple[str, int], dict[tuple[str, str], bool]] = collections.defaultdict(dict)
    for op in stacks["ops"]:
        frames = op["frames"]  # outermost first
        user = [(p, line) for p, line in frames if is_user_path(p)]
        innermost_user = user[-1] if user else None
        seen = set()
        for path, line in reversed(frames):
            if not is_user_path(path) or path in seen:
                continue
            seen.add(path)
            out[(path, line)][(op["graph_id"], op["op_name"])] = (path, line) == innermost_user
    return out


@pytest.fixture(scope="module")
def served():
    made = {name: dumps.make_dump(name) for name in PROGRAMS}
    out = {}
    for name, dump in made.items():
        client = Client(make_app(dump)[0])
        run = wait_indexed(client)["runs"][0]["name"]
        out[name] = (client, run, dump)
    return out


def _ask(client, route, **params):
    status, _, body = get(client, url(route, **params))
    assert status == 200, (route, params, body)
    return body


def _all_rows(client, run, index, line, page=7):
    """Every row of a line's list, paged through in small pages (so paging itself is tested)."""
    rows, begin = [], 0
    while True:
        got = _ask(client, "line_ops", run=run, index=index, line=line, begin=begin, end=begin + page)
        rows += got["rows"]
        begin = got["end"]
        if begin >= got["total"]:
            assert len(rows) == got["total"]
            return rows, got


@pytest.mark.slow  # TF's reader in a subprocess per program
@pytest.mark.parametrize("program", PROGRAMS)
def test_each_lines_ops_are_tensorflows(served, program):
    client, run, dump = served[program]
    tf = oracle(dump)
    want = _expected(tf)
    files = [f for f in _ask(client, "source_files", run=run)["files"] if f["is_user"]]
    got_lines = set()
    for f in files:
        counts = _ask(client, "source_line_counts", run=run, index=f["index"])
        assert counts["total_ops"] == sum(c["ops"] for c in counts["lines"])
        for c in counts["lines"]:
            got_lines.add((f["path"], c["line"]))
            rows, page = _all_rows(client, run, f["index"], c["line"])
            expect = want[(f["path"], c["line"])]
            assert {(r["graph_id"], r["op_name"]): r["direct"] for r in rows} == expect, (f["path"], c["line"])
            assert c["ops"] == len(rows) == page["total"]
            assert c["direct"] == sum(r["direct"] for r in rows) == page["direct"]
            first = {(r["graph_id"], r["op_name"]): r["first_nonfinite"] for r in rows}
            assert first == {k: tf["first_nonfinite"].get("/".join(k)) for k in expect}
            # FULL_HEALTH programs: every traced op's health is known
            assert {(r["graph_id"], r["op_name"]): r["traced"] for r in rows} == {
                k: "/".join(k) in tf["traced"] for k in expect
            }
            assert c["nonfinite"] == page["nonfinite"] == sum(v is not None for v in first.values())
            # non-finite ones first, then direct ones
            keys = [(r["first_nonfinite"] is None, not r["direct"]) for r in rows]
            assert keys == sorted(keys)
    assert got_lines == set(want), "every (user file, line) TF's stacks name has a marker, and no other"
    # every op with a user frame is listed once per user file its stack passes through
    assert sum(len(v) for v in want.values()) == sum(
        _ask(client, "source_line_counts", run=run, index=f["index"])["total_ops"] for f in files
    )


def _line_of(client, run, suffix: str, needle: str) -> tuple[int, int]:
    files = _ask(client, "source_files", run=run)["files"]
    (f,) = [f for f in files if f["path"].endswith(suffix)]
    text = _ask(client, "source_file", run=run, index=f["index"])["lines"]
    (line,) = [i for i, t in enumerate(text, 1) if needle in t]
    return f["index"], line


def test_the_culprit_line_lists_its_nan_op_first_and_directly(served):
    client, run, _ = served["nan_function_input"]
    index, line = _line_of(client, run, "nan_function_input.py", "# CULPRIT")
    with open(dumps.program_path("nan_function_input"), encoding="utf-8") as f:
        assert "# CULPRIT" in f.read().splitlines()[line - 1]  # the dump's text is the program's
    counts = {c["line"]: c for c in _ask(client, "source_line_counts", run=run, index=index)["lines"]}
    assert counts[line]["nonfinite"] >= 1 and counts[line]["direct"] == counts[line]["ops"]
    page = _ask(client, "line_ops", run=run, index=index, line=line, begin=0, end=50)
    first = page["rows"][0]
    assert (first["op_name"], first["op_type"], first["direct"]) == ("Log", "Log", True)
    trace = _ask(client, "graph_execution", run=run, index=first["first_nonfinite"], max_elements=0)
    assert (trace["op_name"], trace["graph_id"]) == ("Log", first["graph_id"])
    assert trace["health"]["neg_inf"] >= 1  # log(0): the first -inf
    assert _ask(client, "root_cause", run=run)["producer"]["op_name"] == "Log"


def test_the_call_line_in_the_script_lists_the_models_nan_op_through_the_call(served):
    client, run, _ = served["nan_two_files"]
    model_index, culprit = _line_of(client, run, "nan_model.py", "# CULPRIT")
    script_index, call = _line_of(client, run, "nan_two_files.py", "# STEP")
    in_model = _ask(client, "line_ops", run=run, index=model_index, line=culprit, begin=0, end=50)["rows"]
    at_call = _ask(client, "line_ops", run=run, index=script_index, line=call, begin=0, end=50)["rows"]
    log_in_model = next(r for r in in_model if r["op_type"] == "Log")
    log_at_call = next(r for r in at_call if r["op_type"] == "Log")
    assert log_in_model["direct"] and not log_at_call["direct"]
    assert log_at_call["first_nonfinite"] == log_in_model["first_nonfinite"] is not None
    assert at_call[0]["first_nonfinite"] is not None  # the NaN ops lead the call line's list too
    assert {r["op_name"] for r in in_model} < {r["op_name"] for r in at_call}


@pytest.mark.slow  # TF's reader in a subprocess
def test_a_library_file_gets_its_own_map_when_asked(served):
    client, run, dump = served["nan_function_input"]
    files = _ask(client, "source_files", run=run)["files"]
    lib = next(f for f in files if f["path"].endswith("tensorflow/python/ops/gen_math_ops.py"))
    counts = _ask(client, "source_line_counts", run=run, index=lib["index"])
    assert counts["total_ops"] > 0
    tf = oracle(dump)
    want = collections.Counter()
    for op in tf["ops"]:
        lines = [line for p, line in op["frames"] if p == lib["path"]]
        if lines:
            want[lines[-1]] += 1
    assert {c["line"]: c["ops"] for c in counts["lines"]} == dict(want)
    assert all(c["direct"] == 0 for c in counts["lines"])  # no library line is an op's innermost user frame


def test_line_range_and_empty_lines(served):
    client, run, _ = served["nested"]
    index = next(f for f in _ask(client, "source_files", run=run)["files"] if f["is_user"])["index"]
    every = _ask(client, "source_line_counts", run=run, index=index)["lines"]
    some = _ask(client, "source_line_counts", run=run, index=index, begin_line=every[1]["line"], end_line=10**6)
    assert some["lines"] == every[1:]
    empty = _ask(client, "line_ops", run=run, index=index, line=1, begin=0, end=10)
    assert (empty["total"], empty["rows"]) == (0, [])
    past = _ask(client, "line_ops", run=run, index=index, line=every[0]["line"], begin=500, end=600)
    assert past["rows"] == [] and past["begin"] == past["end"] == every[0]["ops"]


HOSTILE = [
    ("source_line_counts", {"index": "-1"}, 400),
    ("source_line_counts", {"index": "x"}, 400),
    ("source_line_counts", {"index": "999999"}, 404),
    ("source_line_counts", {"index": "0", "begin_line": "9", "end_line": "2"}, 400),
    ("source_line_counts", {"index": "0", "line": "2"}, 400),
    ("line_ops", {"index": "0", "line": "0", "begin": "0", "end": "5"}, 400),
    ("line_ops", {"index": "0", "line": "1e3", "begin": "0", "end": "5"}, 400),
    ("line_ops", {"index": "0", "begin": "0", "end": "5"}, 400),
    ("line_ops", {"index": "0", "line": "3", "begin": "5", "end": "1"}, 400),
    ("line_ops", {"index": "0", "line": "3", "begin": "0", "end": "1001"}, 400),
    ("line_ops", {"index": "0", "line": "3", "begin": "0", "end": "5", "line_": "1"}, 400),
    ("line_ops", {"index": "77777", "line": "3", "begin": "0", "end": "5"}, 404),
    ("line_ops", {"index": "0", "line": "99999999999999999999", "begin": "0", "end": "5"}, 400),
]


@pytest.mark.parametrize("route,params,status", HOSTILE)
def test_hostile_parameters_get_the_one_error_shape(served, route, params, status):
    client, run, _ = served["nested"]
    got, _, body = get(client, url(route, run=run, **params))
    assert got == status and set(body) == {"error"} and set(body["error"]) == {"code", "message"}, body
    if params.get("end") == "1001":
        assert body["error"]["code"] == "page_too_large"


def test_a_mode_without_counts_says_health_unknown_not_finite():
    """SHAPE traces say nothing of NaN/∞: the culprit's ops are listed, none as traced (◐ in the list), none red."""
    client = Client(make_app(dumps.make_dump("nan_div", "SHAPE"))[0])
    run = wait_indexed(client)["runs"][0]["name"]
    index, line = _line_of(client, run, "nan_div.py", "# CULPRIT")
    counts = {c["line"]: c for c in _ask(client, "source_line_counts", run=run, index=index)["lines"]}
    assert counts[line]["ops"] >= 1 and counts[line]["nonfinite"] == 0
    rows = _ask(client, "line_ops", run=run, index=index, line=line, begin=0, end=50)["rows"]
    assert "ratio" in {r["op_name"] for r in rows}
    assert all(not r["traced"] and r["first_nonfinite"] is None for r in rows), rows
    graph_traces = _ask(client, "graph_executions", run=run, begin=0, end=1000)["rows"]
    assert any(t["op_name"] == "ratio" for t in graph_traces)  # it was traced, in SHAPE mode


def test_op_health_is_the_same_from_blocks_of_any_size(monkeypatch):
    """Each op's non-finite count and first non-finite trace are gathered a block of non-finite rows at a time
    (issue #40 item 1: no whole-run temporaries): blocks of 3 rows give what one block gives."""
    run = Catalog(dumps.make_dump("nan_keras")).runs()[0]
    table = run.source_line_ops(0)
    whole = source_lines._build_health(run, table.op_keys)
    assert whole.nonfinite.max() > 3  # an op whose non-finite traces span blocks of 3
    monkeypatch.setattr(source_lines, "_BLOCK", 3)
    blocked = source_lines._build_health(run, table.op_keys)
    assert (blocked.nonfinite == whole.nonfinite).all() and (blocked.first == whole.first).all()
    assert (blocked.traced == whole.traced).all()
