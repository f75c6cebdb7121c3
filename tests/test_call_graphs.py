"""An opened tf.function call lists the traces of its graphs only (graph_executions `call`), on a dump written by
real TensorFlow (tests/programs/call_graphs.py: `outer` iterates a tf.data map and calls the nested `inner`).

Oracle: TensorFlow's own DebugDataReader. A call's window is the traces written after the previous execution's
record and before its own; of those, the call's are the ones whose graph is the call's graph or has it on its
outer-graph chain (`DebuggedGraph.outer_graph_id`). The map function's traces fall inside the window (the call
iterates the dataset) but belong to a graph defined outside the call.
"""

from __future__ import annotations

import dumps
import pytest
from run_helpers import only_run


def _reader_view(dump_dir: str):
    """(calls: [(execution index, [trace index of its graphs])], window_names: {exec: set of graph names})."""
    from tensorflow.python.debug.lib import debug_events_reader as der  # the oracle: tests write and read with TF

    with der.DebugDataReader(dump_dir) as reader:
        reader.update()
        execs = reader.executions()
        traces = reader.graph_execution_traces()

        def chain(graph_id: str) -> set[str]:
            seen: set[str] = set()
            while graph_id and graph_id not in seen:
                seen.add(graph_id)
                graph_id = reader.graph_by_id(graph_id).outer_graph_id
            return seen

        calls, window_names = [], {}
        for e, ex in enumerate(execs):
            if not ex.op_type.startswith("__inference_outer"):
                continue
            lo = execs[e - 1].wall_time if e else float("-inf")
            window = [i for i, t in enumerate(traces) if lo < t.wall_time <= ex.wall_time]
            calls.append((e, [i for i in window if ex.graph_id in chain(traces[i].graph_id)]))
            window_names[e] = {reader.graph_by_id(traces[i].graph_id).name for i in window}
    return calls, window_names


@pytest.fixture(scope="module")
def dump():
    path = dumps.make_dump("call_graphs")
    return only_run(path), _reader_view(path)


def test_a_call_lists_its_graphs_traces_not_the_map_functions(dump):
    run, (calls, window_names) = dump
    assert len(calls) == 3
    for e, want in calls:
        assert "Dataset_map_lambda" in window_names[e]  # the map ran inside the call's window
        got = run.graph_executions(0, 1000, call=e)
        assert [r["index"] for r in got["rows"]] == want and got["call"]["traces"] == len(want)
        names = {run.graph(r["graph_id"])["name"] for r in got["rows"]}
        assert "inner" in names and "Dataset_map_lambda" not in names  # nested function kept, map dropped
