"""The first divergence and the lists, as the CLI's JSON, the HTML page and the API answer them.

First divergence: the earliest differing tensor in B's order whose aligned inputs do not differ (the root cause's
producer-versus-propagator rule, applied to differences). Its inputs are looked up as they were when it ran (the
last trace of each input before it); an input only B holds means the difference follows from ops A lacks, and the
finding names those ops. With no differing value but ops only in one run, the first of those is the finding
(a structural change). None only when the runs agree everywhere they were compared.

In the health modes "same" only means "same counts": a tensor whose values changed without moving its counts
passes the change on unseen. So there the inputs are followed further up, through every same-counts ancestor
(bounded: MAX_ANCESTORS ops), and B-only ops found there are the first divergence, as a B-only direct input is.
FULL_TENSOR's "same" is the values themselves: its answer does not walk.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from typing_extensions import TypedDict

from tensorboard_plugin_dbg.analysis.compare import sides
from tensorboard_plugin_dbg.analysis.compare.comparison import Comparison
from tensorboard_plugin_dbg.analysis.compare.differences import execution_metric, graph_tensor_metric
from tensorboard_plugin_dbg.analysis.compare.metrics import Metric, health_metric
from tensorboard_plugin_dbg.analysis.compare.sides import Side
from tensorboard_plugin_dbg.wire import types as wire

MAX_CANDIDATES = 64  # differing tensors looked at for a producer (each costs a few record reads)
MAX_LISTED = 200  # ops listed per "only in" list
MAX_ANCESTORS = 256  # same-counts ancestors walked per candidate in the health modes (each a few index lookups)


InputPair = wire.CompareInput
Finding = wire.CompareFinding


class Pair(TypedDict):
    """One differing pair: both sides and its metric (a CompareItem without its position)."""

    a: Side
    b: Side
    metric: Metric


def entry(c: Comparison, src: int, pos: int) -> Pair:
    """One differing pair: both sides and its metric."""
    if src == 0:
        row_a, row_b = int(c.traces.a[pos]), int(c.traces.b[pos])
        side_a = sides.graph_side(c.run_a, row_a, c.keys_a.occurrence_of(row_a))
        side_b = sides.graph_side(c.run_b, row_b, c.keys_b.occurrence_of(row_b))
        metric = trace_metric(c, pos, side_a, side_b)
    else:
        ea, eb = int(c.execs.a[pos]), int(c.execs.b[pos])
        side_a = sides.eager_side(c.run_a, ea, _exec_occurrence(c.exec_names_a, ea))
        side_b = sides.eager_side(c.run_b, eb, _exec_occurrence(c.exec_names_b, eb))
        metric = c.exec_metrics.get(pos) or {"differs": True, "summary": "differs"}
    return {"a": side_a, "b": side_b, "metric": metric}


def trace_metric(c: Comparison, pos: int, side_a: Side, side_b: Side) -> Metric:
    if pos in c.trace_metrics:
        return c.trace_metrics[pos]
    row_a, row_b = int(c.traces.a[pos]), int(c.traces.b[pos])
    if side_a["op_type"] != side_b["op_type"]:
        return {"differs": True, "summary": f"op type {side_a['op_type']} → {side_b['op_type']}"}
    mode_a, va = c.run_a.trace_vectors(np.array([row_a]))
    mode_b, vb = c.run_b.trace_vectors(np.array([row_b]))
    return health_metric(int(mode_a[0]), int(mode_b[0]), va[0], vb[0])


def _exec_occurrence(names: list[str], index: int) -> int:
    return names[:index].count(names[index])


def first_divergence(c: Comparison) -> Finding | None:
    for src, pos in c.divergent[:MAX_CANDIDATES].tolist():
        found = entry(c, src, pos)
        inputs = _inputs(c, pos) if src == 0 else []
        if any(i["status"] == "differs" for i in inputs):
            continue  # a propagator: an earlier difference (eager, or beyond tolerance order) is the cause
        b_only = [i["b"] for i in inputs if i["status"] == "only_in_b" and i["b"] is not None]
        why = "its inputs include ops only the changed run runs: the difference follows from them"
        if not b_only and src == 0 and "HEALTH" in c.mode:
            b_only = _b_only_ancestors(c, pos)
            why = (
                "ops only the changed run runs are upstream of it, through tensors whose counts are the same (a health "
                "mode does not see their values): the difference follows from them"
            )
        if b_only:
            return _finding("follows_from_only_in_b", why, found["a"], b_only[0], found["metric"], inputs, b_only)
        kind: Kind = "op_type" if found["a"]["op_type"] != found["b"]["op_type"] else "value"
        why = "the earliest tensor of the changed run that differs while its inputs do not"
        return _finding(kind, why, found["a"], found["b"], found["metric"], inputs, [])
    if len(c.divergent):  # every candidate looked at had a differing input: report the earliest as it is
        found = entry(c, *c.divergent[0].tolist())
        why = "the earliest tensor of the changed run that differs"
        return _finding("value", why, found["a"], found["b"], found["metric"], [], [])
    return _structural(c)


Kind = Literal["value", "op_type", "follows_from_only_in_b", "only_in_b", "only_in_a"]


def _finding(
    kind: Kind,
    why: str,
    a: Side | None,
    b: Side | None,
    metric: Metric | None,
    inputs: list[InputPair],
    ops: list[Side],
) -> Finding:
    return {"kind": kind, "why": why, "a": a, "b": b, "metric": metric, "inputs": inputs, "only_in_b_ops": ops}


def _structural(c: Comparison) -> Finding | None:
    only_b, only_a = only_in(c, "b", 1), only_in(c, "a", 1)
    if only_b:
        why = "no value differs, but the changed run runs ops the baseline does not"
        return _finding("only_in_b", why, None, only_b[0], None, [], only_b)
    if only_a:
        why = "no value differs, but the baseline runs ops the changed run does not"
        return _finding("only_in_a", why, only_a[0], None, None, [], [])
    return None


def _inputs(c: Comparison, pos: int) -> list[InputPair]:
    """The B op's data inputs as they were when it ran, each with its A counterpart and whether it differs."""
    row_b = int(c.traces.b[pos])
    graph_id, op_name, _slot, _mode, _device = c.run_b.kind_info(int(c.run_b.trace_arrays()["kind"][row_b]))
    entry_b = c.run_b.op_entry(graph_id, op_name)
    if entry_b is None:
        return []
    b_pos = _pair_position_of_b(c)
    out: list[InputPair] = []
    for producer, slot in entry_b.inputs:
        name = f"{producer}:{slot}"
        row = sides.latest_trace_before(c.run_b, graph_id, producer, slot, row_b)
        if row is None:
            out.append({"name": name, "status": "not_recorded", "a": None, "b": None, "metric": None})
            continue
        side_b = sides.graph_side(c.run_b, row, c.keys_b.occurrence_of(row))
        at = int(b_pos[row])
        if at < 0:
            out.append({"name": name, "status": "only_in_b", "a": None, "b": side_b, "metric": None})
            continue
        row_a = int(c.traces.a[at])
        side_a = sides.graph_side(c.run_a, row_a, c.keys_a.occurrence_of(row_a))
        differs = bool(c.trace_differs[at])
        metric = trace_metric(c, at, side_a, side_b) if differs else _same_metric(c, row_a, row)
        out.append(
            {"name": name, "status": "differs" if differs else "same", "a": side_a, "b": side_b, "metric": metric}
        )
    return out


