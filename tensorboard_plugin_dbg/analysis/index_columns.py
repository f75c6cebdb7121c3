"""RunColumns straight from the columnar index (`index/run_index.py:RunIndex`): the fast path of the analysis.

The index stores one "kind" code per trace row (kind = graph id, op name, output slot, mode, device), a sparse
table of the non-finite rows, and its ops with their inputs. Everything per-row here is numpy indexing through
per-kind lookup tables; Python loops run over kinds and ops only (thousands, not millions).

It uses the index's analysis accessors (`trace_arrays`, `execution_arrays`, `kind_info`, `op_entry`,
`execution_event`, `exec_op_types`); when they are not there (another RunQueries implementation, a fake)
`from_run_index` returns None and the analysis falls back to the public queries.
"""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np

from tensorboard_plugin_dbg.analysis.columns import FORWARDING_OPS, RunColumns

# tensor_debug_mode values whose records say nothing about finiteness.
_NO_FINITENESS = (1, 5)  # NO_TENSOR, SHAPE
# Execution op types of tf.function calls (the same prefixes the index uses for ExecutionDigest.is_function).
_FUNCTION_PREFIXES = ("__inference_", "__forward_", "__backward_")
_REQUIRED = ("trace_arrays", "execution_arrays", "kind_info", "op_entry", "execution_event", "exec_op_types")


def from_run_index(run: Any) -> RunColumns | None:
    if not all(hasattr(run, name) for name in _REQUIRED):
        return None
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
        kind_blind[k] = int(mode) in _NO_FINITENESS

    ptr, inputs, forwards = [0], [], []
    for graph_id, op_name in list(op_codes):
        entry = run.op_entry(graph_id, op_name)
        forwards.append(entry is not None and entry.op_type in FORWARDING_OPS)
        for producer, slot in entry.inputs if entry is not None else ():
            inputs.append(tensor_codes.setdefault((graph_id, producer, int(slot)), len(tensor_codes)))
        ptr.append(len(inputs))

    flags = (-kind_blind.astype(np.int8))[kind_col] if n else np.zeros(0, np.int8)  # -1 blind, else 0
    bad_rows = traces["nonfinite_rows"]
    flags[bad_rows[bad_rows < n]] = 1

    execs = run.execution_arrays()
    m = len(execs["wall_time"])
    e_flags = np.where(np.isin(execs["mode"], _NO_FINITENESS), -1, 0).astype(np.int8)
    e_flags[execs["nonfinite"] != 0] = 1  # set when some output had non-finite counts
    type_names = list(run.exec_op_types)
    is_function = np.array([name.startswith(_FUNCTION_PREFIXES) for name in type_names], bool)
    e_func = is_function[execs["op_type"]] if len(type_names) else np.zeros(m, bool)
    io_cache: dict[int, tuple] = {}
    # A weak reference: these columns are cached in root_cause's WeakKeyDictionary keyed by the run, and a strong
    # one from the value back to its key kept every run (and its index) alive forever (tests/test_fuzz_dumps.py).
    run_ref = weakref.ref(run)

    def exec_io(i: int) -> tuple[list[int], list[int], list[int]]:
        # Read back on demand: only alerts and their inputs' producers are asked for.
        got = io_cache.get(i)
        if got is None:
            from tensorboard_plugin_dbg.reader import debug_values

            ex = run_ref().execution_event(i).execution
            mode = int(ex.tensor_debug_mode)
            out_flags = []
            for proto in ex.tensor_protos:
                bad = debug_values.nonfinite_counts(mode, proto)
                out_flags.append(1 if bad is not None else (-1 if mode in _NO_FINITENESS else 0))
            out_ids = [int(t) for t in ex.output_tensor_ids]
            out_flags += [-1] * (len(out_ids) - len(out_flags))
            got = io_cache[i] = ([int(t) for t in ex.input_tensor_ids], out_ids, out_flags)
        return got

    rows_by_kind = getattr(run, "_kind_rows", None)

    def make_lookup():
        # the index's rows-by-kind permutation (cached there for op queries): no sorted copy of every trace here
        order, starts = run_ref()._kind_rows()
        return KindRowsLookup(order, starts, kind_tensor)

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
        exec_first_output_id=None,
        exec_io=exec_io,
        make_lookup=make_lookup if rows_by_kind is not None else None,
    )


class KindMapped:
    """A per-trace column read through the trace's kind (`kind_map[kind[rows]]`) when indexed. The analysis reads
    op and tensor codes at alert rows and a few inputs only, so materializing them (4 bytes per trace each, kept
    with the cached classification) bought nothing but memory."""

    def __init__(self, kind: np.ndarray, kind_map: np.ndarray):
        self._kind, self._map = kind, kind_map

    def __len__(self) -> int:
        return len(self._kind)

    def __getitem__(self, rows):
        return self._map[self._kind[rows]]


class KindRowsLookup:
    """classify._TraceLookup's `before(tensors, at)` answered from the index's rows-by-kind permutation (`order`,
    `starts`: the rows of kind k ascending in order[starts[k]:starts[k + 1]]): per distinct tensor, one binary
    search per kind that traces it (a tensor traced on several devices or in several modes has several kinds;
    the latest row among them wins)."""

    def __init__(self, order: np.ndarray, starts: np.ndarray, kind_tensor: np.ndarray):
        self.order, self.starts = order, starts
        self.kinds_of: dict[int, list[int]] = {}
        for k, t in enumerate(kind_tensor.tolist()):
            if k + 1 < len(starts):  # a kind newer than the permutation has no rows in it yet
                self.kinds_of.setdefault(t, []).append(k)

    def before(self, tensors, at) -> np.ndarray:
        tensors, at = np.asarray(tensors, np.int64), np.asarray(at, np.int64)
        out = np.full(len(tensors), -1, np.int64)
        if not len(tensors):
            return out
        by = np.argsort(tensors, kind="stable")
        uniq, first = np.unique(tensors[by], return_index=True)
        bounds = np.append(first, len(by)).tolist()
        for i, t in enumerate(uniq.tolist()):
            kinds = self.kinds_of.get(t)
            if not kinds:
                continue
            q = by[bounds[i] : bounds[i + 1]]
            a = at[q]
            best = np.full(len(q), -1, np.int64)
            for k in kinds:
                seg = self.order[self.starts[k] : self.starts[k + 1]]
                if len(seg):
                    p = np.searchsorted(seg, a, side="left") - 1
                    np.maximum(best, np.where(p >= 0, seg[np.maximum(p, 0)], -1), out=best)
            out[q] = best
        return out
