"""Where the fields of a graph_execution_trace record are, checked for many records at once with numpy.

TF writes every trace with one regular layout (see trace_fast.py). `fixed_layout` checks it with one byte gather per
field; `identity_spans` / `generic_identity_spans` give the byte spans that identify a trace (everything but the wall
time and the content vector). The indexer's fast decoder (trace_fast.py) and the page health decoder
(health_gather.record_healths) both read records through these checks, so the two cannot disagree on a layout.
"""

from __future__ import annotations

import numpy as np


def fixed_layout(
    buf: np.ndarray, s: np.ndarray, e: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The expected layout (module docstring), checked for all records buf[s:e] at once: every field once, in
    order, with one-byte lengths; a one- or two-byte length of the trace message, which ends the record.
    Returns (ok, t, proto, content, clen): where the trace message, its TensorProto and the TensorProto's content
    vector start, and the vector's length. Positions past the buffer only come from records it rejects. The bytes
    are gathered a few per record at a time: a page of ~100 records pays numpy's per-call cost, not the bytes."""

    def at(
        pos: np.ndarray, offsets: np.ndarray
    ) -> np.ndarray:  # (records, len(offsets)) bytes at pos + offsets (uint8: sums with positions are int64)
        return buf.take(pos[:, None] + offsets, mode="clip")

    head = at(s, _HEAD)  # wall_time tag, trace tag, the trace message's length (one or two bytes)
    v0, v1 = head[:, 2].astype(np.int64), head[:, 3].astype(np.int64)
    one = v0 < 0x80
    t = np.where(one, s + 11, s + 12)
    ok = (e - s >= 14) & (head[:, 0] == 0x09) & (head[:, 1] == 0x52) & (one | (v1 < 0x80))
    ok &= t + np.where(one, v0, (v0 & 0x7F) | (v1 << 7)) == e
    ctx = at(t, _PAIR)  # context id: tag, length
    a = t + 2 + ctx[:, 1]
    name = at(a, _PAIR)  # op name: tag, length
    p = a + 2 + name[:, 1]
    slot = at(p, _PAIR)  # output slot (optional): tag, value
    has_slot = slot[:, 0] == 0x18
    proto = np.where(has_slot, p + 6, p + 4)
    mid = at(proto, _MID)  # mode tag, mode, tensor_proto tag, its length, dtype tag, dtype, shape tag, shape length
    d = proto + mid[:, 3]
    q = proto + 4 + mid[:, 7]
    tail = at(q, _PAIR)  # tensor_content: tag, length
    clen = tail[:, 1].astype(np.int64)
    content = q + 2
    dev = at(d, _PAIR)  # device (optional): tag, length
    ok &= (ctx[:, 0] == 0x0A) & (ctx[:, 1] < 0x80) & (name[:, 0] == 0x12) & (name[:, 1] < 0x80)
    ok &= ~has_slot | (slot[:, 1] < 0x80)
    ok &= (mid[:, _MID_TAGS] == _MID_EXPECT).all(axis=1) & (mid[:, _MID_SMALL] < 0x80).all(axis=1)
    ok &= (tail[:, 0] == 0x22) & (clen < 0x80) & (content + clen == d)
    ok &= np.where(d < e, (dev[:, 0] == 0x32) & (dev[:, 1] < 0x80) & (d + 2 + dev[:, 1] == e), d == e)
    return ok, t, proto, content, clen


_HEAD = np.array([0, 9, 10, 11])
_PAIR = np.array([0, 1])
_MID = np.arange(-4, 4)  # from proto - 4 (the mode's tag) to proto + 3 (the shape's length)
_MID_TAGS = np.array([0, 2, 4, 5, 6])  # mode tag, tensor_proto tag, dtype tag, DT_DOUBLE, shape tag
_MID_EXPECT = np.array([0x20, 0x2A, 0x08, 0x02, 0x12])
_MID_SMALL = np.array([1, 3, 7])  # mode, the TensorProto's length, the shape's length: one-byte varints


Spans = tuple[
    np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray
]  # ok, a0, alen, b0, blen, content, clen


def identity_spans(buf: np.ndarray, s: np.ndarray, e: np.ndarray) -> Spans:
    """fixed_layout as _identify_subset takes it: ok, the identity spans [s + 9, content) and [content + clen, e),
    and the content vector."""
    ok, _t, _proto, content, clen = fixed_layout(buf, s, e)
    return ok, s + 9, content - (s + 9), content + clen, e - (content + clen), content, clen


def _varint(buf: np.ndarray, pos: np.ndarray, active: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    val = np.zeros(len(pos), np.uint64)
    nbytes = np.zeros(len(pos), np.int64)
    cont = active.copy()
    last = len(buf) - 1
    for k in range(10):
        if not cont.any():
            break
        b = buf[np.minimum(pos + k, last)].astype(np.uint64)
        val |= np.where(cont, (b & np.uint64(0x7F)) << np.uint64(7 * k), np.uint64(0))
        nbytes += cont
        cont &= b >= 0x80
    return val, nbytes, cont


def _walk(
    buf: np.ndarray, begin: np.ndarray, end: np.ndarray, ok: np.ndarray, max_field: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Generic walker: fields 1..max_field, each at most once, in order, wire type 0 or 2. Returns (tag
    position, value start, value) as (max_field + 1, M) arrays (-1 / 0 where absent), and ok."""
    m = len(begin)
    tagpos = np.full((max_field + 1, m), -1, np.int64)
    vstart = np.zeros((max_field + 1, m), np.int64)
    value = np.zeros((max_field + 1, m), np.int64)
    pos = begin.copy()
    last_field = np.zeros(m, np.int64)
    last = len(buf) - 1
    for _ in range(max_field + 1):
        active = ok & (pos < end)
        if not active.any():
            break
        tag = buf[np.minimum(pos, last)].astype(np.int64)
        field, wire = tag >> 3, tag & 7
        bad = active & ((tag >= 0x80) | (field <= last_field) | (field > max_field) | ((wire != 0) & (wire != 2)))
        ok &= ~bad
        active &= ~bad
        val, nbytes, too_long = _varint(buf, pos + 1, active)
        ok &= ~too_long
        active &= ~too_long
        start = pos + 1 + nbytes
        ival = val.astype(np.int64)
        nxt = np.where(wire == 2, start + ival, start)
        over = active & ((nxt > end) | (ival < 0))
        ok &= ~over
        active &= ~over
        idx = np.flatnonzero(active)
        f = field[idx]
        tagpos[f, idx] = pos[idx]
        vstart[f, idx] = start[idx]
        value[f, idx] = ival[idx]
        last_field = np.where(active, field, last_field)
        pos = np.where(active, nxt, pos)
    ok &= pos == end
    return tagpos, vstart, value, ok


def generic_identity_spans(buf: np.ndarray, s: np.ndarray, e: np.ndarray) -> Spans:
    """Same outputs as identity_spans, for records the fixed path rejected (multi-byte lengths, no slot ...)."""
    ok = (e - s >= 12) & (buf[np.minimum(s, len(buf) - 1)] == 0x09) & (buf[np.minimum(s + 9, len(buf) - 1)] == 0x52)
    tlen, tnb, too_long = _varint(buf, s + 10, ok)
    ok &= ~too_long
    t = s + 10 + tnb
    ok &= t + tlen.astype(np.int64) == e
    tagpos, vstart, value, ok = _walk(buf, t, e, ok, 6)
    has_proto = tagpos[5] >= 0
    ptag, pstart, pval, pok = _walk(buf, vstart[5], vstart[5] + value[5], ok & has_proto, 4)
    content_ok = pok & (pval[1] == 2) & (ptag[4] >= 0)
    # a tensor proto that is not a float64 vector (FULL_TENSOR of other dtypes) varies in its identity span:
    # leave those to protobuf rather than interning one identity per record
    # (a proto of dtype and shape only, as NO_TENSOR's empty marker, is constant and fine)
    ok &= content_ok | ~has_proto | (pok & (ptag[3] < 0) & (ptag[4] < 0))
    content = np.where(content_ok, pstart[4], 0)
    clen = np.where(content_ok, pval[4], -1)
    # without a usable content vector the identity is the whole trace message after the wall time
    a_len = np.where(content_ok, content - (s + 9), e - (s + 9))
    content = np.where(content_ok, content, s)
    b0 = np.where(content_ok, content + np.maximum(clen, 0), e)
    return ok, s + 9, a_len, b0, e - b0, content, clen
