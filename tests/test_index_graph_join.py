"""Execution.graph_id is empty for the functions an eager GradientTape runs; the index joins them to their graph.

TF's reader returns '' there, so the expected answer is stated: the forward function's graph is the graph whose
traces were written just before its execution record, and the backward function's graph (never traced by TF) is
the one whose name the function carries."""

from __future__ import annotations

import os

import dumps

from tensorboard_plugin_dbg.index.catalog import Catalog


def test_gradient_tape_functions_join_their_graphs():
    run = Catalog(os.path.dirname(dumps.make_dump("tape_function"))).runs()[0]
    n = run.info()["counts"]["executions"]
    functions = [d for d in run.executions(0, n)["executions"] if d["is_function"]]
    assert len(functions) == 4
    for d in functions:
        assert run.exec_queries._event(d["index"]).execution.graph_id == ""  # what TF wrote
        graph = run.graph(d["graph_id"])
        if d["op_type"].startswith("__forward_model"):
            assert graph["name"] == "model"
            # its traces come right before it in wall time and belong to that graph
            rows = run.graph_executions(0, run.info()["counts"]["graph_executions"])["rows"]
            before = [r for r in rows if r["wall_time"] <= d["wall_time"]]
            assert before[-1]["graph_id"] == d["graph_id"]
        else:
            assert graph["name"] == "__backward_model_25" or graph["name"].startswith("__backward_model")
            assert d["op_type"].startswith("__inference_" + graph["name"])
    ops = [d for d in run.executions(0, n)["executions"] if not d["is_function"]]
    assert ops and all(d["graph_id"] is None for d in ops)
