"""Traces whose order the dump does not decide pair by what they hold, not by occurrence.

A tf.data function (graph name `Dataset_…`: Keras's `Dataset_map_grab_batch` when `fit` is given numpy arrays) runs
on the pipeline's threads, several calls at once: its traces land in the dump in the threads' order, so the k-th
trace of its `GatherV2` is batch k in one recording and batch k+1 in the next, while the model still takes the
batches in the iterator's (deterministic) order. Paired by occurrence, two recordings of one program "differ" there
before anything the changed program does. So a pipeline function's traces of one (function, op, output) key pair as
multisets: a trace of B pairs with a trace of A recording the same thing (health modes: the counts both modes record;
FULL_TENSOR: the same dtype, shape and bytes), k-th with k-th among equals; the traces left over pair in occurrence
order (they differ, and are listed as differing) and the surplus is only in one run. Equal multisets never differ,
whatever order the threads wrote them in; a changed batch still does.
"""

from __future__ import annotations

import hashlib

import numpy as np

from tensorboard_plugin_dbg.analysis.compare.align import Pairs, TraceKeys, pair_equal
from tensorboard_plugin_dbg.analysis.compare.metrics import HEALTH_COLUMNS, canonical_columns, common_level
from tensorboard_plugin_dbg.index.protocol import RunQueries
from tensorboard_plugin_dbg.reader import tensor_content

PIPELINE_PREFIX = "Dataset_"  # TensorFlow's name prefix of a tf.data function's graph (function_base keeps it)
FULL_TENSOR = 7
BLOCK = 1 << 12  # rows whose debug vectors are read at once
CHUNK = 1 << 20  # FULL_TENSOR elements hashed at once
_NAN = -1.5  # no count, dtype code or dimension: NaN's stand-in in a digest


def unordered_keys(vocab: dict[tuple[str, str, int], int]) -> np.ndarray:
    """int32 key codes of the traces whose order the dump does not decide: those of tf.data functions."""
    codes = [code for (function, _op, _slot), code in vocab.items() if function.startswith(PIPELINE_PREFIX)]
    return np.asarray(sorted(codes), np.int32)


def pair_by_content(
    run_a: RunQueries, run_b: RunQueries, pairs: Pairs, ka: TraceKeys, kb: TraceKeys, keys: np.ndarray
) -> Pairs:
    """`pairs` with the traces of `keys` re-paired by content (module docstring); the other pairs are untouched, and
    all stay in B's row order. Costs nothing when the runs have no tf.data function."""
    if not len(keys):
        return pairs
    rows_a, rows_b = np.flatnonzero(np.isin(ka.key, keys)), np.flatnonzero(np.isin(kb.key, keys))
    if not len(rows_a) and not len(rows_b):
        return pairs
    kept = ~np.isin(kb.key[pairs.b], keys)
    out_a, out_b = [pairs.a[kept]], [pairs.b[kept]]
    only_a = [pairs.only_a[~np.isin(ka.key[pairs.only_a], keys)]]
    only_b = [pairs.only_b[~np.isin(kb.key[pairs.only_b], keys)]]
    for key in keys.tolist():
        ra, rb = rows_a[ka.key[rows_a] == key], rows_b[kb.key[rows_b] == key]
        if not len(ra) and not len(rb):
            continue
        pa, pb, oa, ob = _pair_key(run_a, run_b, ra, rb, ka, kb)
        out_a.append(pa)
        out_b.append(pb)
        only_a.append(oa)
        only_b.append(ob)
    a, b = np.concatenate(out_a).astype(pairs.a.dtype), np.concatenate(out_b).astype(pairs.b.dtype)
    order = np.argsort(b, kind="stable")
    return Pairs(
        a[order], b[order], np.sort(np.concatenate(only_a)).astype(pairs.only_a.dtype),
        np.sort(np.concatenate(only_b)).astype(pairs.only_b.dtype),
    )  # fmt: skip


def _pair_key(
    run_a: RunQueries, run_b: RunQueries, ra: np.ndarray, rb: np.ndarray, ka: TraceKeys, kb: TraceKeys
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(paired A rows, paired B rows, A's surplus, B's surplus) of one key's rows (each in row order)."""
    modes_a, modes_b = np.unique(ka.modes(ra)), np.unique(kb.modes(rb))
    same_mode = len(modes_a) == 1 and len(modes_b) == 1
    level = common_level(int(modes_a[0]), int(modes_b[0])) if same_mode and len(ra) and len(rb) else None
    vocab: dict[bytes, int] = {}
    if level is None:  # nothing comparable (or one side empty): occurrence order, as align_traces pairs
        codes_a, codes_b = np.zeros(len(ra), np.int64), np.zeros(len(rb), np.int64)
    else:
        codes_a = _codes(_digests(run_a, ra, int(modes_a[0]), level), vocab)
        codes_b = _codes(_digests(run_b, rb, int(modes_b[0]), level), vocab)
    ia, ib = pair_equal(codes_a, codes_b)
    left_a, left_b = np.setdiff1d(np.arange(len(ra)), ia), np.setdiff1d(np.arange(len(rb)), ib)
    n = min(len(left_a), len(left_b))
    ia, ib = np.r_[ia, left_a[:n]].astype(np.int64), np.r_[ib, left_b[:n]].astype(np.int64)
    return ra[ia], rb[ib], ra[left_a[n:]], rb[left_b[n:]]


def _codes(digests: list[bytes], vocab: dict[bytes, int]) -> np.ndarray:
    return np.fromiter((vocab.setdefault(d, len(vocab)) for d in digests), np.int64, len(digests))


def _digests(run: RunQueries, rows: np.ndarray, mode: int, level: int) -> list[bytes]:
    """What each trace records, as bytes equal exactly when a comparison finds the two the same (bitwise for
    FULL_TENSOR values, which tolerances could only widen: a pair equal within them is left to be compared)."""
    if mode == FULL_TENSOR:
        return [_tensor_digest(run, int(row)) for row in rows.tolist()]
    if level not in HEALTH_COLUMNS:  # NO_TENSOR: nothing recorded, all alike
        return [b""] * len(rows)
    out: list[bytes] = []
    for first in range(0, len(rows), BLOCK):
        _modes, vectors = run.trace_vectors(rows[first : first + BLOCK])
        columns = np.asarray(canonical_columns(mode, vectors, level), np.float64)
        columns[np.isnan(columns)] = _NAN  # one NaN, whatever its bits: NaN is "the same" as NaN (health_differs)
        out += [r.tobytes() for r in np.ascontiguousarray(columns)]
    return out


def _tensor_digest(run: RunQueries, row: int) -> bytes:
    loc = run.tensor_record("graph", row).location
    if loc is None:
        return b"?"
    h = hashlib.blake2b(f"{loc.dtype}{tuple(loc.shape)}".encode(), digest_size=16)
    for first in range(0, loc.size if loc.storage else 0, CHUNK):  # the stored bytes, as tensor_metric compares them
        h.update(tensor_content.read_range(loc, first, min(CHUNK, loc.size - first)).tobytes())
    return h.digest()
