"""RunColumns (columns.py) gathered from a run's columnar read interface (index/protocol.py: RunQueries).

The index stores one "kind" code per trace row (kind = graph id, op name, output slot, mode, device), a sparse
table of the non-finite rows, and its ops with their inputs. Everything per-row here is numpy indexing through
per-kind lookup tables; Python loops run over kinds and ops only (thousands, not millions).
"""

from __future__ import annotations

import weakref
from collections.abc import Iterator

import numpy as np
import numpy.typing as npt

from tensorboard_plugin_dbg.analysis.columns import CALL_OPS, FORWARDING_OPS, FUNCTION_INPUT_OPS, RunColumns
from tensorboard_plugin_dbg.analysis.trace_lookup import Lookup
from tensorboard_plugin_dbg.index.naming import is_function_call
from tensorboard_plugin_dbg.index.protocol import RunQueries
from tensorboard_plugin_dbg.reader.schema import NO_FINITENESS_MODES


def gather(run: RunQueries) -> RunColumns:
    """The columns of the run's current published rows (one consistent snapshot of each column set)."""
    traces = run.trace_arrays()  # one consistent snapshot
    kind_col = traces["kind"]
    n = len(kind_col)
    n_kinds = int(kind_col.max()) + 1 if n else 0

    op_codes: dict[tuple[str, str], int] = {}
    tensor_codes: dict[tuple[str, str, int], int] = {}
    # int32 codes: the per-trace columns below are the bulk of the analysis's memory (8 bytes per trace, not 16)
    kind_op = np.empty(n_kinds, np.int32)
    kind_tensor = np.empty(n_kinds, np.int32)
    kind_blind = np.zeros(n_kinds, bool)
    for k in range(n_kinds):
        graph_id, op_name, slot, mode, _device = run.kind_info(k)
        kind_op[k] = op_codes.setdefault((graph_id, op_name), len(op_codes))
        kind_tensor[k] = tensor_codes.setdefault((graph_id, op_name, int(slot)), len(tensor_codes))
        kind_blind[k] = int(mode) in NO_FINITENESS_MODES

    ptr, inputs, forwards, from_caller = [0], [], [], []
    input_tensors: set[int] = set()
    entries = run.graph_entries()
    function_graphs = {graph_id for graph_id, name, _outer in entries if name}
    graph_codes = {graph_id: i for i, (graph_id, _name, _outer) in enumerate(entries)}
    graph_outer = np.array([graph_codes.get(outer or "", -1) for _g, _n, outer in entries], np.int64)
    from_call: set[int] = set()
    for graph_id, op_name in list(op_codes):
        entry = run.op_entry(graph_id, op_name)
        forwards.append(entry is not None and entry.op_type in FORWARDING_OPS)
        from_caller.append(entry is not None and entry.op_type in FUNCTION_INPUT_OPS and graph_id in function_graphs)
        for producer, slot in entry.inputs if entry is not None else ():
            code = tensor_codes.setdefault((graph_id, producer, int(slot)), len(tensor_codes))
            inputs.append(code)
            if _made_by_call(run, graph_id, producer):
                from_call.add(code)
            if (graph_id, producer) not in op_codes and _is_placeholder(run, graph_id, producer):
                input_tensors.add(code)
        ptr.append(len(inputs))
    is_input = np.zeros(len(tensor_codes), bool)
    is_input[list(input_tensors)] = True
    tensor_from_call = np.zeros(len(tensor_codes), bool)
    tensor_from_call[list(from_call)] = True
    op_graph = np.array([graph_codes.get(graph_id, -1) for graph_id, _op in op_codes], np.int64)
    out_ptr, out_tensor = _outputs_by_op(kind_op, kind_tensor, len(op_codes))

    bad_rows = traces["nonfinite_rows"]  # sorted: the rows below n are a view, not a copy
    flags = NonFiniteFlags(kind_col, kind_blind, bad_rows[: int(np.searchsorted(bad_rows, n))])

    execs = run.execution_arrays()
    m = len(execs["wall_time"])
    e_flags = np.where(np.isin(execs["mode"], NO_FINITENESS_MODES), -1, 0).astype(np.int8)
    e_flags[execs["nonfinite"] != 0] = 1  # set when some output had non-finite counts
    type_names = list(run.exec_op_types)
    is_function = np.array([is_function_call(name) for name in type_names], bool)
    e_func = is_function[execs["op_type"]] if len(type_names) else np.zeros(m, bool)
    e_func |= execs["graph"] >= 0  # a call with its graph's id (a JAX `jit_<fn>` call), as exec_queries counts it
    io_cache: dict[int, tuple[list[int], list[int], list[int]]] = {}
    # A weak reference: these columns are cached in the run's own derived-value cache; a strong one from the value
    # back to the run would make every run a reference cycle that only a full garbage collection frees.
    run_ref = weakref.ref(run)

    def exec_io(i: int) -> tuple[list[int], list[int], list[int]]:
        # Read back on demand: only alerts and their inputs' producers are asked for.
        got = io_cache.get(i)
        if got is None:
            got = io_cache[i] = _alive(run_ref).execution_io(i)
        return got

    def make_lookup() -> Lookup:
        # the index's rows-by-kind permutation (cached there for op queries): no sorted copy of every trace here
        order, starts = _alive(run_ref).kind_rows()
        return KindRowsLookup(order, starts, kind_tensor, n)

    return RunColumns(
        trace_wall=traces["wall_time"],
        trace_op=KindMapped(kind_col, kind_op),
        trace_tensor=KindMapped(kind_col, kind_tensor),
        trace_nonfinite=flags,
        op_input_ptr=np.asarray(ptr, np.int64),
        op_input_tensor=np.asarray(inputs, np.int64),
        op_forwards=np.asarray(forwards, bool),
        exec_wall=execs["wall_time"],
        exec_nonfinite=e_flags,
        exec_is_function=e_func,
        exec_io=exec_io,
        make_lookup=make_lookup,
        op_output_ptr=out_ptr,
        op_output_tensor=out_tensor,
        tensor_is_input=is_input,
        exec_op_type=execs["op_type"],
        op_from_caller=np.asarray(from_caller, bool),
        op_graph=op_graph,
        graph_outer=graph_outer,
        tensor_from_call=tensor_from_call,
    )


