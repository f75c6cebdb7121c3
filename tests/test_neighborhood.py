"""The graph around an op (analysis/neighborhood.py, route graph_neighborhood) on dumps written by real TensorFlow.

Oracle: a breadth-first search over TensorFlow's own DebugDataReader graph (its op creation digests' input names and
its consumer lists), hop by hop, on programs with nested while/cond, a Keras model and a tape inside a function. The
cross-graph walk is checked on a program that passes one function's eager output into another.
"""

from __future__ import annotations

import dumps
import pytest
from api_helpers import get, make_app, url, wait_indexed
from run_helpers import only_run
from werkzeug.test import Client

from tensorboard_plugin_dbg.analysis import neighborhood, root_cause


def _tf_graph(dump_dir: str, graph_id: str):
    from tensorflow.python.debug.lib import debug_events_reader as der  # the oracle: tests write and read with TF

    with der.DebugDataReader(dump_dir) as reader:
        reader.update()
        graph = reader.graph_by_id(graph_id)
        ups, downs = {}, {}
        for digest in reader.graph_op_digests():
            if digest.graph_id != graph_id:
                continue
            name = digest.op_name
            ups[name] = [i.rsplit(":", 1)[0] for i in (graph.get_op_creation_digest(name).input_names or [])]
            downs[name] = [c[1] for c in graph.get_op_consumers(name)]
        return ups, downs


def _bfs(adj, start, hops):
    seen, frontier = {start}, [start]
    for _ in range(hops):
        frontier = [n for f in frontier for n in adj.get(f, []) if n not in seen and not seen.add(n)]
    return seen


@pytest.mark.parametrize("program", ["nested", "keras_fit", "tape_function", "nan_grad_norm"])
@pytest.mark.parametrize("direction,hops", [("up", 3), ("down", 2), ("both", 2)])
def test_neighborhood_matches_tensorflows_graph(program, direction, hops):
    dump_dir = dumps.make_dump(program)
    run = only_run(dump_dir)
    row = run.graph_execution(run.info()["counts"]["graph_executions"] // 2, max_elements=0)
    ups, downs = _tf_graph(dump_dir, row["graph_id"])
    want = set()
    if direction in ("up", "both"):
        want |= _bfs(ups, row["op_name"], hops)
    if direction in ("down", "both"):
        want |= _bfs(downs, row["op_name"], hops)
    got = neighborhood.neighborhood(run, row["graph_id"], row["op_name"], hops, direction, None)
    same_graph = {n["op_name"] for n in got["nodes"] if n["graph_id"] == row["graph_id"] and n["kind"] == "op"}
    assert same_graph == want
    assert not got["truncated"]
    for edge in got["edges"]:  # every same-graph edge is one TF knows
        if not edge["cross_graph"]:
            src, dst = edge["source"].split(":", 1)[1], edge["target"].split(":", 1)[1]
            assert src in ups[dst]


def test_walk_crosses_into_the_caller_and_its_graph():
    run = only_run(dumps.make_dump("nan_function_input"))
    p = root_cause.analyze(run)["producer"]
    got = neighborhood.neighborhood(run, p["graph_id"], p["op_name"], 8, "up", p["alert"]["source_index"])
    by_id = {n["id"]: n for n in got["nodes"]}
    probs = by_id[f"{p['graph_id']}:probs"]
    (caller,) = [n for n in got["nodes"] if n["kind"] == "execution"]
    assert caller["op_type"].startswith("__inference_model_") and caller["depth"] == -2
    assert caller["health"]["zero"] >= 1  # the softmax output that underflowed, as the caller passed it
    assert "passed in by the caller" in probs["link"]
    edges = {(e["source"], e["target"]): e for e in got["edges"]}
    assert edges[(caller["id"], probs["id"])]["cross_graph"]
    # Into the called graph: its output Identity <- Softmax, at the trace of that call (the step before Log's).
    softmax = next(n for n in got["nodes"] if n["op_name"] == "Softmax")
    assert softmax["graph_id"] == caller["graph_id"] and softmax["depth"] == -4
    assert softmax["health"] == caller["health"] | {"tensor_id": softmax["health"]["tensor_id"]}
    assert softmax["trace_index"] < p["alert"]["source_index"]
    assert by_id[f"{p['graph_id']}:Log"]["role"] == "producer" and by_id[f"{p['graph_id']}:Log"]["on_path"]


def test_route_and_hostile_parameters():
    app, _plugin = make_app(dumps.make_dump("nan_function_input"))
    client = Client(app)
    run = wait_indexed(client)["runs"][0]["name"]
    p = root_cause.analyze(only_run(dumps.make_dump("nan_function_input")))["producer"]
    status, _, body = get(client, url("graph_neighborhood", run=run, graph_id=p["graph_id"], op_name="Log", hops=8))
    assert status == 200 and {n["op_type"] for n in body["nodes"]} >= {"Log", "Placeholder", "Mul"}
    status, _, body = get(client, url("graph_neighborhood", run=run, graph_id="nope", op_name="Log"))
    assert status == 404 and set(body["error"]) == {"code", "message"}
    # a focused trace past the run's last one is not found (the fuzzer met a 500 here: an IndexError)
    count = only_run(dumps.make_dump("nan_function_input")).info()["counts"]["graph_executions"]
    for near in (count, count + 7):
        status, _, body = get(
            client, url("graph_neighborhood", run=run, graph_id=p["graph_id"], op_name="probs", hops=8, near=near)
        )
        assert status == 404 and "not found" in body["error"]["message"], (near, body)
    for bad in ({"hops": "9"}, {"hops": "0"}, {"direction": "sideways"}, {"near": "-1"}, {"hops": "x"}):
        status, _, body = get(client, url("graph_neighborhood", run=run, graph_id="g", op_name="Log", **bad))
        assert status == 400 and set(body["error"]) == {"code", "message"}, bad


def test_walk_leaves_a_loop_body_and_a_branch_through_their_control_flow_op():
    """While bodies and cond branches are graphs of their own whose inputs are the While / If op's inputs: the
    walk up from a branch's op reaches the outer graph's tensor (TF names the branch graph after the op)."""
    run = only_run(dumps.make_dump("nested"))
    graphs = {g["name"]: g["graph_id"] for g in (run.graph(gid) for gid in _graph_ids(run))}
    false_branch = next(gid for name, gid in graphs.items() if name.startswith("cond_false"))
    got = neighborhood.neighborhood(run, false_branch, "cond/Sqrt", 3, "up", None)
    by_id = {n["id"]: n for n in got["nodes"]}
    outer_v = f"{graphs['inner']}:v"
    assert outer_v in by_id and by_id[outer_v]["depth"] == -2
    assert {(e["source"], e["target"], e["cross_graph"]) for e in got["edges"]} >= {
        (outer_v, f"{false_branch}:cond/Sqrt/v", True)
    }
    body = graphs[next(name for name in graphs if name.startswith("while_body"))]
    got = neighborhood.neighborhood(run, body, "while/Placeholder_1", 1, "up", None)
    (outer,) = [n for n in got["nodes"] if n["depth"] == -1]
    assert (outer["graph_id"], outer["op_name"]) == (graphs["outer"], "v")  # the While's 4th input: the loop var


def _graph_ids(run):
    rows = run.graph_executions(0, 1000)["rows"]
    seen = {r["graph_id"] for r in rows}
    for gid in list(seen):
        seen |= {g["graph_id"] for g in run.graph(gid)["chain"]}
        seen |= {g["graph_id"] for g in run.graph(gid)["inner_graphs"]}
    return seen
