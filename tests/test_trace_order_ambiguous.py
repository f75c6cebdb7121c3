"""When two runs of a parallel tf.data map overlap and both readers' traces reach the file before either run's input,
and the input's traces there disagree in health (one finite, one NaN), which one a reader read cannot be told: the
analysis leaves it unpaired (never guessed). It must then say so, in plain words (the traces that could be the one
read), never "a circular buffer keeps only the last records" nor "a circular buffer dropped earlier records": the
buffer was off, nothing was dropped, only the order is ambiguous. The real dump of `nan_map_overlap` (a map whose
`Sqrt` reads a `Log`: row k's log is negative and finite, row k+1's is NaN) is rewritten with runs k and k+1 in that
order (records moved whole, CRCs valid): whatever the threads did, the case is the same on every recording. k = 0:
no trace of the `Log` before the first `Sqrt` at all (main said "a circular buffer dropped earlier records"); k = 4:
the `Log` of the run before is the last one before it (main took it as this run's: "its inputs were finite")."""

from __future__ import annotations

import dumps
import pytest
from run_helpers import culprit_line, only_run
from trace_orders import write_order

from tensorboard_plugin_dbg.__main__ import main
from tensorboard_plugin_dbg.analysis import report_text
from tensorboard_plugin_dbg.analysis.root_cause import analyze, classification, role_name

GRAPH = "Dataset_map_log_scale"


def _nonfinite(row: dict) -> bool:
    health = row["health"]
    return bool(health.get("nan") or health.get("neg_inf") or health.get("pos_inf"))


def _sqrts_before_logs(dump: str, dest, first: int) -> str:
    """A copy of DUMP whose map traces are, in the positions they held: the runs before FIRST one after the other,
    then runs FIRST and FIRST + 1 overlapped (both inputs `args_0`, both `Sqrt`s, then both `Log`s: the finite
    negative one, the NaN one), then the rest. The n-th trace of an op alike in every run stands for the n-th run
    among those (their health is the same)."""
    run = only_run(dump)
    rows = [run.graph_execution(i, max_elements=0) for i in range(run.info()["counts"]["graph_executions"])]
    mine = [r for r in rows if r["graph_name"] == GRAPH]
    by_op = {op: [r["index"] for r in mine if r["op_name"] == op] for op in ("args_0", "Log", "Sqrt")}
    assert all(len(v) == 8 for v in by_op.values()) and len(mine) == 24, [r["op_name"] for r in mine]
    (log_neg,) = [i for i in by_op["Log"] if rows[i]["health"].get("neg") and not _nonfinite(rows[i])]
    (log_nan,) = [i for i in by_op["Log"] if _nonfinite(rows[i])]
    sqrt_nan = [i for i in by_op["Sqrt"] if _nonfinite(rows[i])]
    (arg_neg,) = [i for i in by_op["args_0"] if rows[i]["health"].get("neg")]
    assert len(sqrt_nan) == 2, sqrt_nan
    args = [i for i in by_op["args_0"] if i != arg_neg]
    logs = [i for i in by_op["Log"] if i not in (log_neg, log_nan)]
    sqrts = [i for i in by_op["Sqrt"] if i not in sqrt_nan]
    runs: list[int] = []
    for _ in range(first):
        runs += [args.pop(0), logs.pop(0), sqrts.pop(0)]
    runs += [args.pop(0), arg_neg, *sqrt_nan, log_neg, log_nan]
    while args:
        runs += [args.pop(0), logs.pop(0), sqrts.pop(0)]
    order = list(range(len(rows)))
    for position, row in zip(sorted(r["index"] for r in mine), runs, strict=True):
        order[position] = row
    return write_order(dump, dest, order)


@pytest.mark.parametrize("mode", ["FULL_HEALTH", "FULL_TENSOR"])
@pytest.mark.parametrize("first", [0, 4])
def test_an_ambiguous_overlapping_input_is_said_to_be_ambiguous_not_dropped(mode, first, tmp_path, capsys):
    dump = _sqrts_before_logs(dumps.make_dump("nan_map_overlap", mode, str(first)), tmp_path, first)
    run = only_run(dump)
    rows = [run.graph_execution(i, max_elements=0) for i in range(run.info()["counts"]["graph_executions"])]
    mine = [r for r in rows if r["graph_name"] == GRAPH]
    bad_sqrts = [r["index"] for r in mine if r["op_name"] == "Sqrt" and _nonfinite(r)]
    (log_neg,) = [r["index"] for r in mine if r["op_name"] == "Log" and r["health"].get("neg") and not _nonfinite(r)]
    (log_nan,) = [r["index"] for r in mine if r["op_name"] == "Log" and _nonfinite(r)]
    assert max(bad_sqrts) < min(log_neg, log_nan), (bad_sqrts, log_neg, log_nan)  # the case: both readers first

    # neither Sqrt is given a Log by position or by rank: which one each read cannot be told (never a producer whose
    # "inputs were finite", nor a propagator)
    roles = {role_name(classification(run), "graph_execution", i) for i in bad_sqrts}
    assert roles == {"unknown"}, roles
    result = analyze(run)
    assert result["status"] == "found", result["message"]
    assert result["first_kept"] is False, result["message"]
    assert "circular buffer" not in result["message"], result["message"]
    p = result["producer"]
    assert p["op_type"] == "Sqrt" and p["user_frame"]["line"] == culprit_line("nan_map_overlap"), p
    assert p["inputs_known"] is False, p["inputs"]  # which Log it read cannot be told: never guessed
    (log,) = p["inputs"]
    assert log["health"] is None and "circular buffer" not in log["description"], log["description"]
    # plain words: the reading is ambiguous, and which traces could be the one read (the finite one, the NaN one)
    assert "ambiguous" in log["description"], log["description"]
    assert f"#{log_neg} (finite)" in log["description"] and f"#{log_nan} (NaN)" in log["description"], log
    # the map function was fed finite rows only: the NaN was born inside it (at this Sqrt or the Log it read), so the
    # line to fix is the map function's, not the dataset's ("the data carried it" would be a guess too)
    assert p["data"] is not None and p["data"]["born_in_pipeline"] is True, p["data"]
    text = report_text.run_section(report_text.run_result(run))
    assert "circular buffer" not in text and "ambiguous" in text, text
    main(["report", dump])
    out = capsys.readouterr().out
    assert "circular buffer" not in out, out
    assert f"nan_map_overlap.py:{culprit_line('nan_map_overlap')}" in out, out
    assert f"fix {dumps.program_path('nan_map_overlap')}:" not in out, out  # the dataset's line is context only
    assert f"#{log_neg} (finite)" in out and f"#{log_nan} (NaN)" in out, out
