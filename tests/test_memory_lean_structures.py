"""Unit tests of the structures that keep the index's memory per trace small, each against the plain numpy answer
it replaces: the merged alert order (index/alert_order.py), the blocked counting sort of rows by kind
(index/kind_order.py), the kind-mapped columns, the rows-by-kind input lookup and the non-finite flags of the
analysis (analysis/index_columns.py), the rules scan's per-kind step reductions fed block by block
(index/kind_steps.py), the interval mask of the periodic decoder (reader/trace_periodic.py) and the scan
hint (reader/tfrecord.py)."""

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
        lookup = KindRowsLookup(*kind_order.rows_by_kind(kind, n_kinds), kind_tensor, len(kind))
        tensors = rng.integers(-1, n_kinds, 40)
        at = rng.integers(0, len(kind) + 1, 40)
        np.testing.assert_array_equal(
            lookup.before(tensors, at), TraceLookup(plain.astype(np.int64)).before(tensors, at)
        )
        np.testing.assert_array_equal(lookup.after(tensors, at), TraceLookup(plain.astype(np.int64)).after(tensors, at))


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


def _whole_run_kind_steps(kind, values, flag, n_kinds):
    """The rules' scan as it was before KindSteps: every row's values gathered into kind-sorted whole-run copies,
    then numpy over them (the plain answer, ~80 bytes per trace at its peak)."""
    order, starts = kind_order.rows_by_kind(kind, n_kinds)
    first = np.zeros(len(order), bool)
    first[starts[:-1][starts[:-1] < len(order)]] = True

    def changes(col):
        ch = np.zeros(len(col), bool)
        if len(col) > 1:
            ch[1:] = (col[1:] != col[:-1]) & (col[1:] >= 0) & (col[:-1] >= 0)
        ch &= ~first
        pos = np.flatnonzero(ch)
        kinds = np.searchsorted(starts, pos, side="right") - 1
        first_pos = np.full(n_kinds, -1, np.int64)
        uniq, idx = np.unique(kinds, return_index=True)
        first_pos[uniq] = pos[idx]
        return np.bincount(kinds, minlength=n_kinds)[:n_kinds], first_pos

    z = flag[order]
    idx = np.arange(len(z), dtype=np.int64)
    began = np.where(~z, idx + 1, np.where(first, idx, -1))
    began = np.maximum.accumulate(began) if len(z) else began
    length = np.where(z, idx - began + 1, 0)
    best, end = np.zeros(n_kinds, np.int64), np.full(n_kinds, -1, np.int64)
    hit = np.flatnonzero(length > 0)
    if len(hit):
        kinds = np.searchsorted(starts, hit, side="right") - 1
        np.maximum.at(best, kinds, length[hit])
        at_best = hit[length[hit] == best[kinds]]
        uniq, i = np.unique(np.searchsorted(starts, at_best, side="right") - 1, return_index=True)
        end[uniq] = at_best[i]
    return [changes(np.asarray(v, np.int64)[order]) for v in values], (best, end), np.diff(starts)


