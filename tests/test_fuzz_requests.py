"""Fuzzed requests: every route, with random and hostile parameters generated from the served OpenAPI document.

Requests go through TensorBoard's real WSGI app (werkzeug test client) over the real index of the demo dump. For
every request: the status is one the document lists for that path (400/404/405 for bad input, 200 otherwise) and
never 500; a 200 body validates against the documented response schema; every other body is exactly the one
error shape with a code that matches the status. Values are drawn per parameter from its schema (in and out of
bounds), from names that exist in the dump (so deep code paths run, not only validation), and from a list of
hostile strings (traversal, markup, NUL, invalid percent-escapes, 5,000-character values, signs and exponents);
parameters are also dropped, repeated and invented, and methods other than GET are tried.

Normal run: FUZZ_REQUESTS (300) requests; `DBG_FUZZ_CASES=10000 scripts/fuzz.sh` runs 10,000.
"""

from __future__ import annotations

import gzip
import json
import os
from urllib.parse import quote

import jsonschema
import pytest
from api_helpers import make_app, ok, wait_indexed
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from werkzeug.test import Client

CASES = int(os.environ.get("DBG_FUZZ_CASES", "300"))
PREFIX = "/data/plugin/dbg"
ERROR_STATUS = {
    "bad_parameter": 400,
    "missing_parameter": 400,
    "page_too_large": 400,
    "not_found": 404,
    "method_not_allowed": 405,
    "not_ready": 503,
    "internal": 500,
}
HOSTILE = [
    "",
    "-1",
    "-0",
    "+1",
    " 1",
    "1 ",
    "1.0",
    "1e3",
    "0x10",
    "١٢",
    "NaN",
    "Infinity",
    "true",
    "null",
    "9007199254740991",
    "9007199254740992",
    "99999999999999999999999",
    "-9223372036854775809",
    "../../../../etc/passwd",
    "/etc/passwd",
    "..%2f..%2fetc%2fpasswd",
    "C:\\Windows\\win.ini",
    "<img src=x onerror=alert(1)>",
    "<script>alert(1)</script>",
    "\x00",
    "a\x00b",
    "%00",
    "%FF%FE",
    "%C3%28",
    "\ud800".encode("utf-8", "surrogatepass").decode("latin-1"),
    ",",
    ",,",
    "a,,b",
    "x" * 5000,
    "' OR 1=1 --",
    "${jndi:ldap://127.0.0.1/a}",
    "{{7*7}}",
    "\n",
    "\r\nX-Injected: 1",
    "🤖",
    "\u202e",
]


@pytest.fixture(scope="module")
def served(demo_logdir):
    app, _plugin = make_app(demo_logdir)
    client = Client(app)
    runs = wait_indexed(client)
    doc = ok(client, "openapi.json")
    return client, runs, doc


@pytest.fixture(scope="module")
def known(served):
    """Names that exist in the dump, so that generated requests also reach the index, not only the validator."""
    client, runs, _ = served
    run = runs["runs"][0]["name"]
    rows = ok(client, "graph_executions", run=run, begin=0, end=50)["rows"]
    execs = ok(client, "executions", run=run, begin=0, end=5)["executions"]
    detail = ok(client, "execution", run=run, index=0)
    devices = ok(client, "devices", run=run)
    return {
        "run": [run, run + "x", run.upper()],
        "graph_id": sorted({r["graph_id"] for r in rows}),
        "op_name": sorted({r["op_name"] for r in rows})[:10],
        "op_type": sorted({r["op_type"] for r in rows}),
        "ids": detail["stack_frame_ids"][:3] + [",".join(detail["stack_frame_ids"])],
        "index": ["0", "1", str(len(execs) - 1)],
        "mutes": ['[{"op_type": "Log", "reason": "r"}]', '[{"op_name": "re:^a", "rule": "InfNanAlert"}]', "[]"],
        "source": ["graph", "eager"],
        "slice": ["...", "0", "-1,..."],
        "hops": ["1", "2"],
        "direction": ["both", "up"],
        "output": ["0"],
        "bins": ["8", "64"],
        "device": sorted({d["device_name"] for d in devices["devices"] if d["device_name"]}),
        "host": devices["hosts"],
        # compare, compare_rows, compare_traces, compare_values: b (under suspicion) and a (the baseline), the run
        # with itself (and an unknown b)
        "b": [run, run + "x"],
        "a": [run],
        "indices": ["0", "0,1,2"],
        "capsule": ["capsule-step000000004", "."],  # the demo logdir holds no capsule: 404 (test_capsule.py: 200)
        "group": ["batch", "weights"],
        "name": ["x", "dense/kernel"],
    }


