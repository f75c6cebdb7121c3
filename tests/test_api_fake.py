"""The API layer through TensorBoard's real WSGI app, over a FAKE catalog (a unit test of dispatch, validation,
errors, encoding and the plugin's wiring; the real index is tested in test_api_real.py)."""

from __future__ import annotations

import gzip
import io
import json
import threading
import time

import numpy as np
import pytest
from api_helpers import FakeCatalog, get, load_schema, make_app, ok, schema_errors, url
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from werkzeug.test import Client

from tensorboard_plugin_dbg import plugin as plugin_module
from tensorboard_plugin_dbg.api import errors
from tensorboard_plugin_dbg.api.params import PAGE_CAP
from tensorboard_plugin_dbg.api.routes import ROUTES, ROUTES_BY_NAME
from tensorboard_plugin_dbg.capsule import writer
from tensorboard_plugin_dbg.plugin import DbgPlugin

# Valid parameters for every route on the fake catalog; the bad-parameter table mutates these.
VALID = {
    "runs": {},
    "alerts": {"run": "run_a", "begin": 0, "end": 10},
    "executions": {"run": "run_a", "begin": 0, "end": 10},
    "execution": {"run": "run_a", "index": 2},
    "graph_executions": {"run": "run_a", "begin": 0, "end": 10},
    "graph_execution": {"run": "run_a", "index": 3},
    "devices": {"run": "run_a"},
    "graph": {"run": "run_a", "graph_id": "g1"},
    "op": {"run": "run_a", "graph_id": "g1", "op_name": "Log"},
    "graph_neighborhood": {"run": "run_a", "graph_id": "g1", "op_name": "Log", "hops": 2},
    "source_files": {"run": "run_a"},
    "source_file": {"run": "run_a", "index": 0},
    "stack_frames": {"run": "run_a", "ids": "f2,f0"},
    "source_line_counts": {"run": "run_a", "index": 0},
    "line_ops": {"run": "run_a", "index": 0, "line": 2, "begin": 0, "end": 10},
    "root_cause": {"run": "run_a"},
    "health_map": {"run": "run_a", "begin": 0, "end": 10},
    "timeline_marks": {"run": "run_a", "bins": 3},
    "tensor": {"run": "run_a", "source": "graph", "index": 0, "slice": "1,..."},
    "tensor.npy": {"run": "run_a", "source": "graph", "index": 4},
    "tensor_inputs": {"run": "run_a", "source": "graph", "index": 3},
    "capsules": {},
    "capsule_array": {"capsule": "cap", "group": "batch", "name": "x", "slice": "1,..."},
    "capsule_array.npy": {"capsule": "cap", "group": "batch", "name": "x"},
    "capsule_samples": {"capsule": "cap", "array": "x", "begin": 0, "end": 10},
    "compare": {"b": "run_a", "a": "run_a", "begin": 0, "end": 10},
    "compare_rows": {"b": "run_a", "a": "run_a", "begin": 0, "end": 10, "divergent_only": "true"},
    "compare_traces": {"b": "run_a", "a": "run_a", "indices": "0,1"},
    "compare_values": {"b": "run_a", "a": "run_a", "source": "graph", "index": 0, "slice": "1,..."},
    "openapi.json": {},
}
BINARY = {r.name for r in ROUTES if r.content_type != "application/json"}


@pytest.fixture(scope="module")
def logdir(tmp_path_factory) -> str:
    """A logdir holding one small NaN capsule (written by the capsule package's writer, numpy only): the fake
    catalog's runs are not on disk, the capsule routes read the logdir itself."""
    root = tmp_path_factory.mktemp("logdir")
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    x[1, 2] = np.nan
    manifest = {
        "step": 7,
        "trigger": {"kind": "loss", "name": "loss", "health": {"size": 1, "nan": 1, "pos_inf": 0, "neg_inf": 0}},
        "batch_structure": {"kind": "array", "name": "x"},
    }
    groups = {"batch": {"x": x}, "weights": {"dense/kernel": np.ones((4, 2), np.float32)}, "optimizer": {}, "rng": {}}
    writer.write_capsule(str(root), "cap", manifest, groups)
    return str(root)


