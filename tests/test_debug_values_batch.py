"""The page fast path of trace healths (health_gather.record_healths / health_vectors.health_rows,
record_reads.trace_healths) against the one-record protobuf path (schema.parse_event + decode_debug_value), on real
TensorFlow dumps in every debug mode and on fuzzed copies of their records: wherever the fast path answers, it
answers exactly what the slow path does, and it answers for every record TF writes in a health mode."""

from __future__ import annotations

import glob
import math
import os
import random

import dumps
import numpy as np
import pytest
from run_helpers import run_of

from tensorboard_plugin_dbg.index import record_reads
from tensorboard_plugin_dbg.reader import debug_values, health_gather, health_vectors, schema

HEALTH_MODES = ("CURT_HEALTH", "CONCISE_HEALTH", "FULL_HEALTH", "SHAPE")
ALL_MODES = (*HEALTH_MODES, "NO_TENSOR", "FULL_TENSOR")


def _payloads(dump_dir: str) -> list[bytes]:
    """Every graph execution trace record's payload in the dump (TFRecord framing walked in plain Python)."""
    out = []
    for path in sorted(glob.glob(os.path.join(dump_dir, "*.graph_execution_traces"))):
        with open(path, "rb") as f:
            data = f.read()
        at = 0
        while at + 12 <= len(data):
            length = int.from_bytes(data[at : at + 8], "little")
            out.append(data[at + 12 : at + 12 + length])
            at += 16 + length
    return out


def _slow(mode: int, payload: bytes):
    """What one record read decodes: the DebugEvent with protobuf, then its tensor ('unparsable' when the event
    does not parse; the index would then raise)."""
    event = schema.parse_event(payload)
    if event is None:
        return "unparsable"
    t = event.graph_execution_trace
    return debug_values.decode_debug_value(mode, t.tensor_proto or None)


def _fast(payloads: list[bytes], modes: list[int]) -> list:
    """record_healths over the payloads laid out as in a file (12-byte header before each, 4-byte CRC after)."""
    parts, starts, at = [], [], 0
    for p in payloads:
        parts.append(len(p).to_bytes(8, "little") + b"\0" * 4 + p + b"\0" * 4)
        starts.append(at + 12)
        at += len(p) + 16
    buf = np.frombuffer(b"".join(parts), np.uint8)
    return health_gather.record_healths(
        buf, np.array(starts, np.int64), np.array([len(p) for p in payloads], np.int64), np.array(modes, np.int64)
    )


def _mode_of(payload: bytes) -> int:
    return int(schema.parse_event(payload).graph_execution_trace.tensor_debug_mode)


@pytest.fixture(scope="module")
def mode_records() -> dict[str, list[bytes]]:
    return {mode: _payloads(dumps.make_dump("modes", mode)) for mode in ALL_MODES}


@pytest.mark.parametrize("mode_name", ALL_MODES)
def test_fast_path_equals_protobuf_on_real_records(mode_records, mode_name):
    payloads = mode_records[mode_name]
    assert payloads
    modes = [_mode_of(p) for p in payloads]
    fast = _fast(payloads, modes)
    for payload, mode, got in zip(payloads, modes, fast):
        if got is not None:
            assert got == _slow(mode, payload)
    if mode_name in HEALTH_MODES:  # every record TF writes in a health mode takes the fast path
        assert all(got is not None for got in fast)
    else:  # NO_TENSOR and FULL_TENSOR are not health vectors: protobuf (or nothing to read) decides
        assert all(got is None for got in fast)


def _mutations(rng: random.Random, payload: bytes):
    b = bytearray(payload)
    kind = rng.randrange(7)
    if kind == 0:  # one byte anywhere
        b[rng.randrange(len(b))] = rng.randrange(256)
    elif kind == 1:  # a few bytes
        for _ in range(rng.randint(2, 4)):
            b[rng.randrange(len(b))] = rng.randrange(256)
    elif kind == 2:  # a non-ASCII byte (invalid UTF-8 on its own) somewhere past the wall time
        b[rng.randrange(9, len(b))] = rng.choice((0x80, 0xC3, 0xFF))
    elif kind == 3:  # cut short
        del b[rng.randrange(1, len(b)) :]
    elif kind == 4:  # junk appended (an unknown trailing field, or garbage)
        b += bytes(rng.randrange(256) for _ in range(rng.randint(1, 6)))
    elif kind == 5:  # a byte inserted
        b.insert(rng.randrange(len(b)), rng.randrange(256))
    else:  # the last 40 bytes (tensor shape, content header, device), where the layout checks look
        i = rng.randrange(max(0, len(b) - 40), len(b))
        b[i] = rng.choice((0, 1, 2, 4, 8, 0x0A, 0x12, 0x22, 0x32, 0x7F, 0x80, rng.randrange(256)))
    return bytes(b)