def _made_by_call(run: RunQueries, graph_id: str, op_name: str) -> bool:
    """An output of a call op (columns.CALL_OPS), directly or through the Identity TF puts after an If/While."""
    entry = run.op_entry(graph_id, op_name)
    if entry is not None and entry.op_type == "Identity" and entry.inputs:
        entry = run.op_entry(graph_id, entry.inputs[0][0])
    return entry is not None and entry.op_type in CALL_OPS


def _is_placeholder(run: RunQueries, graph_id: str, op_name: str) -> bool:
    entry = run.op_entry(graph_id, op_name)
    return entry is not None and entry.op_type == "Placeholder"


def _outputs_by_op(kind_op: np.ndarray, kind_tensor: np.ndarray, n_ops: int) -> tuple[np.ndarray, np.ndarray]:
    """CSR of each op's traced tensor codes (a tensor traced on several devices or modes has several kinds)."""
    pairs = np.unique(np.stack([kind_op.astype(np.int64), kind_tensor.astype(np.int64)], axis=1), axis=0)
    pairs = pairs.reshape(-1, 2)
    ptr = np.zeros(n_ops + 1, np.int64)
    np.add.at(ptr, pairs[:, 0] + 1, 1)
    return np.cumsum(ptr), pairs[:, 1].copy()


def _alive(ref: weakref.ref[RunQueries]) -> RunQueries:
    run = ref()
    if run is None:  # the catalog dropped the run while an analysis of it was still running
        raise LookupError("the run is gone")
    return run


