"""The graph around an op: the ops within K data-edge hops, across function boundaries, each with its health at the
focused step (wire.ts NeighborhoodResponse).

The walk follows the data edges the dump records (`GraphOpCreation.input_names`; there are no control edges in a
dump, and the answer says so). Where an edge reaches a function's input Placeholder, it crosses to what the caller
passed in: the input of the While / If op that runs a loop body or a branch, or (links.py) the eager execution
whose output it was, and from that call of another tf.function into the called graph's output op (a FuncGraph's
outputs are its `Identity`, `Identity_1`, … ops, in creation order), where the walk goes on upstream. Going down
it stops at the graph's own outputs: the dump records no op for what a caller does with them.

Cost: the adjacency of a graph is built once per run version (ops of that graph, not traces) and cached; a query
costs its answer: a breadth-first walk over at most `NODE_CAP` ops and one record read per node for its health.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Literal, TypedDict, cast

import numpy as np
import numpy.typing as npt

from tensorboard_plugin_dbg.analysis import index_columns, links, root_cause
from tensorboard_plugin_dbg.analysis.columns import RunColumns
from tensorboard_plugin_dbg.index.protocol import NotFound, RunQueries
from tensorboard_plugin_dbg.wire import types as wire

NODE_CAP = 300
MAX_HOPS = 8
NOTES = [
    "Data edges only: TensorFlow's dump records no control dependencies, so none are drawn.",
]
JAX_NOTES = ["Data edges only: a jaxpr has no control dependencies, so none are drawn."]  # a JAX writer's run


class _Node(TypedDict, total=False):
    """A node while the walk builds it: wire.ts NeighborhoodNode's fields as they are set, and `near` (the trace
    its health is read at) until _fill_health drops it; complete once _fill_health and _mark_path ran."""

    id: str
    depth: int
    more_up: int
    more_down: int
    kind: Literal["op", "execution"]
    graph_id: str | None
    op_name: str | None
    op_type: str
    near: int | None
    link: str
    execution_index: int
    health: wire.TensorHealth | None
    output_slot: int | None
    trace_index: int | None
    role: wire.AlertRole | None
    device: str | None
    on_path: bool


# (id, node, source slot, target slot, crosses a graph) of a data input of a node
_Input = tuple[str, _Node, int, int, bool]


@dataclass
class _Graph:
    """One graph's ops and data edges, by position in creation order."""

    names: list[str]
    index: dict[str, int]
    types: list[str]
    inputs: list[list[tuple[int, int]]]  # per op: (producer position, output slot) per data input slot
    consumers: list[list[tuple[int, int, int]]] = field(default_factory=list)  # (consumer, its slot, our slot)


def _graph(run: RunQueries, graph_id: str) -> _Graph:
    def build() -> _Graph:
        names = run.graph_op_names(graph_id)
        index = {n: i for i, n in enumerate(names)}
        entries = [run.op_entry(graph_id, n) for n in names]
        types = [e.op_type if e is not None else "" for e in entries]
        inputs = [[(index.get(p, -1), int(s)) for p, s in (e.inputs if e is not None else [])] for e in entries]
        consumers: list[list[tuple[int, int, int]]] = [[] for _ in names]
        for c, ins in enumerate(inputs):
            for slot, (p, s) in enumerate(ins):
                if p >= 0:
                    consumers[p].append((c, slot, s))
        return _Graph(names, index, types, inputs, consumers)

    return run.derived.get(f"adjacency:{graph_id}", run.version, build)


