"""Debug modes decoded as wire.ts TensorHealth / TensorValue, on real dumps of tests/programs/modes.py.

FULL_TENSOR: TF's reader cannot give trace values (it deadlocks / returns None), so the expected values are stated
here from the program's arithmetic on its input [1, 2, 3, 0.5]; the digests still come from the oracle."""

from __future__ import annotations

import math
import os

import dumps
import pytest
from run_helpers import oracle, run_of


def _by_op(run):
    n = run.info()["counts"]["graph_executions"]
    return {(d["graph_name"], d["op_name"]): d for d in (run.graph_execution(i) for i in range(n))}


def test_full_tensor_values_stated():
    run = run_of(dumps.make_dump("modes", "FULL_TENSOR"))
    traces = {k[1]: v for k, v in _by_op(run).items() if k[0] == "compute"}
    assert traces["mul"]["value"]["dtype"] == "float16" and traces["mul"]["value"]["values"] == [2, 4, 6, 1]
    assert traces["add"]["value"]["dtype"] == "bfloat16" and traces["add"]["value"]["values"] == [2, 3, 4, 1.5]
    assert traces["truediv"]["value"]["values"] == [0.25, 0.5, 0.75, 0.125]
    assert traces["mul_1"]["value"] == {
        "dtype": "int32",
        "shape": [4],
        "size": 4,
        "begin": 0,
        "end": 4,
        "truncated": False,
        "values": [3, 6, 9, 0],
    }
    assert traces["mul_2"]["value"]["values"] == [3.25] and traces["mul_2"]["value"]["shape"] == []  # typed field
    assert traces["Any"]["value"]["values"] == [True] and traces["Any"]["health"]["dtype"] == "bool"
    log = traces["Log"]
    assert math.isinf(log["value"]["values"][0]) and math.isnan(log["value"]["values"][3])
    assert (log["health"]["neg_inf"], log["health"]["nan"], log["health"]["zero"], log["health"]["pos"]) == (1, 1, 1, 1)
    assert log["health"]["min"] == 0.0 and abs(log["health"]["max"] - math.log(2)) < 1e-6
    big = traces["Reshape"]
    assert big["value"]["shape"] == [2, 1, 2, 1, 2, 1, 2] and big["value"]["size"] == 16
    sliced = run.graph_execution(big["index"], begin=10, max_elements=4)["value"]
    assert (sliced["begin"], sliced["end"], sliced["values"], sliced["truncated"]) == (10, 14, [10, 11, 12, 13], True)
    # the Log trace is the one alert of the graph; the eager compute call holds the other
    alerts = run.alerts(0, 10)["alerts"]
    assert {(a["source"], a["op_name"]) for a in alerts} == {("graph_execution", "Log"), ("execution", None)}
    mixed = [run.execution(i) for i in range(run.info()["counts"]["executions"])][-1]
    assert [v["values"] for v in mixed["values"]] == [[2.0, 4.0], [2]]
    assert [o["dtype"] for o in mixed["outputs"]] == ["float32", "int32"]


@pytest.mark.slow  # TensorFlow's reader as the oracle: ~8 s
def test_full_tensor_digests_match_oracle():
    dump = dumps.make_dump("modes", "FULL_TENSOR")
    run, o = run_of(dump), oracle(dump, values=False)
    assert run.info()["counts"]["graph_executions"] == len(o["traces"])
    for i, t in enumerate(o["traces"]):
        d = run.graph_execution(i)
        assert (d["wall_time"], d["op_name"], d["op_type"], d["output_slot"], d["graph_id"]) == (
            t["wall_time"],
            t["op_name"],
            t["op_type"],
            t["output_slot"],
            t["graph_id"],
        )
        assert d["tensor_debug_mode"] == "FULL_TENSOR" and d["value"] is not None


def test_mixed_float_and_int_outputs_every_health_mode():
    for mode in ("CURT_HEALTH", "CONCISE_HEALTH", "FULL_HEALTH", "SHAPE"):
        run = run_of(dumps.make_dump("modes", mode))
        last = run.execution(run.info()["counts"]["executions"] - 1)
        assert last["op_type"].startswith("__inference_float_and_int")
        assert last["outputs"][0]["mode"] == mode
        # SHAPE instruments every dtype; the health modes leave the int output as an empty placeholder
        assert last["outputs"][1]["mode"] == ("SHAPE" if mode == "SHAPE" else "EMPTY")


def test_shape_mode_rank_over_six():
    run = run_of(dumps.make_dump("modes", "SHAPE"))
    big = {k[1]: v for k, v in _by_op(run).items() if k[0] == "compute"}["Reshape"]["health"]
    assert big["rank"] == 7 and big["shape_truncated"] and big["shape"] == [1, 2, 1, 2, 1, 2]
    assert big["size"] == 16 and big["dtype"] == "float32"


def test_no_tensor_mode_notice():
    run = run_of(dumps.make_dump("modes", "NO_TENSOR"))
    codes = {n["code"] for n in run.info()["status"]["notices"]}
    assert "no_tensor_mode" in codes
    assert run.graph_execution(0)["health"] == {"mode": "NO_TENSOR"}


def test_curt_health_alert_has_null_counts():
    run = run_of(dumps.make_dump("modes", "CURT_HEALTH"))
    graph_alerts = [a for a in run.alerts(0, 100)["alerts"] if a["source"] == "graph_execution"]
    assert graph_alerts and all(a["nan"] is None and a["neg_inf"] is None for a in graph_alerts)
    assert os.path.basename(run.name) == "dump"
