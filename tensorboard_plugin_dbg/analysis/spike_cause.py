"""Where a loss spike came from, on the replay of a spike capsule (NanCapsule(spike=F)): a spike is finite, so the
NaN root cause has nothing to follow; this follows the magnitude instead.

On a FULL_TENSOR replay dump: start at the loss (the forward trace holding the replayed loss's value) and walk back,
op by op, into the input that carries the largest |x|, until either
- a function input that is one of the capsule's batch arrays: "the spike came with the batch: `y` ..." (its rows
  that stand out, else the rows that carry the loss, from the capsule's batch.npz and per-sample loss), or
- an op whose output's max |x| is at least the rule's factor above what its inputs' allow (an `exp` of a large
  activation, a division by a tiny value), or a value with no inputs (a constant, a variable read) that its
  consumer takes in at that magnitude: that op's line.
Anything else (the dump records no values, a step not followed) says what was seen, never a guess. The replay's root
cause (run_verdict.root_cause: report, the replay's report, the card) carries the sentence in its message.
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from tensorboard_plugin_dbg.analysis import capsule_inputs, capsule_rows, links, replicas, root_cause, user_lines
from tensorboard_plugin_dbg.index.protocol import NotFound, RunQueries
from tensorboard_plugin_dbg.reader import capsule_arrays, capsule_files, tensor_content
from tensorboard_plugin_dbg.reader.capsule_manifest import Manifest
from tensorboard_plugin_dbg.wire import types as wire

SPIKES = ("loss_spike", "grad_spike")
MAX_TRACES = 50_000  # a replay is one step; a dump bigger than this is not walked (said)
_MAX_HOPS = 500
_PRODUCT = {"Mul", "MatMul", "BatchMatMulV2", "BatchMatMul", "Conv2D", "Einsum"}  # |out| <= |a| |b| (x inner size)
_SUM = {"AddV2", "Add", "Sub", "AddN", "BiasAdd"}  # |out| <= sum of the inputs' |x|
_DIV = {"RealDiv", "Div", "DivNoNan", "FloorDiv"}  # |out| <= |a| / min |b|
_REDUCE_SUM = {"Sum"}  # |out| <= |x| x (elements summed into one)


@dataclass
class _Trace:
    """One graph execution trace; its values are read only when the walk asks (the cost is the walk's, not the
    dump's: a big model's FULL_TENSOR step is gigabytes)."""

    row: int
    graph_id: str
    op_name: str
    op_type: str
    loc: tensor_content.TensorLocation | None  # FULL_TENSOR values, where they lie

    @property
    def size(self) -> int:
        return self.loc.size if self.loc is not None else 0

    @property
    def shape(self) -> tuple[int, ...]:
        return self.loc.shape if self.loc is not None else ()

    @property
    def numeric(self) -> bool:
        return self.loc is not None and self.loc.storage is not None and np.dtype(self.loc.storage).kind in "fiu"

    @cached_property
    def _range(self) -> tuple[float, float] | None:
        """(min, max) over the finite values, or None (not recorded, not numeric, nothing finite)."""
        if self.loc is None or not self.numeric:
            return None
        summary = tensor_content.summarize(self.loc)
        lo, hi = summary.get("min"), summary.get("max")
        return (float(lo), float(hi)) if isinstance(lo, (int, float)) and isinstance(hi, (int, float)) else None

    @property
    def peak(self) -> float | None:
        """max |x| over the finite values; None: not recorded."""
        r = self._range
        return max(abs(r[0]), abs(r[1])) if r is not None else None

    @property
    def floor(self) -> float | None:
        """min |x| when every value has one sign (a divisor's smallest magnitude), else None."""
        r = self._range
        return min(abs(r[0]), abs(r[1])) if r is not None and r[0] * r[1] > 0 else None


def finding(run: RunQueries) -> str | None:
    """The spike's cause as one sentence, or None outside a spike capsule's replay."""
    folder = capsule_inputs.capsule_of(run)
    if folder is None:
        return None
    try:
        manifest = capsule_files.read_manifest(folder)
        trigger = manifest["trigger"]
        if trigger.get("kind") not in SPIKES:
            return None
        return _finding(run, folder, manifest)
    except (capsule_files.CapsuleError, OSError, KeyError, TypeError, ValueError) as e:
        return f"the spike's cause cannot be followed: the capsule cannot be read ({type(e).__name__}: {e})"


def _finding(run: RunQueries, folder: str, manifest: Manifest) -> str:
    trigger = manifest["trigger"]
    factor = _factor(manifest)
    if trigger["kind"] == "grad_spike":
        return "a gradient-norm spike: its cause is not followed yet (the gradients' values are in the replay's dump)"
    verdict = capsule_files.read_verdict(folder) or {}
    replayed = (verdict.get("trigger") or {}).get("value", trigger.get("value"))
    if not isinstance(replayed, (int, float)):
        return "the replayed loss is not recorded in the verdict: the spike's cause is not followed"
    traces = _traces(run)
    if traces is None:
        return f"the replay's dump holds more than {MAX_TRACES:,} traces: the spike's cause is not followed"
    if not any(t.numeric for t in traces):
        return _without_values(folder, manifest)
    start = _loss_trace(traces, float(replayed))
    if start is None:
        return f"no traced value of the replayed step equals the replayed loss ({_num(float(replayed))}): not followed"
    return _walk(run, folder, manifest, traces, start, factor)


def _num(x: float | None) -> str:
    """3 significant digits, "4.2e3" rather than "4.2e+03"."""
    return f"{x:.3g}".replace("e+0", "e").replace("e+", "e").replace("e-0", "e-") if x is not None else "?"


def _factor(manifest: Manifest) -> float:
    rules = manifest.get("rules") or {}
    value = rules.get("spike") if manifest["trigger"]["kind"] == "loss_spike" else rules.get("grad_spike")
    return float(value) if isinstance(value, (int, float)) and value > 1 else 10.0


def _traces(run: RunQueries) -> list[_Trace] | None:
    count = int(run.info()["counts"]["graph_executions"])
    if count > MAX_TRACES:
        return None
    return [_trace(run, i) for i in range(count)]


def _trace(run: RunQueries, i: int) -> _Trace:
    detail = run.graph_execution(i, 0, 0)
    loc = run.tensor_record("graph", i).location
    return _Trace(i, detail["graph_id"], detail["op_name"], str(detail.get("op_type") or ""), loc)


def _loss_trace(traces: list[_Trace], value: float) -> _Trace | None:
    """The first forward trace of one element holding the replayed loss's value (float32 rounding allowed)."""
    for t in traces:
        if t.size == 1 and t.numeric and not t.op_name.startswith("gradient_tape/"):
            if t.peak is not None and math.isclose(t.peak, abs(value), rel_tol=1e-3):
                return t
    return None


class _Rows:
    """Each op's trace rows in order, to find the value an input held when its consumer ran."""

    def __init__(self, traces: list[_Trace]) -> None:
        self.traces = traces
        self.by_op: dict[tuple[str, str], list[int]] = {}
        for t in traces:
            self.by_op.setdefault((t.graph_id, t.op_name), []).append(t.row)

    def latest(self, graph_id: str, op_name: str, before: int) -> _Trace | None:
        """The last trace of that op before row `before` (the value its consumer at `before` read)."""
        rows = self.by_op.get((graph_id, op_name), [])
        k = bisect.bisect_left(rows, before)
        return self.traces[rows[k - 1]] if k else None


@dataclass
class _Inputs:
    """One op's data inputs as the walk sees them."""

    traced: list[_Trace] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)  # not recorded
    batch: list[tuple[str, np.ndarray, float]] = field(default_factory=list)  # capsule batch arrays: name, values, max
    passed: list[tuple[str, float, str]] = field(default_factory=list)  # eager call's tensors: name, max |x|, sentence
    said: dict[int, str] = field(default_factory=dict)  # trace row -> how it reached a function input (links.py)