class _Walk:
    """The breadth-first walk and the answer it builds."""

    def __init__(self, run: RunQueries, near: int | None) -> None:
        self.run, self.near = run, near
        self._cols: RunColumns | None = None
        self.nodes: dict[str, _Node] = {}
        self.edges: list[wire.NeighborhoodEdge] = []
        self.truncated = False

    @property
    def cols(self) -> RunColumns:
        """The run's columns, for the links: the classification's when ready, else gathered once (never the
        whole-run analysis on a request)."""
        if self._cols is None:
            self._cols = root_cause.columns_if_ready(self.run) or index_columns.gather(self.run)
        return self._cols

    def add(self, node_id: str, node: _Node, depth: int) -> bool:
        if node_id in self.nodes:
            return False
        if len(self.nodes) >= NODE_CAP:
            self.truncated = True
            return False
        self.nodes[node_id] = {"id": node_id, "depth": depth, "more_up": 0, "more_down": 0, **node}
        return True

    def edge(self, source: str, source_slot: int, target: str, target_slot: int, cross: bool) -> None:
        self.edges.append(
            {
                "source": source,
                "source_slot": source_slot,
                "target": target,
                "target_slot": target_slot,
                "cross_graph": cross,
            }
        )


def _op_of(node: _Node) -> tuple[str, str]:
    """(graph id, op name) of an op node: _op_node sets both (an execution node's are not used)."""
    return cast(str, node["graph_id"]), cast(str, node["op_name"])


def _op_node(graph_id: str, g: _Graph, i: int, near: int | None) -> _Node:
    return {"kind": "op", "graph_id": graph_id, "op_name": g.names[i], "op_type": g.types[i], "near": near}


def neighborhood(
    run: RunQueries,
    graph_id: str,
    op_name: str,
    hops: int,
    direction: Literal["up", "down", "both"],
    near: int | None,
) -> wire.NeighborhoodResponseBody:
    """wire.ts NeighborhoodResponse minus `run`. `near`: the focused trace index (health is read at the trace of
    each op nearest it; the caller of a function input is the call that trace ran in)."""
    g = _graph(run, graph_id)
    if op_name not in g.index:
        raise NotFound(f"op {op_name!r} not found in graph {graph_id!r}")
    traces = len(run.trace_arrays()["kind"])
    if near is not None and near >= traces:
        raise NotFound(f"graph execution {near} not found (run has {traces})")
    walk = _Walk(run, near)
    start = f"{graph_id}:{op_name}"
    walk.add(start, _op_node(graph_id, g, g.index[op_name], near), 0)
    queue: deque[tuple[str, int]] = deque([(start, 0)])
    while queue:
        node_id, depth = queue.popleft()
        node = walk.nodes[node_id]
        if direction in ("up", "both") and depth <= 0:
            _expand_up(walk, node, depth, hops, queue)
        if direction in ("down", "both") and depth >= 0:
            _expand_down(walk, node, depth, hops, queue)
    _fill_health(run, walk)
    _mark_path(run, walk, start)
    return {
        "graph_id": graph_id,
        "op_name": op_name,
        "hops": hops,
        "direction": direction,
        "near": near,
        # complete now: _fill_health set health, trace index, role and device and dropped `near`; _mark_path on_path
        "nodes": [cast(wire.NeighborhoodNode, node) for node in walk.nodes.values()],
        "edges": walk.edges,
        "truncated": walk.truncated,
        "notes": JAX_NOTES if run.info()["framework"] == "jax" else NOTES,
    }


def _expand_up(walk: _Walk, node: _Node, depth: int, hops: int, queue: deque[tuple[str, int]]) -> None:
    ups = list(_upstream(walk, node))
    if -depth >= hops:
        node["more_up"] = len(ups)
        return
    for src_id, src_node, src_slot, dst_slot, cross in ups:
        if walk.add(src_id, src_node, depth - 1):
            queue.append((src_id, depth - 1))
        if src_id in walk.nodes:
            walk.edge(src_id, src_slot, node["id"], dst_slot, cross)
        else:
            node["more_up"] += 1


