"""TFRecord framing and CRC-32C on synthetic bytes: partial tails, CRC mismatches, impossible lengths, resync."""

from __future__ import annotations

import os
import random
import struct

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tensorboard_plugin_dbg.reader import crc32c, record_crc, tfrecord


def _scan(data: bytes, base: int = 0, resyncing: bool = False):
    return tfrecord.scan(np.frombuffer(data, dtype=np.uint8), base, resyncing)


def _payloads(result, data: bytes):
    return [data[s : s + n] for s, n in zip(result.starts.tolist(), result.lengths.tolist())]


def test_crc32c_known_vectors_and_lengths():
    assert crc32c.crc32c(b"123456789") == 0xE3069283  # the standard check value
    assert crc32c.crc32c(b"") == 0
    rng = random.Random(1)
    for n in [1, 2, 3, 4, 5, 7, 8, 63, 64, 65, 4095, 4096, 4097, 10_000, 70_000]:
        data = bytes(rng.getrandbits(8) for _ in range(n))
        assert crc32c.crc32c(data) == crc32c.crc32c_python(data), n


@given(st.lists(st.binary(max_size=300), max_size=40), st.integers(0, 3))
@settings(max_examples=60, deadline=None)
def test_crc32c_many_equals_scalar(chunks, shift):
    data = b"\x00" * shift + b"".join(chunks)
    starts, pos = [], shift
    for c in chunks:
        starts.append(pos)
        pos += len(c)
    got = crc32c.crc32c_many(
        np.frombuffer(data, np.uint8), np.array(starts, np.int64), np.array([len(c) for c in chunks], np.int64)
    )
    assert got.tolist() == [crc32c.crc32c_python(c) for c in chunks]


@pytest.fixture
def numpy_crc(monkeypatch):
    """The CRC-32C fallback (as without google-crc32c), whatever is installed."""
    monkeypatch.setattr(crc32c, "NATIVE", None)


def test_the_native_crc32c_is_used_where_installed():
    google_crc32c = pytest.importorskip("google_crc32c")
    assert (crc32c.NATIVE is not None) == (google_crc32c.implementation == "c")


def _both_paths(monkeypatch, buf: np.ndarray, starts, lengths) -> tuple[list[int], list[int]]:
    starts, lengths = np.asarray(starts, np.int64), np.asarray(lengths, np.int64)
    default = crc32c.crc32c_many(buf, starts, lengths).tolist()
    with monkeypatch.context() as m:
        m.setattr(crc32c, "NATIVE", None)
        fallback = crc32c.crc32c_many(buf, starts, lengths).tolist()
    return default, fallback


def test_native_and_numpy_crc32c_agree_on_random_slices(monkeypatch):
    if crc32c.NATIVE is None:
        pytest.skip("google-crc32c (its C extension) is not installed: only the numpy path exists")
    rng = np.random.default_rng(7)
    data = rng.integers(0, 256, 3 << 20, dtype=np.uint8).tobytes()
    # lengths on both sides of NATIVE_MIN, of the numpy path's long threshold and of the native piece size
    lengths = [0, 1, 7, 8, crc32c.NATIVE_MIN - 1, crc32c.NATIVE_MIN, 250, 4095, 4096, 70_000, (1 << 20) + 3]
    lengths += rng.integers(0, 5000, 200).tolist()
    starts = rng.integers(0, len(data) - (1 << 20) - 4, len(lengths)).tolist()
    for buf in (np.frombuffer(data, np.uint8), np.frombuffer(data, np.uint8).copy()):  # from bytes, and not
        default, fallback = _both_paths(monkeypatch, buf, starts, lengths)
        assert default == fallback
    assert default[:4] == [crc32c.crc32c_python(data[s : s + n]) for s, n in zip(starts[:4], lengths[:4])]


@pytest.mark.slow  # ~3 s: the numpy path over 40 MiB
def test_native_and_numpy_crc32c_agree_on_a_big_record(monkeypatch):
    if crc32c.NATIVE is None:
        pytest.skip("google-crc32c (its C extension) is not installed")
    data = np.random.default_rng(8).integers(0, 256, 40 << 20, dtype=np.uint8)
    default, fallback = _both_paths(monkeypatch, data, [5], [len(data) - 9])
    assert default == fallback


def test_framing_is_checked_the_same_without_the_native_crc(numpy_crc):
    """Masked CRCs of headers and payloads, through the scanner, on the fallback: good records read, a bad one
    reported (the native path runs the same test file's other framing tests)."""
    assert crc32c.NATIVE is None
    payloads = [os.urandom(n) for n in (5, 100, 0, 5000, 3, 300)]
    data = bytearray(b"".join(tfrecord.frame(p) for p in payloads))
    r = _scan(bytes(data))
    assert _payloads(r, bytes(data)) == payloads and not r.damages
    data[12 + 5 + 4 + 12 + 50] ^= 1  # a byte of the second payload: its data CRC no longer matches
    r = _scan(bytes(data))
    assert r.damages and payloads[1] not in _payloads(r, bytes(data))