@pytest.fixture()
def client(logdir):
    app, _ = make_app(logdir, FakeCatalog)
    return Client(app)


def test_valid_table_covers_every_route():
    assert set(VALID) == set(ROUTES_BY_NAME)


@pytest.mark.parametrize("route", sorted(VALID))
def test_every_route_answers_valid_json(client, route):
    if route in BINARY:  # tensor.npy: the fake's 3 x 4 float32, as a .npy file; capsule_array.npy: the capsule's x
        resp = client.get(url(route, **VALID[route]))
        assert resp.status_code == 200 and resp.headers["Content-Type"] == "application/octet-stream"
        got = np.load(io.BytesIO(resp.get_data()))
        assert got.shape == (3, 4) and got.dtype == np.float32 and np.isnan(got[1, 2])
        return
    body = ok(client, route, **VALID[route])
    spec = ROUTES_BY_NAME[route]
    if spec.response:
        assert schema_errors(load_schema(), spec.response, body) == []
    has_run_field = spec.response and "run" in load_schema()["definitions"][spec.response]["properties"]
    if has_run_field:
        assert body["run"] == "run_a"


def _bad_cases():
    """(route, params, expected status, expected code) for every route x every kind of bad parameter."""
    for spec in ROUTES:
        base = VALID[spec.name]
        yield spec.name, {**base, "bogus": "1"}, 400, errors.BAD_PARAMETER
        for p in spec.params:
            if p.required:
                yield spec.name, {k: v for k, v in base.items() if k != p.name}, 400, errors.MISSING_PARAMETER
                yield spec.name, {**base, p.name: ""}, 400, errors.MISSING_PARAMETER
            if p.kind == "int":
                for raw in ("-1", "x", "1.5", "+1", "0x1", " 1", "1e3", "\u0661", "99999999999999999999"):
                    yield spec.name, {**base, p.name: raw}, 400, errors.BAD_PARAMETER
                if p.maximum is not None:
                    code = errors.PAGE_TOO_LARGE if p.name == "max_elements" else errors.BAD_PARAMETER
                    yield spec.name, {**base, p.name: p.maximum + 1}, 400, code
            elif p.kind == "bool":
                yield spec.name, {**base, p.name: "yes"}, 400, errors.BAD_PARAMETER
            elif p.kind == "enum":
                yield spec.name, {**base, p.name: "Nope"}, 400, errors.BAD_PARAMETER
            elif p.kind == "float":
                for raw in ("-1", "x", "nan", "inf", "1e999", "0x1", " 1", str(p.maximum * 10)):
                    yield spec.name, {**base, p.name: raw}, 400, errors.BAD_PARAMETER
            elif p.kind == "mutes":
                for raw in (
                    "x",
                    "{}",
                    "[1]",
                    '[{"op_name": "re:("}]',
                    '[{"rule": "nope"}]',
                    '[{"reason": "r"}]',
                    '[{"op_type": 3}]',
                    '[{"bogus": "x"}]',
                    "[" * 3000,
                    "[" + ",".join(['{"op_type":"a"}'] * 51) + "]",
                    "x" * 5000,
                ):
                    yield spec.name, {**base, p.name: raw}, 400, errors.BAD_PARAMETER
            elif p.kind == "id_list":
                yield spec.name, {**base, p.name: "f0,,f1"}, 400, errors.BAD_PARAMETER
                yield spec.name, {**base, p.name: ",".join(["f0"] * (PAGE_CAP + 1))}, 400, errors.PAGE_TOO_LARGE
            else:
                yield spec.name, {**base, p.name: "x" * 5000}, 400, errors.BAD_PARAMETER
            if p.pattern is not None:  # device, host: no spaces or control characters
                for raw in ("a b", "x\ty", "\x00", "\r\nX-Injected: 1", " /x"):
                    yield spec.name, {**base, p.name: raw}, 400, errors.BAD_PARAMETER
        if spec.paged:
            yield spec.name, {**base, "begin": 5, "end": 4}, 400, errors.BAD_PARAMETER
            yield spec.name, {**base, "begin": 0, "end": PAGE_CAP + 1}, 400, errors.PAGE_TOO_LARGE
        if spec.needs_run:
            yield spec.name, {**base, "run": "no_such_run"}, 404, errors.NOT_FOUND
    for route, key, value in (
        ("execution", "index", 4),
        ("graph_execution", "index", 10**6),
        ("source_file", "index", 1),
        ("source_line_counts", "index", 1),
        ("line_ops", "index", 1),
        ("graph", "graph_id", "nope"),
        ("op", "op_name", "Nope"),
        ("op", "graph_id", "g2"),
        ("stack_frames", "ids", "f0,zz"),
        ("tensor", "index", 10**6),
        ("tensor.npy", "index", 1),  # no values (FULL_HEALTH): nothing to download
        ("tensor_inputs", "index", 10**6),
        ("capsule_array", "capsule", "nope"),
        ("capsule_array", "capsule", "../cap"),
        ("capsule_array", "name", "nope"),
        ("capsule_array", "group", "weights"),  # x is a batch array, not a variable
        ("capsule_array.npy", "capsule", "../cap"),
        ("capsule_array.npy", "name", "nope"),
        ("capsule_samples", "capsule", "../cap"),
        ("capsule_samples", "array", "nope"),
    ):
        yield route, {**VALID[route], key: value}, 404, errors.NOT_FOUND
    yield "graph_executions", {**VALID["graph_executions"], "device": "CPU:1"}, 400, errors.BAD_PARAMETER
    yield "source_file", {**VALID["source_file"], "begin_line": 5, "end_line": 4}, 400, errors.BAD_PARAMETER
    yield "source_file", {**VALID["source_file"], "begin_line": 0}, 400, errors.BAD_PARAMETER
    for bad_slice in ("9", "0,0,0", "::0", "a", "...,...", "0:1:2:3"):
        yield "tensor", {**VALID["tensor"], "slice": bad_slice}, 400, errors.BAD_PARAMETER
        yield "capsule_array", {**VALID["capsule_array"], "slice": bad_slice}, 400, errors.BAD_PARAMETER