def _inputs(run: RunQueries, folder: str, manifest: Manifest, rows: _Rows, at: _Trace, op: wire.OpInfoBody) -> _Inputs:
    out = _Inputs()
    for inp in op["inputs"]:
        producer = rows.latest(at.graph_id, inp["op_name"], at.row)
        summary = inp.get("op")
        if producer is None and summary is not None and summary.get("op_type") == "Placeholder":
            found = _batch_input(run, folder, manifest, at.graph_id, inp["op_name"])
            if found is not None:
                out.batch.append(found)
                continue
            producer, why, eager = _passed_in(run, rows.traces, at, inp["op_name"])
            out.said.update({producer.row: why} if producer is not None else {})
            if eager is not None:
                out.passed.append((inp["op_name"], eager, why))
                continue
        if producer is None or producer.peak is None:
            out.unknown.append(inp["op_name"])
        else:
            out.traced.append(producer)
    return out


def _walk(run: RunQueries, folder: str, manifest: Manifest, traces: list[_Trace], at: _Trace, factor: float) -> str:
    seen: list[str] = []
    rows = _Rows(traces)
    for _ in range(_MAX_HOPS):
        try:
            op = run.op(at.graph_id, at.op_name, near=at.row)
        except NotFound:
            return f"the spike reaches {at.op_name}, whose op is not in the dump's graphs: not followed further"
        got = _inputs(run, folder, manifest, rows, at, op)
        inputs, unknown, batch, passed, said = got.traced, got.unknown, got.batch, got.passed, got.said
        seen.append(at.op_name)
        traced_peak = max((t.peak or 0.0 for t in inputs), default=0.0)
        if batch and max(b[2] for b in batch) >= traced_peak:
            name, values, peak = max(batch, key=lambda b: b[2])
            return _batch_sentence(folder, manifest, name, values, at, traced_peak, factor)
        if passed and max(p[1] for p in passed) >= traced_peak:
            name, peak, why = max(passed, key=lambda p: p[1])
            shard = replicas.capsule_shard(folder, manifest, peak)
            if shard is not None:  # a replica's rows of the captured batch, sliced by the replay (#38)
                leaf, values, replica, begin, end = shard
                said_shard = (
                    f"; it reached op {at.op_name} in replica {replica}'s shard ({leaf} rows {begin}-{end - 1})"
                )
                return _batch_sentence(folder, manifest, leaf, values, at, traced_peak, factor) + said_shard
            carry = capsule_rows.sentence(capsule_rows.per_sample_loss(folder, manifest), manifest)
            return (
                f"the spike came in with the step's input: op {at.op_name} ({at.op_type}, |x| up to {_num(at.peak)}) "
                f"takes {name} at |x| up to {_num(peak)}, {why}; per-sample loss: {carry}"
            )
        allowed = _allowed(at, inputs) if inputs else math.inf
        if at.peak is not None and at.peak >= factor * allowed:
            if unknown:  # the magnitude may come from the input not recorded: no op is blamed
                return _not_recorded(folder, manifest, at, unknown)
            times = f"{_num(at.peak / allowed)}× what they allow" if allowed > 0 else "all of them 0"
            return _in_code(run, at, inputs, f"{times}, the rule's factor {factor:g}")
        if not inputs:
            return _source(run, at, unknown)
        biggest = max(inputs, key=lambda t: t.peak or 0.0)
        if unknown and at.peak is not None and (biggest.peak or 0.0) * factor < at.peak:
            return _not_recorded(folder, manifest, at, unknown)
        if biggest.op_type in links.DATA_OPS:  # the batch as an iterator op handed it out (under tf.distribute too)
            carry = capsule_rows.sentence(capsule_rows.per_sample_loss(folder, manifest), manifest)
            where = said.get(biggest.row, f"{biggest.op_name} ({biggest.op_type})")
            return (
                f"the spike came with the batch: op {at.op_name} ({at.op_type}, |x| up to {_num(at.peak)}) takes it "
                f"at |x| up to {_num(biggest.peak)} from {where}; per-sample loss: {carry}"
            )
        if biggest.op_type in ("Const", "ReadVariableOp"):
            return _in_code(run, at, [biggest], None)
        at = biggest
    return f"the spike was followed through {len(seen)} ops without an origin: stopped at {at.op_name}"


