"""Producer / propagator classification of every non-finite tensor of a run, vectorized.

A non-finite tensor is a **propagator** when some input of its op was already non-finite when the op ran, a
**producer** when every input was recorded finite (or is not a floating-point tensor, which cannot hold NaN/∞), and
**unknown** when some input was not recorded: a function input (TF does not trace Placeholders; links.py may find
what the caller passed in) or a tensor whose earlier records a circular buffer dropped. Two more roles come from
containment.py: **contained** (its consumers absorbed it this step) and **expected** (contained in an earlier step;
a non-finite input of that kind does not make the consumer a propagator, so the op that stopped absorbing it is the
producer). One refinement: a loop variable (Placeholder) or a variable read (ReadVariableOp) gets its value
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

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from tensorboard_plugin_dbg.analysis import containment, run_pairing
from tensorboard_plugin_dbg.analysis.columns import RunColumns, csr_items
from tensorboard_plugin_dbg.analysis.containment import Containment
from tensorboard_plugin_dbg.analysis.guards import Guards
from tensorboard_plugin_dbg.analysis.trace_lookup import Lookup, TraceLookup
from tensorboard_plugin_dbg.wire.types import AlertRole

NONE, PRODUCER, PROPAGATOR, CONTAINED, EXPECTED, UNKNOWN = 0, 1, 2, 3, 4, 5
ROLE_NAMES: tuple[AlertRole | None, ...] = (None, "producer", "propagator", "contained", "expected", "unknown")
CANDIDATES = (PRODUCER, UNKNOWN)  # where the first NaN/∞ may have been born
EAGER_SCAN_BACK = 256  # executions scanned back for an eager input's producer


@dataclass
class Classification:
    trace_role: np.ndarray  # int8[T]: NONE (finite or cannot tell), or one of the roles above
    exec_role: np.ndarray  # int8[E]
    any_finiteness_info: bool  # False for runs dumped only in SHAPE / NO_TENSOR mode (nothing can be known)
    contained: Containment | None = None
    exec_traces_gone: np.ndarray | None = None  # bool[E]: a tf.function call whose traces a circular buffer dropped
    guards: Guards | None = None  # the non-finite values only finiteness checks read in skipped steps (guards.py)

    def count(self, *roles: int) -> int:
        return sum(int(np.count_nonzero(self.trace_role == r) + np.count_nonzero(self.exec_role == r)) for r in roles)

    @property
    def producers(self) -> int:
        return self.count(*CANDIDATES)

    @property
    def propagators(self) -> int:
        return self.count(PROPAGATOR)

    def candidates(self, cols: RunColumns, limit: int) -> list[tuple[str, int]]:
        """The first `limit` producers and unknowns, ('graph_execution' | 'execution', index), earliest in wall
        time first; traces win ties (a call's traces are written before its execution record)."""
        t = np.flatnonzero(np.isin(self.trace_role, CANDIDATES))[:limit]
        e = np.flatnonzero(np.isin(self.exec_role, CANDIDATES))
        if self.exec_traces_gone is not None:  # such a call is not a cause: the ops inside it were
            e = e[~self.exec_traces_gone[e]]
        e = e[:limit]
        merged = [(float(cols.trace_wall[i]), 0, "graph_execution", int(i)) for i in t]
        merged += [(float(cols.exec_wall[i]), 1, "execution", int(i)) for i in e]
        return [(source, index) for _, _, source, index in sorted(merged)[:limit]]

    def first_producer(self, cols: RunColumns) -> tuple[str, int] | None:
        first = self.candidates(cols, 1)
        return first[0] if first else None


def op_inputs(cols: RunColumns, ops: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(owner position in `ops`, input tensor code) for every data input of every op in `ops` (op -1: none)."""
    return csr_items(cols.op_input_ptr, cols.op_input_tensor, ops)


_ROWS = 1 << 15  # trace rows classified per step: the temporaries stay a few MB whatever the run's size


def _first_rows(cols: RunColumns) -> np.ndarray:
    """First trace row of every tensor code (index: code + 1, so -1 fits; len(trace) where never traced)."""
    n = len(cols.trace_nonfinite)
    first = np.full(1, n, np.int64)
    for lo in range(0, n, _ROWS):
        codes = np.asarray(cols.trace_tensor[lo : lo + _ROWS], np.int64) + 1
        if len(codes) and int(codes.max()) + 1 > len(first):
            first = np.concatenate([first, np.full(int(codes.max()) + 1 - len(first), n, np.int64)])
        # a linear pass, no sort: a code seen in an earlier block has its first row there, so only the rows of
        # codes not seen yet (a few, after the first training step) can be a first row
        new = np.flatnonzero(first[codes] == n)
        np.minimum.at(first, codes[new], new + lo)
    return first


def _window(cols: RunColumns, lo: int) -> tuple[int, np.ndarray, TraceLookup]:
    """(w0, tensor codes of rows [w0, lo + _ROWS), their sorted lookup) for the block of rows at `lo`: built once
    per block, for its inputs' and its own previous traces (_prior_traces)."""
    w0 = max(0, lo - _ROWS)
    codes = np.asarray(cols.trace_tensor[w0 : lo + _ROWS], np.int64)
    return w0, codes, TraceLookup(codes)


def _prior_traces(
    lookup: Lookup, first: np.ndarray, tensors: np.ndarray, at: np.ndarray, w0: int, window: TraceLookup
) -> np.ndarray:
    """lookup.before(tensors, at) for queries whose `at` lie in the block of rows that `window` (_window: rows
    [w0, lo + _ROWS)) was built for. An input's previous trace is almost always within the last training step, so
    the queries are answered first from the rows just before (a sorted lookup of [lo - _ROWS, lo + _ROWS): a few
    MB, built per step); only the queries that find no trace there but have one further back (`first`: each
    tensor's first row) ask the whole-run `lookup`."""
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


def _first_escaping(flags: np.ndarray, contained: Containment) -> int:
    """The first non-finite row that is not contained (-1: none)."""
    for lo in range(0, len(flags), _ROWS):
        alerts = np.flatnonzero(flags[lo : lo + _ROWS] == 1) + lo
        alerts = alerts[~contained.contained(alerts)]
        if len(alerts):
            return int(alerts[0])
    return -1


def _unrecorded(cols: RunColumns, first: np.ndarray, tensors: np.ndarray, prior: np.ndarray) -> np.ndarray:
    """Inputs with no record before the op ran that could have held NaN/∞: a function input, or a tensor that is
    traced elsewhere in the run (so its type is instrumented) but not before (records dropped). A tensor never
    traced is not a floating-point one (health modes instrument floats only) and cannot hold NaN/∞."""
    known = (tensors >= 0) & (tensors + 1 < len(first))
    traced = np.zeros(len(tensors), bool)
    traced[known] = first[tensors[known] + 1] < len(cols.trace_nonfinite)
    is_input = np.zeros(len(tensors), bool)
    in_range = (tensors >= 0) & (tensors < len(cols.tensor_is_input))
    is_input[in_range] = cols.tensor_is_input[tensors[in_range]]
    return (prior < 0) & (traced | is_input)


def _from_caller(cols: RunColumns, ops: np.ndarray) -> np.ndarray:
    """Which of `ops` are a called function's inputs (columns.op_from_caller): never a producer, whatever the file
    order (an If branch's Placeholder holding the loss can be traced before the op that made the loss)."""
    taken = cols.op_from_caller
    if not len(taken):
        return np.zeros(len(ops), bool)
    return (ops >= 0) & (ops < len(taken)) & taken[np.clip(ops, 0, len(taken) - 1)]


def _fed_by_bad_call(
    cols: RunColumns, lookup: Lookup, alerts: np.ndarray, owner: np.ndarray, tensors: np.ndarray
) -> np.ndarray:
    """Alerts fed by a call's output (an If, a While, a function call: TF traces neither the call op nor the Identity
    after it) while a graph inside the alert's graph held a NaN/∞ in the same run of the alert's op (between its
    previous and next traces): the NaN/∞ flowed out of the call, so the alert is not where it was born."""
    out = np.zeros(len(alerts), bool)
    marks = cols.tensor_from_call
    if not len(marks) or not len(cols.op_graph) or not len(tensors):
        return out
    known = (tensors >= 0) & (tensors < len(marks))
    fed = np.unique(owner[known][marks[tensors[known]]])
    if not len(fed):
        return out
    own = np.asarray(cols.trace_tensor[alerts[fed]], np.int64)
    prev, nxt = lookup.before(own, alerts[fed]), lookup.after(own, alerts[fed])
    n = len(cols.trace_wall)
    for j, a, lo, hi in zip(fed.tolist(), alerts[fed].tolist(), prev.tolist(), nxt.tolist(), strict=True):
        rows = np.flatnonzero(np.asarray(cols.trace_nonfinite[lo + 1 : hi if hi >= 0 else n]) == 1) + lo + 1
        rows = rows[rows != a]
        graph = int(cols.op_graph[int(cols.trace_op[a])])
        ops = np.asarray(cols.trace_op[rows], np.int64) if len(rows) else np.zeros(0, np.int64)
        out[j] = any(_inside(cols.graph_outer, int(cols.op_graph[o]), graph) for o in ops.tolist() if o >= 0)
    return out


def _inside(outer: np.ndarray, graph: int, ancestor: int) -> bool:
    """Whether graph code `graph` lies inside graph `ancestor` (strictly)."""
    seen = 0
    current = int(outer[graph]) if 0 <= graph < len(outer) else -1
    while current >= 0 and seen < len(outer):
        if current == ancestor:
            return True
        current, seen = int(outer[current]), seen + 1
    return False


def _same_run_inputs(
    cols: RunColumns,
    lookup: Lookup,
    alerts: np.ndarray,
    owner: np.ndarray,
    tensors: np.ndarray,
    prior: np.ndarray,
    own_prev: np.ndarray | None = None,
    own: np.ndarray | None = None,
) -> np.ndarray:
    """Each (alert, input) pair's record of the input from the same run of the alert's op. The debug ops run beside
    the computation, not after it, so an input's trace may be written after the trace of the op that read it: when
    no trace of the input lies between the op's previous trace and this one (`prior` is from an earlier run, or
    none), the input's value of this run is its first trace after this one, if that comes before the op's next
    trace (every run of a graph computes an input once, before the op that reads it). Data dependency, not file
    position, then says whether the op was fed a NaN/∞."""
    if not len(tensors):
        return prior
    own = np.asarray(cols.trace_tensor[alerts], np.int64) if own is None else own  # the alerts' own tensor codes
    # `own_prev`: lookup.before(own, alerts) when the caller has it (the classification: from its step's window)
    own_prev = (lookup.before(own, alerts) if own_prev is None else own_prev)[owner]
    stale = np.flatnonzero(((prior < 0) | (prior < own_prev)) & (tensors >= 0))
    if not len(stale):
        return prior
    at = alerts[owner[stale]]
    later = lookup.after(tensors[stale], at)
    own_next = lookup.after(own[owner[stale]], at)
    same_run = (later >= 0) & ((own_next < 0) | (later < own_next))
    out = prior.copy()
    out[stale[same_run]] = later[same_run]
    # runs that overlapped (tf.data's parallel map): the input traced after the reader, paired by rank where certain;
    # so is a "same run" one that the op's previous run waits for too (run_pairing.previous_run_waits)
    overlap = ~same_run & (later >= 0)
    mine = stale[same_run]
    overlap[same_run] = run_pairing.previous_run_waits(lookup, own[owner[mine]], tensors[mine], own_prev[mine])
    left = stale[overlap]
    ranked = run_pairing.by_rank(cols, at[overlap], own[owner[left]], tensors[left])
    out[left[ranked >= 0]] = ranked[ranked >= 0]
    out[left[ranked == run_pairing.AMBIGUOUS]] = -1  # not an earlier run's trace either: unrecorded, never guessed
    return out


def same_run_prior(cols: RunColumns, lookup: Lookup, row: int, tensors: np.ndarray) -> np.ndarray:
    """The record of each input tensor that graph trace `row`'s op read: its last trace before `row`, or, when
    that is from an earlier run of the op (or there is none), its trace of the same run written after `row`
    (_same_run_inputs): the producer's detail reads its inputs as the classification did."""
    tensors = np.asarray(tensors, np.int64)
    prior = lookup.before(tensors, np.full(len(tensors), row, np.int64))
    owner = np.zeros(len(tensors), np.int64)
    return _same_run_inputs(cols, lookup, np.array([row], np.int64), owner, tensors, prior)


def expected_inputs(contained: Containment, tensors: np.ndarray, prior: np.ndarray, at: np.ndarray) -> np.ndarray:
    """Whether each input record `prior` of an op run at rows `at` is a NaN/∞ contained in an *earlier* run: one
    recorded after its reader (same run) counts from the reader's row, never from its own."""
    return contained.expected(tensors, np.minimum(prior + 1, at))


def _classify_traces(cols: RunColumns, lookup: Lookup, contained: Containment) -> np.ndarray:
    flags = cols.trace_nonfinite
    role = np.zeros(len(flags), np.int8)
    # A forwarding op (loop variable, variable read) run after the first NaN/∞ was seen carries it.
    exec_bad = cols.exec_wall[cols.exec_nonfinite == 1]
    first_exec_bad = exec_bad.min() if len(exec_bad) else np.inf
    first_alert = _first_escaping(flags, contained)
    first = None
    for lo in range(0, len(flags), _ROWS):
        alerts = np.flatnonzero(flags[lo : lo + _ROWS] == 1) + lo
        if not len(alerts):
            continue
        ops = np.asarray(cols.trace_op[alerts])
        owner, tensors = op_inputs(cols, ops)  # (alert, input) pairs: ~1.5x the alerts
        if first is None:
            first = _first_rows(cols)
        w0, codes, window = _window(cols, lo)
        prior = _prior_traces(lookup, first, tensors, alerts[owner], w0, window)
        own = codes[alerts - w0]
        own_prev = _prior_traces(lookup, first, own, alerts, w0, window)  # from the step's window, not the whole run
        prior = _same_run_inputs(cols, lookup, alerts, owner, tensors, prior, own_prev, own)
        expected = expected_inputs(contained, tensors, prior, alerts[owner])
        bad_input = (prior >= 0) & (flags[np.maximum(prior, 0)] == 1) & ~expected
        n = len(alerts)
        propagates = np.bincount(owner[bad_input], minlength=n) > 0
        forwarded = (ops >= 0) & cols.op_forwards[np.maximum(ops, 0)] if len(cols.op_forwards) else ops < -1
        seen_before = ((alerts > first_alert) & (first_alert >= 0)) | (cols.trace_wall[alerts] > first_exec_bad)
        propagates |= forwarded & seen_before
        propagates |= _from_caller(cols, ops)  # its value is the caller's tensor, classified where it was made
        propagates |= _fed_by_bad_call(cols, lookup, alerts, owner, tensors)
        unknown = np.bincount(owner[_unrecorded(cols, first, tensors, prior)], minlength=n) > 0
        block = np.where(propagates, PROPAGATOR, np.where(unknown, UNKNOWN, PRODUCER))
        block = np.where(contained.expected(own, alerts) & ~propagates, EXPECTED, block)
        role[alerts] = np.where(contained.contained(alerts), CONTAINED, block)
    return role


class _BadTraceWindows:
    """`any_in(lo, hi)`: whether a non-finite trace has its wall time in (lo, hi]. Built on first use only (most
    runs have no tf.function call among their alerts). When the trace wall times are in order (one host: always)
    it searches them in place; otherwise it sorts the non-finite traces' wall times once."""

    def __init__(self, cols: RunColumns):
        self.cols = cols
        self.walls: np.ndarray | None = None
        self.in_order: bool | None = None
        self.sorted_walls: np.ndarray | None = None

    def any_traced_in(self, lo: float, hi: float) -> bool:
        """Whether any trace (finite or not) has its wall time in (lo, hi]."""
        if self.sorted_walls is None:
            wall = self.cols.trace_wall
            self.sorted_walls = wall if bool(np.all(wall[1:] >= wall[:-1])) else np.sort(wall)
        w = self.sorted_walls
        return bool(np.searchsorted(w, hi, "right") - np.searchsorted(w, lo, "right") > 0)

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


def _classify_executions(cols: RunColumns) -> tuple[np.ndarray, np.ndarray]:
    flags = cols.exec_nonfinite
    role = np.zeros(len(flags), np.int8)
    gone = np.zeros(len(flags), bool)
    alerts = np.flatnonzero(flags == 1)
    if len(alerts) == 0:
        return role, gone
    # Non-finite traces per call window (previous execution's wall time, this one's].
    windows = _BadTraceWindows(cols)
    for e in alerts.tolist():
        window = (cols.exec_wall[e - 1] if e > 0 else -np.inf, cols.exec_wall[e])
        if cols.exec_is_function[e] and windows.any_in(*window):
            role[e] = PROPAGATOR
            continue
        if cols.exec_is_function[e] and len(cols.trace_wall) and not windows.any_traced_in(*window):
            role[e], gone[e] = UNKNOWN, True  # its traces are gone (a circular buffer dropped them)
            continue
        role[e] = PRODUCER
        for tensor_id in cols.exec_io(e)[0]:
            src, slot = eager_producer(cols, int(tensor_id), e)
            if src < 0:  # a constant, or made before dumping started: not recorded
                role[e] = UNKNOWN
            elif cols.exec_io(src)[2][slot] == 1:
                role[e] = PROPAGATOR
                break
    return role, gone


class _Lazy:
    """The whole-run lookup, made on first use: with the per-step windows most runs never need it."""

    def __init__(self, make: Callable[[], Lookup]) -> None:
        self.make: Callable[[], Lookup] = make
        self.made: Lookup | None = None

    def _get(self) -> Lookup:
        if self.made is None:
            self.made = self.make()
        return self.made

    def before(self, tensors: np.ndarray, at: np.ndarray) -> np.ndarray:
        return self._get().before(tensors, at)

    def after(self, tensors: np.ndarray, at: np.ndarray) -> np.ndarray:
        return self._get().after(tensors, at)


def trace_lookup(cols: RunColumns) -> _Lazy:
    """The whole-run trace lookup, made on first use."""
    return _Lazy(cols.make_lookup if cols.make_lookup is not None else lambda: TraceLookup(cols.trace_tensor))


def classify(
    cols: RunColumns, guarded: np.ndarray | None = None, lookup: _Lazy | None = None
) -> tuple[Classification, _Lazy]:
    """`guarded`: rows contained by design (guards.py), seeding containment."""
    lookup = lookup if lookup is not None else trace_lookup(cols)
    info = bool(np.any(np.asarray(cols.trace_nonfinite) >= 0) or np.any(cols.exec_nonfinite >= 0))
    contained = containment.find(cols, lookup, guarded)
    traces = _classify_traces(cols, lookup, contained)
    execs, gone = _classify_executions(cols)
    return Classification(traces, execs, info, contained, gone), lookup
