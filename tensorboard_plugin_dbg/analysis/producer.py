"""The root cause's producer in detail (wire.ts RootCauseProducer): its inputs' health before it ran (a function
input's from what the caller passed in, links.py), the forward op of a gradient op (gradients.py), what the data
carried, a float16 overflow, and the user's lines — a handful of RunQueries calls for one tensor. Its inputs one
by one: producer_inputs.py. `user_frame` (user_lines.py) is re-exported here for its callers."""

from __future__ import annotations

from typing import Literal, cast

import numpy as np
import numpy.typing as npt

from tensorboard_plugin_dbg.analysis import data_batch, diverged, gradients, loop_iterations, loss_name, producer_inputs
from tensorboard_plugin_dbg.analysis.classify import expected_inputs, same_run_prior
from tensorboard_plugin_dbg.analysis.columns import RunColumns
from tensorboard_plugin_dbg.analysis.containment import Containment
from tensorboard_plugin_dbg.analysis.health import describe_output, is_nonfinite, values_known
from tensorboard_plugin_dbg.analysis.trace_lookup import Lookup
from tensorboard_plugin_dbg.analysis.user_lines import user_frame
from tensorboard_plugin_dbg.index.protocol import NotFound, RunQueries
from tensorboard_plugin_dbg.index.state import OpEntry
from tensorboard_plugin_dbg.wire import types as wire

_DTYPE_MAX = {"float16": "65504", "bfloat16": "3.39e38"}
Source = producer_inputs.Source


def graph_producer(
    run: RunQueries, cols: RunColumns, lookup: Lookup, index: int, contained: Containment | None
) -> wire.RootCauseProducerBody:
    row = run.graph_execution(index, max_elements=0)
    op_inputs: list[wire.OpInput] = []
    op_type, frame_ids = "", []
    try:
        op = run.op(row["graph_id"], row["op_name"], near=index)
        op_inputs, op_type, frame_ids = op["inputs"], op["op_type"], op["stack_frame_ids"]
    except NotFound:  # the graphs file lost this op (damaged or cut short): still name the trace, without inputs
        pass
    tensors = producer_inputs.input_tensors(cols, index)
    prior = same_run_prior(cols, lookup, index, tensors)
    at = np.full(len(tensors), index, np.int64)
    expected = expected_inputs(contained, tensors, prior, at) if contained is not None else np.zeros(len(prior), bool)
    inputs = [
        producer_inputs.graph_input(run, cols, row, index, inp, int(p), bool(x), int(t))
        for inp, p, x, t in zip(op_inputs, prior.tolist(), expected.tolist(), tensors.tolist())
    ]
    out = finish(
        run,
        "graph_execution",
        index,
        row["op_name"],
        row.get("op_type") or op_type,
        row["graph_id"],
        row["health"],
        inputs,
        frame_ids,
        row["wall_time"],
        run_number := occurrence(cols.trace_tensor, index),
    )
    entry = run.op_entry(row["graph_id"], row["op_name"])
    if entry is not None:
        out["forward"] = _forward(run, cols, row["graph_id"], entry, contained)
    # Born here only if its inputs are known finite (not a gather of the array `fit` was given, NaN and all)
    born = out["inputs_known"] and not any(is_nonfinite(inp["health"]) for inp in inputs)
    if not born and not any(is_nonfinite(inp["health"]) for inp in inputs):  # an input's health not known (#39)
        born = data_batch.fed_finite(run, cols, index)  # a tf.data function fed only finite values: born inside
    out["data"] = data_batch.graph_data(run, cols, index, out["op_type"], run_number, not born)
    return out


def _forward(
    run: RunQueries, cols: RunColumns, graph_id: str, entry: OpEntry, contained: Containment | None
) -> wire.RootCauseForward | None:
    """The forward op of gradient op `entry` (gradients.py) with its line, and the tf.where trap said in one
    sentence when the forward op's own non-finite value was masked (contained) in the forward pass."""

    def masked_row(fwd: OpEntry) -> int:
        rows = np.asarray(run.op_trace_rows(graph_id, fwd.op_name), np.int64)
        rows = rows[rows < len(cols.trace_wall)]
        hit = rows[contained.contained(rows)] if contained is not None and len(rows) else rows[:0]
        return int(hit[0]) if len(hit) else -1

    forward = gradients.forward_op(run, graph_id, entry, lambda fwd: masked_row(fwd) >= 0)
    if forward is None:
        return None
    frame, line = user_frame(run, list(forward.stack_frame_ids))
    out: wire.RootCauseForward = {
        "op_name": forward.op_name,
        "op_type": forward.op_type,
        "user_frame": frame,
        "source_line": line,
    }
    row = masked_row(forward)
    if row >= 0:
        what = describe_output(run.graph_execution(row, max_elements=0)["health"])
        out["why"] = (
            f"The forward pass masked the {what} of {forward.op_type} op '{forward.op_name}' (a tf.where), but "
            f"the gradient flows through the masked branch too: the derivative of {forward.op_type} is infinite "
            "there and ∞ × 0 = NaN, so make the op's input safe before it (tf.where(z > 0, z, 1.0) inside it), "
            "not only its output."
        )
    return out


