"""The API on a real dump (the demo, written by real TensorFlow) with the real index, through TensorBoard's real WSGI
app and once through a real `tensorboard` process. Routes must agree with the index and with TF's own reader."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest
from api_helpers import get, load_schema, make_app, ok, root_cause_answer, schema_errors, url, wait_indexed
from api_oracle import oracle
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from werkzeug.test import Client

from harness.tensorboard_process import TensorBoardProcess
from tensorboard_plugin_dbg.analysis import (
    alerts,
    health_map,
    neighborhood,
    root_cause,
    source_lines,
    tensor_values,
    timeline_marks,
)
from tensorboard_plugin_dbg.analysis.rules import mutes
from tensorboard_plugin_dbg.api import errors, json_encoding
from tensorboard_plugin_dbg.api.params import PAGE_CAP
from tensorboard_plugin_dbg.api.routes import ROUTES, ROUTES_BY_NAME
from tensorboard_plugin_dbg.index.trace_filter import TraceFilter

pytestmark = pytest.mark.slow  # TensorFlow's reader as the oracle (~8 s) and a real tensorboard process (~8 s)


@pytest.fixture(scope="module")
def served(demo_logdir):
    app, plugin = make_app(demo_logdir)
    client = Client(app)
    runs = wait_indexed(client)
    return client, plugin, runs


@pytest.fixture(scope="module")
def run_name(served):
    runs = served[2]["runs"]
    assert len(runs) == 1, runs
    return runs[0]["name"]


@pytest.fixture(scope="module")
def tf_view(demo_dump):
    return oracle(demo_dump)


LOG_MUTE = '[{"op_type": "Log", "reason": "the demo\'s log of softmax"}]'


def _root_cause_answer(run, muted: tuple = ()) -> dict:
    """The root_cause route: the run's verdict (run_verdict: the root cause after the mutes plus the graph's name)
    and the report's text of it."""
    answer = root_cause_answer(run, muted)
    assert answer["status"] == root_cause.analyze(run, muted)["status"]  # the demo run is fully read: no "so far"
    return answer


def same(api_answer, index_answer) -> bool:
    """Equal once both go through the one encoder (the index may hand numpy values and NaN floats)."""
    return api_answer == json.loads(json_encoding.dumps(index_answer))


# ------------------------------------------------------------------------------------------------ vs TF's reader


def test_runs_match_tf_reader(served, tf_view, demo_logdir, demo_dump):
    body = served[2]
    assert body["logdir"] == demo_logdir
    (run,) = body["runs"]
    assert run["name"] == os.path.relpath(demo_dump, demo_logdir)
    assert run["tf_version"] == tf_view["tf_version"] and run["tfdbg_run_id"] == tf_view["tfdbg_run_id"]
    assert run["start_time"] == pytest.approx(tf_view["start_time"])
    assert "FULL_HEALTH" in run["debug_modes"]
    counts = run["counts"]
    assert counts["executions"] == len(tf_view["executions"])
    assert counts["graph_executions"] == len(tf_view["traces"])
    assert counts["source_files"] == len(tf_view["source_files"])
    assert counts["alerts"] == sum(counts["alerts_by_type"].values()) > 0  # the demo goes -inf then NaN


def test_executions_match_tf_reader(served, run_name, tf_view):
    client = served[0]
    body = ok(client, "executions", run=run_name, begin=0, end=PAGE_CAP)
    assert body["total"] == len(tf_view["executions"]) == len(body["executions"])
    assert [e["op_type"] for e in body["executions"]] == [e["op_type"] for e in tf_view["executions"]]
    assert [e["wall_time"] for e in body["executions"]] == pytest.approx(
        [e["wall_time"] for e in tf_view["executions"]]
    )
    detail = ok(client, "execution", run=run_name, index=0)
    assert detail["stack_frame_ids"] == tf_view["executions"][0]["stack_frame_ids"]
    assert detail["output_tensor_ids"] == tf_view["executions"][0]["output_tensor_ids"]