def _expand_down(walk: _Walk, node: _Node, depth: int, hops: int, queue: deque[tuple[str, int]]) -> None:
    if node["kind"] != "op":
        return
    graph_id, op_name = _op_of(node)
    g = _graph(walk.run, graph_id)
    downs = g.consumers[g.index[op_name]]
    if depth >= hops:
        node["more_down"] = len(downs)
        return
    for c, slot, src_slot in downs:
        dst_id = f"{graph_id}:{g.names[c]}"
        if walk.add(dst_id, _op_node(graph_id, g, c, walk.near), depth + 1):
            queue.append((dst_id, depth + 1))
        if dst_id in walk.nodes:
            walk.edge(node["id"], src_slot, dst_id, slot, False)
        else:
            node["more_down"] += 1


def _upstream(walk: _Walk, node: _Node) -> Iterator[_Input]:
    """(id, node, source slot, target slot, crosses a graph) of each data input of `node`."""
    if node["kind"] == "execution":
        yield from _into_called_graph(walk, node)
        return
    graph_id, op_name = _op_of(node)
    g = _graph(walk.run, graph_id)
    i = g.index[op_name]
    if g.types[i] == "Placeholder":
        yield from _to_caller(walk, node)
        return
    for slot, (p, s) in enumerate(g.inputs[i]):
        if p >= 0:
            yield f"{graph_id}:{g.names[p]}", _op_node(graph_id, g, p, node.get("near")), s, slot, False


_BRANCH_KINDS = ("_body_", "_cond_", "_true_", "_false_")


def _to_caller(walk: _Walk, node: _Node) -> Iterator[_Input]:
    """A function input -> what the caller passed in: the control-flow op's input (While, If) in the outer graph,
    or the eager execution whose output an eager caller passed (when the dump has it)."""
    graph_id, op_name = _op_of(node)
    flow = _control_flow(walk.run, graph_id, op_name)
    if flow is not None:
        outer, src, slot = flow
        g = _graph(walk.run, outer)
        if src in g.index:
            node["link"] = f"passed in by {src}:{slot}, an input of the while loop or cond that runs this graph"
            yield f"{outer}:{src}", _op_node(outer, g, g.index[src], node.get("near")), slot, 0, True
        return
    near = node.get("near")
    if near is None or near < 0:
        return
    link = links.function_input(walk.run, walk.cols, graph_id, op_name, near)
    node["link"] = link["why"]
    call, out_slot = link["execution_index"], link["output_slot"]
    if call is None or out_slot is None:  # both are known together
        return
    detail = walk.run.execution(call, max_elements=0)
    execution: _Node = {
        "kind": "execution",
        "graph_id": detail.get("graph_id"),
        "op_name": None,
        "op_type": detail["op_type"],
        "execution_index": call,
        "health": link["health"],
        "output_slot": out_slot,
    }
    yield f"exec:{call}", execution, out_slot, 0, True


def _control_flow(run: RunQueries, graph_id: str, placeholder: str) -> tuple[str, str, int] | None:
    """A While body/cond or If branch input -> (outer graph, producer op, slot) of the control-flow op's input that
    feeds it. Their graphs are named after the op (`while` -> `while_body_8`, `cond` -> `cond_true_42`) and take its
    inputs in order (an If's first input is its predicate, which the branches do not get)."""
    try:
        info = run.graph(graph_id)
    except NotFound:
        return None
    outer, name = info.get("outer_graph_id"), info.get("name") or ""
    if not outer or not any(k in name for k in _BRANCH_KINDS):
        return None
    g = _graph(run, graph_id)
    inputs = [n for n, t in zip(g.names, g.types) if t == "Placeholder"]
    og = _graph(run, outer)
    for i, (op_name, op_type) in enumerate(zip(og.names, og.types)):
        if op_type not in ("While", "StatelessWhile", "If", "StatelessIf"):
            continue
        if not any(name.startswith(op_name.replace("/", "_") + k) for k in _BRANCH_KINDS):
            continue
        offset = 1 if "If" in op_type else 0
        feeds = og.inputs[i][offset:]
        if placeholder in inputs and len(feeds) == len(inputs):
            p, slot = feeds[inputs.index(placeholder)]
            return (outer, og.names[p], slot) if p >= 0 else None
    return None


