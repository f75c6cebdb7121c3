"""Vectorized decoding of graph_execution_trace records straight from the bytes, with numpy.

TF writes every trace with one regular layout: DebugEvent{wall_time=1 (fixed64), graph_execution_trace=10 {
context id=1, op name=2, [output slot=3], mode=4, tensor_proto=5 {dtype=1, shape=2, content=4}, device=6}}.
  * layout: a fixed path checks each expected tag with one byte gather per field for all records at once
    (one-byte lengths, as TF's ids, names and health vectors have); records off it go through a generic
    vectorized field walker, and anything it cannot follow goes to the protobuf parser (reader/traces.py).
  * identity: everything but the wall time and the content vector — context id, op name, slot, mode, tensor
    header, device — repeats every step. Those bytes are hashed 4 at a time into a 64-bit key; each new key is
    decoded once with protobuf, and every record is then compared word for word with its key's stored bytes,
    so a hash collision cannot mislabel a trace.
  * periodic shortcut (reader/trace_periodic.py): a training loop writes the same sequence of traces every step,
    so record i and record i - T (one step earlier) usually differ only in wall time and values. One masked XOR
    against the step before (within the chunk, or the step carried from the file's previous chunk) proves it
    for many records at once; those take the kind of their predecessor, the others are identified as above.
  * health counts come from fixed offsets of the float64 content vector.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from . import crc32c, health_vectors, step_values
from . import trace_periodic as periodic
from . import traces as tr
from .trace_layout import generic_identity_spans, identity_spans

_PRIME = np.uint64(0x100000001B3)
_BASIS = np.uint64(0xCBF29CE484222325)
_MASK32 = np.array([0, 0xFF, 0xFFFF, 0xFFFFFF, 0xFFFFFFFF], dtype=np.uint32)
_COUNT_AT = {3: (2, 3, 4), 4: (5, 6, 7)}  # mode -> element index of neg_inf, pos_inf, nan


def _span_words(words: crc32c.Words, start: np.ndarray, length: np.ndarray) -> np.ndarray:
    """(W, M) uint32 words of each span, little-endian, zero past the span's end."""
    width = int((length.max() + 3) // 4) if len(length) else 0
    out = np.empty((width, len(start)), np.uint32)
    first = words.index(start)
    for j in range(width):
        np.take(words.flat, first + j, out=out[j])
        out[j] &= _MASK32[np.clip(length - 4 * j, 0, 4)]
    return out


def _hash(words: np.ndarray, length: np.ndarray, h: np.ndarray) -> np.ndarray:
    for j in range(words.shape[0]):
        h = (h ^ words[j]) * _PRIME
    return (h ^ length.astype(np.uint64)) * _PRIME


def _identify(
    buf: np.ndarray,
    words: crc32c.Words,
    starts: np.ndarray,
    ends: np.ndarray,
    a0: np.ndarray,
    alen: np.ndarray,
    b0: np.ndarray,
    blen: np.ndarray,
    kinds: tr.TraceKinds,
    seed: int,
) -> np.ndarray:
    """Kind code of each record from its identity spans; -1 where undecodable or not verified."""
    m = len(a0)
    kind = np.full(m, -1, np.int64)
    if m == 0:
        return kind
    aw = _span_words(words, a0, alen)
    bw = _span_words(words, b0, blen)
    key = _hash(bw, blen, _hash(aw, alen, np.full(m, _BASIS ^ np.uint64(seed))))
    uniq, first, inv = np.unique(key, return_index=True, return_inverse=True)
    store, at, known = _lookup(kinds, uniq)
    if not known.all():  # new identities: each decoded once with protobuf (the first steps of a run)
        for u in np.flatnonzero(~known).tolist():
            f = int(first[u])
            decoded = tr.decode_one(buf[starts[f] : ends[f]].tobytes())
            if decoded is not None:
                kinds.by_hash[int(uniq[u])] = (
                    kinds.code(decoded[1]),
                    aw[:, f].copy(),
                    bw[:, f].copy(),
                    int(alen[f]),
                    int(blen[f]),
                )
        store, at, known = _lookup(kinds, uniq)
    if not known.any():
        return kind
    # every record compared word for word with its key's stored identity: a hash collision cannot mislabel it
    # (equal lengths mean the words past either span's end are zero on both sides, so the common width suffices)
    ent = at[inv]
    same = known[inv] & (store.a_len[ent] == alen) & (store.b_len[ent] == blen)
    for mine, ref in ((aw, store.a_words), (bw, store.b_words)):
        w = min(mine.shape[0], ref.shape[0])
        same &= (mine[:w] == ref[:w][:, ent]).all(axis=0)
    kind[same] = store.code[ent[same]]
    return kind


def _lookup(kinds: tr.TraceKinds, keys: np.ndarray) -> tuple[tr.IdentityStore, np.ndarray, np.ndarray]:
    """(identity store, each key's entry position in it, whether the key is known there)."""
    store = kinds.identity_store()
    at = np.minimum(np.searchsorted(store.keys, keys), max(len(store.keys) - 1, 0))
    known = (store.keys[at] == keys) if len(store.keys) else np.zeros(len(keys), bool)
    return store, at, known


def _identify_subset(
    buf: np.ndarray,
    words: crc32c.Words,
    starts: np.ndarray,
    ends: np.ndarray,
    sel: np.ndarray,
    kinds: tr.TraceKinds,
    kind: np.ndarray,
    content: np.ndarray,
    clen: np.ndarray,
) -> None:
    """Kinds (and content vectors) of records `sel`, in place: fixed layout first, generic walker for the rest."""
    ok, a0, alen, b0, blen, c0, cl = identity_spans(buf, starts[sel], ends[sel])
    for seed in (1, 2):
        if seed == 2:  # the generic walker on what the fixed path rejected
            rest = np.flatnonzero(kind[sel] < 0)
            if not len(rest):
                break
            ok, a0, alen, b0, blen, c0, cl = generic_identity_spans(buf, starts[sel[rest]], ends[sel[rest]])
            pick = rest[ok]
        else:
            pick = np.flatnonzero(ok)
        a0, alen, b0, blen, c0, cl = (x[ok] for x in (a0, alen, b0, blen, c0, cl))
        rows = sel[pick]
        kind[rows] = _identify(buf, words, starts[rows], ends[rows], a0, alen, b0, blen, kinds, seed)
        content[rows], clen[rows] = c0, cl


def _any_nonzero(words: crc32c.Words, at: np.ndarray, elements: tuple[int, ...]) -> np.ndarray:
    """Whether any of the float64 elements `elements` of the vectors at byte positions `at` is not 0: the words
    OR'ed, the sign bit left out (-0.0 is 0; a NaN or a count is not), instead of a float per element."""
    if words.lazy:  # a big chunk's few records: no word copies for them
        return np.logical_or.reduce([words.f64(at + 8 * i) != 0 for i in elements])
    first = words.index(at)
    acc = np.zeros(len(at), np.uint32)
    for i in elements:
        acc |= words.flat.take(first + 2 * i)
        acc |= words.flat.take(first + 2 * i + 1) & np.uint32(0x7FFFFFFF)
    return acc != 0


def decode_fast(
    buf: np.ndarray,
    starts: np.ndarray,
    lengths: np.ndarray,
    kinds: tr.TraceKinds,
    words: crc32c.Words | None = None,
    carry: periodic.Carry | None = None,
) -> tr.TraceBatch:
    """`carry`: the file's step carried from the chunk before (trace_periodic.Carry), used and then replaced."""
    words = words if words is not None else crc32c.Words(buf)
    m = len(starts)
    ends = starts + lengths
    kind = np.full(m, -1, np.int64)
    content = np.zeros(m, np.int64)
    clen = np.full(m, -1, np.int64)
    period, count = periodic.periodic_block(starts, lengths) if carry is None else carry.block(starts, lengths)
    if period:
        template = (
            np.arange(period) if carry is None else carry.inherit(buf, starts, lengths, period, kind, content, clen)
        )
        if len(template):
            _identify_subset(buf, words, starts, ends, template, kinds, kind, content, clen)
        # a template inherited whole from the carry has the carried mask (same records at the same offsets)
        mask = carry.mask if carry is not None and not len(template) else None
        redo, inherit, donor = periodic.inherit_periodic(buf, starts, ends, period, count, kind, content, clen, mask)
        todo = np.concatenate([redo, np.arange(count, m)])
        if len(todo):
            _identify_subset(buf, words, starts, ends, todo, kinds, kind, content, clen)
        late = donor >= period  # inherit from records decoded just now
        if late.any():
            d, r = donor[late], inherit[late]
            kind[r], clen[r] = kind[d], clen[d]
            content[r] = content[d] - starts[d] + starts[r]
    else:
        _identify_subset(buf, words, starts, ends, np.arange(m), kinds, kind, content, clen)
    if carry is not None:  # the fast path's kinds, before the protobuf fallback below fills in the rest
        carry.keep(buf, starts, ends, period, kind, content, clen)
    layout = _layout(kinds, kind, clen, carry)
    fast = layout.fast
    wall = words.f64(starts + 1)
    nf_rows = [sel[_any_nonzero(words, content[sel], (1,) if md == 2 else _COUNT_AT[md])] for md, sel in layout.sels]
    slow = layout.slow
    keep = fast.copy()
    if len(slow):
        fallback = tr.decode_slow(buf, starts[slow], lengths[slow], kinds)
        parsed = slow[np.isin(starts[slow], fallback.offset)]
        keep[parsed] = True
        kind[parsed] = fallback.kind
        wall[parsed] = fallback.wall_time
        nf_rows.append(parsed[fallback.nonfinite_rows])
        unparsed = fallback.unparsed
    else:
        unparsed = []
    rows = np.sort(np.concatenate(nf_rows)) if nf_rows else np.zeros(0, np.int64)
    steps = _step_values(buf, words, starts, lengths, kinds, kind, layout.fast_mode, content, clen)
    if bool(keep.all()):  # every record decoded (the usual case): no row to drop, nothing to copy
        return tr.TraceBatch(kind.astype(np.int32), wall, starts, rows, np.zeros((len(rows), 4)), unparsed, steps)
    new_index = np.cumsum(keep) - 1  # rows renumbered after dropping records that did not decode
    kept = np.flatnonzero(keep)
    return tr.TraceBatch(
        kind[kept].astype(np.int32),
        wall[kept],
        starts[kept],
        new_index[rows],
        np.zeros((len(rows), 4)),
        unparsed,
        steps.take(kept),
    )


@dataclasses.dataclass
class _Layout:
    """What the decoder derives from a chunk's kind codes and content lengths alone: each record's mode, whether the
    fast path has all it needs of it, its rows per health mode and the rest (left to protobuf). Chunks of whole
    training steps (index/ingest.chunk_bytes) repeat the chunk before's, which the file's Carry keeps."""

    kind: np.ndarray
    clen: np.ndarray
    fast: np.ndarray
    sels: list[tuple[int, np.ndarray]]  # (health mode, its fast rows) for the modes present
    slow: np.ndarray
    fast_mode: np.ndarray  # the mode of the fast rows, -1 elsewhere


def _layout(kinds: tr.TraceKinds, kind: np.ndarray, clen: np.ndarray, carry: periodic.Carry | None) -> _Layout:
    last = carry.layout if carry is not None else None
    if last is not None and np.array_equal(kind, last.kind) and np.array_equal(clen, last.clen):
        return last
    mode = kinds.modes()[kind]  # kind -1 picks the trailing 0
    need = health_vectors.VECTOR_BYTES[np.clip(mode, 0, 15)]
    # health modes need their content vector; NO_TENSOR and SHAPE carry no counts; the rest go to protobuf
    fast = (kind >= 0) & (((mode >= 2) & (mode <= 4) & (clen == need)) | (mode == 1) | (mode == 5))
    sels = [(md, np.flatnonzero(fast & (mode == md))) for md in (2, 3, 4)]
    layout = _Layout(
        kind.copy(),
        clen.copy(),
        fast,
        [(md, sel) for md, sel in sels if len(sel)],
        np.flatnonzero(~fast),
        np.where(fast, mode, -1),
    )
    if carry is not None:
        carry.layout = layout
    return layout


def _step_values(
    buf: np.ndarray,
    words: crc32c.Words,
    starts: np.ndarray,
    lengths: np.ndarray,
    kinds: tr.TraceKinds,
    kind: np.ndarray,
    fast_mode: np.ndarray,
    content: np.ndarray,
    clen: np.ndarray,
) -> step_values.StepValues:
    """The rules' step values of every record (step_values.py): read at the content vectors the fast path placed;
    the records it left to protobuf and vectors off their mode's length, of FULL_HEALTH / SHAPE kinds, through
    step_values.of_records."""
    steps, missing = step_values.of_contents(words, fast_mode, content, clen)
    left = np.flatnonzero((fast_mode < 0) & (kind >= 0))  # a few rows: the mode test on those only
    if not len(left) and not missing.any():  # every record read by the fast path (the usual case)
        return steps
    mode = kinds.modes()[kind]  # decode_slow may have added kinds
    left = left[np.isin(mode[left], step_values.MODES)]
    redo = np.union1d(np.flatnonzero(missing), left)
    if len(redo):
        again = step_values.of_records(buf, starts[redo], lengths[redo], mode[redo])
        steps.dtype[redo], steps.sig[redo], steps.zero[redo] = again.dtype, again.sig, again.zero
    return steps


def decode_traces(
    buf: np.ndarray,
    starts: np.ndarray,
    lengths: np.ndarray,
    kinds: tr.TraceKinds,
    words: crc32c.Words | None = None,
    carry: periodic.Carry | None = None,
) -> tr.TraceBatch:
    """The vectorized decoder for a chunk of records, the protobuf path (traces.decode_slow) for a handful.
    `carry`: the file's trace_periodic.Carry (a speed-up only: the step decoded last, for the next chunk)."""
    if len(starts) < 64:
        batch = tr.decode_slow(buf, starts, lengths, kinds)
        at = np.searchsorted(starts, batch.offset)  # the parsed records' places among the chunk's (ascending)
        batch.steps = step_values.of_records(buf, batch.offset, lengths[at], kinds.modes()[batch.kind])
        return batch
    return decode_fast(buf, starts, lengths, kinds, words, carry)