def test_graph_executions_match_tf_reader(served, run_name, tf_view):
    client = served[0]
    rows = []
    for begin in range(0, len(tf_view["traces"]), 100):  # page through, 100 at a time
        rows += ok(client, "graph_executions", run=run_name, begin=begin, end=begin + 100)["rows"]
    assert [r["index"] for r in rows] == list(range(len(tf_view["traces"])))
    assert [(r["op_name"], r["op_type"], r["output_slot"], r["graph_id"]) for r in rows] == [
        (t["op_name"], t["op_type"], t["output_slot"], t["graph_id"]) for t in tf_view["traces"]
    ]


def test_graphs_and_ops_match_tf_reader(served, run_name, tf_view):
    client = served[0]
    for graph_id, g in tf_view["graphs"].items():
        body = ok(client, "graph", run=run_name, graph_id=graph_id)
        assert (body["name"], body["outer_graph_id"]) == (g["name"], g["outer"])
        assert body["chain"][-1]["graph_id"] == graph_id
    for key, want in list(tf_view["ops"].items())[:15]:
        graph_id, op_name = key.split("/", 1)
        body = ok(client, "op", run=run_name, graph_id=graph_id, op_name=op_name)
        assert body["op_type"] == want["op_type"]
        assert [f"{i['op_name']}:{i['output_slot']}" for i in body["inputs"]] == want["input_names"]


def test_sources_and_stack_frames_match_tf_reader(served, run_name, tf_view):
    client = served[0]
    files = ok(client, "source_files", run=run_name)["files"]
    assert [(f["host"], f["path"], f["line_count"]) for f in files] == [
        (f["host"], f["path"], f["line_count"]) for f in tf_view["source_files"]
    ]
    demo = next(f for f in files if f["path"].endswith("buggy_mlp.py"))
    assert demo["is_user"]
    with open(demo["path"], encoding="utf-8") as f:
        want_lines = f.read().splitlines()
    body = ok(client, "source_file", run=run_name, index=demo["index"], begin_line=3, end_line=7)
    assert body["lines"] == want_lines[2:7] and (body["begin_line"], body["end_line"]) == (3, 7)
    ids = tf_view["executions"][0]["stack_frame_ids"]
    frames = ok(client, "stack_frames", run=run_name, ids=",".join(reversed(ids)))["frames"]
    assert [f["id"] for f in frames] == list(reversed(ids))  # request order
    assert [(f["path"], f["line"], f["function"]) for f in reversed(frames)] == [
        (f["path"], f["line"], f["function"]) for f in tf_view["first_execution_stack"]
    ]


# ------------------------------------------------------------------------------------------------ vs the index


