"""Root cause of a run's first NaN/∞: the first op whose inputs were finite and whose output was not.

`analyze(run)` returns wire.ts RootCauseResponse minus `run`. Every alert's role (producer / propagator, see
classify.py), for analysis/alerts.py to fill `Alert.role` and the `role=producer` filter:

    roles_by_row(classification(run), sources, rows)  -> int8 per alert: 0 unknown, 1 producer, 2 propagator
    role_name(classification(run), "graph_execution", trace_index)  -> "producer" | "propagator" | None

Only the first producer is explained in detail (its inputs' last health before it ran, its creation stack, the
innermost frame in user code and that line's text), through a handful of RunQueries calls: the whole-run work is
the vectorized classification. Both are cached per run version in the run's derived-value cache, so polling the
route costs nothing until the dump grows.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np

from tensorboard_plugin_dbg.analysis import index_columns
from tensorboard_plugin_dbg.analysis.classify import (
    PRODUCER,
    PROPAGATOR,
    Classification,
    classify,
    eager_producer,
)
from tensorboard_plugin_dbg.analysis.columns import RunColumns
from tensorboard_plugin_dbg.analysis.health import (
    describe,
    describe_output,
    values_known,
)
from tensorboard_plugin_dbg.index.protocol import NotFound, RunQueries

T = TypeVar("T")

_ROLE_NAMES = {PRODUCER: "producer", PROPAGATOR: "propagator"}


def _cached(run: RunQueries, name: str, compute: Callable[[], T]) -> T:
    """`compute()`'s value for the run's current version, kept in the run's one derived-value cache
    (index/derived.py: one lock per run, the documented lock order). Concurrent requests right after a version
    change wait for one computation and reuse it (it is seconds and hundreds of MB at 10 M traces)."""
    return run.derived.get(name, run.version, compute)


def classification_if_ready(run: RunQueries) -> Classification | None:
    """The classification of the run's current version if it was already computed; never computes (for callers
    that must not wait for the whole-run analysis, e.g. an alert page while the dump is still being read)."""
    classified = run.derived.peek("classification", run.version)  # (columns, classification, lookup)
    return classified[1] if classified is not None else None


class _OnDemandLookup:
    """A lookup made when asked, so the cached analysis keeps no reference to the index's permutation."""

    def __init__(self, make):
        self.make = make

    def before(self, tensors, at):
        return self.make().before(tensors, at)


def _classified(run: RunQueries) -> tuple[RunColumns, Classification, Any]:
    def compute():
        cols = index_columns.gather(run)
        cls, _lookup = classify(cols)
        # the index's rows by kind, made again when asked: the cached value keeps no reference to the index's table
        return cols, cls, _OnDemandLookup(cols.make_lookup)  # gather() always sets it

    return _cached(run, "classification", compute)


def classification(run: RunQueries) -> Classification:
    """Roles of every trace and execution of `run` (cached per version)."""
    return _classified(run)[1]


def role_name(cls: Classification, source: str, index: int) -> str | None:
    roles = cls.trace_role if source == "graph_execution" else cls.exec_role
    return _ROLE_NAMES.get(int(roles[index])) if 0 <= index < len(roles) else None


def roles_by_row(cls: Any, src: Any, idx: Any) -> np.ndarray:
    """Role codes (0 unknown, 1 producer, 2 propagator) of the alerts named by (source 0 execution / 1 trace, row).

    Rows the classification has not seen yet (they arrived after it was computed) stay 0."""
    src, idx = np.asarray(src), np.asarray(idx, np.int64)
    roles = np.zeros(len(idx), np.int8)
    for code, table_roles in ((0, cls.exec_role), (1, cls.trace_role)):
        mask = (src == code) & (idx < len(table_roles))
        roles[mask] = table_roles[idx[mask]]
    return roles


def analyze(run: RunQueries) -> dict[str, Any]:
    """wire.ts RootCauseResponse minus `run`."""
    return _cached(run, "root_cause", lambda: _analyze(run))


def _analyze(run: RunQueries) -> dict[str, Any]:
    cols, cls, lookup = _classified(run)
    counts = {"producers": cls.producers, "propagators": cls.propagators}
    first = cls.first_producer(cols)
    if first is not None:
        source, index = first
        if source == "graph_execution":
            producer = _graph_producer(run, cols, lookup, index)
        else:
            producer = _eager_producer(run, cols, index)
        return {"status": "found", "message": _found_message(producer), "producer": producer, **counts}
    n_traces, n_execs = len(cols.trace_wall), len(cols.exec_wall)
    if counts["propagators"]:
        message = (
            f"{counts['propagators']:,} non-finite tensors, but every one had an input that was already "
            "non-finite: the first NaN/∞ came from before the earliest record kept (a circular buffer keeps "
            "only the last records) or from an untraced op, so its cause cannot be known."
        )
        return {"status": "unknown", "message": message, "producer": None, **counts}
    if n_traces + n_execs == 0:
        message = (
            "No executions or graph execution traces recorded (yet), so whether a tensor went non-finite "
            "cannot be known. With a circular buffer (the default) they reach disk only when the program "
            "exits."
        )
        return {"status": "unknown", "message": message, "producer": None, **counts}
    if not cls.any_finiteness_info:
        modes = ", ".join(m for m in run.info().get("debug_modes", []) if m != "UNSPECIFIED") or "this"
        message = (
            f"This run was dumped in {modes} mode, which records no NaN/∞ information: whether a tensor went "
            "non-finite cannot be known. Re-run with tensor_debug_mode='FULL_HEALTH'."
        )
        return {"status": "unknown", "message": message, "producer": None, **counts}
    message = f"No NaN or ∞ in {n_traces:,} graph execution traces and {n_execs:,} executions."
    return {"status": "clean", "message": message, "producer": None, **counts}


