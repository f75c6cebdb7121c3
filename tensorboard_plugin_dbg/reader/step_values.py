"""What the rules' step-to-step scan needs of each graph execution trace, taken while the indexer holds the record:
its dtype code, a shape signature and whether the tensor is all zeros (FULL_HEALTH and SHAPE records; unknown for
the other modes). The indexer folds these per trace kind as it appends rows (index/kind_steps.py), so the rules
never read the health vectors back from the files (issue #40 item 2: that re-read was a third of the time to all
alerts at 1 M traces)."""

from __future__ import annotations

import dataclasses

import numpy as np

from . import debug_values, schema
from .crc32c import Words
from .health_gather import SUMMARY_ELEMENTS, record_vectors
from .health_vectors import VECTOR_BYTES, vector_of

FULL_HEALTH, SHAPE = 4, 5
MODES = (FULL_HEALTH, SHAPE)  # the modes whose vectors hold a dtype and a shape
_DIMS_ZERO = np.array(pow(1_000_033, 6, 1 << 64), np.uint64).view(np.int64)  # 1_000_033 ** 6, wrapped as int64
_FULL_WORDS = np.array([4, 5, 6, 7, 8, 9, 18, 19])  # FULL_HEALTH's dtype, rank, size, zero count: 32-bit words


@dataclasses.dataclass
class StepValues:
    """Per record: dtype code (int8, -1 unknown), shape signature (int64 >= 0, -1 unknown), all-zero flag."""

    dtype: np.ndarray
    sig: np.ndarray
    zero: np.ndarray

    def take(self, rows: np.ndarray) -> StepValues:
        return StepValues(self.dtype[rows], self.sig[rows], self.zero[rows])


def of_vectors(modes: np.ndarray, v: np.ndarray) -> StepValues:
    """From debug vectors as tfdbg2-format.md lays them out (float64, NaN-padded to 11 columns; NaN where unread)."""
    full, shape = modes == FULL_HEALTH, modes == SHAPE
    # FULL_HEALTH: [id, device, dtype, rank, size, neg_inf, pos_inf, nan, neg, zero, pos]; SHAPE: [id, dtype, rank,
    # size, d0..d5]
    dt = np.where(full, v[:, 2], np.where(shape, v[:, 1], -1))
    rank = np.where(full, v[:, 3], v[:, 2])
    size = np.where(full, v[:, 4], v[:, 3])
    dims = np.where(shape[:, None], np.nan_to_num(v[:, 4:10], nan=0), 0)
    return _values(full | shape, dt, rank, size, dims, np.where(full, v[:, 9], np.nan))


def _values(
    health: np.ndarray, dt: np.ndarray, rank: np.ndarray, size: np.ndarray, dims: np.ndarray | None, zeros: np.ndarray
) -> StepValues:
    """dims None: all 0 (FULL_HEALTH rows compare by rank and size only); zeros: the zero count, NaN where none."""
    known = health & np.isfinite(dt)  # the dtype was read
    h = _ints(rank) * 1_000_003 + _ints(size)
    if dims is None:
        h = h * _DIMS_ZERO  # six steps of h * 1_000_033 + 0 at once (int64 products wrap the same way)
    else:
        for c in range(6):
            h = h * 1_000_033 + dims[:, c].astype(np.int64)
    dtype = np.where(known, dt, -1).astype(np.int8)
    sig = np.where(known, h & np.int64(0x7FFF_FFFF_FFFF_FFFF), -1)  # >= 0: -1 stays "unknown"
    return StepValues(dtype, sig, (size > 0) & (zeros == size))


def _ints(x: np.ndarray) -> np.ndarray:
    """int64 of each element, -1 for NaN and infinities (a damaged vector: nothing to cast)."""
    return np.where(np.isfinite(x), x, -1).astype(np.int64)


def of_contents(
    words: Words, modes: np.ndarray, content: np.ndarray, clen: np.ndarray
) -> tuple[StepValues, np.ndarray]:
    """(values, missing) for records whose content vector starts at byte `content` of the chunk `words` holds (the
    fast decoder's layout). `missing`: FULL_HEALTH / SHAPE records whose vector is not of its mode's length there
    (left to of_records). A FULL_HEALTH row costs one gather of 8 words (its dtype, rank, size and zero count)."""
    need = VECTOR_BYTES[np.clip(modes, 0, 15)]
    missing = ((modes == FULL_HEALTH) | (modes == SHAPE)) & (clen != need)
    full = np.flatnonzero((modes == FULL_HEALTH) & ~missing)
    if len(full) == len(modes):  # a FULL_HEALTH chunk (the usual case): its values are the answer, no scatter
        return _full_health(words, content), missing
    out = unknown(len(modes))
    if len(full):
        got = _full_health(words, content[full])
        out.dtype[full], out.sig[full], out.zero[full] = got.dtype, got.sig, got.zero
    shape = np.flatnonzero((modes == SHAPE) & ~missing)
    if len(shape):
        v = np.full((len(shape), 11), np.nan)
        for i in SUMMARY_ELEMENTS[SHAPE]:
            v[:, i] = words.f64(content[shape] + 8 * i)
        got = of_vectors(modes[shape], v)
        out.dtype[shape], out.sig[shape], out.zero[shape] = got.dtype, got.sig, got.zero
    return out, missing


def _full_health(words: Words, content: np.ndarray) -> StepValues:
    """The values of FULL_HEALTH vectors at byte positions `content`: elements 2, 3, 4 and 9 as word pairs, one
    gather (a row's 8 words read as 4 little-endian float64)."""
    at = words.index(content)[:, None] + _FULL_WORDS  # the word at p + 4 is index(p) + 1 (crc32c.Words)
    dt, rank, size, zeros = np.ascontiguousarray(words.flat[at]).view(np.float64).T
    return _values(np.ones(len(content), bool), dt, rank, size, None, zeros)


def of_records(buf: np.ndarray, starts: np.ndarray, lengths: np.ndarray, modes: np.ndarray) -> StepValues:
    """For serialized graph execution traces buf[starts[k]:starts[k] + lengths[k]]: the regular layout gathered,
    any other record of a FULL_HEALTH / SHAPE mode parsed with protobuf (as the rules' read-back does)."""
    ok, v = record_vectors(buf, starts, lengths, modes, strict=True, elements=SUMMARY_ELEMENTS)
    for k in np.flatnonzero(~ok & np.isin(modes, MODES)).tolist():
        if lengths[k] < 0:
            continue
        event = schema.parse_event(buf[starts[k] : starts[k] + lengths[k]].tobytes())
        if event is None or not event.HasField("graph_execution_trace"):
            continue
        proto = event.graph_execution_trace.tensor_proto or None
        v[k] = vector_of(debug_values.decode_debug_value(int(modes[k]), proto))
    return of_vectors(modes, v)


def unknown(n: int) -> StepValues:
    """Rows with nothing to compare (FULL_TENSOR, NO_TENSOR...)."""
    return StepValues(np.full(n, -1, np.int8), np.full(n, -1, np.int64), np.zeros(n, bool))
