"""Trace chunks a whole number of training steps long (index/ingest.chunk_bytes, issue #40 item 2): every chunk of
a trace file then starts at the same place of a step, so the step carried into the next chunk
(reader/trace_periodic.Carry) is laid out as the last one was and its identity mask is painted once per file, not
once per chunk; and a file read that way gives the same rows as read in one chunk."""

from __future__ import annotations

import os
import subprocess
import sys

import dumps
import numpy as np

from tensorboard_plugin_dbg.index import ingest
from tensorboard_plugin_dbg.index.catalog import Catalog
from tensorboard_plugin_dbg.reader import trace_fast, trace_periodic

BENCH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "bench")


def test_chunk_bytes_are_whole_steps_within_the_bounds():
    assert ingest.chunk_bytes(0) == ingest.CHUNK  # no step seen yet
    for cycle in (1, 100, 4093, 333_331, ingest.CHUNK - 1, ingest.CHUNK + 1, ingest.MAX_CHUNK // ingest.STEPS):
        got = ingest.chunk_bytes(cycle)
        assert got % cycle == 0, cycle
        assert max(ingest.CHUNK, ingest.STEPS * cycle) <= got <= ingest.MAX_CHUNK, cycle
    # a step too long for STEPS of them under MAX_CHUNK: capped, whatever its place in a step
    assert ingest.chunk_bytes(ingest.MAX_CHUNK // 2) == ingest.MAX_CHUNK


def test_chunks_of_whole_steps_keep_the_carried_mask_and_give_the_same_rows(monkeypatch, tmp_path):
    # the benchmark's model (bench/generate.py: TF writes the first steps, later ones are checked byte copies):
    # 42 steps of 1,431 traces (~330 KB each), each step's records laid out as the one before, as a training loop
    # writes them
    dump = str(tmp_path / "dump")
    subprocess.run(
        [sys.executable, os.path.join(BENCH, "generate.py"), "--traces", "60000", "--out", dump],
        env=dumps.env_for_tf(),
        check=True,
        capture_output=True,
        timeout=600,
    )
    whole = Catalog(dump).runs()[0]
    # the indexer's own sizes: a first chunk of CHUNK (three steps and a bit), then STEPS steps per chunk (14 MB:
    # ~10 chunks), where it read STEPS steps and 4 KB before (a chunk ended 17 records further into a step each time)
    calls = {"chunks": 0, "masks": 0}

    def count(name, function):
        def counted(*args, **kwargs):
            calls[name] += 1
            return function(*args, **kwargs)

        return counted

    monkeypatch.setattr(trace_fast, "decode_fast", count("chunks", trace_fast.decode_fast))
    monkeypatch.setattr(trace_periodic, "identity_mask", count("masks", trace_periodic.identity_mask))
    chunked = Catalog(dump).runs()[0]
    assert calls["chunks"] >= 8, calls
    # the first chunk's template and its carried step; then every chunk starts where a step did before
    assert calls["masks"] <= 3, calls
    assert chunked.lengths() == whole.lengths()
    got, want = chunked.trace_arrays(), whole.trace_arrays()
    for name in ("wall_time", "loc", "nonfinite_rows"):
        np.testing.assert_array_equal(got[name], want[name], err_msg=name)
    # kind codes are interned in the order the kinds were first decoded: compare the kinds they stand for
    named = [chunked.kinds.kinds[k] for k in got["kind"].tolist()]
    assert named == [whole.kinds.kinds[k] for k in want["kind"].tolist()]
    assert len(want["nonfinite_rows"])  # the dump holds alerts: the chunks found them where one read did
