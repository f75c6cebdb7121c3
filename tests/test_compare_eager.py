"""Eager comparison read in blocks (issue #27): `compare` reads both runs' execution outputs a block at a time
(RunQueries.execution_outputs) instead of one detail read per execution. On the real eager pair
(tests/programs/cmp_eager.py) its verdicts, metrics, counts and first divergence are those of the one-pair-at-a-time
measure it replaced (differences.execution_metric on every aligned pair), and the block read decodes to exactly
the healths `execution` gives."""

from __future__ import annotations

import numpy as np
import pytest
from compare_helpers import injected_line, pair

from tensorboard_plugin_dbg.analysis.compare import comparison, differences, document
from tensorboard_plugin_dbg.index.catalog import Catalog
from tensorboard_plugin_dbg.reader import debug_values
from tensorboard_plugin_dbg.reader.schema import MODE_BY_NAME


def _runs(mode: str, name: str = "cmp_eager"):
    a, b = pair(name, mode)
    return Catalog(a).runs()[0], Catalog(b).runs()[0]


@pytest.mark.parametrize("mode", ["FULL_TENSOR", "FULL_HEALTH"])
def test_block_read_verdicts_equal_one_pair_at_a_time(mode):
    run_a, run_b = _runs(mode)
    result = comparison.compare(run_a, run_b)
    pairs = list(zip(result.execs.a.tolist(), result.execs.b.tolist()))
    assert len(pairs) > 10  # the program's eager ops all align
    one_by_one = [differences.execution_metric(run_a, run_b, a, b, result.tol) for a, b in pairs]
    expected = np.array([bool(m and m.get("differs")) for m in one_by_one])
    assert result.exec_differs.tolist() == expected.tolist()
    assert {i: m["summary"] for i, m in result.exec_metrics.items()} == {
        i: m["summary"] for i, m in enumerate(one_by_one) if m and m.get("differs")
    }
    doc = document.document(result, listed=10)
    assert doc["counts"]["divergent"] == int(expected.sum()) + int(result.trace_differs.sum())
    if mode == "FULL_HEALTH":  # x * 0.3 vs x * 0.25 changes no count: only FULL_TENSOR sees the change
        assert not expected.any() and doc["first_divergence"] is None
        return
    assert expected.any() and not expected.all()  # the change reaches some executions, not every one
    first = doc["first_divergence"]
    assert first["b"]["source"] == "eager" and first["b"]["line"] == injected_line("cmp_eager")
    assert first["b"]["index"] == int(result.execs.b[np.flatnonzero(expected)[0]])


def test_block_read_decodes_as_the_detail_does():
    for run in _runs("FULL_HEALTH"):
        n = len(run.execution_arrays()["op_type"])
        outs = run.execution_outputs(np.arange(n, dtype=np.int64))
        for index, got in enumerate(outs):
            detail = run.execution(index, max_elements=0)
            assert got.mode == detail["tensor_debug_mode"]
            mode = MODE_BY_NAME[got.mode]
            assert [debug_values.decode_debug_value(mode, p, eager=True) for p in got.protos] == detail["outputs"]


def test_health_counts_that_move_are_found_by_the_block_read():
    """cmp_eager_health.py: a shift before a ReLU moves the negative and zero counts of the
    Sub, Relu and Square executions of every iteration (not the AddV2 that steps x)."""
    run_a, run_b = _runs("FULL_HEALTH", "cmp_eager_health")
    result = comparison.compare(run_a, run_b)
    pairs = list(zip(result.execs.a.tolist(), result.execs.b.tolist()))
    one_by_one = [differences.execution_metric(run_a, run_b, a, b, result.tol) for a, b in pairs]
    expected = [bool(m and m.get("differs")) for m in one_by_one]
    assert result.exec_differs.tolist() == expected and any(expected) and not all(expected)
    assert {i: m["summary"] for i, m in result.exec_metrics.items()} == {
        i: m["summary"] for i, m in enumerate(one_by_one) if m and m.get("differs")
    }
    first = document.document(result, listed=10)["first_divergence"]
    assert first["b"]["line"] == injected_line("cmp_eager_health") and "neg" in first["metric"]["summary"]
