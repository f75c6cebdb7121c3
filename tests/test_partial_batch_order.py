"""A last partial batch gathered by a parallel tf.data map may be written before the full batch before it (seen in a
real `partial_val_batch` dump: the validation pass's `GatherV2` traces held 32, 16, 32 elements). The k-th trace of
a tf.data function is not its k-th element: that order is the threads', so a partial batch written early is still
one last partial batch, never a batch size that "alternates 32/16, 2 times in 3 traces"."""

from __future__ import annotations

import dumps
import pytest
from run_helpers import only_run
from trace_orders import swap_runs

from tensorboard_plugin_dbg.analysis import rules


def _gather_sizes(run, graph_id: str) -> list[int]:
    n = run.info()["counts"]["graph_executions"]
    rows = [run.graph_execution(i, max_elements=0) for i in range(n)]
    return [r["health"]["size"] for r in rows if r["graph_id"] == graph_id and r["op_name"] == "GatherV2"]


def _pipeline_graphs(run) -> list[str]:
    return [gid for gid, name, _outer in run.graph_entries() if name == "Dataset_map_grab_batch"]


@pytest.mark.parametrize("order", ["as_recorded", "partial_written_early"])
def test_a_partial_batch_written_early_by_the_pipeline_is_not_an_alternating_batch(order, tmp_path):
    dump = dumps.make_dump("partial_val_batch")
    if order == "partial_written_early":  # each pipeline function's partial run before the full run before it
        for k, graph_id in enumerate(_pipeline_graphs(only_run(dump))):
            sizes = _gather_sizes(only_run(dump), graph_id)
            if sizes[-1] < sizes[-2]:
                (tmp_path / str(k)).mkdir()
                dump = swap_runs(dump, tmp_path / str(k), graph_id, -1, -2)
    run = only_run(dump)
    graphs = _pipeline_graphs(run)
    assert len(graphs) == 2  # the training and the validation pass
    if order == "partial_written_early":  # the case: a full batch's trace after the partial one
        for graph_id in graphs:
            sizes = _gather_sizes(run, graph_id)
            assert sizes[-1] > min(sizes) and sizes.count(min(sizes)) == 1, sizes
    found = rules.evaluate(run)["findings"]
    assert [f["op_name"] for f in found if f["type"] == "batch_alternates"] == [], found
    shape = [f for f in found if f["type"] == "shape_change"]
    assert len(shape) == len({f["graph_id"] for f in shape}), [f["op_name"] for f in shape]  # once per function
    for graph_id in graphs:  # each pipeline function: its partial batch said once
        (said,) = [f for f in shape if f["graph_id"] == graph_id]
        assert "a last partial batch" in said["evidence"], said["evidence"]