def _b_only_ancestors(c: Comparison, pos: int) -> list[Side]:
    """B-only ops among the ancestors of pair `pos`'s B op reached through tensors both runs hold (health modes:
    their equal counts do not show their values equal), nearest first; each ancestor as it was before the op ran."""
    row_b = int(c.traces.b[pos])
    graph_id, op_name, _slot, _mode, _device = c.run_b.kind_info(int(c.run_b.trace_arrays()["kind"][row_b]))
    b_pos = _pair_position_of_b(c)
    queue, seen, found = [op_name], {op_name}, []
    while queue and len(seen) <= MAX_ANCESTORS:
        entry_b = c.run_b.op_entry(graph_id, queue.pop(0))
        for producer, slot in entry_b.inputs if entry_b is not None else ():
            if producer in seen:
                continue
            seen.add(producer)
            row = sides.latest_trace_before(c.run_b, graph_id, producer, slot, row_b)
            if row is not None and b_pos[row] < 0:
                found.append(sides.graph_side(c.run_b, row, c.keys_b.occurrence_of(row)))
            elif row is None or not c.trace_differs[b_pos[row]]:
                queue.append(producer)  # same counts (or not recorded): its own inputs may have moved its values
    return found


def _same_metric(c: Comparison, row_a: int, row_b: int) -> Metric:
    if c.mode == "FULL_TENSOR":
        return graph_tensor_metric(c.run_a, c.run_b, row_a, row_b, c.tol) or {"differs": False, "summary": "same"}
    return {"differs": False, "summary": "same counts" if "HEALTH" in c.mode else "same"}


def _pair_position_of_b(c: Comparison) -> np.ndarray:
    """int64[T_b]: the pair position of each B trace row, -1 for a row only B holds."""
    out = np.full(len(c.keys_b.key), -1, np.int32)
    out[c.traces.b] = np.arange(len(c.traces.b), dtype=np.int32)
    return out


def only_in(c: Comparison, which: str, limit: int = MAX_LISTED) -> list[Side]:
    """Distinct ops (graph op and slot, or eager op type) only one run holds, in that run's order, with lines."""
    run, keys = (c.run_b, c.keys_b) if which == "b" else (c.run_a, c.keys_a)
    rows = c.traces.only_b if which == "b" else c.traces.only_a
    execs = c.execs.only_b if which == "b" else c.execs.only_a
    names = c.exec_names_b if which == "b" else c.exec_names_a
    listed: list[tuple[float, Side]] = []
    _keys, first = np.unique(keys.key[rows], return_index=True)
    for row in np.sort(rows[first])[:limit].tolist():
        listed.append((float(keys.wall[row]), sides.graph_side(run, row, keys.occurrence_of(row))))
    walls = np.asarray(run.execution_arrays()["wall_time"], np.float64)
    seen: set[str] = set()
    for index in execs.tolist():
        if names[index] not in seen and len(seen) < limit:
            seen.add(names[index])
            listed.append((float(walls[index]), sides.eager_side(run, index, _exec_occurrence(names, index))))
    listed.sort(key=lambda item: item[0])
    return [side for _wall, side in listed[:limit]]


def metric_of_eager(c: Comparison, pos: int) -> Metric | None:
    return execution_metric(c.run_a, c.run_b, int(c.execs.a[pos]), int(c.execs.b[pos]), c.tol)