@pytest.mark.parametrize("seed", range(3))
def test_kind_steps_fed_in_blocks_equal_the_whole_run_answer(seed):
    from tensorboard_plugin_dbg.index.kind_steps import KindSteps

    rng = np.random.default_rng(10 + seed)
    for _ in range(150):
        n_kinds = int(rng.integers(1, 9))
        n = int(rng.integers(0, 400))
        kind = rng.integers(0, n_kinds, n).astype(np.int32)
        # few distinct values and many unknowns (-1), long zero runs: changes, ties and runs across blocks
        values = [rng.integers(-1, 3, n).astype(np.int64), rng.integers(-1, 2, n).astype(np.int8)]
        flag = rng.random(n) < rng.choice([0.0, 0.5, 0.9])
        order, starts = kind_order.rows_by_kind(kind, n_kinds)
        steps = KindSteps(starts, columns=2)
        cuts = np.sort(rng.integers(0, n + 1, int(rng.integers(0, 6))))
        for lo, hi in zip([0, *cuts.tolist()], [*cuts.tolist(), n]):
            steps.add(kind[lo:hi], [v[lo:hi] for v in values], flag[lo:hi])
        want_changes, (want_best, want_end), want_steps = _whole_run_kind_steps(kind, values, flag, n_kinds)
        np.testing.assert_array_equal(steps.steps, want_steps)
        for c, (count, first_pos) in enumerate(want_changes):
            np.testing.assert_array_equal(steps.changes[c], count)
            np.testing.assert_array_equal(steps.first_change[c], first_pos)
        np.testing.assert_array_equal(steps.best_run, want_best)
        np.testing.assert_array_equal(steps.best_run_end, want_end)
        # as the indexer feeds it: no starts (kinds appear as their rows come), step numbers for positions
        grown = KindSteps(None, columns=2)
        for lo, hi in zip([0, *cuts.tolist()], [*cuts.tolist(), n]):
            grown.add(kind[lo:hi], [v[lo:hi] for v in values], flag[lo:hi])
        seen = len(grown.steps)  # kinds up to the largest code fed
        base = starts[:seen]
        np.testing.assert_array_equal(grown.steps, want_steps[:seen])
        assert not want_steps[seen:].any()
        for c, (_count, first_pos) in enumerate(want_changes):
            np.testing.assert_array_equal(
                np.where(grown.first_change[c] >= 0, base + grown.first_change[c], -1), first_pos[:seen]
            )
        np.testing.assert_array_equal(np.where(grown.best_run_end >= 0, base + grown.best_run_end, -1), want_end[:seen])


def test_nonfinite_flags_read_like_the_plain_column():
    from tensorboard_plugin_dbg.analysis.index_columns import NonFiniteFlags

    rng = np.random.default_rng(20)
    for _ in range(200):
        n_kinds = int(rng.integers(1, 6))
        n = int(rng.integers(0, 120))
        kind = rng.integers(0, n_kinds, n).astype(np.int32)
        blind = rng.random(n_kinds) < 0.3
        bad = np.flatnonzero(rng.random(n) < 0.4).astype(np.uint32)  # the index's sorted uint32 rows
        plain = (-blind.astype(np.int8))[kind]
        plain[bad] = 1
        flags = NonFiniteFlags(kind, blind, bad)
        assert len(flags) == n
        np.testing.assert_array_equal(np.asarray(flags), plain)
        assert list(flags) == plain.tolist()
        for value in (-1, 0, 1):
            np.testing.assert_array_equal(flags == value, plain == value)
        np.testing.assert_array_equal(flags >= 0, plain >= 0)
        lo, hi = sorted(rng.integers(-5, n + 5, 2).tolist())
        np.testing.assert_array_equal(flags[lo:hi], plain[lo:hi])
        np.testing.assert_array_equal(flags[lo:hi:2], plain[lo:hi:2])
        if n:
            rows = rng.integers(-n, n, 30)
            np.testing.assert_array_equal(flags[rows], plain[rows])
            assert flags[rows].dtype == np.int8


def test_kind_rows_lookup_sees_only_the_columns_rows():
    """The index's rows-by-kind permutation can be newer than the columns an analysis took (the refresher appends
    traces between the two): the lookup answers as if the permutation covered the columns' rows only (CI once
    answered root_cause 500 here: a consumer row past the columns' end)."""
    rng = np.random.default_rng(7)
    for _ in range(300):
        n_kinds = int(rng.integers(1, 6))
        kind_tensor = rng.integers(0, 4, n_kinds)
        kind = rng.integers(0, n_kinds, int(rng.integers(1, 60))).astype(np.uint32)
        n_rows = int(rng.integers(0, len(kind) + 1))  # the columns' rows: a prefix of the index's
        lookup = KindRowsLookup(*kind_order.rows_by_kind(kind, n_kinds), kind_tensor, n_rows)
        plain = TraceLookup(kind_tensor[kind[:n_rows]].astype(np.int64))
        tensors = rng.integers(-1, 5, 40)
        at = rng.integers(-1, n_rows + 1, 40)
        np.testing.assert_array_equal(lookup.after(tensors, at), plain.after(tensors, at))
        np.testing.assert_array_equal(lookup.before(tensors, at), plain.before(tensors, at))
