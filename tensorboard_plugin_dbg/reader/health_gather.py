"""Health vectors gathered straight from serialized graph execution trace records, without protobuf, for the
records whose bytes are TF's regular layout (trace_layout.fixed_layout): a page's healths (`record_healths`) and the
vectors of whole-run scans (`record_vectors`, `kind_vectors`). The other records are left to protobuf."""

from __future__ import annotations

import numpy as np

from ..wire import types as wire
from .health_vectors import HEALTH_LEN, VECTOR_BYTES, health_rows
from .trace_layout import fixed_layout

_ONE_DIM = np.array([0x12, 0x02, 0x08], np.uint8)
# What whole-run scans read of a vector: FULL_HEALTH's dtype, rank, size and zero count; SHAPE's all but the id;
# CONCISE_HEALTH's size and counts.
SUMMARY_ELEMENTS = {
    3: (1, 2, 3, 4),
    4: (2, 3, 4, 5, 6, 7, 9),
    5: (1, 2, 3, 4, 5, 6, 7, 8, 9),
}  # after the shape's length 4: dim { size: <one byte> }


def record_healths(
    buf: np.ndarray, starts: np.ndarray, lengths: np.ndarray, modes: np.ndarray
) -> list[wire.TensorHealth | None]:
    """decode_debug_value(modes[k], <the record's tensor_proto>) for serialized DebugEvents buf[starts[k]:
    starts[k] + lengths[k]] holding graph execution traces, for the records whose bytes are TF's regular layout;
    None for the others (and where lengths[k] < 0), which the caller parses with protobuf (see record_vectors)."""
    out: list[wire.TensorHealth | None] = [None] * len(starts)
    ok, vectors = record_vectors(buf, starts, lengths, modes)
    for mode in np.unique(modes[ok]).tolist():
        sel = np.flatnonzero(ok & (modes == mode))
        for k, health in zip(sel.tolist(), health_rows(mode, vectors[sel])):
            out[k] = health
    return out