class KindMapped:
    """A per-trace column read through the trace's kind (`kind_map[kind[rows]]`) when indexed. The analysis reads
    op and tensor codes at alert rows and a few inputs only, so materializing them (4 bytes per trace each, kept
    with the cached classification) bought nothing but memory."""

    def __init__(self, kind: np.ndarray, kind_map: np.ndarray):
        self._kind, self._map = kind, kind_map

    def __len__(self) -> int:
        return len(self._kind)

    def __getitem__(self, rows: np.ndarray) -> np.ndarray:
        return self._map[self._kind[rows]]

    def rows_equal(self, value: int) -> np.ndarray:
        """The rows whose value is `value`, ascending (one pass over the kind column: callers bound how often)."""
        return np.flatnonzero(np.isin(self._kind, np.flatnonzero(self._map == value)))


class NonFiniteFlags:
    """The classifier's per-trace flag (int8: 1 non-finite, -1 the mode cannot tell, 0 finite) read through the
    row's kind and the index's sorted non-finite rows when indexed, sliced or compared. The columns are cached with
    the classification for the run's life: materialized, the flags cost 1 byte per trace at the memory peak (the
    rules' scan runs after them). Whole-column comparisons (`flags == 1`) build the plain array for the moment."""

    def __init__(self, kind: np.ndarray, kind_blind: np.ndarray, nonfinite_rows: np.ndarray):
        self._kind = kind
        self._by_kind = -kind_blind.astype(np.int8)  # -1 blind, else 0
        # sorted (the index appends them in row order); kept in its own dtype (the index's uint32 rows: a view),
        # and searched with keys of that dtype, so no search converts the whole of it
        self._bad = np.asarray(nonfinite_rows)

    def __len__(self) -> int:
        return len(self._kind)

    def __getitem__(self, key: slice | npt.ArrayLike) -> np.ndarray:
        if isinstance(key, slice):
            start, stop, step = key.indices(len(self))
            if step != 1:
                return self[np.arange(start, stop, step)]
            out = self._by_kind[self._kind[start:stop]]
            lo, hi = np.searchsorted(self._bad, np.array([start, max(start, stop)], self._bad.dtype))
            out[self._bad[lo:hi].astype(np.int64) - start] = 1
            return out
        rows = np.asarray(key)
        if rows.dtype == bool:
            rows = np.flatnonzero(rows)
        rows = np.where(rows < 0, rows + len(self), rows).astype(np.int64)
        out = self._by_kind[self._kind[rows]]
        pos = np.searchsorted(self._bad, rows.astype(self._bad.dtype))
        pos = np.minimum(pos, max(len(self._bad) - 1, 0))
        hit = (self._bad[pos] == rows) if len(self._bad) else np.zeros(rows.shape, bool)
        return np.where(hit, np.int8(1), out).astype(np.int8)

    def __array__(self, dtype: npt.DTypeLike | None = None, copy: bool | None = None) -> np.ndarray:
        out = self[0 : len(self)]
        return out if dtype is None else out.astype(dtype)

    def __iter__(self) -> Iterator[np.int8]:
        return iter(np.asarray(self))

    # whole-column comparisons answer arrays, as the plain column did (object's default would answer False)
    def __eq__(self, other: object) -> np.ndarray:  # type: ignore[override]
        return np.asarray(self) == other

    def __ne__(self, other: object) -> np.ndarray:  # type: ignore[override]
        return np.asarray(self) != other

    def __ge__(self, other: npt.ArrayLike) -> np.ndarray:
        return np.asarray(self) >= other

    def __gt__(self, other: npt.ArrayLike) -> np.ndarray:
        return np.asarray(self) > other

    def __le__(self, other: npt.ArrayLike) -> np.ndarray:
        return np.asarray(self) <= other

    def __lt__(self, other: npt.ArrayLike) -> np.ndarray:
        return np.asarray(self) < other

    __hash__ = None  # type: ignore[assignment]


