"""The rules' step-to-step reductions folded while indexing (reader/step_values.py, index/kind_steps.py, issue #40
item 2) equal the scan that reads every health vector back from the files, on real TensorFlow dumps; and with them
the scan reads no record."""

from __future__ import annotations

import os

import dumps
import numpy as np
import pytest

from tensorboard_plugin_dbg.analysis.rules import tensor_scan
from tensorboard_plugin_dbg.index import ingest
from tensorboard_plugin_dbg.index.catalog import Catalog
from tensorboard_plugin_dbg.reader import trace_fast
from tensorboard_plugin_dbg.reader import traces as traces_module

FIELDS = (
    "steps",
    "shape_changes",
    "first_shape_change",
    "dtype_changes",
    "first_dtype_change",
    "zero_run",
    "zero_run_end",
)
PROGRAMS = [
    ("dead_relu",),
    ("shape_change",),
    ("modes", "SHAPE"),
    ("modes", "FULL_HEALTH"),
    ("modes", "CURT_HEALTH"),
    ("loss_scale", "FULL_HEALTH", "loop"),
]


def _read_back(run) -> tensor_scan.KindStats:
    folded, run.steps_folded = run.steps_folded, None
    try:
        return tensor_scan._scan(run)
    finally:
        run.steps_folded = folded


def _assert_same(run) -> tensor_scan.KindStats:
    n = len(run.trace_arrays()["kind"])
    assert run.folded_steps() is not None and run.folded_steps()[0] == n
    folded, read = tensor_scan._scan(run), _read_back(run)
    for name in FIELDS:
        np.testing.assert_array_equal(getattr(folded, name), getattr(read, name), err_msg=name)
    return folded


@pytest.mark.parametrize("program", PROGRAMS, ids=["-".join(p) for p in PROGRAMS])
def test_folded_scan_equals_the_read_back(program):
    run = Catalog(dumps.make_dump(*program)).runs()[0]
    stats = _assert_same(run)
    if program == ("shape_change",):  # the scan's point: a shape change seen, placed at its step
        assert stats.shape_changes.sum() > 0 and (stats.first_shape_change >= 0).any()
    if program == ("dead_relu",):
        assert stats.zero_run.max() > 1


def test_folded_in_small_chunks_equals_the_read_back(monkeypatch):
    """Chunks of ~65 records, each folded as it comes (runs and last values carried from chunk to chunk): the fast
    decoder's, and the protobuf path's for the last one (under 64 records)."""
    dump = dumps.make_dump("loss_scale", "FULL_HEALTH", "loop")
    [traces] = [os.path.join(dump, f) for f in os.listdir(dump) if f.endswith(".graph_execution_traces")]
    n = Catalog(dump).runs()[0].lengths().traces
    chunk = int(os.path.getsize(traces) / n * 65.5)
    for name, value in (("CHUNK", chunk), ("STEPS", 1), ("MAX_CHUNK", chunk)):
        monkeypatch.setattr(ingest, name, value)
    calls = {"fast": 0, "slow": 0}
    fast, slow = trace_fast.decode_fast, traces_module.decode_slow

    def count(path, decode):
        def counted(*args, **kwargs):
            calls[path] += 1
            return decode(*args, **kwargs)

        return counted

    monkeypatch.setattr(trace_fast, "decode_fast", count("fast", fast))
    monkeypatch.setattr(traces_module, "decode_slow", count("slow", slow))
    run = Catalog(dump).runs()[0]
    assert calls["fast"] > 1 and calls["slow"] >= 1, calls
    stats = _assert_same(run)
    assert stats.zero_run.max() > 1  # runs carried across chunks


def test_folded_scan_reads_no_record(monkeypatch):
    run = Catalog(dumps.make_dump("shape_change")).runs()[0]
    want = _read_back(run)

    def no_read(rows, summary=False):
        raise AssertionError("the scan read health vectors back")

    monkeypatch.setattr(run, "trace_vectors", no_read)
    got = tensor_scan._scan(run)
    assert got.shape_changes.tolist() == want.shape_changes.tolist()