def test_every_route_agrees_with_the_index(served, run_name, tf_view):
    client, plugin, _ = served
    run = plugin.catalog().run(run_name)
    graph_id, op_name = next(iter(tf_view["ops"])).split("/", 1)
    frame_ids = tf_view["executions"][0]["stack_frame_ids"][:3]
    n = len(tf_view["traces"])
    # a user file's line that created ops (the demo's model)
    user_file = next(
        f["index"] for f in run.source_files()["files"] if source_lines.line_counts(run, f["index"])["lines"]
    )
    op_line = source_lines.line_counts(run, user_file)["lines"][0]["line"]
    first_call = next(e["index"] for e in run.executions(0, 1000)["executions"] if e["is_function"])
    cases = [
        ("alerts", dict(begin=0, end=50), lambda: alerts.alerts(run, 0, 50)),
        (
            "alerts",
            dict(begin=1, end=3, type="InfNanAlert"),
            lambda: alerts.alerts(run, 1, 3, alert_type="InfNanAlert"),
        ),
        ("alerts", dict(begin=0, end=50, role="producer"), lambda: alerts.alerts(run, 0, 50, producers_only=True)),
        ("executions", dict(begin=5, end=25), lambda: run.executions(5, 25)),
        ("execution", dict(index=3), lambda: run.execution(3)),
        ("execution", dict(index=3, max_elements=2), lambda: run.execution(3, max_elements=2)),
        ("graph_executions", dict(begin=10, end=60), lambda: run.graph_executions(10, 60)),
        (
            "graph_executions",
            dict(begin=0, end=100, op_type="Log", only_nonfinite="false"),
            lambda: run.graph_executions(0, 100, TraceFilter(op_type="Log")),
        ),
        (
            "graph_executions",
            dict(begin=0, end=100, only_nonfinite="true"),
            lambda: run.graph_executions(0, 100, TraceFilter(only_nonfinite=True)),
        ),
        (
            "graph_executions",
            dict(begin=0, end=100, call=first_call),
            lambda: run.graph_executions(0, 100, call=first_call),
        ),
        ("timeline_marks", dict(bins=50), lambda: timeline_marks.marks(run, 50)),
        (
            "graph_executions",
            dict(begin=0, end=100, op_name="MATMUL", graph_id=graph_id),
            lambda: run.graph_executions(0, 100, TraceFilter(op_name="MATMUL", graph_id=graph_id)),
        ),
        ("devices", {}, run.device_counts),
        (
            "graph_executions",
            dict(begin=0, end=100, device=run.device_counts()["devices"][0]["device_name"], host=run.hosts()[0]),
            lambda: run.graph_executions(
                0, 100, TraceFilter(device=run.device_counts()["devices"][0]["device_name"], host=run.hosts()[0])
            ),
        ),
        ("graph_execution", dict(index=n - 1), lambda: run.graph_execution(n - 1)),
        ("graph", dict(graph_id=graph_id), lambda: run.graph(graph_id)),
        ("op", dict(graph_id=graph_id, op_name=op_name), lambda: run.op(graph_id, op_name)),
        ("op", dict(graph_id=graph_id, op_name=op_name, near=n - 1), lambda: run.op(graph_id, op_name, near=n - 1)),
        ("source_files", {}, run.source_files),
        ("source_file", dict(index=1), lambda: run.source_file(1)),
        ("source_file", dict(index=1, begin_line=2, end_line=4), lambda: run.source_file(1, 2, 4)),
        ("stack_frames", dict(ids=",".join(frame_ids)), lambda: run.stack_frames(frame_ids)),
        ("source_line_counts", dict(index=user_file), lambda: source_lines.line_counts(run, user_file)),
        (
            "line_ops",
            dict(index=user_file, line=op_line, begin=0, end=20),
            lambda: source_lines.line_ops(run, user_file, op_line, 0, 20),
        ),
        ("root_cause", {}, lambda: _root_cause_answer(run)),
        ("root_cause", dict(mutes=LOG_MUTE), lambda: _root_cause_answer(run, mutes.parse_json(LOG_MUTE))),
        ("health_map", dict(begin=0, end=20, columns=50), lambda: health_map.health_map(run, 0, 20, 50)),
        # a FULL_HEALTH dump: the tensor route answers what the mode carries (tests/test_tensor_values.py: values)
        (
            "tensor",
            dict(source="graph", index=n - 1),
            lambda: tensor_values.tensor(run, "graph", n - 1, None, None, 64),
        ),
        ("tensor_inputs", dict(source="graph", index=n - 1), lambda: tensor_values.inputs(run, "graph", n - 1)),
        (
            "graph_neighborhood",
            dict(graph_id=graph_id, op_name=op_name, hops=3, direction="up"),
            lambda: neighborhood.neighborhood(run, graph_id, op_name, 3, "up", None),
        ),
    ]
    # tensor.npy is binary, and 404 on a dump without values: tests/test_tensor_values.py checks its bytes; capsules
    # (and capsule_array, capsule_samples) and compare answer of other logdirs and run pairs: tests/test_capsule.py,
    # tests/test_capsule_sample_table.py, tests/test_compare_api.py, tests/test_compare_rows.py and
    # tests/test_compare_values.py
    elsewhere = {"runs", "openapi.json", "tensor.npy", "capsules", "capsule_array", "capsule_array.npy", "compare"}
    elsewhere |= {"capsule_samples"}
    elsewhere |= {"compare_rows", "compare_traces", "compare_values"}
    assert {c[0] for c in cases} | elsewhere == {r.name for r in ROUTES}
    for route, params, query in cases:
        body = ok(client, route, run=run_name, **params)
        want = query()
        if "run" in body:
            assert body.pop("run") == run_name
        assert same(body, want), (route, params)