def _into_called_graph(walk: _Walk, node: _Node) -> Iterator[_Input]:
    """A tf.function call's output -> the called graph's output op (Identity, Identity_1, … by slot), with the
    trace nearest the call (its traces precede its record)."""
    graph_id = node.get("graph_id")
    if not graph_id:
        return
    g = _graph(walk.run, graph_id)
    outputs = [i for i, (n, t) in enumerate(zip(g.names, g.types)) if t == "Identity" and n.startswith("Identity")]
    slot = int(node.get("output_slot") or 0)
    if slot >= len(outputs):
        return
    near = _row_before(walk.cols, float(walk.cols.exec_wall[node["execution_index"]]))
    yield f"{graph_id}:{g.names[outputs[slot]]}", _op_node(graph_id, g, outputs[slot], near), 0, slot, True


def _row_before(cols: RunColumns, wall: float) -> int | None:
    row = int(np.searchsorted(cols.trace_wall, wall, side="right")) - 1
    return row if row >= 0 else None


def _fill_health(run: RunQueries, walk: _Walk) -> None:
    """Each op's trace nearest the focused one (any output slot), with its health and role."""
    cls = root_cause.classification_if_ready(run)
    for node in walk.nodes.values():
        node.setdefault("health", None)
        node.setdefault("trace_index", None)
        node.setdefault("role", None)
        if node["kind"] != "op":
            continue
        rows_of_op = run.op_trace_rows(*_op_of(node))
        row = _nearest(rows_of_op, node.get("near"), node["depth"])
        if row is None:
            continue
        trace = run.graph_execution(row, max_elements=0)
        node["trace_index"], node["health"], node["device"] = row, trace["health"], trace.get("device_name")
        if cls is not None:
            node["role"] = root_cause.role_name(cls, "graph_execution", row)
    for node in walk.nodes.values():
        node.setdefault("device", None)
        node.pop("near", None)


def _nearest(rows: npt.NDArray[np.int64], near: int | None, depth: int) -> int | None:
    """The op's trace of the focused step: upstream ops ran before the focus (the last trace at or before it),
    downstream ones after (the first at or after it); the nearest one when the step has none."""
    if not len(rows):
        return None
    rows = np.sort(rows)
    if near is None:
        return int(rows[-1])
    at = int(np.searchsorted(rows, near))
    if depth < 0 and at < len(rows) and rows[at] == near:
        return near
    if depth < 0 and at > 0:
        return int(rows[at - 1]) if rows[min(at, len(rows) - 1)] != near else near
    if depth > 0 and at < len(rows):
        return int(rows[at])
    best = [int(rows[i]) for i in (at - 1, at) if 0 <= i < len(rows)]
    return min(best, key=lambda r: (abs(r - near), r > near))


def _mark_path(run: RunQueries, walk: _Walk, start: str) -> None:
    """`on_path`: the nodes on a path from the root cause's producer to the focused op, within the answer."""
    for node in walk.nodes.values():
        node["on_path"] = False
    rc = root_cause.analysis_if_ready(run)
    producer = rc["producer"] if rc else None
    source = f"{producer['graph_id']}:{producer['op_name']}" if producer else ""
    if source not in walk.nodes:
        return
    down = _reach(walk, source, forward=True)
    up = _reach(walk, start, forward=False)
    for node_id in down & up:
        walk.nodes[node_id]["on_path"] = True


def _reach(walk: _Walk, origin: str, forward: bool) -> set[str]:
    nexts: dict[str, list[str]] = {}
    for e in walk.edges:
        a, b = (e["source"], e["target"]) if forward else (e["target"], e["source"])
        nexts.setdefault(a, []).append(b)
    seen, todo = {origin}, [origin]
    while todo:
        for n in nexts.get(todo.pop(), []):
            if n not in seen:
                seen.add(n)
                todo.append(n)
    return seen