BAD_CASES = list(_bad_cases())


def test_bad_case_table_is_big_enough():
    # Every route appears, every required parameter is tested missing: the table follows the route table.
    assert {c[0] for c in BAD_CASES} == set(ROUTES_BY_NAME)
    assert len(BAD_CASES) > 150


@pytest.mark.parametrize("route,params,status,code", BAD_CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(BAD_CASES)])
def test_bad_parameters_give_documented_4xx(client, route, params, status, code):
    got_status, _, body = get(client, url(route, **params))
    assert (got_status, body["error"]["code"]) == (status, code), body
    assert set(body) == {"error"} and set(body["error"]) == {"code", "message"} and body["error"]["message"]
    assert schema_errors(load_schema(), "ErrorResponse", body) == []


def test_repeated_parameter_is_400(client):
    status, _, body = get(client, url("alerts", run="run_a", end=5) + "&begin=0&begin=1")
    assert status == 400 and "once" in body["error"]["message"]


def test_page_cap_message_names_the_cap(client):
    _, _, body = get(client, url("graph_executions", run="run_a", begin=0, end=5000))
    assert "1000" in body["error"]["message"]


@pytest.mark.parametrize("route", sorted(VALID))
@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "PATCH"])
def test_non_get_is_405_json(client, route, method):
    resp = client.open(url(route, **VALID[route]), method=method)
    assert resp.status_code == 405 and resp.headers["Allow"] == "GET"
    assert json.loads(resp.get_data())["error"]["code"] == errors.METHOD_NOT_ALLOWED


# (`/data/plugin/dbg/` itself never reaches us: TensorBoard strips the slash and answers its own 404.)
@pytest.mark.parametrize("path", ["nope", "runs/extra", "data/runs", "static_x"])
def test_unknown_route_is_json_404(client, path):
    status, _, body = get(client, "/data/plugin/dbg/" + path)
    assert status == 404 and body["error"]["code"] == errors.NOT_FOUND


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    route=st.sampled_from(sorted(VALID)),
    key=st.text(min_size=1, max_size=12),
    value=st.text(max_size=30),
    use_known_key=st.booleans(),
)
def test_fuzzed_parameters_never_500(client, route, key, value, use_known_key):
    params = dict(VALID[route])
    spec = ROUTES_BY_NAME[route]
    if use_known_key and spec.params:
        key = spec.params[hash(key) % len(spec.params)].name
    params[key] = value
    resp = client.get(url(route, **params))
    if resp.status_code == 200 and route in BINARY:
        return
    status, _, body = get(client, url(route, **params))
    assert status in (200, 400, 404), (route, params, body)
    if status != 200:
        assert body["error"]["code"] in (
            errors.BAD_PARAMETER,
            errors.MISSING_PARAMETER,
            errors.PAGE_TOO_LARGE,
            errors.NOT_FOUND,
        )