class KindRowsLookup:
    """trace_lookup.TraceLookup's `before(tensors, at)` answered from the index's rows-by-kind permutation (`order`,
    `starts`: the rows of kind k ascending in order[starts[k]:starts[k + 1]]): per (query, kind that traces its
    tensor) pair, one binary search in that kind's rows (a tensor traced on several devices or in several modes has
    several kinds; the latest row among them wins). The searches run side by side, vectorized over the pairs (a loop
    per tensor and kind was the classification's biggest cost at 1 M traces, issue #40 item 2). Only rows below
    `n_rows` (the columns' rows) are answered: the permutation can be newer than the columns, when the refresher
    appended traces between the two reads."""

    def __init__(self, order: np.ndarray, starts: np.ndarray, kind_tensor: np.ndarray, n_rows: int):
        self.order, self.n_rows = order, n_rows
        n_kinds = min(len(kind_tensor), max(len(starts) - 1, 0))  # a kind newer than the permutation: no rows yet
        kinds = np.arange(n_kinds, dtype=np.int64)
        by = np.argsort(np.asarray(kind_tensor[:n_kinds], np.int64), kind="stable")
        self._tensor_of = np.asarray(kind_tensor[:n_kinds], np.int64)[by]  # (tensor, kind) pairs sorted by tensor
        self._kind = kinds[by]
        lo = np.asarray(starts[:n_kinds], np.int64)
        self._lo = lo
        # each kind's rows end where its rows reach n_rows (rows ascend within a kind)
        self._hi = _first_where(order, lo, np.asarray(starts[1 : n_kinds + 1], np.int64), np.full(n_kinds, n_rows))

    def before(self, tensors: np.ndarray, at: np.ndarray) -> np.ndarray:
        return self._search(tensors, at, after=False)

    def after(self, tensors: np.ndarray, at: np.ndarray) -> np.ndarray:
        """For each pair, the first row of tensor tensors[i] with row > at[i] (-1 when none)."""
        return self._search(tensors, at, after=True)

    def _search(self, tensors: np.ndarray, at: np.ndarray, after: bool) -> np.ndarray:
        tensors, at = np.asarray(tensors, np.int64), np.asarray(at, np.int64)
        out = np.full(len(tensors), -1, np.int64)
        first = np.searchsorted(self._tensor_of, tensors, "left")
        count = np.searchsorted(self._tensor_of, tensors, "right") - first
        query = np.repeat(np.arange(len(tensors)), count)
        if not len(query):
            return out
        offsets = np.arange(len(query)) - np.repeat(np.cumsum(count) - count, count)
        kind = self._kind[np.repeat(first, count) + offsets]
        lo, hi, a = self._lo[kind], self._hi[kind], at[query]
        # before: the last row < a; after: the first row > a
        pos = _first_where(self.order, lo, hi, a + 1 if after else a)
        last = max(len(self.order) - 1, 0)
        # an int64 scalar, not a Python int: np.where against the int32 rows would wrap the Python int to -1
        none = np.int64(np.iinfo(np.int64).max if after else -1)
        found = pos < hi if after else pos > lo
        at_row = np.minimum(pos, last) if after else np.maximum(pos - 1, 0)
        row = np.where(found, self.order[at_row] if len(self.order) else 0, none).astype(np.int64)
        groups = (np.cumsum(count) - count)[count > 0]  # the pairs of each query that has any are consecutive
        best = (np.minimum if after else np.maximum).reduceat(row, groups)
        out[count > 0] = np.where(best == none, -1, best)
        return out


def _first_where(order: np.ndarray, lo: np.ndarray, hi: np.ndarray, value: np.ndarray) -> np.ndarray:
    """For each i, the first position p in [lo[i], hi[i]) with order[p] >= value[i] (hi[i] when none): a binary
    search per i, all of them side by side (order ascends within each range)."""
    lo, hi = lo.copy(), hi.copy()
    value = np.asarray(value, np.int64)
    last = max(len(order) - 1, 0)
    while True:
        active = lo < hi
        if not active.any():
            return lo
        mid = (lo + hi) // 2
        below = active & (order[np.minimum(mid, last)] < value) if len(order) else np.zeros(len(lo), bool)
        lo = np.where(below, mid + 1, lo)
        hi = np.where(active & ~below, mid, hi)
