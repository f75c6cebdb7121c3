"""Retracing: one Python function traced again and again. Every new trace of a tf.function is a new DebuggedGraph
(its own id, the function's name) and its eager calls name it `__inference_<fn>_<n>` (wave2-notes.md), so the traces
of a function are its graphs of that name. The finding gives how many, the user's call site (the stack of the first
call of the second trace) and what differed between traces where the dump shows it:

- the output shape or dtype of an op present in every trace (SHAPE or FULL_HEALTH records of each trace's first
  step): the input shapes/dtypes changed (pass an `input_signature`, or `reduce_retracing=True`);
- else, the same ops and shapes with a `Const` feeding them in each trace: a Python value (a non-tensor argument)
  is baked into each trace as a constant (pass it as a tensor);
- else: the dump does not show what differed (e.g. a Python object argument).

Not a retrace (#38 items 4 and 9): a tf.data function (`Dataset_map_lambda`, ...), traced once per `.map()` call
— eight of them may be four lambdas over two datasets —, and a function the user did not write (tf.data's,
tf.distribute's, Keras's own: `_next_func` of a MirroredStrategy's iterator), told by the frame of the traced
Python function in its ops' creation stacks, which lies outside user code, or by the frame that traced it, in
tf.data (data_functions.py: `_init_func`, whose body has no frame of its own) — unless the user's program calls it,
trace after trace (Keras's step remade by a compile() per `fit`): then the finding names the user's call
(internal_retrace.py).

Cost: per graph and per kind (a Python loop over graphs and kinds, never traces), plus one record read per kind of
the retraced functions.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from tensorboard_plugin_dbg.analysis import producer
from tensorboard_plugin_dbg.analysis.rules import config, data_functions, internal_retrace
from tensorboard_plugin_dbg.analysis.rules.findings import finding
from tensorboard_plugin_dbg.analysis.rules.tensor_rules import describe
from tensorboard_plugin_dbg.analysis.rules.tensor_scan import KindStats
from tensorboard_plugin_dbg.index.naming import function_name, is_function_call
from tensorboard_plugin_dbg.index.protocol import RunQueries
from tensorboard_plugin_dbg.reader.traces import Kind
from tensorboard_plugin_dbg.wire import types as wire

_SHOWN = 4  # traces whose differing value the evidence spells out
_DATA_FUNCTION = "Dataset_"  # a tf.data function's graph: one trace per `.map()`/`.filter()` call, by design
_NOTHING_SHOWN = "The dump does not show what differed"
_SIGNATURE = "Give the function an input_signature (or reduce_retracing=True) so one trace serves them."
_BAKED = (
    "a Python value (a non-tensor argument) is baked into each trace as a constant. Pass it as a tensor (tf.constant)."
)
# A library's function is not the user's to give a signature; its Consts may be its own: what the user can do
_OBJECT_ARGUMENT = " (e.g. a Python object argument)"
_LIBRARY_ADVICE = {
    _OBJECT_ARGUMENT: "",
    _SIGNATURE: "Pass it inputs of one shape and dtype (pad or batch them to a fixed size).",
    _BAKED: "a Python value your call passes may be baked into each trace: if so, pass it as a tensor (tf.constant).",
}
_OPS_LOOKED_AT = 16  # ops of a function whose creation stacks are read to find the traced Python function's frame


def _own_frame(run: RunQueries, name: str, graph_id: str) -> wire.StackFrame | None:
    """The frame of Python function `name` in the creation stacks of the graph's first ops (its `is_user` says
    whether the user wrote it: TensorFlow's, Keras's own functions are not); None when not found (then it is kept)."""
    for frames in data_functions.op_stacks(run, graph_id, _OPS_LOOKED_AT):
        own = [f for f in frames if f.get("function") == name]
        if own:
            return own[-1]
    return None


def find(
    run: RunQueries, stats: KindStats, kinds: list[Kind], types: list[str], t: config.Thresholds
) -> list[wire.AlertBody]:
    graphs_by_name: dict[str, list[str]] = defaultdict(list)
    for graph_id, name, _outer in run.graph_entries():
        # unnamed (the eager context) and TF's own halves of a function (__forward_/__backward_) are not user code
        if name and not name.startswith(("__", _DATA_FUNCTION)):
            graphs_by_name[name].append(graph_id)
    calls = _first_calls(run)
    kinds_by_graph: dict[str, list[int]] = defaultdict(list)
    for k, info in enumerate(kinds):
        kinds_by_graph[info[0]].append(k)
    out: list[wire.AlertBody] = []
    for name, graph_ids in graphs_by_name.items():
        traced = max(len(graph_ids), len(calls.get(name, ())))
        if traced < t.retrace_min or data_functions.traced_by_tf_data(run, graph_ids[0]):
            continue  # tf.data traces its own functions (a MultiDeviceIterator's _init_func): nothing the user can do
        own = _own_frame(run, name, graph_ids[0])
        differed = _what_differed(run, stats, kinds, types, graph_ids, kinds_by_graph)
        first_calls = calls.get(name, [])
        if own is not None and not own.get("is_user"):  # not the user's function: named by the user's call, if any
            out.extend(_library_finding(run, name, own, graph_ids, first_calls, differed))
            continue
        evidence = f"{name} was traced {traced} times. " + differed
        if first_calls:
            index = first_calls[min(1, len(first_calls) - 1)]
            detail = run.execution(index, max_elements=0)
            f = finding(
                config.RETRACING,
                "execution",
                index,
                detail["wall_time"],
                (graph_ids[1] if len(graph_ids) > 1 else graph_ids[0], None, detail["op_type"], 0),
                1,
                traced,
                evidence,
            )
            f["user_frame"], f["source_line"] = producer.user_frame(run, list(detail["stack_frame_ids"]))
        else:  # called from inside another function: no eager call; the second trace's first traced op
            ks = kinds_by_graph.get(graph_ids[1], []) if len(graph_ids) > 1 else []
            if not ks:
                continue
            row = int(stats.order[stats.starts[ks[0]]])
            op = (graph_ids[1], kinds[ks[0]][1], types[ks[0]], kinds[ks[0]][2])
            f = finding(
                config.RETRACING, "graph_execution", row, run.trace_arrays()["wall_time"][row], op, 1, traced, evidence
            )
        f["function"] = name
        f["graph_ids"] = graph_ids
        out.append(f)
    return out


def _library_finding(
    run: RunQueries, name: str, own: wire.StackFrame, graph_ids: list[str], first_calls: list[int], differed: str
) -> list[wire.AlertBody]:
    """A function the user did not write, retraced by the user's calls of it (internal_retrace.py); none otherwise."""
    site = internal_retrace.user_call(run, name, own, first_calls) if len(first_calls) == len(graph_ids) else None
    if site is None:
        return []
    index, frame, text, said = site
    for general, library in _LIBRARY_ADVICE.items():
        differed = differed.replace(general, library)
    evidence = f"{said} {differed}" + internal_retrace.remake_hint(own, differed.startswith(_NOTHING_SHOWN))
    detail = run.execution(index, max_elements=0)
    op = (graph_ids[min(1, len(graph_ids) - 1)], None, detail["op_type"], 0)
    f = finding(config.RETRACING, "execution", index, detail["wall_time"], op, 1, len(graph_ids), evidence)
    f["user_frame"], f["source_line"] = frame, text
    f["function"] = name
    f["graph_ids"] = graph_ids
    return [f]