# ------------------------------------------------------------------------------------------------ behaviour


def test_params_reach_the_index_typed():
    app, plugin = make_app("/x", FakeCatalog)
    c = Client(app)
    ok(c, "graph_executions", run="run_a", begin=0, end=5, op_type="Log", op_name="DENSE_1", only_nonfinite="true")
    ok(c, "graph_executions", run="run_a", begin=0, end=5, device="/job:w/device:GPU:0", host="h-1.example")
    producers = ok(c, "alerts", run="run_a", begin=0, end=5, type="InfNanAlert", role="producer")["alerts"]
    assert producers and all(a["role"] == "producer" for a in producers)
    ok(c, "op", run="run_a", graph_id="g1", op_name="Log", near=7)
    ok(c, "graph_execution", run="run_a", index=1, begin=3, max_elements=0)
    ok(c, "source_file", run="run_a", index=0, begin_line=2)
    calls = plugin.catalog().run("run_a").calls
    assert ("graph_executions", 0, 5, "Log", "DENSE_1", None, True, None, None) in calls
    assert ("graph_executions", 0, 5, None, None, None, False, "/job:w/device:GPU:0", "h-1.example") in calls
    assert ("alerts", 0, 0, "InfNanAlert") in calls  # role=producer: the totals, then the analysis's own filter
    assert ("op", "g1", "Log", 7) in calls
    assert ("graph_execution", 1, 3, 0) in calls
    assert ("source_file", 0, 2, None) in calls


def test_filters_and_filtered_total(client):
    body = ok(client, "graph_executions", run="run_a", begin=0, end=1000, only_nonfinite="1", graph_id="g1")
    assert body["unfiltered_total"] == 1500
    assert body["total"] == len(body["rows"]) > 0
    assert all(r["graph_id"] == "g1" and r["health"]["neg_inf"] for r in body["rows"])


def test_end_beyond_total_is_clamped(client):
    body = ok(client, "graph_executions", run="run_a", begin=1400, end=2000)
    assert (body["begin"], body["end"], len(body["rows"])) == (1400, 1500, 100)
    body = ok(client, "graph_executions", run="run_a", begin=9000, end=9000)
    assert (body["begin"], body["end"], body["rows"]) == (1500, 1500, [])


def test_all_alerts_reachable_by_paging(client):
    total = ok(client, "alerts", run="run_a", begin=0, end=0)["total"]
    assert total > 0
    seen = [
        a["index"]
        for b in range(0, total, 100)
        for a in ok(client, "alerts", run="run_a", begin=b, end=b + 100)["alerts"]
    ]
    assert seen == list(range(total))


def test_non_finite_values_are_strings(client):
    body = ok(client, "execution", run="run_a", index=2)
    assert body["values"][0]["values"] == [1.0, "NaN", "Infinity", "-Infinity"]


def test_gzip_when_accepted(client):
    path = url("graph_executions", run="run_a", begin=0, end=1000)
    zipped = client.get(path, headers={"Accept-Encoding": "gzip, deflate"})
    plain = client.get(path)
    assert zipped.headers["Content-Encoding"] == "gzip" and "Content-Encoding" not in plain.headers
    assert len(zipped.get_data()) * 5 < len(plain.get_data())
    assert json.loads(gzip.decompress(zipped.get_data())) == json.loads(plain.get_data())
    assert plain.headers["X-Content-Type-Options"] == "nosniff"