def test_masked_crc_matches_tfrecord_definition():
    c = crc32c.crc32c(b"abc")
    assert crc32c.mask(c) == ((((c >> 15) | (c << 17)) & 0xFFFFFFFF) + 0xA282EAD8) & 0xFFFFFFFF


def test_all_records_and_exact_end():
    payloads = [os.urandom(n) for n in (5, 100, 0, 5000, 3)]
    data = b"".join(tfrecord.frame(p) for p in payloads)
    r = _scan(data, base=1000)
    assert _payloads(r, data) == payloads and r.next_offset == 1000 + len(data) and not r.damages


def test_partial_tail_is_left_for_next_pass():
    payloads = [os.urandom(40), os.urandom(50)]
    data = b"".join(tfrecord.frame(p) for p in payloads)
    for cut in range(1, len(tfrecord.frame(payloads[1]))):
        r = _scan(data[:-cut])
        assert _payloads(r, data) == payloads[:1]
        assert r.next_offset == len(tfrecord.frame(payloads[0])) and not r.damages
    # resuming at the boundary once the bytes are there yields the rest
    r2 = _scan(data[r.next_offset :], base=r.next_offset)
    assert _payloads(r2, data[r.next_offset :]) == payloads[1:]


def test_data_crc_mismatch_drops_only_that_record():
    payloads = [os.urandom(30) for _ in range(4)]
    frames = [tfrecord.frame(p) for p in payloads]
    bad = bytearray(frames[1])
    bad[12 + 7] ^= 0x10
    data = frames[0] + bytes(bad) + frames[2] + frames[3]
    r = _scan(data)
    assert _payloads(r, data) == [payloads[0], payloads[2], payloads[3]]
    assert [(d.offset, d.reason) for d in r.damages] == [(len(frames[0]), "data CRC mismatch")]


def test_length_crc_mismatch_resyncs():
    payloads = [os.urandom(30) for _ in range(4)]
    frames = [tfrecord.frame(p) for p in payloads]
    bad = bytearray(frames[1])
    bad[0] ^= 0x01  # length now lies, and its CRC no longer matches
    data = frames[0] + bytes(bad) + frames[2] + frames[3]
    r = _scan(data)
    assert _payloads(r, data) == [payloads[0], payloads[2], payloads[3]]
    assert r.damages[0].offset == len(frames[0]) and r.next_offset == len(data)


def test_impossible_length_never_allocated_and_resyncs():
    good = tfrecord.frame(b"hello")
    head = struct.pack("<Q", 1 << 60)
    lying = head + struct.pack("<I", crc32c.mask(crc32c.crc32c(head))) + b"xx"  # valid CRC, absurd length
    data = good + lying + good
    r = _scan(data)
    assert _payloads(r, data) == [b"hello", b"hello"]
    assert [d.reason for d in r.damages] == ["impossible record length"]


def test_garbage_between_records_and_at_tail():
    good = [tfrecord.frame(os.urandom(20)) for _ in range(3)]
    data = good[0] + os.urandom(77) + good[1] + good[2] + os.urandom(5)
    r = _scan(data)
    assert len(r.starts) == 3 and len(r.damages) == 1
    # the 5 garbage bytes at the tail could still become a header: wait there, not past it
    assert r.next_offset == len(data) - 5


def test_resync_state_carries_over_passes():
    good = tfrecord.frame(b"payload-1")
    data = os.urandom(64)
    r = _scan(data, resyncing=True)
    assert len(r.starts) == 0 and r.resyncing and r.next_offset == len(data) - 11
    tail = data[r.next_offset :] + good
    r2 = _scan(tail, base=r.next_offset, resyncing=True)
    assert _payloads(r2, tail) == [b"payload-1"] and not r2.resyncing


@given(st.lists(st.binary(min_size=0, max_size=200), min_size=1, max_size=20), st.data())
@settings(max_examples=80, deadline=None)
def test_random_single_byte_damage_keeps_every_other_record(payloads, data_strategy):
    frames = [tfrecord.frame(p) for p in payloads]
    data = bytearray(b"".join(frames))
    victim = data_strategy.draw(st.integers(0, len(frames) - 1))
    start = sum(len(f) for f in frames[:victim])
    pos = data_strategy.draw(st.integers(start, start + len(frames[victim]) - 1))
    data[pos] ^= data_strategy.draw(st.integers(1, 255))
    r = _scan(bytes(data))
    got = _payloads(r, bytes(data))
    expected = payloads[:victim] + payloads[victim + 1 :]
    # every intact record survives (a damaged length may hide no other record: resync finds the next header)
    assert got == expected
    assert len(r.damages) >= 1


