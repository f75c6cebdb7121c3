"""Unit tests of the structures that keep the index's memory per trace small, each against the plain numpy answer
it replaces: the merged alert order (index/alert_order.py), the blocked counting sort of rows by kind
(index/kind_order.py), the kind-mapped columns and the rows-by-kind input lookup of the analysis
(analysis/index_columns.py), the interval mask of the periodic decoder (reader/trace_periodic.py) and the scan hint
(reader/tfrecord.py)."""

from __future__ import annotations

import numpy as np
import pytest

from tensorboard_plugin_dbg.analysis.index_columns import KindMapped, KindRowsLookup
from tensorboard_plugin_dbg.analysis.trace_lookup import TraceLookup
from tensorboard_plugin_dbg.index import alert_order, kind_order
from tensorboard_plugin_dbg.reader import tfrecord
from tensorboard_plugin_dbg.reader.trace_periodic import paint as _paint


def _explicit(e_rows, e_wall, t_rows, trace_wall):
    src = np.concatenate([np.zeros(len(e_rows), np.int8), np.ones(len(t_rows), np.int8)])
    idx = np.concatenate([np.asarray(e_rows, np.int64), t_rows.astype(np.int64)])
    wall = np.concatenate([e_wall, trace_wall[t_rows]])
    order = np.lexsort((idx, src, wall))
    return src[order], idx[order], wall[order]


@pytest.mark.parametrize("seed", range(4))
def test_alert_order_equals_the_sorted_table(seed):
    rng = np.random.default_rng(seed)
    kinds = set()
    for trial in range(400):
        n = int(rng.integers(0, 80))
        # mostly in wall-time order (one host), sometimes not (several hosts): both kinds of table are checked
        walls = rng.integers(0, 25, n).astype(float)
        trace_wall = np.sort(walls) if trial % 3 else walls
        t_rows = np.flatnonzero(rng.random(n) < 0.5).astype(np.uint32)
        e_count = int(rng.integers(0, 9))
        e_rows = np.sort(rng.choice(200, e_count, replace=False))
        e_wall = rng.integers(0, 25, e_count).astype(float)  # ties with trace walls on purpose
        table = alert_order.build(e_rows, e_wall, t_rows, trace_wall)
        kinds.add(type(table).__name__)
        expected = _explicit(e_rows, e_wall, t_rows, trace_wall)
        assert len(table) == len(expected[0])
        positions = rng.permutation(len(table))
        for got, want in zip(table.page(positions), expected):
            np.testing.assert_array_equal(got, want[positions])
        blocks = list(table.blocks(5))
        assert [b[0] for b in blocks] == list(range(0, len(table), 5))
        for i, want in enumerate(expected, start=1):
            got = np.concatenate([b[i] for b in blocks]) if blocks else want[:0]
            np.testing.assert_array_equal(got, want)
    assert kinds == {"MergedAlerts", "ExplicitAlerts"}


def test_rows_by_kind_equals_stable_argsort(monkeypatch):
    monkeypatch.setattr(kind_order, "_BLOCK", 7)  # many blocks, so the carry between blocks is exercised
    rng = np.random.default_rng(1)
    for n, k in [(0, 3), (1, 1), (50, 4), (1000, 31), (4099, 300)]:
        kind = rng.integers(0, k, n).astype(np.int32)
        order, starts = kind_order.rows_by_kind(kind, k)
        np.testing.assert_array_equal(order, np.argsort(kind, kind="stable"))
        np.testing.assert_array_equal(starts, np.concatenate([[0], np.cumsum(np.bincount(kind, minlength=k))]))
        assert order.dtype == np.int32