# --- the producer in detail ------------------------------------------------------------------------------------


def _graph_producer(run: RunQueries, cols: RunColumns, lookup: Any, index: int) -> dict[str, Any]:
    row = run.graph_execution(index, max_elements=0)
    op, found = _graph_inputs(run, cols, lookup, index, row)
    return _finish(
        run,
        "graph_execution",
        index,
        row["op_name"],
        row.get("op_type") or op["op_type"],
        row["graph_id"],
        row["health"],
        [entry for entry, _prior in found],
        op["stack_frame_ids"],
        row["wall_time"],
    )


def _graph_inputs(
    run: RunQueries, cols: RunColumns, lookup: Any, index: int, row: dict[str, Any]
) -> tuple[dict[str, Any], list[tuple[dict[str, Any], int]]]:
    """(the op, [(wire.ts RootCauseInput, its latest trace before `index` or -1)]) of graph trace `index`."""
    try:
        op = run.op(row["graph_id"], row["op_name"], near=index)
    except NotFound:  # the graphs file lost this op (damaged or cut short): still name the trace, without inputs
        op = {"inputs": [], "op_type": "", "stack_frame_ids": []}
    tensors = cols.op_input_tensor[
        cols.op_input_ptr[cols.trace_op[index]] : cols.op_input_ptr[cols.trace_op[index] + 1]
    ]
    prior = lookup.before(np.asarray(tensors, np.int64), np.full(len(tensors), index, np.int64))
    inputs = []
    for inp, p in zip(op["inputs"], prior.tolist()):
        name = f"{inp['op_name']}:{inp['output_slot']}"
        op_type = (inp.get("op") or {}).get("op_type")
        entry: dict[str, Any] = {
            "slot": inp["slot"],
            "op_name": inp["op_name"],
            "output_slot": inp["output_slot"],
            "op_type": op_type,
            "traced": p >= 0,
            "health": None,
            "graph_execution_index": None,
        }
        if p >= 0:
            entry["health"] = run.graph_execution(int(p), max_elements=0)["health"]
            entry["graph_execution_index"] = int(p)
            entry["description"] = f"{name} — {describe(entry['health'])}"
        elif inp["traces"]["count"]:
            entry["description"] = f"{name} — no trace of it before this op ran, so its health cannot be known"
        elif op_type == "Placeholder":
            entry["description"] = (
                f"{name} — a function input, which TensorFlow does not trace: its health cannot be known"
            )
        else:
            entry["description"] = (
                f"{name} — not traced by TensorFlow (non-float tensors and gradient graphs are "
                "not instrumented): its health cannot be known"
            )
        inputs.append((entry, int(p)))
    return op, inputs


def _eager_producer(run: RunQueries, cols: RunColumns, index: int) -> dict[str, Any]:
    detail = run.execution(index, max_elements=0)
    outputs = detail.get("outputs") or []
    flags = cols.exec_io(index)[2]
    slot = next((i for i, f in enumerate(flags) if f == 1), 0)
    inputs = [entry for entry, _src, _slot in _eager_inputs(run, cols, index, detail)]
    health = outputs[slot] if slot < len(outputs) else {"mode": "UNKNOWN", "reason": "no output record"}
    return _finish(
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
    )


def _eager_inputs(
    run: RunQueries, cols: RunColumns, index: int, detail: dict[str, Any]
) -> list[tuple[dict[str, Any], int, int]]:
    """[(wire.ts RootCauseInput, the execution that output it or -1, its output slot)] of execution `index`."""
    inputs = []
    for in_slot, tensor_id in enumerate(detail["input_tensor_ids"]):
        src, out_slot = eager_producer(cols, int(tensor_id), index)
        entry: dict[str, Any] = {
            "slot": in_slot,
            "op_name": f"tensor {tensor_id}",
            "output_slot": max(out_slot, 0),
            "op_type": None,
            "traced": False,
            "health": None,
            "graph_execution_index": None,
        }
        if src >= 0:
            src_detail = run.execution(src, max_elements=0)
            src_outputs = src_detail.get("outputs") or []
            entry.update(
                op_name=f"{src_detail['op_type']} (execution #{src})",
                op_type=src_detail["op_type"],
                traced=out_slot < len(src_outputs),
            )
            if entry["traced"]:
                entry["health"] = src_outputs[out_slot]
                entry["description"] = (
                    f"{src_detail['op_type']}:{out_slot} (execution #{src}) — {describe(entry['health'])}"
                )
            else:
                entry["description"] = f"{src_detail['op_type']}:{out_slot} (execution #{src}) — not instrumented"
        else:
            entry["description"] = (
                f"eager tensor {tensor_id} — not made by a recorded execution (a constant, or "
                "made before dumping started): its health cannot be known"
            )
        inputs.append((entry, src, out_slot))
    return inputs


