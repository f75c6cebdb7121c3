"""Which record of run A is which record of run B.

Graph traces align on (function name without its numeric suffix, op name, output slot, occurrence): the k-th trace
of `step`'s `dense/MatMul:0` in A is the k-th in B, whatever graph ids TensorFlow gave the two traces of `step`
(`__inference_step_123` vs `_456`). All of it is vectorized over the trace columns: a 1 M-trace run is a few sorts.

Eager executions align on their op-type sequences (function calls by function name without suffix), as `diff`
aligns lines: identical sequences pair one to one, others through difflib's longest matching blocks, so an op added
in B is *only in B* and the ops after it still pair.
"""

from __future__ import annotations

import dataclasses
import difflib
import re

import numpy as np

from tensorboard_plugin_dbg.index.naming import is_function_call
from tensorboard_plugin_dbg.index.protocol import RunQueries

_SUFFIX = re.compile(r"(_\d+)+$")


def function_base(name: str) -> str:
    """`__inference_train_step_1234` -> `train_step`: the numeric suffixes differ between runs and retraces."""
    return _SUFFIX.sub("", name.removeprefix("__inference_"))


@dataclasses.dataclass
class TraceKeys:
    """A run's graph traces under the shared key vocabulary: an int32 key per row and the per-key counts, and for
    run A its rows sorted by key. Occurrences are computed when needed, never kept: a comparison's memory is
    counted against one run's index (issue #27: at most 2x), and the index keeps ~26 B per trace."""

    key: np.ndarray  # int32[T]: key code of each trace row
    starts: np.ndarray  # int64[K + 1]: key k's rows are by_key[starts[k]:starts[k + 1]]
    by_key: np.ndarray | None  # int32[T]: the rows sorted by key (stable); run A only
    kind_mode: np.ndarray  # int8[kinds]: tensor_debug_mode of each trace kind
    kind_key: np.ndarray  # int32[kinds]: key code of each trace kind
    kinds: np.ndarray  # [T]: each row's kind (the index's column, not a copy)
    wall: np.ndarray  # float64[T] (the index's column, not a copy)

    def modes(self, rows: np.ndarray) -> np.ndarray:
        """tensor_debug_mode of the given rows."""
        return self.kind_mode[self.kinds[rows]]

    def occurrence_of(self, row: int) -> int:
        """How many earlier rows share this row's key (one pass over the keys: for the few rows a finding names)."""
        return int(np.count_nonzero(self.key[:row] == self.key[row]))

    def occurrences(self) -> np.ndarray:
        """int32[T]: every row's occurrence (a temporary of the alignment)."""
        by_key = self.by_key if self.by_key is not None else np.argsort(self.key, kind="stable").astype(np.int32)
        counts = np.diff(self.starts)
        in_order = np.arange(len(self.key), dtype=np.int32)  # position in by_key less its key's start
        in_order -= np.repeat(self.starts[:-1].astype(np.int32), counts)
        occurrence = np.empty(len(self.key), np.int32)
        occurrence[by_key] = in_order
        return occurrence


def trace_keys(run: RunQueries, vocab: dict[tuple[str, str, int], int], sort_rows: bool) -> TraceKeys:
    """The run's keys; `sort_rows` for run A (whose rows B's are looked up in)."""
    arrays = run.trace_arrays()
    kinds = np.asarray(arrays["kind"])
    n_kinds = int(kinds.max()) + 1 if len(kinds) else 0
    names = {gid: function_base(name) for gid, name, _outer in run.graph_entries()}
    kind_key = np.zeros(n_kinds, np.int32)
    kind_mode = np.zeros(n_kinds, np.int8)
    for k in range(n_kinds):
        graph_id, op_name, slot, mode, _device = run.kind_info(k)
        name = (names.get(graph_id, graph_id), op_name, int(slot))
        kind_key[k] = vocab.setdefault(name, len(vocab))
        kind_mode[k] = mode
    key = kind_key[kinds]
    counts = np.bincount(key, minlength=len(vocab)) if len(key) else np.zeros(len(vocab), np.int64)
    starts = np.r_[0, np.cumsum(counts)].astype(np.int64)
    by_key = np.argsort(key, kind="stable").astype(np.int32) if sort_rows else None
    wall = np.asarray(arrays["wall_time"], np.float64)
    return TraceKeys(key, starts, by_key, kind_mode, kind_key, kinds, wall)


def _count(keys: TraceKeys, key: np.ndarray) -> np.ndarray:
    """How many traces of each given key the run holds (0 for a key it never saw)."""
    n = len(keys.starts) - 1
    inside = key < n
    counts = np.diff(keys.starts).astype(np.int32)
    return np.where(inside, counts[np.minimum(key, max(n - 1, 0))] if n else 0, 0).astype(np.int32, copy=False)


@dataclasses.dataclass
class Pairs:
    """Aligned rows, in B's order: a[i] in A is b[i] in B. Rows only in one run listed apart."""

    a: np.ndarray
    b: np.ndarray
    only_a: np.ndarray
    only_b: np.ndarray


