"""The vectorized trace decoder (reader/trace_fast.py) gives exactly what the protobuf path gives, on every real
dump of the test programs and on synthetic records that break its expectations."""

from __future__ import annotations

import glob
import os
import struct

import dumps
import numpy as np
import pytest

from tensorboard_plugin_dbg.reader import crc32c, tfrecord, trace_fast, traces

PROGRAMS = [("demo",), ("nested",), ("keras_fit",), ("data_map",), ("mirrored",), ("circular",), ("op_regex",)] + [
    ("modes", m) for m in ("NO_TENSOR", "CURT_HEALTH", "CONCISE_HEALTH", "FULL_HEALTH", "SHAPE", "FULL_TENSOR")
]


def _decode_both(data: bytes):
    buf = np.frombuffer(data, np.uint8)
    scan = tfrecord.scan(buf, 0)
    slow_kinds, fast_kinds = traces.TraceKinds(), traces.TraceKinds()
    slow = traces.decode_slow(buf, scan.starts, scan.lengths, slow_kinds)
    fast = trace_fast.decode_fast(buf, scan.starts, scan.lengths, fast_kinds, scan.words)
    return slow, slow_kinds, fast, fast_kinds


def _assert_same(slow, slow_kinds, fast, fast_kinds):
    assert [slow_kinds.kinds[k] for k in slow.kind] == [fast_kinds.kinds[k] for k in fast.kind]
    assert np.array_equal(slow.wall_time, fast.wall_time)
    assert np.array_equal(slow.offset, fast.offset)
    assert np.array_equal(slow.nonfinite_rows, fast.nonfinite_rows)


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: "-".join(p))
@pytest.mark.slow  # protobuf decoding of every record, 13 dumps: ~3 s each
def test_fast_equals_protobuf_on_real_dumps(program):
    path = glob.glob(os.path.join(dumps.make_dump(*program), "*.graph_execution_traces"))[0]
    with open(path, "rb") as f:
        data = f.read()
    _assert_same(*_decode_both(data))
    # repeated many times (the periodic path), with one record's op name changed in the middle
    scan = tfrecord.scan(np.frombuffer(data, np.uint8), 0)
    payloads = [data[s : s + n] for s, n in zip(scan.starts.tolist(), scan.lengths.tolist())]
    if not payloads:
        return
    many = payloads * max(2, 3000 // len(payloads))
    victim = len(many) // 2
    if b"\x12" in many[victim][11:]:
        name_at = many[victim].index(b"\x12", 50)  # inside the record, after the context id
        edited = bytearray(many[victim])
        edited[name_at + 2] = ord("Z") if edited[name_at + 2] != ord("Z") else ord("Y")
        many[victim] = bytes(edited)
    _assert_same(*_decode_both(b"".join(tfrecord.frame(p) for p in many)))


def test_records_off_the_expected_layout_fall_back():
    from tensorboard_plugin_dbg.reader import schema

    events = []
    for i in range(300):
        e = schema.DebugEvent(wall_time=1000.0 + i)
        t = e.graph_execution_trace
        t.tfdbg_context_id, t.op_name = "g" * (i % 3 + 1), "op/" + "x" * (i % 200)  # long names: 2-byte lengths
        t.output_slot, t.tensor_debug_mode = (i % 2) * 200, 4  # slot 200 needs a 2-byte varint
        vec = np.zeros(11)
        vec[7] = float(i % 5 == 0)
        t.tensor_proto = b"\x08\x02\x12\x04\x12\x02\x08\x0b\x22\x58" + vec.tobytes()
        if i % 7 == 0:
            e.step = 3  # an unexpected field
        events.append(e.SerializeToString())
    events.append(b"\x09" + struct.pack("<d", 5.0) + b"\x52\x05garbage")  # does not parse
    slow, sk, fast, fk = _decode_both(b"".join(tfrecord.frame(p) for p in events))
    _assert_same(slow, sk, fast, fk)
    assert len(fast.kind) == 300 and len(fast.unparsed) == 1
    assert fast.nonfinite_rows.tolist() == list(range(0, 300, 5))


def test_count_words_read_as_the_floats_they_hold():
    """trace_fast's non-finite test ORs a vector's count words instead of comparing floats: -0.0 and 0.0 count as
    zero, a NaN, an infinity, a denormal and a count do not, at every byte alignment of the vector."""
    values = [0.0, -0.0, float("nan"), float("inf"), 5e-324, 3.0, -1.0]
    for shift in range(4):
        raw = b"\x07" * shift + b"".join(struct.pack("<ddd", 0.0, v, 0.0) for v in values)
        words = crc32c.Words(np.frombuffer(raw, np.uint8))
        at = np.arange(len(values), dtype=np.int64) * 24 + shift
        got = trace_fast._any_nonzero(words, at, (0, 1, 2))
        assert got.tolist() == [v != 0 for v in values]
