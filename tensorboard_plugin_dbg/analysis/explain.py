"""The root cause in words: what the analysis skipped on its way (contained values) and the one message that the
route, the dashboard's card and the report all show (analysis/root_cause.py assembles it)."""

from __future__ import annotations

import numpy as np

from tensorboard_plugin_dbg.analysis import containment, producer
from tensorboard_plugin_dbg.analysis.classify import Classification
from tensorboard_plugin_dbg.analysis.columns import RunColumns, csr_items
from tensorboard_plugin_dbg.analysis.health import describe_output
from tensorboard_plugin_dbg.index.protocol import RunQueries
from tensorboard_plugin_dbg.wire import types as wire

_ORIGINS = 3  # contained sources named
_PATH_OPS = 20_000  # ops walked to tell whether a contained value flows into the root cause


def _where(frame: wire.StackFrame | None) -> str:
    if not frame:
        return ""
    return f" at {(frame.get('path') or '?').rsplit('/', 1)[-1]}:{frame['line']}"


def skipped(
    run: RunQueries,
    cols: RunColumns,
    cls: Classification,
    found: wire.RootCauseProducerBody,
    source: str,
    index: int,
) -> list[wire.RootCauseSkip]:
    """wire.ts RootCauseSkip list: the sources of the contained non-finite values seen before the root cause (the
    ops whose inputs were not contained themselves: the mask's -inf constant, not the ops it flowed through)."""
    c = cls.contained
    if c is None or not len(c.rows):
        return []
    end = (
        index if source == "graph_execution" else int(np.searchsorted(cols.trace_wall, cols.exec_wall[index], "right"))
    )
    rows = c.rows[c.rows < end]
    if not len(rows):
        return []
    ops = np.asarray(cols.trace_op[rows], np.int64)
    held = set(np.asarray(cols.trace_tensor[rows], np.int64).tolist())
    target = int(cols.trace_op[index]) if source == "graph_execution" else -1
    out: list[wire.RootCauseSkip] = []
    for code in dict.fromkeys(ops.tolist()):
        ins = cols.op_input_tensor[cols.op_input_ptr[code] : cols.op_input_ptr[code + 1]] if code >= 0 else np.zeros(0)
        if any(int(t) in held for t in ins):
            continue  # it only passed a contained value on
        linked = target >= 0 and data_path(cols, code, target)
        out.append(_skip(run, found, int(rows[ops == code][0]), int(np.count_nonzero(ops == code)), linked))
        if len(out) == _ORIGINS:
            break
    return out


def data_path(cols: RunColumns, start: int, target: int, limit: int = _PATH_OPS) -> bool:
    """Whether op `target` reads, directly or through other ops, a traced output of op `start` (op codes; a walk
    over at most `limit` ops along the graph's data edges)."""
    cons_ptr, cons_ops = containment.consumers(cols)
    seen, frontier = {start}, [start]
    while frontier and len(seen) < limit:
        _owner, outs = csr_items(cols.op_output_ptr, cols.op_output_tensor, np.asarray(frontier, np.int64))
        _owner, readers = csr_items(cons_ptr, cons_ops, outs)
        frontier = [op for op in dict.fromkeys(np.asarray(readers).tolist()) if op not in seen]
        if target in frontier:
            return True
        seen.update(frontier)
    return False


def ordinal(count: float) -> str:
    """1 -> "1st", 2 -> "2nd", 11 -> "11th": the op's n-th execution (TensorBoard's "run" is the folder)."""
    n = int(count)
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n:,}{suffix}"


def _skip(
    run: RunQueries, found: wire.RootCauseProducerBody, row: int, runs: int, linked: bool = True
) -> wire.RootCauseSkip:
    """`linked`: a data path joins the skipped op to the root cause, so "until X turned it into a NaN" is true."""
    trace = run.graph_execution(row, max_elements=0)
    entry = run.op_entry(trace["graph_id"], trace["op_name"])
    frame, line = producer.user_frame(run, list(entry.stack_frame_ids) if entry else [])
    what = describe_output(trace["health"])
    by = found["op_name"] or found["op_type"]
    text = (
        f"the {what} of {trace['op_name']} ({trace['op_type']}){_where(frame)} was absorbed by the ops that read it "
        f"in {runs:,} trace(s) before (contained, so not the cause)"  # a graph op's k-th run: its k-th trace
    )
    if linked:
        text += f", until {by} turned it into a NaN/∞ that escaped at its {ordinal(found['run_number'] + 1)} trace"
    elif found.get("data"):  # tf.data hands a batch from one function to the next with no graph edge between
        text += f"; no graph edge joins it to {by}, but the input pipeline hands data across its functions"
    else:
        text += f"; it does not flow into {by}"
    return {
        "op_name": trace["op_name"],
        "op_type": trace["op_type"] or "",  # an op the graphs file lost: "" (wire.ts: a string), as an Alert's
        "graph_execution_index": row,
        "runs": runs,
        "user_frame": frame,
        "source_line": line,
        "description": text,
    }