def align_traces(a: TraceKeys, b: TraceKeys) -> Pairs:
    """The k-th trace of a key in B pairs with the k-th of that key in A: a B row pairs when A holds more than
    `occurrence` traces of its key, and its A row is read off A's rows sorted by key (no sort of both runs)."""
    assert a.by_key is not None, "run A's keys are built with sort_rows"
    occurrence_b = b.occurrences()
    matched_b = occurrence_b < _count(a, b.key)
    rows_b = np.flatnonzero(matched_b).astype(np.int32)
    only_b = np.flatnonzero(~matched_b).astype(np.int32)
    del matched_b
    at = a.starts.astype(np.int32)[b.key[rows_b]]
    at += occurrence_b[rows_b]
    del occurrence_b
    rows_a = a.by_key[at]
    del at
    only_a = np.flatnonzero(a.occurrences() >= _count(b, a.key)).astype(np.int32)
    return Pairs(rows_a, rows_b, only_a, only_b)


def key_overlap(a: TraceKeys, b: TraceKeys) -> float:
    """Shared distinct keys over all distinct keys (1.0 when neither run has a graph trace)."""
    ka, kb = np.flatnonzero(np.diff(a.starts) > 0), np.flatnonzero(np.diff(b.starts) > 0)
    union = len(np.union1d(ka, kb))
    return len(np.intersect1d(ka, kb)) / union if union else 1.0


def exec_names(run: RunQueries) -> list[str]:
    """Each execution's op type, a function call named by its function without the numeric suffix."""
    codes = np.asarray(run.execution_arrays()["op_type"], np.int64)
    by_code = [function_base(t) if is_function_call(t) else t for t in run.exec_op_types]
    return [by_code[c] for c in codes.tolist()]


MAX_DIFFLIB = 20_000  # executions in both runs above which difflib (quadratic at worst) gives way to occurrences


def align_executions(names_a: list[str], names_b: list[str]) -> tuple[Pairs, float]:
    """(aligned executions, similarity 0..1 of the two op-type sequences)."""
    if names_a == names_b:
        both = np.arange(len(names_a), dtype=np.int64)
        return Pairs(both, both.copy(), np.zeros(0, np.int64), np.zeros(0, np.int64)), 1.0
    if len(names_a) + len(names_b) > MAX_DIFFLIB:
        return _align_by_occurrence(names_a, names_b)
    matcher = difflib.SequenceMatcher(None, names_a, names_b, autojunk=False)
    ia: list[int] = []
    ib: list[int] = []
    for block in matcher.get_matching_blocks():
        ia += range(block.a, block.a + block.size)
        ib += range(block.b, block.b + block.size)
    pa, pb = np.asarray(ia, np.int64), np.asarray(ib, np.int64)
    only_a = np.setdiff1d(np.arange(len(names_a)), pa)
    only_b = np.setdiff1d(np.arange(len(names_b)), pb)
    total = len(names_a) + len(names_b)
    return Pairs(pa, pb, only_a, only_b), (2 * len(pa) / total if total else 1.0)


def _align_by_occurrence(names_a: list[str], names_b: list[str]) -> tuple[Pairs, float]:
    """The k-th execution of an op type in B with the k-th of that type in A (as graph traces align): linear, for
    long eager runs; an op added in B shifts only the pairs of its own type."""
    vocab: dict[str, int] = {}
    codes_a = np.fromiter((vocab.setdefault(n, len(vocab)) for n in names_a), np.int64, len(names_a))
    codes_b = np.fromiter((vocab.setdefault(n, len(vocab)) for n in names_b), np.int64, len(names_b))
    ia, ib = pair_equal(codes_a, codes_b)
    order = np.argsort(ib, kind="stable")
    pa, pb = ia[order], ib[order]
    only_a = np.setdiff1d(np.arange(len(names_a)), pa)
    only_b = np.setdiff1d(np.arange(len(names_b)), pb)
    return Pairs(pa, pb, only_a, only_b), 2 * len(pa) / (len(names_a) + len(names_b))


def pair_equal(codes_a: np.ndarray, codes_b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """int64 positions (ia, ib) pairing the k-th entry of each code in B with the k-th of that code in A."""
    id_a, id_b = (codes_a << 32) | _occurrence(codes_a), (codes_b << 32) | _occurrence(codes_b)
    _common, ia, ib = np.intersect1d(id_a, id_b, assume_unique=True, return_indices=True)
    return ia.astype(np.int64), ib.astype(np.int64)


def _occurrence(codes: np.ndarray) -> np.ndarray:
    order = np.argsort(codes, kind="stable")
    counts = np.bincount(codes) if len(codes) else np.zeros(0, np.int64)
    starts = np.r_[0, np.cumsum(counts)[:-1]] if len(counts) else np.zeros(0, np.int64)
    occ = np.empty(len(codes), np.int64)
    occ[order] = np.arange(len(codes)) - np.repeat(starts, counts)
    return occ