def _schema_values(schema: dict) -> st.SearchStrategy:
    kind = schema.get("type")
    if kind == "integer":
        low, high = schema.get("minimum", 0), schema.get("maximum", 2**53 - 1)
        return st.one_of(
            st.integers(low, min(high, low + 2000)), st.integers(low - 5, high + 5), st.integers(-(2**70), 2**70)
        ).map(str)
    if kind == "number":
        low = schema.get("minimum", 0)
        return st.one_of(st.floats(low, low + 100).map(repr), st.floats(allow_nan=True).map(repr), st.text(max_size=8))
    if kind == "boolean":
        return st.sampled_from(["true", "false", "1", "0", "TRUE", "yes", "2"])
    if "enum" in schema:
        return st.one_of(st.sampled_from(schema["enum"]), st.text(max_size=12))
    if kind == "array":
        return st.lists(st.text(max_size=40), max_size=5).map(",".join)
    return st.text(max_size=60)


@st.composite
def requests(draw, doc: dict, known: dict):
    """(method, raw path with query string) for one generated request."""
    paths = sorted(doc["paths"])
    path = draw(st.sampled_from(paths + ["/no_such_route", "/", "/runs/extra", "/../../etc/passwd"]))
    op = doc["paths"].get(path, {}).get("get", {})
    pairs = []
    for p in op.get("parameters", []):
        choice = draw(st.sampled_from(("known",) * 5 + ("schema", "hostile", "absent")))
        if choice == "absent":
            continue
        if choice == "known" and p["name"] in known:
            value = draw(st.sampled_from(known[p["name"]]))
        elif choice == "known" and p["schema"].get("type") == "integer":
            value = str(draw(st.integers(0, 1200)))
        elif choice == "hostile":
            value = draw(st.sampled_from(HOSTILE))
        else:
            value = draw(_schema_values(p["schema"]))
        pairs.append((p["name"], value))
    for _ in range(draw(st.sampled_from((0, 0, 0, 0, 1, 2)))):
        extra = draw(st.sampled_from(("repeat", "invent")))
        if extra == "repeat" and pairs:
            pairs.append(draw(st.sampled_from(pairs)))
        else:
            pairs.append(
                (
                    draw(st.sampled_from(("zz", "only_nonfinte", "run ", "RUN", "%FF", ""))),
                    draw(st.sampled_from(HOSTILE[:8])),
                )
            )
    raw = draw(st.booleans())  # raw: keep the percent-escapes as written (invalid UTF-8 reaches the server)
    query = "&".join(
        f"{quote(k, safe='%') if raw else quote(k, safe='')}={quote(v, safe='%') if raw else quote(v, safe='')}"
        for k, v in pairs
    )
    method = draw(st.sampled_from(("GET",) * 8 + ("POST", "PUT", "DELETE", "HEAD", "OPTIONS")))
    return method, PREFIX + path + ("?" + query if query else "")


def _validator(doc: dict, ref: str) -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator({"$ref": ref, "components": doc["components"]})


