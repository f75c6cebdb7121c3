"""The `compare` route (issue #27) through TensorBoard's real WSGI app: the first divergence and the paged list of a
pair of real dumps (schema-checked against wire.ts CompareResponse), and a 4xx JSON error for what cannot be
compared — never a 500, never a false "no divergence"."""

from __future__ import annotations

import shutil

import dumps
import pytest
from api_helpers import get, load_schema, make_app, ok, schema_errors, url, wait_indexed
from compare_helpers import injected_line, pair
from werkzeug.test import Client


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    logdir = tmp_path_factory.mktemp("compare_logdir")
    a, b = pair("cmp_nan_b", "FULL_HEALTH")
    shutil.copytree(a, logdir / "base")
    shutil.copytree(b, logdir / "changed")
    shutil.copytree(dumps.make_dump("cmp_epsilon", "a", "FULL_HEALTH"), logdir / "other_program")
    shutil.copytree(dumps.make_dump("cmp_constant", "a", "FULL_TENSOR"), logdir / "other_mode")
    app, _plugin = make_app(str(logdir))
    c = Client(app)
    wait_indexed(c)
    return c


def test_compare_names_the_injected_line_and_pages(client):
    body = ok(client, "compare", b="changed", a="base", begin=0, end=2)
    assert schema_errors(load_schema(), "CompareResponse", body) == []
    first = body["first_divergence"]
    assert first["b"]["line"] == injected_line("cmp_nan_b") and first["b"]["op_name"] == "centered"
    assert body["run"] == "changed" and body["base"] == "base"
    assert body["total"] == body["counts"]["divergent"] >= 2 and len(body["divergent"]) == 2
    rest = ok(client, "compare", b="changed", a="base", begin=2, end=1000)
    assert rest["begin"] == 2 and len(rest["divergent"]) == body["total"] - 2
    assert rest["divergent"][0]["position"] == 2


def test_a_run_with_itself_has_no_divergence(client):
    body = ok(client, "compare", b="base", a="base", begin=0, end=10)
    assert body["first_divergence"] is None and body["total"] == 0 and body["counts"]["matched"] > 0


@pytest.mark.parametrize(
    "params,status,starts",
    [
        ({"b": "changed", "a": "other_program"}, 400, "different_programs"),
        ({"b": "changed", "a": "other_mode"}, 400, "different_modes"),
        ({"b": "changed", "a": "no_such_run"}, 400, "a: no run named"),
        ({"b": "changed"}, 400, ""),
        ({"b": "changed", "a": "base", "atol": "-1"}, 400, ""),
    ],
)
def test_what_cannot_be_compared_is_a_4xx(client, params, status, starts):
    code, _headers, body = get(client, url("compare", begin=0, end=10, **params))
    assert code == status, body
    assert body["error"]["message"].startswith(starts) and body["error"]["code"]
