"""What the data carried (wire.ts RootCauseData): the batch an input pipeline handed out with the first NaN/∞ in it,
where in it (FULL_TENSOR: the positions; the health modes: the counts), and the user's line that built the dataset.

Three ways the data shows up as the root cause:

- an iterator op (`IteratorGetNext`, ...) ran eagerly (`for batch in dataset`) or inside a tf.function (Keras 3's
  `multi_step_on_iterator`): the batch is that op's k-th run;
- an op of a tf.data function (`Dataset_map_grab_batch`'s input `args_1`: the whole array `fit(x, y)` was given,
  or its `GatherV2` of one batch) was the first non-finite: the batch is then the first non-finite output of an
  iterator op after it;
- (links.py) an input of a nested tf.function (`one_step_on_data`) is followed to its caller's iterator output of the
  same step.

The line that built the dataset: the iterator's tensor is followed back through the eager `MakeIterator(dataset,
iterator)` and each dataset op's first input to the first dataset op of the pipeline (`from_tensor_slices`, or the
`RangeDataset` Keras makes inside `fit`); its creation line is where the data came in.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypedDict

import numpy as np

from tensorboard_plugin_dbg.analysis import links, tensor_stats
from tensorboard_plugin_dbg.analysis.classify import eager_producer
from tensorboard_plugin_dbg.analysis.columns import RunColumns, csr_items
from tensorboard_plugin_dbg.analysis.health import describe_output
from tensorboard_plugin_dbg.analysis.producer_inputs import Source
from tensorboard_plugin_dbg.analysis.user_lines import user_frame
from tensorboard_plugin_dbg.index.protocol import RunQueries
from tensorboard_plugin_dbg.reader import tensor_content
from tensorboard_plugin_dbg.wire import types as wire

DATA_OPS = links.DATA_OPS
_POSITIONS = 16  # non-finite positions named for a data batch
_DATA_GRAPH = "Dataset_"  # TensorFlow's name prefix of a tf.data function's graph


class PipelineSource(TypedDict):
    """The dataset op a batch came from (wire.ts RootCauseData: source_op, user_frame, source_line)."""

    source_op: str | None
    user_frame: wire.StackFrame | None
    source_line: str | None


def graph_data(
    run: RunQueries, cols: RunColumns, index: int, op_type: str, run_number: int, carried_in: bool = False
) -> wire.RootCauseData | None:
    """The data of graph trace `index` when it is an iterator op's output or an op of a tf.data function; else
    None. `carried_in`: an input of the op was non-finite or unknown (the data may have come in with the NaN); else
    the op of a tf.data function made it from finite inputs (born in the pipeline)."""
    trace = run.graph_execution(index, max_elements=0)
    if op_type in DATA_OPS:
        data = batch("graph_execution", run, index, run_number, None, trace["health"])
        data.update(_graph_pipeline_source(run, cols, trace["graph_id"], trace["op_name"], index))
        return data
    graph = _graph_name(run, trace["graph_id"])
    if not graph.startswith(_DATA_GRAPH):
        return None
    # Born inside the pipeline (a map function's division): the producer's line is the fix; the batch the iterator
    # handed out with it and the line that built the dataset are context.
    whole = _positions(run, "graph_execution", index, None)
    given = f"in the pipeline, {trace['op_name']} ({op_type}) of {graph} held " + _spots(whole, trace["health"])
    carried = _carried(run, cols, index)
    if carried is None:  # no iterator output after it held the NaN: which batch is not known
        return {"batch": None, "positions": None, "note": given, **_NONE, "born_in_pipeline": not carried_in}
    carried["note"] += f"; {given}"
    carried["born_in_pipeline"] = not carried_in
    return carried


_ROWS = 1 << 16  # trace rows scanned per step by fed_finite (the column may be the index's, read in blocks)


def fed_finite(run: RunQueries, cols: RunColumns, index: int) -> bool:
    """Whether graph trace `index`'s op is in a tf.data function whose inputs (its Placeholders: what the pipeline
    hands it) were traced, and finite in every trace of the run. Then no NaN/∞ came in with the data: one inside the
    function was born there (at this op or an op it read), whichever trace of an ambiguous input it read."""
    op = int(cols.trace_op[index])
    graphs, callers = cols.op_graph, cols.op_from_caller
    n = min(len(graphs), len(callers))
    graph_id = run.graph_execution(index, max_elements=0)["graph_id"]
    if op < 0 or op >= n or not _graph_name(run, graph_id).startswith(_DATA_GRAPH):
        return False
    _owner, inputs = csr_items(
        cols.op_output_ptr, cols.op_output_tensor, np.flatnonzero(callers[:n] & (graphs[:n] == graphs[op]))
    )
    traced = False
    for lo in range(0, len(cols.trace_nonfinite), _ROWS):
        mine = np.isin(np.asarray(cols.trace_tensor[lo : lo + _ROWS]), inputs)
        flags = np.asarray(cols.trace_nonfinite[lo : lo + _ROWS])[mine]
        if np.any(flags != 0):
            return False
        traced = traced or bool(len(flags))
    return traced


def _carried(run: RunQueries, cols: RunColumns, index: int) -> wire.RootCauseData | None:
    """The batch that carried trace `index`'s NaN out of the pipeline: the first non-finite iterator output after
    it, traced inside a tf.function (Keras's `fit`) or run eagerly (`for batch in dataset`)."""
    carried = _first_batch_after(run, cols, index)
    if carried is not None:
        row, k = carried
        op = run.graph_execution(row, max_elements=0)
        data = batch("graph_execution", run, row, k, None, op["health"])
        data.update(_graph_pipeline_source(run, cols, op["graph_id"], op["op_name"], row))
        return data
    eager = _first_eager_batch_after(run, cols, float(cols.trace_wall[index]))
    if eager is None:
        return None
    at, k = eager
    slot = next((i for i, f in enumerate(cols.exec_io(at)[2]) if f == 1), 0)
    outputs = run.execution(at, max_elements=0).get("outputs") or []
    health: wire.TensorHealth = outputs[slot] if slot < len(outputs) else {"mode": "UNKNOWN", "reason": "no output"}
    data = batch("execution", run, at, k, slot, health)
    data.update(pipeline_source(run, cols, cols.exec_io(at)[0][:1], at))
    return data


def _first_eager_batch_after(run: RunQueries, cols: RunColumns, wall: float) -> tuple[int, int] | None:
    """(execution, its op's run number) of the first eager iterator op run at or after `wall` with a non-finite
    output (an execution is recorded when its op returns, after the map function it ran)."""
    codes = [i for i, t in enumerate(run.exec_op_types) if t in DATA_OPS]
    types = np.asarray(cols.exec_op_type)
    if not codes or len(types) != len(cols.exec_wall):
        return None
    hits = np.flatnonzero(np.isin(types, codes) & (np.asarray(cols.exec_nonfinite) == 1) & (cols.exec_wall >= wall))
    if not len(hits):
        return None
    at = int(hits[0])
    return at, int(np.count_nonzero(types[:at] == types[at]))


def batch(
    source: Source, run: RunQueries, index: int, k: int, slot: int | None, health: wire.TensorHealth
) -> wire.RootCauseData:
    """The k-th batch an iterator op handed out (its trace or execution `index`): with FULL_TENSOR where its
    non-finite elements are (the Tensor Values view's whole-tensor pass), else the counts its mode records."""
    found = _positions(run, source, index, slot)
    positions = found[1][:_POSITIONS] if found is not None else None
    return {
        "batch": k,
        "positions": positions,
        "note": _spots(found, health, with_positions=False),  # the positions are a field of their own
        "source_op": None,
        "user_frame": None,
        "source_line": None,
        "born_in_pipeline": False,
    }


def _positions(run: RunQueries, source: Source, index: int, slot: int | None) -> tuple[int, list[list[float]]] | None:
    """(how many non-finite elements, their first positions) of a FULL_TENSOR record; None without values."""
    try:
        record = run.tensor_record("graph" if source == "graph_execution" else "eager", index, slot)
        nonfinite = tensor_stats.cached(run, record)["nonfinite"] if record.location is not None else None
    except (LookupError, OSError, tensor_content.ContentError):  # the value is gone: say what the mode records
        nonfinite = None
    return (int(nonfinite["total"]), nonfinite["positions"][:_POSITIONS]) if nonfinite is not None else None


def _spots(found: tuple[int, list[list[float]]] | None, health: wire.TensorHealth, with_positions: bool = True) -> str:
    """How many non-finite elements (and where, with FULL_TENSOR), or the counts the health modes record."""
    if found is not None:
        where = ", ".join(str(tuple(int(x) for x in pos)) for pos in found[1][:4]) if with_positions else ""
        return f"{found[0]:,} non-finite element(s)" + (f" (at {where})" if where else "")
    counts = describe_output(health) if health.get("mode") in ("FULL_HEALTH", "CONCISE_HEALTH") else ""
    where = "; which elements: recorded only with tensor_debug_mode='FULL_TENSOR'"
    return f"{counts}{where}" if counts else "Values are recorded only with tensor_debug_mode='FULL_TENSOR'."


def _first_batch_after(run: RunQueries, cols: RunColumns, index: int) -> tuple[int, int] | None:
    """(trace row, its op's run number) of the first non-finite iterator output traced after row `index`."""
    kinds = run.trace_arrays()["kind"]
    rows = np.flatnonzero(np.asarray(cols.trace_nonfinite[index:]) == 1)[:4096] + index
    for row in rows.tolist():
        graph_id, op_name, _slot, _mode, _device = run.kind_info(int(kinds[row]))
        entry = run.op_entry(graph_id, op_name)
        if entry is not None and entry.op_type in DATA_OPS:
            same = np.asarray(cols.trace_tensor[np.arange(row)]) == cols.trace_tensor[row]
            return row, int(np.count_nonzero(same))
    return None


def _graph_pipeline_source(run: RunQueries, cols: RunColumns, graph_id: str, op_name: str, row: int) -> PipelineSource:
    """The pipeline source of an iterator op inside a tf.function: its iterator input is a function input, which
    the eager call passed in (links.py); from that tensor on, as for an eager iterator op."""
    entry = run.op_entry(graph_id, op_name)
    if entry is None or not entry.inputs:
        return _NONE
    link = links.function_input(run, cols, graph_id, entry.inputs[0][0], row)
    src, slot = link["execution_index"], link["output_slot"]
    if src is None or slot is None:
        return _NONE
    outs = cols.exec_io(src)[1]
    return pipeline_source(run, cols, outs[slot : slot + 1], len(cols.exec_op_type)) if slot < len(outs) else _NONE


_NONE: PipelineSource = {"source_op": None, "user_frame": None, "source_line": None}


def pipeline_source(run: RunQueries, cols: RunColumns, iterator: Sequence[int], before: int) -> PipelineSource:
    """The eager dataset op the iterator tensor (`iterator`: its id, or none) was made from, by walking the tensor
    ids back from the last `MakeIterator(dataset, iterator)` before execution `before`, then each dataset op's
    first input, to the first dataset op of the pipeline. Its creation line is where the data was made."""
    types = list(run.exec_op_types)
    if not iterator or "MakeIterator" not in types or len(cols.exec_op_type) < before:
        return _NONE
    make = np.flatnonzero(np.asarray(cols.exec_op_type[:before]) == types.index("MakeIterator"))
    made = (int(cols.exec_io(int(e))[0][0]) for e in make[::-1] if iterator[0] in cols.exec_io(int(e))[0][1:])
    dataset = next(made, None)
    source, at = None, int(make[-1]) if len(make) else before
    while dataset is not None:
        src, _slot = eager_producer(cols, dataset, at)
        if src < 0 or "Dataset" not in str(run.exec_op_types[int(cols.exec_op_type[src])]):
            break
        source, at = src, src
        ins_src = cols.exec_io(src)[0]
        dataset = int(ins_src[0]) if ins_src else None
    if source is None:
        return _NONE
    detail = run.execution(source, max_elements=0)
    frame, line = user_frame(run, detail.get("stack_frame_ids") or [])
    return {"source_op": detail["op_type"], "user_frame": frame, "source_line": line}


def _graph_name(run: RunQueries, graph_id: str) -> str:
    for gid, name, _outer in run.graph_entries():
        if gid == graph_id:
            return name
    return ""
