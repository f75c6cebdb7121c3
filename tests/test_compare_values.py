"""`compare_values` (issue #27): a tensor of run B, its aligned counterpart in run A and A − B, through TensorBoard's
real WSGI app on pairs of real TensorFlow dumps (tests/programs/cmp_*.py). The oracle is independent of the route:
each run's whole tensor as `tensor.npy` serves it (bit-exact, tests/test_tensor_values.py), sliced and subtracted
by numpy, and the counterpart found in the test by (op name, output slot, occurrence) over the runs' trace lists.
Health modes give count differences; a tensor only B holds says so; bad requests are 4xx JSON."""

from __future__ import annotations

import io
import math
import shutil
from collections import Counter

import numpy as np
import pytest
from api_helpers import get, load_schema, make_app, ok, schema_errors, url, wait_indexed
from compare_helpers import pair
from werkzeug.test import Client


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    logdir = tmp_path_factory.mktemp("compare_values_logdir")
    for name, mode, base, changed in (
        ("cmp_constant", "FULL_TENSOR", "base", "changed"),
        ("cmp_nan_b", "FULL_HEALTH", "hbase", "hchanged"),
        ("cmp_added_op", "FULL_TENSOR", "obase", "ochanged"),
        ("cmp_eager", "FULL_TENSOR", "ebase", "echanged"),
    ):
        a, b = pair(name, mode)
        shutil.copytree(a, logdir / base)
        shutil.copytree(b, logdir / changed)
    c = Client(make_app(str(logdir))[0])
    wait_indexed(c)
    return c


def _keys(client, run: str) -> list[tuple[str, int, int]]:
    """(op name, output slot, occurrence) of each trace row of a run, in row order."""
    rows = ok(client, "graph_executions", run=run, begin=0, end=1000)["rows"]
    seen: Counter = Counter()
    out = []
    for r in rows:
        key = (r["op_name"], r["output_slot"])
        out.append((*key, seen[key]))
        seen[key] += 1
    return out


def _npy(client, run: str, source: str, index: int) -> np.ndarray:
    resp = client.get(url("tensor.npy", run=run, source=source, index=index))
    assert resp.status_code == 200
    return np.load(io.BytesIO(resp.get_data()))


def _num(v):
    return {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}.get(v, v) if isinstance(v, str) else v


def _spec_for(arr: np.ndarray) -> tuple[str, tuple]:
    """A slice that is not everything where the rank allows (reversed, every other row), and numpy's index."""
    if arr.ndim == 0:
        return "...", (Ellipsis,)
    if arr.ndim == 1:
        return "::-1", (slice(None, None, -1),)
    return "1:,::-1", (slice(1, None), slice(None, None, -1))


def test_every_paired_trace_equals_numpys_subtraction(client):
    keys_a, keys_b = _keys(client, "base"), _keys(client, "changed")
    row_of_a = {k: i for i, k in enumerate(keys_a)}
    differing = 0
    for index_b, key in enumerate(keys_b):
        index_a = row_of_a[key]  # every op of cmp_constant runs in both
        xa, xb = _npy(client, "base", "graph", index_a), _npy(client, "changed", "graph", index_b)
        spec, numpy_index = _spec_for(xb)
        body = ok(client, "compare_values", b="changed", a="base", source="graph", index=index_b, slice=spec)
        assert body["status"] == "paired" and body["a"]["tensor"]["index"] == index_a
        want_a, want_b = xa[numpy_index].astype(np.float64), xb[numpy_index].astype(np.float64)
        assert np.array_equal([_num(v) for v in body["a"]["slice"]["values"]], want_a.ravel())
        assert np.array_equal([_num(v) for v in body["b"]["slice"]["values"]], want_b.ravel())
        diff = body["difference"]
        want = (want_a - want_b).ravel()
        assert np.allclose([_num(v) for v in diff["values"]], want, rtol=0, atol=0)
        assert diff["max_abs"] == pytest.approx(float(np.abs(want).max()), abs=0)
        if np.abs(want).max() > 0:
            differing += 1
            whole = np.abs(xa.astype(np.float64) - xb.astype(np.float64))
            assert whole[tuple(diff["argmax"])] == np.abs(want).max()  # the full index of the largest |A − B|
        assert body["metric"]["differs"] == bool(np.abs(want).max() > 1e-6)
    assert differing >= 2  # the first divergence and later tensors that differ too (not only the finding)


def test_answer_matches_the_wire_schema(client):
    body = ok(client, "compare_values", b="changed", a="base", source="graph", index=1, slice="...")
    assert schema_errors(load_schema(), "CompareValuesResponse", body) == []
    body = ok(client, "compare_values", b="hchanged", a="hbase", source="graph", index=0)
    assert schema_errors(load_schema(), "CompareValuesResponse", body) == []


def test_health_mode_pair_gives_count_differences(client):
    keys_a, keys_b = _keys(client, "hbase"), _keys(client, "hchanged")
    index_b = keys_b.index(("root", 0, 0))  # sqrt of the shifted values: NaN only in B (cmp_nan_b.py)
    index_a = keys_a.index(("root", 0, 0))
    body = ok(client, "compare_values", b="hchanged", a="hbase", source="graph", index=index_b)
    assert body["status"] == "paired" and body["difference"] is None
    ha, hb = body["a"]["health"], body["b"]["health"]
    assert body["a"]["tensor"]["index"] == index_a and ha["mode"] == hb["mode"] == "FULL_HEALTH"
    counts = body["health_difference"]["counts"]
    for field in ("nan", "neg", "zero", "pos", "size"):
        assert counts[field] == [ha[field], hb[field], ha[field] - hb[field]]
    assert hb["nan"] > 0 == ha["nan"] and counts["nan"][2] < 0
    assert body["metric"]["differs"] and "nan" in body["metric"]["counts"]


