"""The step carried from one chunk of a trace file to the next (reader/trace_periodic.Carry): decoding chunk by
chunk with it gives exactly what protobuf gives for the whole file and what chunk-by-chunk decoding without it
gives, wherever the chunks start in the step; and a record whose identity bytes differ from the carried record's
(another op name of the same length, another slot, device or context) never takes the carried kind."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from tensorboard_plugin_dbg.reader import (
    schema,
    tfrecord,
    trace_fast,
    trace_periodic,
    traces,
)

# dtype DT_DOUBLE, shape [n], content of 8 n bytes: what TF writes for the health modes' vectors
_HEADER = {
    2: b"\x08\x02\x12\x04\x12\x02\x08\x02\x22\x10",
    3: b"\x08\x02\x12\x04\x12\x02\x08\x05\x22\x28",
    4: b"\x08\x02\x12\x04\x12\x02\x08\x0b\x22\x58",
}
_SIZE = {2: 2, 3: 5, 4: 11}
_BAD_AT = {2: (1,), 3: (2, 3, 4), 4: (5, 6, 7)}  # where each mode's vector counts non-finite elements


def _op(i: int) -> tuple:
    """(context id, op name, slot, mode, device) of the i-th op of a step: names of several lengths, all modes."""
    mode = (2, 3, 4, 4, 1, 5)[i % 6]
    return (
        "ctx" + "abc"[i % 3],
        f"model/layer_{i}/" + "w" * (i % 7),
        i % 3,
        mode,
        "/job:localhost/device:CPU:0" if i % 4 else "",
    )


def _record(op: tuple, wall: float, rng) -> bytes:
    ctx, name, slot, mode, device = op
    e = schema.DebugEvent(wall_time=wall)
    t = e.graph_execution_trace
    t.tfdbg_context_id, t.op_name, t.output_slot, t.tensor_debug_mode = ctx, name, slot, mode
    if device:
        t.device_name = device
    if mode in _HEADER:
        vec = rng.integers(0, 50, _SIZE[mode]).astype(np.float64)
        for at in _BAD_AT[mode]:
            vec[at] = float(rng.random() < 0.2)
        t.tensor_proto = _HEADER[mode] + vec.tobytes()
    elif mode == 5:  # SHAPE: dtype, rank, size, shape as a float64 vector (no counts)
        t.tensor_proto = b"\x08\x02\x12\x04\x12\x02\x08\x0a\x22\x50" + np.arange(10, dtype=np.float64).tobytes()
    return e.SerializeToString()


def _stream(steps: list[list[tuple]], seed: int = 0) -> list[bytes]:
    """Framed records of the given steps (each a list of ops), wall times increasing."""
    rng = np.random.default_rng(seed)
    out, wall = [], 1000.0
    for ops in steps:
        for op in ops:
            wall += 0.001
            out.append(tfrecord.frame(_record(op, wall, rng)))
    return out


def _decode(frames: list[bytes], bounds: list[int], carry) -> tuple:
    """Decodes frames[bounds[k]:bounds[k + 1]] one chunk at a time, each as its own buffer at its file offset, as
    the index reads a file. Returns (kind tuples, wall times, absolute payload offsets, global non-finite rows)."""
    kinds = traces.TraceKinds()
    offsets = np.cumsum([0] + [len(f) for f in frames])
    out_kind, out_wall, out_off, out_nf = [], [], [], []
    for a, b in itertools.pairwise(bounds):
        buf = np.frombuffer(b"".join(frames[a:b]), np.uint8)
        scan = tfrecord.scan(buf, int(offsets[a]))
        assert len(scan.starts) == b - a and not scan.damages
        batch = trace_fast.decode_fast(buf, scan.starts, scan.lengths, kinds, scan.words, carry)
        out_nf.extend((batch.nonfinite_rows + len(out_kind)).tolist())
        out_kind.extend(kinds.kinds[k] for k in batch.kind.tolist())
        out_wall.extend(batch.wall_time.tolist())
        out_off.extend((batch.offset + offsets[a]).tolist())
    return out_kind, out_wall, out_off, out_nf


def _protobuf(frames: list[bytes]) -> tuple:
    buf = np.frombuffer(b"".join(frames), np.uint8)
    scan = tfrecord.scan(buf, 0)
    kinds = traces.TraceKinds()
    batch = traces.decode_slow(buf, scan.starts, scan.lengths, kinds)
    return (
        [kinds.kinds[k] for k in batch.kind.tolist()],
        batch.wall_time.tolist(),
        batch.offset.tolist(),
        batch.nonfinite_rows.tolist(),
    )


def _watch(monkeypatch) -> list:
    """What each Carry.inherit call left to decode (None: the carry was empty)."""
    seen = []
    inherit = trace_periodic.Carry.inherit

    def watched(self, buf, starts, lengths, period, *rest):
        empty = self.data is None
        todo = inherit(self, buf, starts, lengths, period, *rest)
        seen.append(None if empty else todo.tolist())
        return todo

    monkeypatch.setattr(trace_periodic.Carry, "inherit", watched)
    return seen


@pytest.mark.parametrize("period", [29, 36])
@pytest.mark.slow  # every phase of a step: ~3-4 s each
def test_carry_decodes_like_protobuf_at_every_phase(monkeypatch, period):
    ops = [_op(i) for i in range(period)]
    frames = _stream([ops] * 40)
    expect = _protobuf(frames)
    assert any(expect[3]) and len(set(expect[0])) == period
    seen = _watch(monkeypatch)
    for phase in range(period):
        # the first chunk ends `phase` records into a step, the next ones are not whole steps either, and the
        # last one is too short to show a period (decoded without the shortcut, and the carry dropped)
        bounds = (
            [0]
            + list(range(4 * period + phase, len(frames) - 6 * period, 5 * period + 7))
            + [len(frames) - period, len(frames)]
        )
        seen.clear()
        got = _decode(frames, bounds, trace_periodic.Carry())
        assert got == expect, phase
        assert got == _decode(frames, bounds, None), phase
        # every chunk after the first found its first step in the carry, whole
        assert seen[0] is None and len(seen) >= 3 and all(todo == [] for todo in seen[1:]), (phase, seen)


@pytest.mark.parametrize("field", ["op_name", "slot", "device", "context"])
def test_carry_never_gives_a_differing_record_its_kind(monkeypatch, field):
    period = 31
    ops = [_op(i) for i in range(period)]
    victim = 14  # FULL_HEALTH, slot 2, with a device name
    ctx, name, slot, mode, device = ops[victim]
    changed = {
        "op_name": (ctx, name[:-2] + "ZZ", slot, mode, device),  # same length: same record layout
        "slot": (ctx, name, 1, mode, device),
        "device": (ctx, name, slot, mode, device.replace("CPU:0", "GPU:0")),
        "context": (ctx[:-1] + "z", name, slot, mode, device),
    }[field]
    later = list(ops)
    later[victim] = changed
    frames = _stream([ops] * 5 + [later] * 5)
    assert len(frames[5 * period + victim]) == len(frames[victim])  # nothing but the identity bytes differ
    expect = _protobuf(frames)
    assert expect[0][5 * period + victim] == changed
    seen = _watch(monkeypatch)
    got = _decode(frames, [0, 5 * period, len(frames)], trace_periodic.Carry())
    assert got == expect
    assert seen == [None, [victim]]  # only the changed record was decoded again, the rest inherited


def test_carry_at_half_a_step_whose_lengths_repeat_twice(monkeypatch):
    """Names repeat every 12 records but lengths every 6: the period found is 6, so the carried records are half a
    step back, other ops with the same lengths; the byte comparison, not the lengths, must reject them."""
    ops = [("ctx", f"op_{'abcdefghijkl'[i]}" + "x" * (i % 6), 0, 4, "") for i in range(12)]
    frames = _stream([ops] * 30)
    assert trace_periodic.find_period(np.array([len(f) for f in frames])) == 6
    expect = _protobuf(frames)
    seen = _watch(monkeypatch)
    for first in range(24, 48):
        bounds = [0, first] + list(range(first + 40, len(frames) - 24, 40)) + [len(frames)]
        assert _decode(frames, bounds, trace_periodic.Carry()) == expect, first
    # the lengths always line up (the carried records are one length period back), the names never do
    assert len(seen) > 50 and all(todo in (None, [0, 1, 2, 3, 4, 5]) for todo in seen)
