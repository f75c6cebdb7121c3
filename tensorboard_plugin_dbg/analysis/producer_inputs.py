"""Each data input of a tensor's op as the root cause sees it (wire.ts RootCauseInput): its health before the op
ran (a graph input's latest trace, a function input's from what the caller passed in: links.py; an eager input's
producing execution), and where that value was recorded (for the Tensor Values view's inputs side by side)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, TypedDict

import numpy as np
import numpy.typing as npt

from tensorboard_plugin_dbg.analysis import links, run_pairing
from tensorboard_plugin_dbg.analysis.classify import eager_producer, same_run_prior
from tensorboard_plugin_dbg.analysis.columns import RunColumns
from tensorboard_plugin_dbg.analysis.health import describe, is_nonfinite
from tensorboard_plugin_dbg.analysis.trace_lookup import Lookup
from tensorboard_plugin_dbg.index.protocol import NotFound, RunQueries
from tensorboard_plugin_dbg.wire import types as wire

Source = Literal["graph_execution", "execution"]


class InputSource(TypedDict):
    """One data input as the Tensor Values view's inputs list needs it (tensor_values.inputs makes the wire.ts
    TensorInput of it): where its latest value before the op ran was recorded (index None: nowhere)."""

    slot: float
    name: str
    health: wire.TensorHealth | None
    description: str
    source: Source
    index: int | None
    output: float | None


def input_tensors(cols: RunColumns, index: int) -> npt.NDArray[np.int64]:
    """The tensor ids of the data inputs of graph trace `index`'s op (none when its op is unknown)."""
    code = cols.trace_op[index]
    if code < 0:
        return np.zeros(0, np.int64)
    return np.asarray(cols.op_input_tensor[cols.op_input_ptr[code] : cols.op_input_ptr[code + 1]], np.int64)


def graph_input(
    run: RunQueries,
    cols: RunColumns,
    row: wire.GraphExecutionDetail,
    index: int,
    inp: wire.OpInput,
    p: int,
    expected: bool,
    tensor: int = -1,
) -> wire.RootCauseInput:
    """The input `inp` (tensor code `tensor`) of graph trace `index`'s op, `p` its trace that run read (-1: none)."""
    name = f"{inp['op_name']}:{inp['output_slot']}"
    summary = inp.get("op")
    op_type = summary.get("op_type") if summary else None
    entry: wire.RootCauseInput = {
        "slot": inp["slot"],
        "op_name": inp["op_name"],
        "output_slot": inp["output_slot"],
        "op_type": op_type,
        "traced": p >= 0,
        "health": None,
        "graph_execution_index": None,
        "execution_index": None,
        "description": "",  # each branch below says it
    }
    if p >= 0:
        entry["health"] = health = run.graph_execution(p, max_elements=0)["health"]
        entry["graph_execution_index"] = p
        entry["description"] = f"{name} — {describe(health)}"
        if expected:
            entry["expected"] = True
            entry["description"] += " (expected: the same non-finite input was absorbed in its earlier executions)"
    elif inp["traces"]["count"]:
        entry["description"] = f"{name} — {_read_unknown(run, cols, row, index, tensor)}"
    elif op_type == "Placeholder":
        link = links.function_input(run, cols, row["graph_id"], inp["op_name"], index)
        entry["execution_index"] = link["execution_index"]
        entry["graph_execution_index"] = link.get("graph_execution_index")
        if link["flag"] is not None and link["flag"] >= 0 and link["health"] is not None:
            entry["traced"], entry["health"] = True, link["health"]
        entry["linked"] = link["flag"] is not None
        entry["description"] = f"{name} — {link['why']}"
    else:
        why, harmless = untraced_reason(op_type, run.info()["framework"])
        entry["description"] = f"{name} — {why}"
        entry["linked"] = harmless
    return entry


_NAMED = 4  # candidate traces named when an overlapping run's input is ambiguous


def _read_unknown(run: RunQueries, cols: RunColumns, row: wire.GraphExecutionDetail, index: int, tensor: int) -> str:
    """Why a traced input has no trace this run read. Runs that overlapped (classify._same_run_inputs, run_pairing):
    its traces around this op's disagree in health, so which one it read is ambiguous; nothing was dropped, and the
    traces it could have read are named. Otherwise (no trace of it before this op at all, and none of this run
    after it): a circular buffer cut the start of the file."""
    rows = run_pairing.candidates(cols, index, int(cols.trace_tensor[index]), tensor) if tensor >= 0 else ()
    if len(rows) < 2:
        return (
            "no trace of it before this op ran (a circular buffer keeps only the last records), "
            "so its health cannot be known"
        )
    named = [f"#{r} ({_health_word(run.graph_execution(r, max_elements=0)['health'])})" for r in rows[:_NAMED]]
    which = ", ".join(named[:-1]) + f" or {named[-1]}" if len(rows) <= _NAMED else ", ".join(named) + " or another"
    return (
        f"ambiguous: runs of {row['graph_name'] or 'its function'} overlapped (calls run in parallel, as a tf.data "
        f"map's do) and their traces interleave, so which of its traces this op read cannot be told — graph "
        f"execution {which}; its health cannot be known"
    )