def test_filters_narrow_and_total_is_filtered(served, run_name):
    client = served[0]
    everything = ok(client, "graph_executions", run=run_name, begin=0, end=PAGE_CAP)
    bad = ok(client, "graph_executions", run=run_name, begin=0, end=PAGE_CAP, only_nonfinite="true")
    assert 0 < bad["total"] < everything["total"] == everything["unfiltered_total"] == bad["unfiltered_total"]
    assert all(r["health"]["neg_inf"] + r["health"]["pos_inf"] + r["health"]["nan"] > 0 for r in bad["rows"])
    logs = ok(client, "graph_executions", run=run_name, begin=0, end=PAGE_CAP, op_type="Log")
    assert logs["total"] > 0 and {r["op_type"] for r in logs["rows"]} == {"Log"}


def test_alert_totals_and_wall_time_order(served, run_name):
    client = served[0]
    body = ok(client, "alerts", run=run_name, begin=0, end=PAGE_CAP)
    assert body["total"] == len(body["alerts"]) == sum(body["totals_by_type"].values()) > 0
    times = [a["wall_time"] for a in body["alerts"]]
    assert times == sorted(times)
    assert [a["index"] for a in body["alerts"]] == list(range(body["total"]))


def test_end_clamped_and_index_past_end_is_404(served, run_name, tf_view):
    client = served[0]
    n = len(tf_view["executions"])
    body = ok(client, "executions", run=run_name, begin=n - 2, end=n + 500)
    assert (body["end"], len(body["executions"])) == (n, 2)
    for route, params in (
        ("execution", dict(index=n)),
        ("graph_execution", dict(index=len(tf_view["traces"]))),
        ("source_file", dict(index=len(tf_view["source_files"]))),
        ("graph", dict(graph_id="x")),
        ("op", dict(graph_id=next(iter(tf_view["graphs"])), op_name="no/such/op")),
        ("stack_frames", dict(ids="no-such-frame")),
    ):
        status, _, err = get(client, url(route, run=run_name, **params))
        assert status == 404 and err["error"]["code"] == errors.NOT_FOUND, (route, err)
    status, _, err = get(client, url("execution", run=run_name, index=-1))
    assert status == 400 and err["error"]["code"] == errors.BAD_PARAMETER  # never "the last item"


def _valid_params(run_name: str, tf_view: dict) -> dict:
    graph_id, op_name = next(iter(tf_view["ops"])).split("/", 1)
    return {
        "runs": {},
        "openapi.json": {},
        "source_files": {"run": run_name},
        "root_cause": {"run": run_name},
        "health_map": {"run": run_name, "begin": 0, "end": 5},
        "timeline_marks": {"run": run_name},
        "alerts": {"run": run_name, "begin": 0, "end": 5},
        "executions": {"run": run_name, "begin": 0, "end": 5},
        "graph_executions": {"run": run_name, "begin": 0, "end": 5},
        "execution": {"run": run_name, "index": 0},
        "graph_execution": {"run": run_name, "index": 0},
        "devices": {"run": run_name},
        "graph": {"run": run_name, "graph_id": graph_id},
        "op": {"run": run_name, "graph_id": graph_id, "op_name": op_name},
        "graph_neighborhood": {"run": run_name, "graph_id": graph_id, "op_name": op_name},
        "source_file": {"run": run_name, "index": 0},
        "source_line_counts": {"run": run_name, "index": 0},
        "line_ops": {"run": run_name, "index": 0, "line": 1, "begin": 0, "end": 5},
        "stack_frames": {"run": run_name, "ids": tf_view["executions"][0]["stack_frame_ids"][0]},
        "tensor": {"run": run_name, "source": "graph", "index": 0, "slice": "..."},
        "tensor.npy": {"run": run_name, "source": "eager", "index": 0},  # FULL_HEALTH: a 404 JSON answer
        "tensor_inputs": {"run": run_name, "source": "graph", "index": 0},
        "capsules": {},
        "capsule_array": {"capsule": "capsule-step000000004", "group": "batch", "name": "x"},  # none here: 404
        "capsule_array.npy": {"capsule": "capsule-step000000004", "group": "batch", "name": "x"},  # 404 too
        "capsule_samples": {"capsule": "capsule-step000000004", "array": "x", "begin": 0, "end": 5},  # 404 too
        "compare": {"b": run_name, "a": run_name, "begin": 0, "end": 5},
        "compare_rows": {"b": run_name, "a": run_name, "begin": 0, "end": 5, "divergent_only": "true"},
        "compare_traces": {"b": run_name, "a": run_name, "indices": "0"},
        "compare_values": {"b": run_name, "a": run_name, "source": "graph", "index": 0, "slice": "..."},
    }


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_fuzzed_requests_on_the_real_index_never_500(served, run_name, tf_view, data):
    valid = _valid_params(run_name, tf_view)
    assert set(valid) == {r.name for r in ROUTES}
    route = data.draw(st.sampled_from(sorted(valid)))
    params = dict(valid[route])
    names = [p.name for p in ROUTES_BY_NAME[route].params] + ["zz"]
    for name in data.draw(st.lists(st.sampled_from(names), max_size=3, unique=True)):
        params[name] = data.draw(
            st.one_of(
                st.text(max_size=20),
                st.integers(-5, 10**7).map(str),
                st.sampled_from(["", "-1", "0", "1000", "true", "NaN", "%2e%2e", ","]),
            )
        )
    status, _, body = get(served[0], url(route, **params))
    assert status in (200, 400, 404), (route, params, body)
    if status == 200 and ROUTES_BY_NAME[route].response:
        assert schema_errors(load_schema(), ROUTES_BY_NAME[route].response, body) == [], (route, params)