def test_a_tensor_only_in_b_answers_b_alone(client):
    keys_b = _keys(client, "ochanged")
    index_b = keys_b.index(("squash", 0, 0))
    body = ok(client, "compare_values", b="ochanged", a="obase", source="graph", index=index_b, slice="...")
    assert body["status"] == "only_in_b" and body["a"] is None and body["difference"] is None
    assert body["b"]["slice"] is not None and body["note"].startswith("no counterpart in the baseline: run obase ")


def test_eager_outputs_pair_too(client):
    execs = ok(client, "executions", run="echanged", begin=0, end=1000)["executions"]
    muls = [e["index"] for e in execs if e["op_type"] == "Mul"]  # x * 0.25 in A, x * 0.3 in B
    body = ok(client, "compare_values", b="echanged", a="ebase", source="eager", index=muls[1], slice="...")
    xa = _npy(client, "ebase", "eager", body["a"]["tensor"]["index"])
    xb = _npy(client, "echanged", "eager", muls[1])
    want = (xa.astype(np.float64) - xb.astype(np.float64)).ravel()
    assert np.array_equal([_num(v) for v in body["difference"]["values"]], want) and np.abs(want).max() > 0


@pytest.mark.parametrize(
    "params,status",
    [
        ({"b": "changed", "a": "base", "source": "graph", "index": 10**6}, 404),
        ({"b": "changed", "a": "base", "source": "eager", "index": 10**6}, 404),
        ({"b": "changed", "a": "base", "source": "graph", "index": 0, "slice": "7"}, 400),
        ({"b": "changed", "a": "base", "source": "graph", "index": 0, "slice": "x"}, 400),
        ({"b": "changed", "a": "base", "source": "nowhere", "index": 0}, 400),
        ({"b": "changed", "a": "base", "source": "graph", "index": -1}, 400),
        ({"b": "changed", "a": "no_such_run", "source": "graph", "index": 0}, 400),
        ({"b": "changed", "a": "hbase", "source": "graph", "index": 0}, 400),
        ({"b": "changed", "source": "graph", "index": 0}, 400),
    ],
)
def test_bad_requests_are_4xx_json(client, params, status):
    code, _headers, body = get(client, url("compare_values", **params))
    assert code == status, body
    assert body["error"]["code"] and body["error"]["message"]


def test_shape_mode_pair_shows_both_shapes_and_dtypes(tmp_path):
    a, b = pair("cmp_cast", "SHAPE")
    shutil.copytree(a, tmp_path / "base")
    shutil.copytree(b, tmp_path / "changed")
    c = Client(make_app(str(tmp_path))[0])
    wait_indexed(c)
    keys_b = _keys(c, "changed")
    index_b = keys_b.index(("lowp", 0, 1))  # the second call's cast: float64 in A, float16 in B (cmp_cast.py)
    body = ok(c, "compare_values", b="changed", a="base", source="graph", index=index_b, slice="...")
    assert schema_errors(load_schema(), "CompareValuesResponse", body) == []
    ha, hb = body["a"]["health"], body["b"]["health"]
    assert (ha["mode"], hb["mode"]) == ("SHAPE", "SHAPE") and (ha["dtype"], hb["dtype"]) == ("float64", "float16")
    assert ha["shape"] == hb["shape"] == [4]
    assert f"dtype {ha['dtype']} → {hb['dtype']}" in body["health_difference"]["changed"]
    assert body["health_difference"]["counts"]["size"] == [4, 4, 0] and body["metric"]["differs"]
    assert body["difference"] is None and body["b"]["slice"] is None  # SHAPE records no values to subtract


def test_a_huge_constant_tensor_is_answered_not_a_500(tmp_path):
    """cmp_seed's first eager op outputs one uint64 key near 1e19: its histogram's range (value ± 0.5) was below
    float64's spacing there, a zero-width range and a ZeroDivisionError (500) in the `tensor` route under both."""
    a, b = pair("cmp_seed", "FULL_TENSOR")
    shutil.copytree(a, tmp_path / "base")
    shutil.copytree(b, tmp_path / "changed")
    c = Client(make_app(str(tmp_path))[0])
    wait_indexed(c)
    body = ok(c, "compare_values", b="changed", a="base", source="eager", index=0, slice="...")
    for side, run in (("a", "base"), ("b", "changed")):
        value = _npy(c, run, "eager", body[side]["tensor"]["index"])
        stats = body[side]["stats"]
        assert stats["min"] == stats["max"] == int(value.max())  # exact, as an integer
        assert sum(body[side]["histogram"]["counts"]) == value.size


def test_the_tolerances_a_client_passes_are_honoured(client):
    """compare_values measures with the tolerances passed, as `compare` does (issue #40 item 5): a huge atol makes
    the injected constant's pair the same; without it, it differs."""
    index = next(i for i, key in enumerate(_keys(client, "changed")) if key[0] == "scaled/y")
    strict = ok(client, "compare_values", b="changed", a="base", source="graph", index=index)
    loose = ok(client, "compare_values", b="changed", a="base", source="graph", index=index, atol=1e9)
    assert strict["metric"]["differs"] is True and loose["metric"]["differs"] is False