def found_message(
    p: wire.RootCauseProducerBody, skips: list[wire.RootCauseSkip], first_kept: bool, dropped: int
) -> str:
    what = f"{p['op_type']} op '{p['op_name']}'" if p["op_name"] else f"eager {p['op_type']}"
    text = f"The first non-finite tensor came from {what}: {describe_output(p['output_health'])}."
    fwd = p.get("forward")
    if fwd:
        code = f" ({fwd['source_line'].strip()})" if fwd["source_line"] else ""
        text += (
            f" It is the gradient of {fwd['op_type']} op '{fwd['op_name']}'{_where(fwd['user_frame'])}{code}: the "
            f"NaN/∞ was born in the backward pass, during the gradient computation{_where(p['user_frame'])}; the "
            "forward op's line is the one to fix (e.g. keep its input away from the point where its derivative "
            "is infinite)."
        )
        if fwd.get("why"):
            text += f" {fwd['why']}"
    data = p.get("data")
    if data:
        text += _data_sentence(data)
    if p.get("overflow"):
        text += f" This is an {p['overflow']}."
    if not data or data.get("born_in_pipeline"):  # an iterator's only input is the iterator itself
        text += _inputs_sentence(p)
    frame = p["user_frame"]
    if frame:
        code = f": {p['source_line'].strip()}" if p["source_line"] else ""
        text += f" Created at {frame.get('path') or '?'}:{frame['line']}{code}"
    else:
        text += " No frame of its creation stack is in user code."
    for skip in skips:
        text += f" Skipped: {skip['description']}."
    if first_kept:
        lost = f" ({dropped:,} tf.function call(s) kept without their traces)" if dropped else ""
        text += (
            f" A circular buffer dropped earlier records{lost}: this is the first non-finite tensor that was kept; "
            "an earlier one may be gone. Re-run with circular_buffer_size=-1 to keep every record."
        )
    return text


def _data_sentence(data: wire.RootCauseData) -> str:
    """The batch that carried the NaN and where the pipeline was built: the line to fix when the data came in with
    the NaN; context when the NaN was born inside the pipeline (the producer's own line is the fix then)."""
    built = _where(data["user_frame"]) if data["source_op"] else ""
    batch = f"batch {data['batch']}" if data["batch"] is not None else "a batch"  # from 0, as everywhere
    if data.get("born_in_pipeline"):
        text = f" It was born inside the input pipeline and reached the model in {batch}"
        if data["source_op"]:
            text += f" (the dataset made by {data['source_op']}{built} is context: the line to fix is the op's)"
        text += "."
    else:
        made = f", made by {data['source_op']}{built}" if data["source_op"] else ""
        text = f" The data carried it: {batch} from the input pipeline{made}."
    if data["positions"]:
        return text + f" {data['note']}, at " + ", ".join(str(tuple(pos)) for pos in data["positions"]) + "."
    return text + f" {data['note']}" + ("" if data["note"].endswith(".") else ".")


def _inputs_sentence(p: wire.RootCauseProducerBody) -> str:
    if not p["inputs"]:
        return ""
    described = "; ".join(i["description"] for i in p["inputs"])
    if p["inputs_known"] and any(i.get("expected") for i in p["inputs"]):
        return f" Its inputs were finite or non-finite as in its earlier executions, which it absorbed: {described}."
    if p["inputs_known"]:
        return f" Its inputs were finite: {described}."
    if p["output_health"]["mode"] == "CURT_HEALTH":
        return (
            " Its inputs held no NaN or ∞, but CURT_HEALTH records nothing else, so the inputs' health "
            "(zeros, negatives, sizes) cannot be known; re-run with tensor_debug_mode='FULL_HEALTH'."
        )
    return f" Its inputs' health cannot be fully known: {described}."