def test_catalog_is_lazy_made_once_and_started():
    FakeCatalog.instances.clear()
    app, plugin = make_app("/x", FakeCatalog)
    assert FakeCatalog.instances == []  # constructing the plugin (TensorBoard startup) does not index
    c = Client(app)
    ok(c, "openapi.json")
    assert FakeCatalog.instances == []  # describing the API does not index either
    ok(c, "runs")
    ok(c, "alerts", run="run_a", begin=0, end=1)
    assert plugin.is_active()
    assert len(FakeCatalog.instances) == 1 and FakeCatalog.instances[0].started == 1


def test_is_active_follows_has_runs_and_plugins_listing(monkeypatch):
    monkeypatch.setattr(plugin_module, "FIRST_DISCOVERY_WAIT_S", 0.3)
    app, plugin = make_app("/x", lambda logdir: FakeCatalog(logdir, runs=()))
    assert plugin.is_active() is False
    started = time.perf_counter()
    for _ in range(200):  # TensorBoard asks on every listing: after the first call it must not wait
        assert plugin.is_active() is False
    assert time.perf_counter() - started < 0.5
    app, plugin = make_app("/x", FakeCatalog)
    status, _, listing = get(Client(app), "/data/plugins_listing")
    assert status == 200 and listing["dbg"]["enabled"] is True and listing["dbg"]["tab_name"] == "Debugger (dbg)"
    assert listing["dbg"]["loading_mechanism"] == {"type": "IFRAME", "module_path": "/data/plugin/dbg/index.js"}


def test_is_active_waits_briefly_for_the_first_discovery(monkeypatch):
    # The real catalog discovers file sets on its refresher thread; the first listing should not hide the tab.
    class SlowStart(FakeCatalog):
        def start(self):
            super().start()
            self._found, self._runs = self._runs, {}
            threading.Timer(0.2, lambda: setattr(self, "_runs", self._found)).start()

    monkeypatch.setattr(plugin_module, "FIRST_DISCOVERY_WAIT_S", 5.0)
    _, plugin = make_app("/x", SlowStart)
    started = time.perf_counter()
    assert plugin.is_active() is True
    assert 0.15 < time.perf_counter() - started < 4


def test_no_logdir_is_inactive_and_answers_json():
    app, plugin = make_app("", None)
    assert plugin.is_active() is False
    c = Client(app)
    body = ok(c, "runs")
    assert body["runs"] == [] and body["notices"][0]["code"] == "no_dump_found"
    status, _, body = get(c, url("alerts", run=".", begin=0, end=1))
    assert status == 404


def test_a_bug_in_the_index_is_json_500_not_html():
    class Broken(FakeCatalog):
        def run(self, name):
            r = super().run(name)
            r.graph = lambda graph_id: 1 / 0
            return r

    c = Client(make_app("/x", Broken)[0])
    status, _, body = get(c, url("graph", run="run_a", graph_id="g1"))
    assert (
        status == 500 and body["error"]["code"] == errors.INTERNAL and "ZeroDivisionError" in body["error"]["message"]
    )


def test_static_bundle_and_traversal(client):
    resp = client.get("/data/plugin/dbg/index.js")
    assert resp.status_code == 200 and resp.headers["Content-Type"].startswith("text/javascript")
    assert resp.headers["X-Content-Type-Options"] == "nosniff" and len(resp.get_data()) > 0
    for path in (
        "static/../plugin.py",
        "static/%2e%2e/plugin.py",
        "static/..%2fplugin.py",
        "static/%2e%2e%2fplugin.py",
        "static//etc/passwd",
        "static/%2fetc%2fpasswd",
        "static/..%5cplugin.py",
        "static/%00index.js",
        "static/../../../../../../etc/passwd",
        "static/",
        "static/nope.js",
    ):
        resp = client.get("/data/plugin/dbg/" + path)
        assert resp.status_code == 404, path
        assert json.loads(resp.get_data())["error"]["code"] == "not_found", path
    assert client.post("/data/plugin/dbg/index.js").status_code == 405


def test_plugin_metadata():
    from tensorboard.plugins import base_plugin

    meta = DbgPlugin(base_plugin.TBContext(logdir="/x")).frontend_metadata()
    assert (meta.es_module_path, meta.tab_name) == ("/index.js", "Debugger (dbg)")