def input_sources(run: RunQueries, source: str, index: int) -> list[dict[str, Any]]:
    """Each data input of graph trace (`source` "graph_execution") or execution `index`: {slot, name, source,
    index, output (where its latest value before `index` was recorded; index None when nowhere), health,
    description}. The same lookups as the root cause's inputs (the classification is cached per version)."""
    cols, _cls, lookup = _classified(run)
    out = []
    if source == "graph_execution":
        for entry, prior in _graph_inputs(run, cols, lookup, index, run.graph_execution(index, max_elements=0))[1]:
            found = prior >= 0
            out.append(
                {
                    **_input_common(entry),
                    "name": f"{entry['op_name']}:{entry['output_slot']}",
                    "source": "graph_execution",
                    "index": prior if found else None,
                    "output": entry["output_slot"] if found else None,
                }
            )
        return out
    for entry, src, out_slot in _eager_inputs(run, cols, index, run.execution(index, max_elements=0)):
        found = src >= 0 and entry["traced"]
        name = f"{entry['op_type']}:{out_slot} (execution #{src})" if src >= 0 else entry["op_name"]
        out.append(
            {
                **_input_common(entry),
                "name": name,
                "source": "execution",
                "index": src if found else None,
                "output": out_slot if found else None,
            }
        )
    return out


def _input_common(entry: dict[str, Any]) -> dict[str, Any]:
    return {"slot": entry["slot"], "health": entry["health"], "description": entry["description"]}


def _finish(
    run: RunQueries,
    source: str,
    index: int,
    op_name: str | None,
    op_type: str,
    graph_id: str | None,
    health: dict[str, Any],
    inputs: list[dict[str, Any]],
    frame_ids: list[str],
    wall_time: float,
) -> dict[str, Any]:
    frame_ids = list(frame_ids)
    user_frame, line = _user_frame(run, frame_ids)
    known = all(i["traced"] and values_known(i["health"]) for i in inputs)
    alert = _find_alert(run, source, index, wall_time)
    return {
        "alert": alert,
        "op_name": op_name,
        "op_type": op_type,
        "graph_id": graph_id,
        "output_health": health,
        "inputs": inputs,
        "inputs_known": known,
        "stack_frame_ids": frame_ids,
        "user_frame": user_frame,
        "source_line": line,
    }


def _find_alert(run: RunQueries, source: str, index: int, wall_time: float, scan: int = 20_000) -> dict[str, Any]:
    """The Alert of this tensor, role "producer", at its position in the run's alert list. The first producer is
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
    return {**alert, "role": "producer"}


def _user_frame(run, frame_ids: list[str]) -> tuple[dict[str, Any] | None, str | None]:
    """The innermost frame in user code (frames come outermost first) and the text of its line."""
    if not frame_ids:
        return None, None
    try:
        frames = run.stack_frames(frame_ids)["frames"]
    except LookupError:
        return None, None
    for frame in reversed(frames):
        if frame.get("is_user"):  # index/frames.py: the one rule of what is user code
            return frame, _line_text(run, frame)
    return None, None


def _line_text(run, frame: dict[str, Any]) -> str | None:
    if frame.get("path") is None or frame.get("source_index", -1) < 0:
        return None
    try:
        lines = run.source_file(int(frame["source_index"]), int(frame["line"]), int(frame["line"]))["lines"]
    except LookupError:
        return None
    return lines[0] if lines else None


def _found_message(p: dict[str, Any]) -> str:
    what = f"{p['op_type']} op '{p['op_name']}'" if p["op_name"] else f"eager {p['op_type']}"
    text = f"The first non-finite tensor came from {what}: {describe_output(p['output_health'])}."
    if p["inputs"]:
        if p["inputs_known"]:
            text += " Its inputs were finite: " + "; ".join(i["description"] for i in p["inputs"]) + "."
        else:
            mode = (p["output_health"] or {}).get("mode")
            if mode == "CURT_HEALTH":
                text += (
                    " Its inputs held no NaN or ∞, but CURT_HEALTH records nothing else, so the inputs' health "
                    "(zeros, negatives, sizes) cannot be known; re-run with tensor_debug_mode='FULL_HEALTH'."
                )
            else:
                text += (
                    " Its inputs' health cannot be fully known: "
                    + "; ".join(i["description"] for i in p["inputs"])
                    + "."
                )
    frame = p["user_frame"]
    if frame:
        code = f": {p['source_line'].strip()}" if p["source_line"] else ""
        text += f" Created at {frame.get('path') or '?'}:{frame['line']}{code}"
    else:
        text += " No frame of its creation stack is in user code."
    return text
