"""Compare on a tf.data function's traces, whose order the dump does not decide (analysis/compare/unordered.py):
Keras `fit` on numpy arrays gathers its batches in a parallel map (`Dataset_map_grab_batch`), so which batch the
k-th `GatherV2` trace holds depends on the threads. Both runs' pipeline traces put in other orders the threads could
have written them in: the first change is still the clip the changed program adds, every time."""

from __future__ import annotations

import dumps
import numpy as np
import pytest
from compare_helpers import ShuffledTraces, injected_line, pair
from run_helpers import only_run

from tensorboard_plugin_dbg.analysis.compare import align, differences
from tensorboard_plugin_dbg.analysis.compare.comparison import DEFAULT_TOLERANCES, compare
from tensorboard_plugin_dbg.analysis.compare.finding import first_divergence

PROGRAM = "cmp_keras_fit"


def _pipeline_rows(run) -> np.ndarray:
    names = {gid: name for gid, name, _outer in run.graph_entries()}
    kinds = np.asarray(run.trace_arrays()["kind"])
    pipeline = [k for k in range(int(kinds.max()) + 1) if names.get(run.kind_info(k)[0], "").startswith("Dataset_")]
    return np.flatnonzero(np.isin(kinds, pipeline))


def _by_occurrence_differs(run_a, run_b) -> bool:
    """Whether pairing the pipeline's traces by occurrence (as every other function's are) finds a difference."""
    vocab: dict = {}
    ka, kb = align.trace_keys(run_a, vocab, True), align.trace_keys(run_b, vocab, False)
    pairs = align.align_traces(ka, kb)
    in_pipeline = np.isin(pairs.b, _pipeline_rows(run_b))
    differs, _ = differences.trace_differences(run_a, run_b, pairs, ka, kb, DEFAULT_TOLERANCES)
    return bool(differs[in_pipeline].any())


@pytest.mark.parametrize("mode", ["FULL_HEALTH", "FULL_TENSOR"])
def test_first_change_is_the_clip_whatever_order_the_pipeline_threads_wrote(mode):
    dump_a, dump_b = pair(PROGRAM, mode)
    run_a, run_b = only_run(dump_a), only_run(dump_b)
    rows_a, rows_b = _pipeline_rows(run_a), _pipeline_rows(run_b)
    assert len(rows_a) >= 16 and len(rows_b) >= 16  # 4 batches x 2 epochs x the map's ops
    answers, hazards = [], 0
    for seed in range(8):
        a, b = ShuffledTraces(run_a, rows_a, seed), ShuffledTraces(run_b, rows_b, 100 + seed)
        hazards += _by_occurrence_differs(a, b)
        c = compare(a, b)
        found = first_divergence(c)
        assert found is not None
        answers.append((found["b"]["function"].startswith("Dataset_"), found["b"]["op_name"], found["b"]["line"]))
        pipeline_b = np.isin(c.traces.b[c.trace_differs], rows_b)
        assert not pipeline_b.any(), "a pipeline trace of B differs from its A though the batches are the same"
        assert len(c.traces.only_a) == 0 and not np.isin(c.traces.only_b, rows_b).any()
    line = injected_line(PROGRAM)
    assert all(not in_pipeline and "clip" in op and at == line for in_pipeline, op, at in answers), answers
    assert hazards >= 1  # paired by occurrence, the orders tried do differ in the pipeline


def test_a_changed_batch_still_differs():
    """Pairing by content never hides a change in the data: one sample flipped (variant d) is the first change,
    in the pipeline function that gathered it."""
    run_a = only_run(dumps.make_dump(PROGRAM, "a", "FULL_HEALTH"))
    run_b = only_run(dumps.make_dump(PROGRAM, "d", "FULL_HEALTH"))
    c = compare(run_a, run_b)
    found = first_divergence(c)
    assert found is not None and found["b"]["function"] == "Dataset_map_grab_batch", found
    differing_b = c.traces.b[c.trace_differs]
    assert np.isin(differing_b, _pipeline_rows(run_b)).any()