def eager_detail(run: RunQueries, cols: RunColumns, index: int) -> wire.RootCauseProducerBody:
    detail = run.execution(index, max_elements=0)
    outputs = detail.get("outputs") or []
    flags = cols.exec_io(index)[2]
    slot = next((i for i, f in enumerate(flags) if f == 1), 0)
    inputs = [
        producer_inputs.eager_input(run, cols, index, i, int(t)) for i, t in enumerate(detail["input_tensor_ids"])
    ]
    health: wire.TensorHealth = (
        outputs[slot] if slot < len(outputs) else {"mode": "UNKNOWN", "reason": "no output record"}
    )
    out = finish(
        run,
        "execution",
        index,
        None,
        detail["op_type"],
        detail.get("graph_id"),
        health,
        inputs,
        detail.get("stack_frame_ids") or [],
        detail["wall_time"],
        run_number := occurrence(cols.exec_op_type, index),
    )
    if detail["op_type"] in data_batch.DATA_OPS:
        data = data_batch.batch("execution", run, index, run_number, slot, health)
        data.update(data_batch.pipeline_source(run, cols, cols.exec_io(index)[0][:1], index))
        out["data"] = data
    return out


def finish(
    run: RunQueries,
    source: Source,
    index: int,
    op_name: str | None,
    op_type: str,
    graph_id: str | None,
    health: wire.TensorHealth,
    inputs: list[wire.RootCauseInput],
    frame_ids: list[str],
    wall_time: float,
    run_number: int,
) -> wire.RootCauseProducerBody:
    """The producer without the fields run_verdict.py adds (graph name, device); `run_number`: its op's earlier
    runs (0: its first)."""
    frame, line = user_frame(run, list(frame_ids))
    known = all(
        (i["traced"] and values_known(i["health"])) or (i.get("linked") and not i["traced"]) or i.get("expected")
        for i in inputs
    )
    role: Literal["producer", "unknown"] = (
        "unknown" if any(not i["traced"] and not i.get("linked") for i in inputs) else "producer"
    )
    out: wire.RootCauseProducerBody = {
        "alert": {**find_alert(run, source, index, wall_time), "role": role},
        "role": role,
        "op_name": op_name,
        "op_type": op_type,
        "graph_id": graph_id,
        "output_health": health,
        "inputs": inputs,
        "inputs_known": known,
        "stack_frame_ids": list(frame_ids),
        "user_frame": frame,
        "source_line": line,
        "forward": None,
        "data": None,
        "overflow": _overflow(health, inputs, known)
        or diverged.overflow(run, graph_id, op_type, health, inputs, known),
        "run_number": run_number,
    }
    loss = loss_name.which_loss(run, op_name, frame)
    if loss:
        out["loss"] = loss
    graph = source == "graph_execution"
    body = loop_iterations.untraced_body(run, graph_id, op_name, op_type, index) if graph else None
    if body:  # a JAX while loop's untraced iterations, or a shard_map's body, made it: said, not hidden
        out["untraced_body"] = body
    return out


def _overflow(health: wire.TensorHealth, inputs: list[wire.RootCauseInput], known: bool) -> str | None:
    """ "float16" when a half-precision op made ∞ (not NaN) from finite inputs: its range was exceeded."""
    dtype = health.get("dtype")
    if not isinstance(dtype, str) or dtype not in _DTYPE_MAX or not known or _count(health, "nan") > 0:
        return None
    if _count(health, "pos_inf") + _count(health, "neg_inf") == 0:
        return None
    return f"overflow of {dtype}'s range (its largest finite value is {_DTYPE_MAX[dtype]})"


def _count(health: wire.TensorHealth, key: str) -> float:
    # a count, or None/absent where the mode does not record it
    return cast(float, health.get(key) or 0)


def occurrence(codes: npt.NDArray[np.integer], index: int) -> int:
    """How many earlier rows share row `index`'s code (0: its first run)."""
    if index <= 0 or len(codes) <= index:
        return 0
    return int(np.count_nonzero(np.asarray(codes[np.arange(index)]) == codes[index]))


def find_alert(run: RunQueries, source: Source, index: int, wall_time: float, scan: int = 20_000) -> wire.Alert:
    """The Alert of this tensor at its position in the run's alert list. The first producer is
    nearly always among the first alerts (only a propagator can precede it, and that needs an earlier non-finite
    input), so a scan of the first ones suffices; past them (or while the list lags the classification) it is
    described at position -1 by the same builder."""
    src_code = 1 if source == "graph_execution" else 0
    table = run.alert_table()
    positions = np.arange(min(scan, len(table)))
    src, rows, walls = table.page(positions)
    hit = np.flatnonzero((src == src_code) & (rows == index))
    if len(hit):
        at = positions[hit[:1]]
        alert = run.alert_rows(at, src[hit[:1]], rows[hit[:1]], walls[hit[:1]])[0]
    else:
        one = np.ones(1, np.int64)
        alert = run.alert_rows(-one, one.astype(np.int8) * src_code, one * index, np.array([wall_time]))[0]
    return alert