def record_vectors(
    buf: np.ndarray,
    starts: np.ndarray,
    lengths: np.ndarray,
    modes: np.ndarray,
    strict: bool = True,
    elements: dict[int, tuple[int, ...]] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """(ok, vectors): the float64 health vector of each serialized graph execution trace buf[starts[k]:starts[k] +
    lengths[k]] in vectors[k, :len] (NaN-padded to 11 columns) where ok[k]: the records whose bytes are TF's
    regular layout in a health mode (CURT, CONCISE, FULL_HEALTH, SHAPE); the others are left to protobuf.

    Regular means what makes protobuf's answer certain without running it: trace_fast's fixed layout (every field
    once, in order, one-byte lengths), a float64 content vector of exactly the mode's length, a shape of one
    dimension, and ASCII in every byte but the wall time, the message length and the vector (so the strings are
    valid UTF-8 and the TensorProto parses). The vectors are gathered in one numpy operation per mode.

    strict=False skips the ASCII check (half the cost: a cumulative count over every byte) for whole-run scans of
    records the indexer already decoded: the layout checks still place the vector exactly; only whether protobuf
    would also accept the strings is left unproved. `elements` (mode -> vector elements): gather only those (the
    others stay NaN), e.g. SUMMARY_ELEMENTS: the gather of every byte of every vector is most of a scan's cost."""
    n = len(starts)
    ok_out = np.zeros(n, bool)
    vectors = np.full((n, 11), np.nan)
    need = VECTOR_BYTES[np.clip(modes, 0, 15)]
    cand = np.flatnonzero((need > 0) & (lengths >= 14))
    if not len(cand) or not len(buf):
        return ok_out, vectors
    s, e, need = starts[cand], starts[cand] + lengths[cand], need[cand]
    ok, t, proto, content, clen = fixed_layout(buf, s, e)
    # a shape of one dimension: 12 04 | 12 02 08 <size> | 22 <content length> <content>
    shape = buf.take(proto[:, None] + np.arange(4, 7), mode="clip")
    ok &= (clen == need) & (content == proto + 10) & (shape == _ONE_DIM).all(axis=1)
    if strict:
        # ASCII: no byte >= 0x80 in [t, content) nor [content + clen, e), from one cumulative count (int32: a
        # cumsum into int64 is 7x slower); it also makes the shape's size a one-byte varint
        high = np.zeros(len(buf) + 1, np.int32)
        np.cumsum(buf >= 0x80, dtype=np.int32, out=high[1:])
        count = high[np.minimum(np.stack([t, content, content + clen, e]), len(buf))]
        ok &= (count[0] == count[1]) & (count[2] == count[3])
    else:
        ok &= shape[:, 2] < 0x80  # the shape's size a one-byte varint (what the ASCII check also proved)
    cand_modes = modes[cand]
    for mode in np.unique(cand_modes[ok]).tolist():
        sel = np.flatnonzero(ok & (cand_modes == mode))
        idx = np.array((elements or {}).get(mode, range(HEALTH_LEN[mode])), np.int64)
        offsets = (8 * idx[:, None] + np.arange(8)).reshape(-1)
        vectors[cand[sel][:, None], idx] = buf[content[sel][:, None] + offsets].view("<f8")
        ok_out[cand[sel]] = True
    return ok_out, vectors


def kind_vectors(
    buf: np.ndarray,
    starts: np.ndarray,
    lengths: np.ndarray,
    modes: np.ndarray,
    kinds: np.ndarray,
    elements: dict[int, tuple[int, ...]] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """record_vectors(strict=False) for whole-run scans, the layout found once per trace kind: the records of one
    kind are equal but for their wall time (a fixed 8 bytes) and their vector, so the vector of a record as long as
    its kind's first one sits where the first one's does. That place comes from record_vectors' layout checks on
    each kind's first record of the block, and every record is checked there by the vector's tag and length bytes
    (0x22 <length>); the others go through record_vectors. Half a scan's cost was the layout of every record."""
    n = len(starts)
    ok_out = np.zeros(n, bool)
    vectors = np.full((n, 11), np.nan)
    if not n or not len(buf):
        return ok_out, vectors
    uniq, first = np.unique(kinds, return_index=True)
    f_start, f_len = starts[first], lengths[first]
    ok_f, _t, proto, content, clen = fixed_layout(buf, f_start, f_start + np.maximum(f_len, 0))
    need_f = VECTOR_BYTES[np.clip(modes[first], 0, 15)]
    shape = buf.take(proto[:, None] + np.arange(4, 7), mode="clip")
    ok_f &= (f_len >= 14) & (need_f > 0) & (clen == need_f) & (content == proto + 10)
    ok_f &= (shape == _ONE_DIM).all(axis=1) & (shape[:, 2] < 0x80)
    # each row's kind's place in `uniq`, through a table over the kind codes (small ints): searchsorted with 4 K
    # unsorted keys cost ~1.5 ms a block, most of the rules' scan (issue #40 item 2); the gather ~0.01 ms
    place = np.zeros(int(uniq[-1]) + 1, np.intp)
    place[uniq] = np.arange(len(uniq))
    at = place[kinds]
    pos = starts + (content - f_start)[at]
    need = VECTOR_BYTES[np.clip(modes, 0, 15)]
    good = ok_f[at] & (lengths == f_len[at]) & (lengths >= 0)
    good &= (buf.take(pos - 2, mode="clip") == 0x22) & (buf.take(pos - 1, mode="clip") == need)
    for mode in np.unique(modes[good]).tolist():
        sel = np.flatnonzero(good & (modes == mode))
        idx = np.array((elements or {}).get(mode, range(HEALTH_LEN[mode])), np.int64)
        offsets = (8 * idx[:, None] + np.arange(8)).reshape(-1)
        vectors[sel[:, None], idx] = buf[pos[sel][:, None] + offsets].view("<f8")
        ok_out[sel] = True
    rest = np.flatnonzero(~good)
    if len(rest):
        ok_r, got = record_vectors(buf, starts[rest], lengths[rest], modes[rest], strict=False, elements=elements)
        vectors[rest] = got
        ok_out[rest] = ok_r
    return ok_out, vectors
