"""The wire contract: real responses of every route, on dumps written by real TensorFlow in several debug modes,
validate against the JSON Schema generated from frontend/src/api/wire.ts; and that schema is fresh, and so are the
Python wire types generated from it (tensorboard_plugin_dbg/wire/types.py)."""

from __future__ import annotations

import importlib.util
import json
import math
import os
import shlex
import shutil
import subprocess
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import dumps
import numpy as np
import pytest
from api_helpers import (
    ROOT,
    SCHEMA_PATH,
    get,
    load_schema,
    make_app,
    ok,
    root_cause_answer,
    schema_errors,
    url,
    wait_indexed,
)
from werkzeug.test import Client

from tensorboard_plugin_dbg.analysis import (
    alerts,
    health_map,
    neighborhood,
    run_verdict,
    source_lines,
    tensor_values,
    timeline_marks,
)
from tensorboard_plugin_dbg.analysis.rules import config, mutes
from tensorboard_plugin_dbg.api import json_encoding
from tensorboard_plugin_dbg.api.params import PAGE_CAP, clamp_page
from tensorboard_plugin_dbg.api.routes import ROUTES_BY_NAME
from tensorboard_plugin_dbg.index.trace_filter import TraceFilter

pytestmark = pytest.mark.slow  # every route on 15 real dumps (~7 s to serve, ~7 s to validate) and the schema generator

# Every test program under tests/programs/ that writes a finished dump (found, not listed, so a new program is
# covered at once), with the arguments the other suites use so the dump cache is shared: programs taking a MODE run
# in FULL_HEALTH; EXTRA adds other debug modes (CURT_HEALTH, SHAPE, NO_TENSOR, CONCISE_HEALTH, FULL_TENSOR values).
# `live*` programs wait for a gate and never finish on their own; the demo comes from its fixture.
CAPSULES = {"capsule_fit", "capsule_loop", "capsule_speaks"}  # capsule_*: no dump
EXCLUDED = {"demo", "live", "live_dashboard", "modes", *CAPSULES}
EXTRA = (
    ("nan_div", "CURT_HEALTH"),
    ("nan_div", "SHAPE"),
    ("nan_sqrt", "FULL_TENSOR"),
    *(("modes", m) for m in ("NO_TENSOR", "CONCISE_HEALTH", "FULL_TENSOR")),
)


def _programs() -> list[tuple[str, ...]]:
    out = []
    for file in sorted(os.listdir(dumps.PROGRAMS)):
        name, ext = os.path.splitext(file)
        if ext != ".py" or name.startswith("_") or name in EXCLUDED or name.startswith("capsule_"):  # no dump
            continue
        with open(os.path.join(dumps.PROGRAMS, file), encoding="utf-8") as f:
            takes_mode = "Args: DUMP_DIR [MODE]" in f.read(400)
        out.append((name, "FULL_HEALTH") if takes_mode else (name,))
    return out + list(EXTRA)


PROGRAMS = tuple(_programs())


def test_committed_schema_is_fresh(tmp_path):
    """The package's wire_schema.json (the one schema file) is exactly what `npm run schema` makes from wire.ts now."""
    with open(os.path.join(ROOT, "package.json"), encoding="utf-8") as f:
        script = json.load(f)["scripts"]["schema"]
    args = shlex.split(script)
    out = str(tmp_path / "fresh.json")
    args[args.index("-o") + 1] = out  # the npm script itself, writing elsewhere
    env = dict(os.environ, PATH=os.path.join(ROOT, "node_modules", ".bin") + os.pathsep + os.environ["PATH"])
    proc = subprocess.run(args, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert load_schema(out) == load_schema(SCHEMA_PATH), "wire_schema.json is stale: run `npm run schema`"


def test_committed_wire_types_are_fresh():
    """tensorboard_plugin_dbg/wire/types.py is exactly what scripts/gen_wire_types.py makes from the committed
    schema now (a schema change without a regeneration fails here, as a stale schema fails above)."""
    spec = importlib.util.spec_from_file_location("gen_wire_types", os.path.join(ROOT, "scripts", "gen_wire_types.py"))
    assert spec is not None and spec.loader is not None
    generator = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generator)
    with open(generator.TARGET, encoding="utf-8") as f:
        committed = f.read()
    stale = "tensorboard_plugin_dbg/wire/types.py is stale: run `python scripts/gen_wire_types.py`"
    assert committed == generator.generate(SCHEMA_PATH), stale