def test_viewer_does_not_import_tensorflow(demo_logdir):
    code = (
        "import sys, json; sys.path.insert(0, 'tests'); from api_helpers import make_app, ok; "
        "from werkzeug.test import Client; c = Client(make_app(sys.argv[1])[0]); ok(c, 'runs'); "
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in ('tensorflow', 'keras'))))"
    )
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    proc = subprocess.run(
        [sys.executable, "-c", code, demo_logdir], cwd=root, capture_output=True, text=True, timeout=120, check=False
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == []


# ------------------------------------------------------------------------------------------------ real tensorboard


def test_real_tensorboard_process(demo_logdir, demo_dump):
    with TensorBoardProcess(demo_logdir) as tb:
        deadline = time.monotonic() + 30
        while not tb.get_json("/data/plugins_listing")["dbg"]["enabled"]:
            assert time.monotonic() < deadline, "dbg never became active"
            time.sleep(0.3)
        listing = tb.get_json("/data/plugins_listing")["dbg"]
        assert listing["tab_name"] == "Debugger (dbg)" and listing["loading_mechanism"]["type"] == "IFRAME"
        runs = tb.get_json("/data/plugin/dbg/runs")
        while not all(r["status"]["done"] for r in runs["runs"]):  # the first read pass runs in the background
            assert time.monotonic() < deadline + 30, runs
            time.sleep(0.2)
            runs = tb.get_json("/data/plugin/dbg/runs")
        name = os.path.relpath(demo_dump, demo_logdir)
        assert [r["name"] for r in runs["runs"]] == [name]
        status, headers, body, _ = tb.get(f"/data/plugin/dbg/executions?run={name}&begin=0&end=5")
        assert status == 200 and len(json.loads(body)["executions"]) == 5
        status, headers, body, _ = tb.get(f"/data/plugin/dbg/execution?run={name}&index=-1")
        assert status == 400 and headers["Content-Type"].startswith("application/json")
        assert json.loads(body)["error"]["code"] == errors.BAD_PARAMETER
        status, _, body, _ = tb.get("/data/plugin/dbg/alerts?run=nope&begin=0&end=1")
        assert status == 404 and json.loads(body)["error"]["code"] == errors.NOT_FOUND
        status, headers, body, _ = tb.get("/data/plugin/dbg/index.js")
        assert status == 200 and headers["Content-Type"].startswith("text/javascript")
        assert tb.get_json("/data/plugin/dbg/openapi.json")["openapi"].startswith("3.1")
        for path in (
            "static/..%2fplugin.py",
            "static/%2e%2e/%2e%2e/tensorboard_plugin_dbg/plugin.py",
            "static/%2fetc%2fpasswd",
            "static/..%5c..%5cplugin.py",
        ):
            status, headers, body, _ = tb.get("/data/plugin/dbg/" + path)
            assert status == 404 and b"DbgPlugin" not in body and b"root:" not in body, path
        status, _, body, _ = tb.get("/data/plugin/dbg/runs?run=x")  # runs takes no parameters
        assert status == 400 and json.loads(body)["error"]["code"] == errors.BAD_PARAMETER