@pytest.mark.parametrize("mode_name", HEALTH_MODES)
def test_fast_path_never_differs_on_fuzzed_records(mode_records, mode_name):
    rng = random.Random(f"fuzz-{mode_name}")
    originals = mode_records[mode_name]
    payloads, modes = [], []
    for _ in range(4000):
        original = rng.choice(originals)
        payloads.append(_mutations(rng, original))
        modes.append(_mode_of(original))  # as the index's kind says (from the record it read)
    fast = _fast(payloads, modes)
    answered = 0
    for payload, mode, got in zip(payloads, modes, fast):
        if got is not None:
            answered += 1
            assert got == _slow(mode, payload), payload.hex()
    # both paths are exercised: many mutations (wall time, vector values) keep the layout, many break it
    assert 0.1 * len(payloads) < answered < 0.95 * len(payloads)


def test_odd_vectors_decode_as_one_at_a_time():
    rng = np.random.default_rng(7)
    special = np.array(
        [
            np.nan,
            np.inf,
            -np.inf,
            -0.0,
            0.5,
            -1.5,
            2.0**62,
            -(2.0**62),
            2.0**63,
            1e300,
            -1e300,
            2.0**53 + 1,
            7.0,
            128.0,
            -3.0,
            1.0,
            0.0,
        ]
    )
    for mode, width in ((2, 2), (3, 5), (4, 11), (5, 10)):
        vectors = rng.choice(special, size=(400, width + 1))
        if mode == 5:  # ranks around and beyond 6, negative ranks
            vectors[:, 2] = rng.integers(-8, 10, size=400)
        got = health_vectors.health_rows(mode, vectors)
        assert got == [health_vectors.health_from_vector(mode, v) for v in vectors]


def test_trace_healths_and_pages_equal_one_record_reads():
    for mode_name in ALL_MODES:
        run = run_of(dumps.make_dump("modes", mode_name))
        n = run.lengths().traces
        rows = np.arange(n, dtype=np.int64)
        modes = np.array([run.kind_info(k)[3] for k in run.traces.view("kind", n).tolist()], np.int64)
        healths, finite = record_reads.trace_healths(run, rows, modes)
        assert healths == [run.trace_health(i) for i in range(n)]
        assert finite == all(record_reads.finite_floats(h.values()) for h in healths)
        page = run.graph_executions(0, n)
        assert [r["health"] for r in page["rows"]] == healths
        assert isinstance(page["rows"], record_reads.FiniteList) == finite


def test_page_read_crosses_gaps_and_files():
    """A filtered page (rows far apart on disk) reads the same records as a contiguous one."""
    run = run_of(dumps.make_dump("modes", "FULL_HEALTH"))
    n = run.lengths().traces
    rows = np.array(sorted(random.Random(3).sample(range(n), min(n, 60))), np.int64)
    buf, starts, lengths = record_reads.read_trace_payloads(run, rows[::-1].copy())
    for k, row in enumerate(rows[::-1].tolist()):
        assert lengths[k] > 0
        event = schema.parse_event(buf[starts[k] : starts[k] + lengths[k]].tobytes())
        assert event == run.read_trace_event(row)


def test_alert_pages_equal_one_record_reads():
    run = run_of(dumps.make_dump("modes", "FULL_HEALTH"))
    answer = run.alerts(0, 1000)
    for alert in answer["alerts"]:
        if alert["source"] != "graph_execution":
            continue
        health = run.trace_health(alert["source_index"])
        assert [alert[c] for c in ("neg_inf", "pos_inf", "nan", "size")] == [
            health.get(c) for c in ("neg_inf", "pos_inf", "nan", "size")
        ]
        assert not any(isinstance(v, float) and not math.isfinite(v) for v in alert.values())


def test_records_longer_than_the_tail_read_are_read_again(monkeypatch):
    monkeypatch.setattr(record_reads, "_PAGE_TAIL", 16)  # every record is longer than what the first read covers
    for mode_name in ("FULL_HEALTH", "FULL_TENSOR"):
        run = run_of(dumps.make_dump("modes", mode_name))
        n = run.lengths().traces
        rows = np.arange(n, dtype=np.int64)
        buf, starts, lengths = record_reads.read_trace_payloads(run, rows)
        for k in range(n):
            assert lengths[k] > 0
            assert schema.parse_event(buf[starts[k] : starts[k] + lengths[k]].tobytes()) == run.read_trace_event(k)
        modes = np.array([run.kind_info(k)[3] for k in run.traces.view("kind", n).tolist()], np.int64)
        assert record_reads.trace_healths(run, rows, modes)[0] == [run.trace_health(i) for i in range(n)]