def _first_calls(run: RunQueries) -> dict[str, list[int]]:
    """Function name -> the execution index of the first call of each of its traces (by `__inference_` op type)."""
    types = list(run.exec_op_types)
    codes = run.execution_arrays()["op_type"]
    out: dict[str, list[int]] = defaultdict(list)
    if not len(codes):
        return out
    uniq, first = np.unique(codes, return_index=True)
    for code, index in sorted(zip(uniq.tolist(), first.tolist()), key=lambda p: p[1]):
        op_type = types[code]
        if op_type.startswith("__inference_") and is_function_call(op_type):
            out[function_name(op_type)].append(index)
    return out


def _what_differed(
    run: RunQueries,
    stats: KindStats,
    kinds: list[Kind],
    types: list[str],
    graph_ids: list[str],
    kinds_by_graph: dict[str, list[int]],
) -> str:
    # the first step of each op (by name and slot) in each trace
    per_graph = []
    for g in graph_ids:
        per_graph.append({(kinds[k][1], kinds[k][2]): k for k in kinds_by_graph.get(g, [])})
    common = set(per_graph[0]).intersection(*per_graph[1:]) if per_graph else set()
    ops = sorted(common)
    if ops:
        firsts = np.array(
            [stats.order[stats.starts[per_graph[i][op]]] for op in ops for i in range(len(graph_ids))], np.int64
        )
        modes, vectors = run.trace_vectors(firsts)
        n = len(graph_ids)
        for j, op in enumerate(ops):
            shown = [describe(modes[j * n + i], vectors[j * n + i]) for i in range(n)]
            if "unknown" not in shown and len(set(shown)) > 1:
                seq = " -> ".join(shown[:_SHOWN]) + (" -> ..." if n > _SHOWN else "")
                return f"The input shapes/dtypes changed: op {op[0]} output {seq}. {_SIGNATURE}"
    consts = sorted({kinds[k][1] for k in kinds_by_graph.get(graph_ids[-1], []) if types[k] == "Const"})
    if consts:
        return f"Same ops and shapes in every trace, each with its own Const ({', '.join(consts[:3])}): {_BAKED}"
    return f"{_NOTHING_SHOWN} between the traces{_OBJECT_ARGUMENT}."