@pytest.fixture(scope="module")
def logdir(demo_dump, tmp_path_factory):
    """A logdir holding the demo dump and the PROGRAMS' dumps side by side (copies: the cached dumps stay untouched)."""
    with ThreadPoolExecutor(max_workers=2) as pool:  # 2 cores: two TF programs at a time
        made = list(pool.map(lambda prog: dumps.make_dump(*prog), PROGRAMS))
    root = tmp_path_factory.mktemp("contract-logdir")
    for prog, path in zip((("demo",), *PROGRAMS), (demo_dump, *made)):
        shutil.copytree(path, root / "-".join(prog))
    shutil.copytree(os.path.join(dumps.make_dump("capsule_fit"), "capsules"), root / "capsules")  # route `capsules`
    return str(root)


@pytest.fixture(scope="module")
def served(logdir):
    app, plugin = make_app(logdir)
    client = Client(app)
    return client, plugin, wait_indexed(client)


@pytest.fixture(scope="module")
def answers(served):
    """(route, params, status, body) for every route on every run, gathered once."""
    client, _, runs = served
    assert len(runs["runs"]) == 1 + len(PROGRAMS), [r["name"] for r in runs["runs"]]
    out = [("runs", {}, 200, runs), ("openapi.json", {}, 200, ok(client, "openapi.json"))]
    out.append(("capsules", {}, 200, capsules := ok(client, "capsules")))
    assert [c["status"] for c in capsules["capsules"]] == ["ok"]

    def ask(route, **params):
        status, _, body = get(client, url(route, **params))
        out.append((route, params, status, body))
        return body

    for array in capsules["capsules"][0]["arrays"]:  # every batch array and variable of the capsule (#26)
        ask(
            "capsule_array",
            capsule=capsules["capsules"][0]["path"],
            group=array["group"],
            name=array["name"],
            slice="...",
        )
    ask("capsule_array", capsule="capsules/none", group="batch", name="x")  # a 404 is part of the contract too
    for array in capsules["capsules"][0]["arrays"]:  # every batch array's per-sample table (#36)
        if array["group"] == "batch":
            ask("capsule_samples", capsule=capsules["capsules"][0]["path"], array=array["name"], begin=0, end=50)
    first = capsules["capsules"][0]["arrays"][0]  # binary: its status and content type (bytes: test_capsule.py)
    params = {"capsule": capsules["capsules"][0]["path"], "group": first["group"], "name": first["name"]}
    resp = client.get(url("capsule_array.npy", **params))
    out.append(("capsule_array.npy", params, resp.status_code, resp.headers["Content-Type"]))

    for info in runs["runs"]:
        run = info["name"]
        alerts = ask("alerts", run=run, begin=0, end=PAGE_CAP)
        ask("alerts", run=run, begin=0, end=10, type="InfNanAlert", role="producer")
        muted = ask("alerts", run=run, begin=0, end=10, mutes='[{"op_type": "Log", "reason": "r"}]', dead_steps=2)
        assert len(muted["muted"]["by_mute"]) == 1
        ask("root_cause", run=run, mutes='[{"rule": "InfNanAlert"}]')
        ask("health_map", run=run, begin=0, end=20, columns=50)
        execs = ask("executions", run=run, begin=0, end=PAGE_CAP)
        for e in execs["executions"][:40]:
            ask("execution", run=run, index=e["index"], max_elements=50)
        rows = ask("graph_executions", run=run, begin=0, end=PAGE_CAP)["rows"]
        ask("graph_executions", run=run, begin=0, end=20, only_nonfinite="true")
        ask("timeline_marks", run=run, bins=100)
        for e in [e for e in execs["executions"] if e["is_function"]][:5]:
            ask("graph_executions", run=run, begin=0, end=50, call=e["index"])
        for d in ask("devices", run=run)["devices"][:3]:
            if d["device_name"]:
                ask("graph_executions", run=run, begin=0, end=20, device=d["device_name"], host=d["host"])
        for r in rows[:: max(1, len(rows) // 40)]:
            ask("graph_execution", run=run, index=r["index"], begin=1, max_elements=3)
        for g in sorted({r["graph_id"] for r in rows}):
            ask("graph", run=run, graph_id=g)
        for r in rows[:: max(1, len(rows) // 30)]:
            op = ask("op", run=run, graph_id=r["graph_id"], op_name=r["op_name"], near=r["index"])
            ask("graph_neighborhood", run=run, graph_id=r["graph_id"], op_name=r["op_name"], near=r["index"], hops=3)
            if op.get("stack_frame_ids"):
                ask("stack_frames", run=run, ids=",".join(op["stack_frame_ids"]))
        files = ask("source_files", run=run)["files"]
        for f in files[:3] + [f for f in files if f["is_user"]]:
            ask("source_file", run=run, index=f["index"])
            ask("source_file", run=run, index=f["index"], begin_line=1, end_line=5)
            counts = ask("source_line_counts", run=run, index=f["index"])
            ask("source_line_counts", run=run, index=f["index"], begin_line=1, end_line=20)
            for c in counts["lines"][:3]:
                ask("line_ops", run=run, index=f["index"], line=c["line"], begin=0, end=50)
        ask("root_cause", run=run)
        for r in rows[:: max(1, len(rows) // 10)]:
            ask("tensor", run=run, source="graph", index=r["index"], slice="...", bins=8)
            ask("tensor_inputs", run=run, source="graph", index=r["index"])
        for e in execs["executions"][:10]:
            ask("tensor", run=run, source="eager", index=e["index"], bins=8)
        for r in rows[:3]:  # binary: its status and content type only (the body is a .npy, tested elsewhere)
            resp = client.get(url("tensor.npy", run=run, source="graph", index=r["index"]))
            out.append(("tensor.npy", {"run": run}, resp.status_code, resp.headers["Content-Type"]))
        ask("execution", run=run, index=10**6)  # errors are part of the contract too
        ask("compare", b=run, a=run, begin=0, end=20)  # a run with itself (#27; 400 where nothing is comparable)
        ask("compare_rows", b=run, a=run, begin=0, end=20)
        ask("compare_rows", b=run, a=run, begin=0, end=20, divergent_only="true")
        ask("compare_traces", b=run, a=run, indices=",".join(str(r["index"]) for r in rows[:5]) or "0")
        for r in rows[:2]:  # its tensor beside itself: A − B all zero (400 where nothing is comparable)
            ask("compare_values", b=run, a=run, source="graph", index=r["index"], slice="...")
        ask("alerts", run=run, begin=0, end=PAGE_CAP + 1)
        # the index counts NaN/∞ alerts; the list adds the rules' findings after them (#18)
        assert alerts["totals_by_type"].get("InfNanAlert", 0) == info["counts"]["alerts"]
        assert alerts["total"] == sum(alerts["totals_by_type"].values())
    return out


def test_every_route_was_exercised(answers):
    ok_routes = {route for route, _, status, _ in answers if status == 200}
    assert ok_routes == set(ROUTES_BY_NAME)
    assert any(
        route == "graph_execution" and body.get("value") for route, _, status, body in answers if status == 200
    ), "no FULL_TENSOR value was served"


def test_every_response_matches_the_schema(answers):
    schema = load_schema()
    failures = []
    for route, params, status, body in answers:
        type_name = ROUTES_BY_NAME[route].response if status == 200 else "ErrorResponse"
        if route in ("tensor.npy", "capsule_array.npy"):
            want = "application/octet-stream" if status == 200 else "application/json"
            assert body.split(";")[0] == want, (params, status, body)
            continue
        if type_name is None:
            continue
        problems = schema_errors(schema, type_name, body)
        if problems:
            failures.append((route, params, problems))
    assert failures == [], failures[:5]


NON_FINITE = {"NaN": math.isnan, "Infinity": lambda v: v == math.inf, "-Infinity": lambda v: v == -math.inf}


def _spelling(value: float) -> str:
    return "NaN" if math.isnan(value) else "Infinity" if value > 0 else "-Infinity"


def _compare(body, raw, where: str, problems: list, spelled: Counter) -> None:
    """Walks a served body beside the index's own answer (not encoded): every non-finite float of the index must be
    served as its wire.ts `Num` string, every such string must stand for that float, everything else equal."""
    if isinstance(raw, np.ndarray):
        raw = raw.tolist()
    elif isinstance(raw, np.generic):
        raw = raw.item()
    if isinstance(raw, (bytes, bytearray)):
        raw = bytes(raw).decode("utf-8", errors="replace")
    if isinstance(raw, float) and not math.isfinite(raw):
        if body != _spelling(raw):
            problems.append(f"{where}: the index has {raw!r}, served {body!r}")
        spelled[_spelling(raw)] += 1
    elif isinstance(body, str) and body in NON_FINITE and not isinstance(raw, str):
        problems.append(f"{where}: served {body!r} where the index has {raw!r}")
    elif isinstance(raw, dict):
        if not isinstance(body, dict) or set(body) != {str(k) for k in raw}:
            problems.append(f"{where}: keys {sorted(body) if isinstance(body, dict) else body!r} != {sorted(raw)}")
            return
        for k, v in raw.items():
            _compare(body[str(k)], v, f"{where}/{k}", problems, spelled)
    elif isinstance(raw, (list, tuple)):
        if not isinstance(body, list) or len(body) != len(raw):
            problems.append(f"{where}: {len(raw)} items in the index, served {body!r:.200}")
            return
        for i, (b, r) in enumerate(zip(body, raw)):
            _compare(b, r, f"{where}/{i}", problems, spelled)
    elif body != raw or isinstance(body, bool) != isinstance(raw, bool):
        problems.append(f"{where}: served {body!r:.100}, the index has {raw!r:.100}")


def test_non_finite_floats_are_spelled_value_by_value(answers, served):
    """Each NaN/±inf the index holds is served as "NaN"/"Infinity"/"-Infinity" at the same place, and no such
    string is served where the index has anything else; compared against the index's own values, not through the
    encoder. Real data must exercise NaN and an infinity (the dumps hold no +inf)."""
    catalog = served[1].catalog()
    spelled: Counter = Counter()
    for route, params, status, body in answers:
        if status != 200 or not ROUTES_BY_NAME[route].needs_run or route == "tensor.npy":
            continue
        body = {k: v for k, v in body.items() if k != "run"}
        problems: list[str] = []
        _compare(body, _index_raw(catalog.run(params["run"]), route, params), route, problems, spelled)
        assert not problems, (route, params, problems[:5])
    assert spelled["NaN"] and spelled["Infinity"] + spelled["-Infinity"], f"non-finite values served: {dict(spelled)}"


def _non_finite_leaves(value, path=()):
    if isinstance(value, str) and value in NON_FINITE:
        yield path
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _non_finite_leaves(v, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _non_finite_leaves(v, (*path, i))


def _replaced(value, path, leaf):
    if not path:
        return leaf
    copy = dict(value) if isinstance(value, dict) else list(value)
    copy[path[0]] = _replaced(value[path[0]], path[1:], leaf)
    return copy


def test_only_num_fields_carry_non_finite_strings(answers):
    """Where a body holds "NaN"/"Infinity"/"-Infinity", the schema's type there takes a number (`Num`, or a tensor
    value's `Num | boolean | string`), never a text-only field such as a name. Checked once per route and place
    (list positions generalised)."""
    schema = load_schema()
    seen, checked = set(), 0
    for route, _params, status, body in answers:
        type_name = ROUTES_BY_NAME[route].response
        if status != 200 or type_name is None or route == "tensor.npy":
            continue
        for path in _non_finite_leaves(body):
            shape = (route, tuple("*" if isinstance(p, int) else p for p in path))
            if shape in seen:
                continue
            seen.add(shape)
            where = f"{route}: {'/'.join(map(str, path))}"
            assert not schema_errors(schema, type_name, _replaced(body, path, 1.5)), where + ": not a number's place"
            checked += 1
    assert checked, "no response carried a non-finite value"


def _index_raw(run, route: str, p: dict):
    """What the index itself says for a route's parameters (the protocol call the route stands for), not encoded."""
    i = {
        k: int(v)
        for k, v in p.items()
        if k
        in ("begin", "end", "index", "max_elements", "near", "begin_line", "end_line", "hops", "line", "call", "bins")
    }
    calls = {
        "alerts": lambda: alerts.alerts(
            run,
            i["begin"],
            i["end"],
            alert_type=p.get("type"),
            producers_only=p.get("role") == "producer",
            mutes=mutes.parse_json(p["mutes"]) if p.get("mutes") else (),
            thresholds=config.thresholds_from({"dead_steps": int(p["dead_steps"])} if "dead_steps" in p else {}),
        ),
        "executions": lambda: run.executions(i["begin"], i["end"]),
        "execution": lambda: run.execution(i["index"], max_elements=i.get("max_elements", 1000)),
        "graph_executions": lambda: run.graph_executions(
            i["begin"],
            i["end"],
            TraceFilter(only_nonfinite=p.get("only_nonfinite") == "true", device=p.get("device"), host=p.get("host")),
            call=i.get("call"),
        ),
        "timeline_marks": lambda: timeline_marks.marks(run, i.get("bins", 500)),
        "devices": run.device_counts,
        "graph_execution": lambda: run.graph_execution(
            i["index"], begin=i.get("begin", 0), max_elements=i.get("max_elements", 1000)
        ),
        "graph": lambda: run.graph(p["graph_id"]),
        "op": lambda: run.op(p["graph_id"], p["op_name"], near=i.get("near")),
        "source_files": run.source_files,
        "source_file": lambda: run.source_file(i["index"], i.get("begin_line"), i.get("end_line")),
        "stack_frames": lambda: run.stack_frames(p["ids"].split(",")),
        "source_line_counts": lambda: source_lines.line_counts(run, i["index"], i.get("begin_line"), i.get("end_line")),
        "line_ops": lambda: source_lines.line_ops(run, i["index"], i["line"], i["begin"], i["end"]),
        "root_cause": lambda: _root_cause_answer(run, mutes.parse_json(p["mutes"]) if p.get("mutes") else ()),
        "health_map": lambda: health_map.health_map(run, i["begin"], i["end"], int(p.get("columns", 200))),
        "tensor": lambda: tensor_values.tensor(
            run, p["source"], i["index"], None, p.get("slice"), int(p.get("bins", 64))
        ),
        "tensor_inputs": lambda: tensor_values.inputs(run, p["source"], i["index"]),
        "graph_neighborhood": lambda: neighborhood.neighborhood(
            run, p["graph_id"], p["op_name"], i.get("hops", 2), p.get("direction", "both"), i.get("near")
        ),
    }
    answer = calls[route]()
    if ROUTES_BY_NAME[route].paged:
        clamp_page(answer, int(answer["total"]))  # the documented clamp, whether or not the index did it
    return answer


def _root_cause_answer(run, mutes: tuple = ()) -> dict:
    """The route's answer: the verdict (the root cause after the mutes, "clean so far" while indexing) and the
    report's text."""
    answer = root_cause_answer(run, mutes)
    assert answer["status"] == run_verdict.root_cause(run, mutes)["status"]
    return answer


def _index_answer(run, route: str, p: dict):
    """The index's answer as the encoder writes it."""
    return json.loads(json_encoding.dumps(_index_raw(run, route, p)))


def test_answers_agree_with_the_index(answers, served):
    catalog = served[1].catalog()
    checked = 0
    for route, params, status, body in answers:
        if status != 200 or not ROUTES_BY_NAME[route].needs_run or route == "tensor.npy":
            continue
        body = dict(body)
        if "run" in body:
            assert body.pop("run") == params["run"]
        assert body == _index_answer(catalog.run(params["run"]), route, params), (route, params)
        checked += 1
    assert checked > 500
