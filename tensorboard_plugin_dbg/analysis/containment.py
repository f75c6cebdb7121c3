"""Contained non-finite values: a NaN/∞ that the ops consuming it absorb in the same step.

Attention masks add `-inf` on purpose, padding is `-inf`, a clipped log makes `-inf` that a `maximum` removes:
such a tensor is non-finite every step, and every op that reads it gives a finite output. Blaming it for the run's
first NaN is wrong; the root cause skips it and looks for the first non-finite value that *escapes*.

A non-finite trace row r of tensor t is **contained** when, in the same step (before t is traced again):

- t has at least one consumer whose output was traced (a consumer we cannot see may be where it escapes), and
- every traced output of every consumer is finite, or is itself contained.

The recursion covers chains: the mask's `-inf` constant → `where` → `scores + bias` (all `-inf`) → `softmax`
(finite): all three are contained. Rows are walked from the last block to the first, so the consumers' rows (always
later) are decided before the rows that feed them; within a block the rule is iterated to its fixpoint (chains are a
few ops long).

**Expected** rows: a tensor that was contained in an earlier step and is non-finite again without being contained
now (the mask's `-inf` in the step where softmax breaks) is not where the NaN was born either: the op that used to
absorb it and no longer does is. `expected_from[t]` is the first contained row of tensor t, and classify.py treats a
non-finite input of that tensor after that row as benign.

What this cannot see: eager executions (their consumers are other executions, not recorded as edges) and values
that leave a function through its outputs (the caller's use of them is not an edge here): those never count as
contained.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tensorboard_plugin_dbg.analysis.columns import RunColumns, csr_items
from tensorboard_plugin_dbg.analysis.trace_lookup import Lookup, TraceLookup

_BLOCK = 1 << 16  # non-finite rows decided per step (its pair arrays stay a few MB)
_MAX_DEPTH = 64  # fixpoint iterations per block: the longest chain of contained ops followed
_AHEAD = 1 << 15  # rows past a block searched locally for the next traces (a step is rarely longer)
# A contained chain ends in a finite output: a non-finite row with no finite row in the next _REACH rows is not
# looked at. Once a run has gone NaN everywhere (every op, every step after), that skips all of it.
_REACH = 1 << 20


@dataclass
class Containment:
    rows: np.ndarray  # int64, sorted: the contained trace rows
    expected_from: np.ndarray  # int64[n_tensors]: first contained row of each tensor code, or a huge value

    def contained(self, rows: np.ndarray) -> np.ndarray:
        rows = np.asarray(rows, np.int64)
        if not len(self.rows):
            return np.zeros(len(rows), bool)
        pos = np.searchsorted(self.rows, rows)
        return (pos < len(self.rows)) & (self.rows[np.minimum(pos, max(len(self.rows) - 1, 0))] == rows)

    def expected(self, tensors: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """Whether each (tensor code, row) comes after a contained row of the same tensor (the tensor's
        non-finite values were absorbed in an earlier step)."""
        tensors = np.asarray(tensors, np.int64)
        ok = (tensors >= 0) & (tensors < len(self.expected_from))
        first = self.expected_from[np.where(ok, tensors, 0)]
        return ok & (first < np.asarray(rows, np.int64))


_NEVER = np.iinfo(np.int64).max


def consumers(cols: RunColumns) -> tuple[np.ndarray, np.ndarray]:
    """CSR tensor code -> the ops that read it (the transpose of op_input_ptr / op_input_tensor)."""
    n_ops = len(cols.op_input_ptr) - 1
    owner = np.repeat(np.arange(n_ops), np.diff(cols.op_input_ptr))
    tensors = cols.op_input_tensor
    keep = tensors >= 0
    owner, tensors = owner[keep], tensors[keep]
    n_tensors = int(tensors.max()) + 1 if len(tensors) else 0
    order = np.argsort(tensors, kind="stable")
    ptr = np.zeros(n_tensors + 1, np.int64)
    np.add.at(ptr, tensors + 1, 1)
    return np.cumsum(ptr), owner[order]


def find(cols: RunColumns, lookup: Lookup, seed: np.ndarray | None = None) -> Containment:
    """The contained rows of the run (lookup: classify's `before`/`after` trace lookup). `seed`: rows known to be
    contained already (guards.py: read only by finiteness checks in a skipped step); the ops that fed them are
    judged by the same rule."""
    flags = np.asarray(cols.trace_nonfinite)  # whole: 1 byte per trace, for this build only
    n_tensors = max(len(cols.tensor_is_input), int(cols.op_input_tensor.max()) + 1 if len(cols.op_input_tensor) else 0)
    expected_from = np.full(n_tensors + 1, _NEVER, np.int64)
    if len(cols.op_output_tensor) == 0 or not np.any(flags == 1):
        return Containment(np.zeros(0, np.int64), expected_from)
    cons_ptr, cons_ops = consumers(cols)
    alerts = np.flatnonzero(flags == 1)
    finite = np.flatnonzero(flags == 0)
    seeded = np.isin(alerts, seed) if seed is not None and len(seed) else np.zeros(len(alerts), bool)
    contained = seeded.copy()
    if not len(finite) and not seeded.any():  # nothing finite anywhere: nothing absorbed
        return Containment(np.zeros(0, np.int64), expected_from)
    for hi in range(len(alerts), 0, -_BLOCK) if len(finite) else ():  # last block first: consumers' rows are later
        lo = max(0, hi - _BLOCK)
        near = np.minimum(np.searchsorted(finite, alerts[lo:hi], "right"), len(finite) - 1)
        maybe = np.flatnonzero((finite[near] > alerts[lo:hi]) & (finite[near] - alerts[lo:hi] <= _REACH))
        if len(maybe):
            contained[lo:hi] = _block(cols, lookup, cons_ptr, cons_ops, alerts, contained, lo, hi, maybe)
    rows = alerts[contained]
    tensors = np.asarray(cols.trace_tensor[rows], np.int64)
    ok = (tensors >= 0) & (tensors < len(expected_from))
    np.minimum.at(expected_from, tensors[ok], rows[ok])
    return Containment(rows, expected_from)


def _after(cols: RunColumns, lookup: Lookup, tensors: np.ndarray, at: np.ndarray) -> np.ndarray:
    """lookup.after(tensors, at), answered first from the rows just after the queries (a sorted lookup of a few
    MB, built per block: the next trace of a consumer is nearly always within a step); only the queries that find
    nothing there ask the whole-run lookup (the last step's, mostly)."""
    lo = int(at.min())
    hi = min(int(at.max()) + _AHEAD, len(cols.trace_nonfinite))
    window = TraceLookup(np.asarray(cols.trace_tensor[lo:hi], np.int64))
    found = window.after(tensors, at - lo)
    hit = found >= 0
    found[hit] += lo
    miss = np.flatnonzero(~hit)
    if len(miss):
        found[miss] = lookup.after(tensors[miss], np.maximum(at[miss], hi - 1))
    return found


def _read_before(
    cols: RunColumns, outs: np.ndarray, tensors: np.ndarray, rows: np.ndarray, owner: np.ndarray
) -> np.ndarray:
    """Per (row, consumer output) pair: whether the row is a called function's input (columns.op_from_caller: its
    value was there before any op of the call ran) and a consumer went non-finite between the row's previous trace
    and the row itself. The debug ops run beside the computation, so that trace may be the consumer's reading of
    this very row, written first (tf.data's `grab_batch` gathers a batch before its `args_1` is traced): then the
    row escaped through it and is not contained. Searched in the rows just before the block only (a step is rarely
    longer); farther back counts as no such trace."""
    taken = cols.op_from_caller
    ops = np.asarray(cols.trace_op[rows], np.int64)
    called = (ops >= 0) & (ops < len(taken)) & taken[np.clip(ops, 0, max(len(taken) - 1, 0))] if len(taken) else None
    if called is None or not called.any():
        return np.zeros(len(owner), bool)
    lo = max(int(rows.min()) - _AHEAD, 0)
    hi = int(rows.max()) + 1
    window = TraceLookup(np.asarray(cols.trace_tensor[lo:hi], np.int64))
    prev = window.before(np.concatenate([outs, tensors]), np.concatenate([rows[owner], rows]) - lo)
    prev_out, prev_self = prev[: len(outs)], prev[len(outs) :][owner]
    hit = (prev_out >= 0) & (prev_out > prev_self)
    return hit & called[owner] & (np.asarray(cols.trace_nonfinite[np.maximum(prev_out, 0) + lo]) == 1)


def _block(
    cols: RunColumns,
    lookup: Lookup,
    cons_ptr: np.ndarray,
    cons_ops: np.ndarray,
    alerts: np.ndarray,
    contained: np.ndarray,
    lo: int,
    hi: int,
    maybe: np.ndarray,
) -> np.ndarray:
    """Which of the non-finite rows alerts[lo:hi] are contained; only those at positions `maybe` can be."""
    block = contained[lo:hi].copy()  # the seeded rows stay contained
    seeded = block[maybe].copy()
    rows = alerts[lo:hi][maybe]
    tensors = np.asarray(cols.trace_tensor[rows], np.int64)
    owner, ops = csr_items(cons_ptr, cons_ops, tensors)
    sub, outs = csr_items(cols.op_output_ptr, cols.op_output_tensor, ops)
    owner = owner[sub]  # (row, consumer output tensor) pairs
    if not len(owner):
        return block
    nexts = _after(cols, lookup, np.concatenate([outs, tensors]), np.concatenate([rows[owner], rows]))
    next_out, next_self = nexts[: len(outs)], nexts[len(outs) :][owner]  # next_self: where its next step begins
    seen = (next_out >= 0) & ((next_self < 0) | (next_out < next_self))
    seen &= ~_read_before(cols, outs, tensors, rows, owner)
    n = len(rows)
    candidate = (np.bincount(owner, minlength=n) > 0) & (np.bincount(owner[~seen], minlength=n) == 0)
    pair_flag = np.where(seen, cols.trace_nonfinite[np.maximum(next_out, 0)], -1)
    at = np.searchsorted(alerts, np.maximum(next_out, 0))  # the consumer row's place among the non-finite rows
    at = np.minimum(at, len(alerts) - 1)
    in_block = (at >= lo) & (at < hi)
    later = contained[at] & ~in_block  # consumers' rows in later blocks are decided already
    for _ in range(_MAX_DEPTH):
        absorbed = later | (in_block & block[np.where(in_block, at - lo, 0)])
        ok = (pair_flag == 0) | ((pair_flag == 1) & absorbed)
        new = seeded | (candidate & (np.bincount(owner[~ok], minlength=n) == 0))
        if np.array_equal(new, block[maybe]):
            break
        block[maybe] = new
    return block