@pytest.mark.slow  # ~4 s
def test_periodic_records_predicted_and_checked():
    """Long periodic runs (as trace files are) take the predicted path; a change of period and a damaged
    length in the middle must still give every record exactly once."""
    rng = random.Random(7)
    period = [rng.randrange(20, 90) for _ in range(13)]
    payloads = [os.urandom(period[i % 13]) for i in range(9000)]
    payloads[7000:7005] = [os.urandom(300) for _ in range(5)]  # the period breaks
    frames = [tfrecord.frame(p) for p in payloads]
    data = b"".join(frames)
    r = _scan(data)
    assert _payloads(r, data) == payloads and not r.damages
    bad = bytearray(data)
    victim = sum(len(f) for f in frames[:8000])
    bad[victim + 2] ^= 0x7F  # a lying length deep inside the predicted stretch
    r = _scan(bytes(bad))
    assert _payloads(r, bytes(bad)) == payloads[:8000] + payloads[8001:]
    assert [d.offset for d in r.damages] == [victim]


def test_long_record_crc_is_the_same_slab_by_slab(monkeypatch):
    """The chunked CRC of a long record advances its chunks a slab at a time (crc32c._SLAB): slab edges anywhere
    give the plain table-driven CRC."""
    from tensorboard_plugin_dbg.reader import crc32c

    data = np.random.default_rng(7).integers(0, 256, 50_000, dtype=np.uint8).tobytes()
    want = crc32c.crc32c_python(data[3:])
    for slab in (1, 3, 7, 1 << 14):
        monkeypatch.setattr(crc32c, "_SLAB", slab)
        assert crc32c.crc32c(data[3:]) == want, slab


def test_big_chunks_read_headers_from_the_bytes_and_match_the_copies(monkeypatch):
    """A chunk over crc32c._LAZY (a big FULL_TENSOR record) is scanned without the four word copies: the same
    records, lengths and CRC verdicts as a chunk whose copies are made, damaged data CRC included."""
    from tensorboard_plugin_dbg.reader import crc32c, tfrecord

    rng = np.random.default_rng(5)
    payloads = [rng.integers(0, 256, n, dtype=np.uint8).tobytes() for n in (10, 5000, 3, 70_000, 0, 200)]
    data = bytearray(b"".join(tfrecord.frame(p) for p in payloads))
    data[12 + 10 + 4 + 12 + 100] ^= 1  # the 5000-byte record's data CRC no longer matches
    buf = np.frombuffer(bytes(data), np.uint8)
    eager = tfrecord.scan(buf, 0)
    monkeypatch.setattr(crc32c, "_LAZY", 16)
    lazy = tfrecord.scan(buf, 0)
    assert lazy.words.lazy and not eager.words.lazy
    assert lazy.starts.tolist() == eager.starts.tolist() and lazy.lengths.tolist() == eager.lengths.tolist()
    assert [d.reason for d in lazy.damages] == [d.reason for d in eager.damages] == ["data CRC mismatch"]


def test_zeros_crcs_equal_the_crc_of_as_many_zero_bytes():
    """record_crc's terms for what a CRC's init and xorout add (crc32c.zeros_crcs, no zero buffer made): equal to
    the CRC of that many zero bytes, on both sides of the table's bound."""
    lengths = np.array([0, 1, 3, 8, 255, 4095, 4096, 4097, 70_001, 1_360_000])
    got = crc32c.zeros_crcs(lengths)
    assert [int(c) for c in got] == [crc32c.crc32c_python(bytes(int(n))) for n in lengths]


def test_many_records_checked_in_one_pass_and_any_damage_still_found():
    """≥ 64 back-to-back records: every CRC is checked in one native pass (reader/record_crc.py, issue #40 item 2);
    a flipped byte anywhere (length, its CRC, data, data CRC) fails that pass, and the record-by-record check
    then drops exactly the damaged record."""
    if crc32c.NATIVE is None:
        pytest.skip("no native CRC-32C: the one-pass check is not used")
    rng = random.Random(5)
    payloads = [os.urandom(rng.randint(0, 300)) for _ in range(120)]
    payloads[60] = os.urandom(5000)  # one past crc32c.zeros_crcs' table
    frames = [tfrecord.frame(p) for p in payloads]
    data = b"".join(frames)
    whole = _scan(data)
    assert _payloads(whole, data) == payloads and not whole.damages
    buf = np.frombuffer(data, np.uint8)
    assert record_crc.records_intact(buf, whole.starts, whole.lengths) is True
    assert record_crc.records_intact(buf, whole.starts, whole.lengths, crc32c.Words(buf)) is True
    assert record_crc.records_intact(buf, whole.starts[::2], whole.lengths[::2]) is None  # not back to back
    for _ in range(60):
        victim = rng.randrange(len(frames))
        start = sum(len(f) for f in frames[:victim])
        pos = rng.choice(
            [start + 2, start + 9, start + 12 + len(payloads[victim]) // 2, start + len(frames[victim]) - 1]
        )
        damaged = bytearray(data)
        damaged[pos] ^= 1 << rng.randrange(8)
        buf = np.frombuffer(bytes(damaged), np.uint8)
        assert record_crc.records_intact(buf, whole.starts, whole.lengths) is False
        assert record_crc.records_intact(buf, whole.starts, whole.lengths, crc32c.Words(buf)) is False
        r = _scan(bytes(damaged))
        assert _payloads(r, bytes(damaged)) == payloads[:victim] + payloads[victim + 1 :] and r.damages