def check(client: Client, doc: dict, method: str, target: str, validators: dict) -> int:
    resp = client.open(target, method=method)
    status = resp.status_code
    path = target[len(PREFIX) :].split("?", 1)[0]
    documented = doc["paths"].get(path, {}).get("get", {}).get("responses")
    where = f"{method} {target[:300]} -> {status}"
    assert status != 500, where + " " + resp.get_data(as_text=True)[:500]
    if documented is not None:
        assert str(status) in documented, f"{where}: not a documented status ({sorted(documented)})"
    else:
        assert status in (404, 405), where
    content_type = resp.headers.get("Content-Type", "")
    if path in ("", "/"):
        # The bare prefix is no plugin route: TensorBoard's own 404, in plain text (whatever the method).
        assert status == 404 and content_type.startswith("text/plain"), f"{where}: {content_type}"
        return status
    if method == "HEAD":
        # What a GET would say in its status and headers, without the body (werkzeug drops it).
        assert resp.get_data() == b"" and content_type.startswith("application/json"), f"{where}: {content_type}"
        return status
    body = resp.get_data()
    if resp.headers.get("Content-Encoding") == "gzip":
        body = gzip.decompress(body)
    assert content_type.startswith("application/json"), where
    value = json.loads(body)
    if status == 200:
        ref = documented["200"]["content"]["application/json"]["schema"].get("$ref")
        if ref:
            v = validators.setdefault(ref, _validator(doc, ref))
            problems = [e.message for e in v.iter_errors(value)][:3]
            assert not problems, f"{where}: {problems}"
    else:
        assert set(value) == {"error"} and set(value["error"]) == {"code", "message"}, f"{where}: {value}"
        assert ERROR_STATUS[value["error"]["code"]] == status, f"{where}: {value}"
        assert isinstance(value["error"]["message"], str) and value["error"]["message"], where
    return status


@settings(
    max_examples=CASES,
    deadline=None,
    derandomize=CASES <= 500,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(data=st.data())
def _fuzz(served, known, data):
    client, _, doc = served
    method, target = data.draw(requests(doc, known))
    status = check(client, doc, method, target, _VALIDATORS)
    STATUSES[status] = STATUSES.get(status, 0) + 1


_VALIDATORS: dict = {}
STATUSES: dict[int, int] = {}


def test_fuzzed_requests_only_documented_answers(served, known):
    STATUSES.clear()
    _fuzz(served=served, known=known)
    print(f"\nfuzzed requests passed: {sum(STATUSES.values())} {dict(sorted(STATUSES.items()))}")
    assert sum(STATUSES.values()) >= CASES, STATUSES


def test_generator_reaches_success_and_every_error(served, known):
    """The generator is not only producing 400s: over a fixed sample, 200, 400, 404 and 405 all occur."""
    client, _, doc = served
    seen: dict[int, int] = {}

    @settings(
        max_examples=760,  # 250 before tensor/neighbourhood, 400 before capsules/compare, 700 before compare_values
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(data=st.data())
    def sample(data):
        method, target = data.draw(requests(doc, known))
        status = check(client, doc, method, target, _VALIDATORS)
        seen[status] = seen.get(status, 0) + 1

    sample()
    assert {200, 400, 404, 405} <= set(seen), seen
    print(f"\ngenerator statuses: {seen}")
    assert seen[200] >= 25, seen


@pytest.mark.parametrize("value", HOSTILE)
def test_every_hostile_value_in_every_parameter(served, known, value):
    """Each hostile value once in each parameter of each route (the others valid)."""
    client, _, doc = served
    for path, item in doc["paths"].items():
        params = item["get"].get("parameters", [])
        base = {p["name"]: (known.get(p["name"]) or ["0"])[0] for p in params if p["required"]}
        if "begin" in base and "end" in base:
            base["end"] = "5"
        for p in params:
            query = dict(base, **{p["name"]: value})
            target = PREFIX + path + "?" + "&".join(f"{k}={quote(v, safe='%')}" for k, v in query.items())
            check(client, doc, "GET", target, _VALIDATORS)
