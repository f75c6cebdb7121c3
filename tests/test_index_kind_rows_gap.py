"""Rows of an op while the dump is still being read: the per-kind permutation is not rebuilt per batch, the rows
appended since it was built are scanned instead (trace_queries._rows_of_kinds); the answer is the same."""

from __future__ import annotations

import dumps
import numpy as np
from run_helpers import run_of

from tensorboard_plugin_dbg.index import trace_queries


def _expected(run, graph_id, op_name):
    kinds = [k for k, info in enumerate(run.kinds.kinds) if info[:2] == (graph_id, op_name)]
    return np.flatnonzero(np.isin(run.traces.view("kind", run.lengths().traces), kinds))


def test_rows_of_kinds_with_a_stale_or_missing_permutation(monkeypatch):
    run = run_of(dumps.make_dump("demo"))
    ops = sorted({info[:2] for info in run.kinds.kinds})
    want = {op: _expected(run, *op) for op in ops}
    monkeypatch.setattr(trace_queries, "_STALE_ROWS", 0)  # as a big run: no rebuild while it is being read
    monkeypatch.setattr(run, "done", False)
    run.derived._values.pop("kind_rows", None)  # nothing built: every row is scanned
    for op in ops:
        assert np.array_equal(run.op_trace_rows(*op), want[op])
    n = run.lengths().traces
    stale = run.derived.latest("kind_rows")
    assert stale is None  # (and reading never built one)
    # a permutation built for the first half only: the second half is the scanned gap
    run.derived.put(
        "kind_rows",
        (n // 2, len(run.kinds)),
        trace_queries.kind_order.rows_by_kind(run.traces.view("kind", n // 2), len(run.kinds)),
    )
    for op in ops:
        assert np.array_equal(run.op_trace_rows(*op), want[op])
    monkeypatch.setattr(run, "done", True)  # read to the end: rebuilt once, exact
    for op in ops:
        assert np.array_equal(run.op_trace_rows(*op), want[op])
    assert run.derived.latest("kind_rows")[0][0] == n
