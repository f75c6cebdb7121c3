"""Producer / propagator classification of every non-finite tensor of a run, vectorized.

A non-finite tensor is a **propagator** when some input of its op was already non-finite when the op ran, and a
**producer** otherwise (every traced input finite, or its inputs not traced: we cannot blame what we cannot see).
One refinement: a loop variable / function input (Placeholder) or a variable read (ReadVariableOp) gets its value
through an edge no record shows; run after a NaN/∞ was already seen, it is counted as carrying it (propagator).
"When it ran" = the input tensor's most recent record before this one:

- Graph traces: for each alert trace t and each data input k of its op, the last trace of tensor k with index < t.
  All (alert, input) pairs are answered by ONE `searchsorted` over the traces sorted by (tensor, index), so the cost is
  O(T log T) numpy work for the sort plus O(A·inputs·log T) for A alerts: seconds for 10 M traces, not minutes.
- Eager ops: an input tensor id is looked up among the outputs of earlier executions. TF numbers eager tensors from
  one counter, so output ids grow with the execution index and the producer is found by binary search.
- tf.function calls: their outputs are computed by the traced graph that ran just before the call's record was
  written (the traces of a call precede its execution record), so a call whose window of traces holds a non-finite
  trace only carries that NaN out (propagator), as does a call fed a non-finite eager tensor.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tensorboard_plugin_dbg.analysis.columns import RunColumns

NONE, PRODUCER, PROPAGATOR = 0, 1, 2
EAGER_SCAN_BACK = 256  # executions scanned back for an eager input's producer


@dataclass
class Classification:
    trace_role: np.ndarray  # int8[T]: NONE (finite or unknown), PRODUCER, PROPAGATOR
    exec_role: np.ndarray  # int8[E]
    any_finiteness_info: bool  # False for runs dumped only in SHAPE / NO_TENSOR mode (nothing can be known)

    @property
    def producers(self) -> int:
        return int(np.count_nonzero(self.trace_role == PRODUCER) + np.count_nonzero(self.exec_role == PRODUCER))

    @property
    def propagators(self) -> int:
        return int(np.count_nonzero(self.trace_role == PROPAGATOR) + np.count_nonzero(self.exec_role == PROPAGATOR))

    def first_producer(self, cols: RunColumns) -> tuple[str, int] | None:
        """('graph_execution' | 'execution', index) of the earliest producer in wall time; traces win ties (a call's
        traces are written before its execution record)."""
        best = None
        t = np.flatnonzero(self.trace_role == PRODUCER)
        if len(t):
            best = ("graph_execution", int(t[0]), float(cols.trace_wall[t[0]]))
        e = np.flatnonzero(self.exec_role == PRODUCER)
        if len(e) and (best is None or float(cols.exec_wall[e[0]]) < best[2]):
            best = ("execution", int(e[0]), float(cols.exec_wall[e[0]]))
        return None if best is None else best[:2]


_BLOCK = 1 << 20  # alerts (or queries) handled per step: bounds the temporaries at ~8 bytes x a few x this


class _TraceLookup:
    """`before(tensors, at)`: for each pair, the index of the last trace of tensor code tensors[i] with index < at[i]
    (-1 when none). Built once per classification: one stable argsort of the tensor codes.

    Memory matters at 10 M traces (the index budget is ~48 bytes per trace): tensor codes that fit 16 bits are
    sorted as uint16 (numpy's stable sort is then a radix sort, ~10x faster than on int64), the permutation is kept
    as int32, and the sorted keys are not kept (read back through the permutation)."""

    def __init__(self, trace_tensor: np.ndarray):
        n = len(trace_tensor)
        self.trace_tensor = trace_tensor
        if n and int(trace_tensor.min()) >= -1 and int(trace_tensor.max()) < 65535:
            order = np.argsort((trace_tensor + 1).astype(np.uint16), kind="stable")  # by tensor, then by index
        else:
            order = np.argsort(trace_tensor, kind="stable")
        self.stride = n + 1
        combined = trace_tensor[order].astype(np.int64)
        combined *= self.stride
        combined += order
        self.combined = combined  # sorted: key-major, index-minor
        self.order = order.astype(np.int32) if n < 2**31 else order

    def before(self, tensors: np.ndarray, at: np.ndarray) -> np.ndarray:
        if len(self.combined) == 0 or len(tensors) == 0:
            return np.full(len(tensors), -1, np.int64)
        out = np.empty(len(tensors), np.int64)
        for lo in range(0, len(tensors), _BLOCK):
            t, a = np.asarray(tensors[lo : lo + _BLOCK], np.int64), at[lo : lo + _BLOCK]
            needles = t * self.stride + a
            # Needles in sorted order make the binary searches walk `combined` front to back (cache-friendly,
            # ~5x faster at 10 M traces than in alert order); answers go back to their places after. Queries come
            # with `at` ascending, so a stable sort by tensor alone sorts them (a radix sort when codes are small).
            if int(t.min()) >= -1 and int(t.max()) < 65535 and bool(np.all(np.diff(a) >= 0)):
                by = np.argsort((t + 1).astype(np.uint16), kind="stable")
            else:
                by = np.argsort(needles)
            pos = np.empty(len(needles), np.int64)
            pos[by] = np.searchsorted(self.combined, needles[by], side="left") - 1
            ok = (pos >= 0) & (t >= 0)
            pos = np.where(ok, pos, 0)
            rows = self.order[pos]
            ok &= self.trace_tensor[rows] == t
            out[lo : lo + _BLOCK] = np.where(ok, rows, -1)
        return out


def op_inputs(cols: RunColumns, ops: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(owner position in `ops`, input tensor code) for every data input of every op in `ops` (op -1: none)."""
    ops = np.asarray(ops, np.int64)
    valid = (ops >= 0) & (ops < len(cols.op_input_ptr) - 1)
    safe = np.where(valid, ops, 0)
    starts = cols.op_input_ptr[safe]
    counts = np.where(valid, cols.op_input_ptr[safe + 1] - starts, 0)
    owner = np.repeat(np.arange(len(ops)), counts)
    offsets = np.arange(int(counts.sum())) - np.repeat(np.cumsum(counts) - counts, counts)
    return owner, cols.op_input_tensor[np.repeat(starts, counts) + offsets]


_ROWS = 1 << 15  # trace rows classified per step: the temporaries stay a few MB whatever the run's size


def _first_rows(cols: RunColumns) -> np.ndarray:
    """First trace row of every tensor code (index: code + 1, so -1 fits; len(trace) where never traced)."""
    n = len(cols.trace_nonfinite)
    first = np.full(1, n, np.int64)
    for lo in range(0, n, _ROWS):
        codes, at = np.unique(np.asarray(cols.trace_tensor[lo : lo + _ROWS], np.int64), return_index=True)
        if len(codes) and codes[-1] + 2 > len(first):
            first = np.concatenate([first, np.full(int(codes[-1]) + 2 - len(first), n, np.int64)])
        np.minimum.at(first, codes + 1, at + lo)
    return first


def _prior_traces(
    cols: RunColumns, lookup, first: np.ndarray, tensors: np.ndarray, at: np.ndarray, lo: int
) -> np.ndarray:
    """lookup.before(tensors, at) for queries whose `at` lie in rows [lo, lo + _ROWS). An input's previous trace is
    almost always within the last training step, so the queries are answered first from the rows just before
    (a sorted lookup of [lo - _ROWS, lo + _ROWS): a few MB, built per step); only the queries that find no trace
    there but have one further back (`first`: each tensor's first row) ask the whole-run `lookup`."""
    w0 = max(0, lo - _ROWS)
    window = _TraceLookup(np.asarray(cols.trace_tensor[w0 : lo + _ROWS], np.int64))
    prior = window.before(tensors, at - w0)
    found = prior >= 0
    prior[found] += w0
    known = (tensors >= -1) & (tensors + 1 < len(first))
    earlier = np.zeros(len(tensors), bool)
    earlier[known] = first[tensors[known] + 1] < w0
    miss = np.flatnonzero(~found & earlier)
    if len(miss):
        prior[miss] = lookup.before(tensors[miss], at[miss])
    return prior


def _classify_traces(cols: RunColumns, lookup) -> np.ndarray:
    flags = cols.trace_nonfinite
    role = np.zeros(len(flags), np.int8)
    # A forwarding op (loop variable, function input, variable read) run after the first NaN/∞ was seen carries it.
    exec_bad = cols.exec_wall[cols.exec_nonfinite == 1]
    first_exec_bad = exec_bad.min() if len(exec_bad) else np.inf
    first_alert = -1
    first = None
    for lo in range(0, len(flags), _ROWS):
        alerts = np.flatnonzero(flags[lo : lo + _ROWS] == 1) + lo
        if not len(alerts):
            continue
        if first_alert < 0:
            first_alert = int(alerts[0])
        ops = np.asarray(cols.trace_op[alerts])
        owner, tensors = op_inputs(cols, ops)  # (alert, input) pairs: ~1.5x the alerts
        if first is None:
            first = _first_rows(cols)
        prior = _prior_traces(cols, lookup, first, tensors, alerts[owner], lo)
        bad_input = (prior >= 0) & (flags[np.maximum(prior, 0)] == 1)
        propagates = np.bincount(owner[bad_input], minlength=len(alerts)) > 0
        forwarded = (ops >= 0) & cols.op_forwards[np.maximum(ops, 0)] if len(cols.op_forwards) else ops < -1
        seen_before = (alerts > first_alert) | (cols.trace_wall[alerts] > first_exec_bad)
        propagates |= forwarded & seen_before
        role[alerts] = np.where(propagates, PROPAGATOR, PRODUCER)
    return role


class _BadTraceWindows:
    """`any_in(lo, hi)`: whether a non-finite trace has its wall time in (lo, hi]. Built on first use only (most
    runs have no tf.function call among their alerts). When the trace wall times are in order (one host: always)
    it searches them in place; otherwise it sorts the non-finite traces' wall times once."""

    def __init__(self, cols: RunColumns):
        self.cols = cols
        self.walls: np.ndarray | None = None
        self.in_order: bool | None = None

    def any_in(self, lo: float, hi: float) -> bool:
        wall, flags = self.cols.trace_wall, self.cols.trace_nonfinite
        if self.in_order is None:
            self.in_order = all(
                bool(np.all(wall[i + 1 : i + _ROWS + 1] >= wall[i : i + _ROWS][: len(wall) - i - 1]))
                for i in range(0, max(len(wall) - 1, 0), _ROWS)
            )
        if self.in_order:
            r0, r1 = np.searchsorted(wall, lo, "right"), np.searchsorted(wall, hi, "right")
            return bool(np.any(flags[r0:r1] == 1))
        if self.walls is None:
            parts = [wall[i : i + _ROWS][flags[i : i + _ROWS] == 1] for i in range(0, len(flags), _ROWS)]
            self.walls = np.sort(np.concatenate(parts)) if parts else np.zeros(0)
        w = self.walls
        return bool(np.searchsorted(w, hi, "right") - np.searchsorted(w, lo, "right") > 0)


def eager_producer(cols: RunColumns, tensor_id: int, before: int) -> tuple[int, int]:
    """(execution index, output slot) of the execution before `before` that output eager tensor `tensor_id`,
    or (-1, -1) when no recorded execution did (a constant, or a tensor made before dumping started)."""
    # the producer of an eager input is almost always a recent execution: scan back from `before`
    for e in range(before - 1, max(before - 1 - EAGER_SCAN_BACK, -1), -1):
        outs = list(cols.exec_io(e)[1])
        if tensor_id in outs:
            return e, outs.index(tensor_id)
    return -1, -1


def _classify_executions(cols: RunColumns) -> np.ndarray:
    flags = cols.exec_nonfinite
    role = np.zeros(len(flags), np.int8)
    alerts = np.flatnonzero(flags == 1)
    if len(alerts) == 0:
        return role
    # Non-finite traces per call window (previous execution's wall time, this one's].
    windows = _BadTraceWindows(cols)
    for e in alerts.tolist():
        propagates = False
        if cols.exec_is_function[e]:
            propagates = windows.any_in(cols.exec_wall[e - 1] if e > 0 else -np.inf, cols.exec_wall[e])
        if not propagates:
            for tensor_id in cols.exec_io(e)[0]:
                src, slot = eager_producer(cols, int(tensor_id), e)
                if src >= 0 and cols.exec_io(src)[2][slot] == 1:
                    propagates = True
                    break
        role[e] = PROPAGATOR if propagates else PRODUCER
    return role


class _Lazy:
    """The whole-run lookup, made on first use: with the per-step windows most runs never need it."""

    def __init__(self, make):
        self.make, self.made = make, None

    def before(self, tensors, at):
        if self.made is None:
            self.made = self.make()
        return self.made.before(tensors, at)


def classify(cols: RunColumns) -> tuple[Classification, _Lazy]:
    lookup = _Lazy(cols.make_lookup if cols.make_lookup is not None else lambda: _TraceLookup(cols.trace_tensor))
    info = bool(np.any(cols.trace_nonfinite >= 0) or np.any(cols.exec_nonfinite >= 0))
    return Classification(_classify_traces(cols, lookup), _classify_executions(cols), info), lookup