def test_kind_rows_lookup_answers_like_the_sorted_lookup():
    rng = np.random.default_rng(2)
    for _ in range(50):
        n_kinds = int(rng.integers(1, 12))
        kind = rng.integers(0, n_kinds, int(rng.integers(0, 300))).astype(np.int32)
        # several kinds may share a tensor (one tensor traced on two devices or in two modes)
        kind_tensor = rng.integers(0, max(1, n_kinds - 2), n_kinds).astype(np.int32)
        mapped = KindMapped(kind, kind_tensor)
        assert len(mapped) == len(kind)
        plain = kind_tensor[kind]
        rows = rng.integers(0, max(len(kind), 1), 20) if len(kind) else np.zeros(0, np.int64)
        np.testing.assert_array_equal(mapped[rows], plain[rows])
        lookup = KindRowsLookup(*kind_order.rows_by_kind(kind, n_kinds), kind_tensor)
        tensors = rng.integers(-1, n_kinds, 40)
        at = rng.integers(0, len(kind) + 1, 40)
        np.testing.assert_array_equal(
            lookup.before(tensors, at), TraceLookup(plain.astype(np.int64)).before(tensors, at)
        )


def test_paint_marks_exactly_the_intervals():
    rng = np.random.default_rng(3)
    for _ in range(2000):
        size = int(rng.integers(0, 60))
        lo = rng.integers(-3, size + 3, int(rng.integers(0, 8)))
        hi = lo + rng.integers(0, 10, len(lo))
        want = np.zeros(size, np.uint8)
        for a, b in zip(lo.tolist(), hi.tolist()):
            want[max(a, 0) : max(min(b, size), 0)] = 0xFF
        np.testing.assert_array_equal(_paint(lo, hi, size), want)


@pytest.mark.slow  # ~7 s
def test_scan_hint_only_speeds_up():
    """A scan given the previous chunk's tail finds the same records; a wrong hint changes nothing either."""
    rng = np.random.default_rng(4)
    pattern = [int(x) for x in rng.integers(5, 60, 37)]
    payloads = [bytes(rng.integers(0, 256, n, dtype=np.uint8)) for n in pattern * 300]
    data = b"".join(tfrecord.frame(p) for p in payloads)
    cut = len(b"".join(tfrecord.frame(p) for p in payloads[:5000]))
    first = tfrecord.scan(np.frombuffer(data[:cut], np.uint8), 0)
    assert first.tail is not None
    rest = np.frombuffer(data[cut:], np.uint8)
    plain = tfrecord.scan(rest, cut)
    for hint in (first.tail, first.tail[::-1].copy(), np.full(64, 3, np.int64)):
        hinted = tfrecord.scan(rest, cut, hint=hint)
        np.testing.assert_array_equal(hinted.starts, plain.starts)
        np.testing.assert_array_equal(hinted.lengths, plain.lengths)
        assert hinted.next_offset == plain.next_offset == len(data)


def test_identity_store_merged_equals_built_at_once():
    from tensorboard_plugin_dbg.reader.traces import IdentityStore, TraceKinds

    rng = np.random.default_rng(5)
    kinds = TraceKinds()
    for _step in range(6):  # a few keys at a time, as new identities show up chunk after chunk
        for _ in range(int(rng.integers(0, 5))):
            wa, wb = int(rng.integers(0, 6)), int(rng.integers(0, 4))
            kinds.by_hash[int(rng.integers(0, 2**63))] = (
                int(rng.integers(0, 50)),
                rng.integers(0, 2**32, wa, dtype=np.uint32),
                rng.integers(0, 2**32, wb, dtype=np.uint32),
                4 * wa,
                4 * wb,
            )
        merged, whole = kinds.identity_store(), IdentityStore.build(kinds.by_hash)
        assert merged.count == whole.count == len(kinds.by_hash)
        np.testing.assert_array_equal(merged.keys, whole.keys)
        for name in ("code", "a_len", "b_len"):
            np.testing.assert_array_equal(getattr(merged, name), getattr(whole, name))
        for name in ("a_words", "b_words"):  # equal up to zero padding of the narrower one
            m, w = getattr(merged, name), getattr(whole, name)
            width = max(m.shape[0], w.shape[0])
            pad = [np.vstack([x, np.zeros((width - x.shape[0], x.shape[1]), np.uint32)]) for x in (m, w)]
            np.testing.assert_array_equal(*pad)