def _health_word(health: Mapping[str, Any] | None) -> str:
    """A trace's health in a word or two, for naming candidate traces: finite, or its non-finite kinds (NaN, +∞)."""
    bad = is_nonfinite(health)
    if health is None or bad is None:
        return "health not recorded"
    if not bad:
        return "finite"
    words = [w for key, w in (("nan", "NaN"), ("neg_inf", "−∞"), ("pos_inf", "+∞")) if health.get(key)]
    return ", ".join(words) or "NaN/∞"


# Op types TensorFlow's dump callback never instruments, whatever their dtype (TF's
# `op_callbacks_common.OP_CALLBACK_SKIP_OPS`, the graph-side ones): a float32 Identity is not traced either.
SKIPPED_BY_TF = frozenset(
    {"Enter", "Exit", "Identity", "If", "LoopCond", "Merge", "NextIteration", "StatelessIf",
     "StatefulPartitionedCall", "Switch", "While", "RemoteCall"}
)  # fmt: skip


def untraced_reason(op_type: str | None, framework: str = "tensorflow") -> tuple[str, bool]:
    """(why a graph input has no trace, whether that means it cannot be NaN/∞) for an input that is not a
    function input and was never traced, in the words of the framework that wrote the run."""
    if framework == "jax":
        # The JAX writer records every floating equation output, never a jaxpr's constvars (its `Const` ops).
        if op_type == "Const":
            return "not recorded: the JAX writer does not record a jitted function's constants (health unknown)", False
        return "not recorded by the JAX writer (not a floating-point tensor, so not NaN/∞)", True
    if op_type in SKIPPED_BY_TF:
        return f"not traced: TensorFlow does not instrument {op_type} ops, so its health cannot be known", False
    return "not traced by TensorFlow (not a floating-point tensor, so not NaN/∞)", True


def eager_input(run: RunQueries, cols: RunColumns, index: int, in_slot: int, tensor_id: int) -> wire.RootCauseInput:
    src, out_slot = eager_producer(cols, tensor_id, index)
    entry: wire.RootCauseInput = {
        "slot": in_slot,
        "op_name": f"tensor {tensor_id}",
        "output_slot": max(out_slot, 0),
        "op_type": None,
        "traced": False,
        "health": None,
        "graph_execution_index": None,
        "execution_index": None,
        "description": "",  # each branch below says it
    }
    if src < 0:
        entry["description"] = (
            f"eager tensor {tensor_id} — not made by a recorded execution (a constant, Python/numpy data, or "
            "made before dumping started): its health cannot be known"
        )
        return entry
    src_detail = run.execution(src, max_elements=0)
    src_outputs = src_detail.get("outputs") or []
    entry["op_name"] = f"{src_detail['op_type']} (execution #{src})"
    entry["op_type"] = src_detail["op_type"]
    entry["traced"] = out_slot < len(src_outputs)
    entry["execution_index"] = src
    where = f"{src_detail['op_type']}:{out_slot} (execution #{src})"
    if entry["traced"] and src_outputs[out_slot].get("mode") == "EMPTY":
        entry["traced"] = False
    if entry["traced"]:
        entry["health"] = health = src_outputs[out_slot]
        entry["description"] = f"{where} — {describe(health)}"
    else:
        entry["description"] = f"{where} — not instrumented (not a floating-point tensor, so not NaN/∞)"
        entry["linked"] = True
    return entry


def input_sources(run: RunQueries, cols: RunColumns, lookup: Lookup, source: Source, index: int) -> list[InputSource]:
    """Each data input of graph trace (`source` "graph_execution") or execution `index`, as the root cause sees it:
    {slot, name, health, description, and where its latest value before `index` was recorded: source, index,
    output (index None when nowhere)}. For the Tensor Values view's inputs side by side."""
    out: list[InputSource] = []
    where: tuple[Source, int | None, float | None]
    if source == "graph_execution":
        row = run.graph_execution(index, max_elements=0)
        try:
            op_inputs = run.op(row["graph_id"], row["op_name"], near=index)["inputs"]
        except NotFound:
            op_inputs = []
        tensors = input_tensors(cols, index)
        prior = same_run_prior(cols, lookup, index, tensors)
        for inp, p, t in zip(op_inputs, prior.tolist(), tensors.tolist()):
            entry = graph_input(run, cols, row, index, inp, int(p), False, int(t))
            where = ("graph_execution", int(p), entry["output_slot"]) if p >= 0 else (source, None, None)
            out.append(_input_source(entry, f"{entry['op_name']}:{entry['output_slot']}", *where))
        return out
    detail = run.execution(index, max_elements=0)
    for i, t in enumerate(detail["input_tensor_ids"]):
        entry = eager_input(run, cols, index, i, int(t))
        at = entry["execution_index"]
        found = at is not None and entry["traced"]
        where = ("execution", int(at), entry["output_slot"]) if at is not None and found else (source, None, None)
        name = f"{entry['op_type']}:{entry['output_slot']} (execution #{entry['execution_index']})" if found else None
        out.append(_input_source(entry, name or entry["op_name"], *where))
    return out


def _input_source(
    entry: wire.RootCauseInput, name: str, source: Source, index: int | None, output: float | None
) -> InputSource:
    return {
        "slot": entry["slot"],
        "name": name,
        "health": entry["health"],
        "description": entry["description"],
        "source": source,
        "index": index,
        "output": output,
    }