def _allowed(at: _Trace, inputs: list[_Trace]) -> float:
    """The largest |x| the op's inputs allow (with room: the inner size of a product, the elements of a sum)."""
    peaks = [t.peak or 0.0 for t in inputs]
    if at.op_type == "Square":
        return peaks[0] ** 2
    if at.op_type == "Pow":
        return math.inf  # any exponent: not judged
    if at.op_type in _PRODUCT and len(peaks) >= 2:
        inner = max(inputs[0].shape[-1:] or (1,)) if at.op_type != "Mul" else 1
        return float(np.prod(peaks)) * inner
    if at.op_type in _SUM:
        return sum(peaks)
    if at.op_type in _DIV and len(inputs) >= 2:
        floor = inputs[1].floor
        return peaks[0] / floor if floor else math.inf
    if at.op_type in _REDUCE_SUM:
        return peaks[0] * max(1, inputs[0].size // max(1, at.size))
    return max(peaks) if peaks else 0.0


def _line(run: RunQueries, t: _Trace) -> str:
    try:
        frames = run.op(t.graph_id, t.op_name, near=t.row)["stack_frame_ids"]
    except NotFound:
        frames = []
    frame, text = user_lines.user_frame(run, list(frames))
    if frame is None:
        return "no frame of its creation stack is in user code"
    where = f"{frame.get('path') or '?'}:{frame['line']} in {frame['function']}"
    return f"{where}: {text.strip()}" if text else where


def _in_code(run: RunQueries, at: _Trace, inputs: list[_Trace], grows: str | None) -> str:
    """The op where the magnitude is born (`grows`: by how much it outgrows its inputs), or the op that takes in a
    value with no inputs (a constant, a variable read) at that magnitude, with its line."""
    biggest = max(t.peak or 0.0 for t in inputs)
    kind = f" ({at.op_type})" if at.op_type and at.op_type != at.op_name else ""
    if grows:
        what = f"|x| up to {_num(at.peak)} from inputs up to {_num(biggest)}, {grows}"
    else:
        src = inputs[0]
        what = f"|x| up to {_num(at.peak)}: it takes in {src.op_name} ({src.op_type}) = {_num(biggest)}"
    return f"the spike starts in the code: op {at.op_name}{kind} gives {what}; at {_line(run, at)}"


def _passed_in(
    run: RunQueries, traces: list[_Trace], at: _Trace, placeholder: str
) -> tuple[_Trace | None, str, float | None]:
    """What a caller passed into function input `placeholder` (links.py): (the trace of a batch an iterator op
    handed out, or None; the sentence; the max |x| of an eager tensor the call passed in, or None)."""
    cols = root_cause.columns_if_ready(run)
    if cols is None:
        return None, "", None
    link = links.function_input(run, cols, at.graph_id, placeholder, at.row)
    row = link.get("graph_execution_index")
    if row is not None and 0 <= row < len(traces):
        return traces[row], link["why"], None
    health: dict[str, object] = dict(link["health"] or {})  # FULL_TENSOR: its min and max
    lo, hi = health.get("min"), health.get("max")
    if isinstance(lo, (int, float)) and isinstance(hi, (int, float)):
        return None, link["why"], max(abs(float(lo)), abs(float(hi)))
    return None, "", None


def _not_recorded(folder: str, manifest: Manifest, at: _Trace, unknown: list[str]) -> str:
    """Where the walk stops: an input it cannot see (a function input passed in by a call TensorFlow does not record,
    e.g. a replica's shard under tf.distribute); the rows that carry the loss, from the capsule."""
    carry = capsule_rows.sentence(capsule_rows.per_sample_loss(folder, manifest), manifest)
    return (
        f"the spike reaches op {at.op_name} ({at.op_type}, |x| up to {_num(at.peak)}), whose input {unknown[0]} was "
        f"not recorded: not followed further; per-sample loss: {carry}"
    )


def _source(run: RunQueries, at: _Trace, unknown: list[str]) -> str:
    if unknown:
        return f"the spike reaches {at.op_name} ({at.op_type}), whose inputs ({', '.join(unknown)}) were not recorded"
    return f"the spike starts at op {at.op_name} ({at.op_type}, |x| up to {_num(at.peak)}); at {_line(run, at)}"


def _batch_input(
    run: RunQueries, folder: str, manifest: Manifest, graph_id: str, placeholder: str
) -> tuple[str, np.ndarray, float] | None:
    """(name, values, max |x|) of the batch array behind function input `placeholder` of a fit replay (its
    function's inputs in creation order are the batch's leaves in flatten order: capsule_inputs.py)."""
    if manifest.get("source") != "fit":
        return None
    names = capsule_inputs.leaf_names(manifest["batch_structure"])
    placeholders = links.function_inputs(run, graph_id)
    k = placeholders.index(placeholder) if placeholder in placeholders else -1
    located = capsule_arrays.locate_group(folder, manifest, "batch")
    if not 0 <= k < len(names) or names[k] not in located:
        return None
    values = capsule_arrays.read_whole(located[names[k]])
    if values.dtype.kind not in "fiu" or not values.size:
        return None
    finite = np.abs(values[np.isfinite(values)]) if values.dtype.kind == "f" else np.abs(values)
    return names[k], values, float(finite.max()) if finite.size else 0.0


def _batch_sentence(
    folder: str, manifest: Manifest, name: str, values: np.ndarray, at: _Trace, beside: float, factor: float
) -> str:
    """The batch array that carries the magnitude: its rows that stand out from the batch's median row, else (the
    whole batch is off) how far above the other input of the op it meets, and the rows that carry the loss."""
    flat = values.reshape(len(values), -1) if values.ndim else values.reshape(1, 1)
    rows = np.nan_to_num(np.abs(flat.astype(np.float64)), posinf=0.0).max(axis=1)
    peak, median = float(rows.max()), float(np.median(rows))
    place = f"batch {manifest.get('batch_index', '?')} of epoch {manifest.get('epoch', '?')}"
    outliers = np.flatnonzero(rows >= factor * median) if median > 0 else np.zeros(0, np.int64)
    if 0 < len(outliers) < len(rows):
        which = capsule_rows.rows_text(outliers[np.argsort(-rows[outliers], kind="stable")])
        ratio = f"{_num(peak / median)}× the batch's median row"
        return f"the spike came with the batch: {name} {which} (|{name}| up to {_num(peak)}, {ratio}; {place})"
    other = f", {_num(peak / beside)}× the op's other input" if beside > 0 else ""
    carry = capsule_rows.sentence(capsule_rows.per_sample_loss(folder, manifest), manifest)
    return (
        f"the spike came with the batch: {name} of {place} (|{name}| up to {_num(peak)} in its rows alike) goes into "
        f"op {at.op_name} ({at.op_type}){other}; per-sample loss: {carry}"
    )


def _without_values(folder: str, manifest: Manifest) -> str:
    return (
        "the replay's dump records no values (replay with --mode FULL_TENSOR to follow the spike to its op); "
        f"per-sample loss: {capsule_rows.sentence(capsule_rows.per_sample_loss(folder, manifest), manifest)}"
    )
