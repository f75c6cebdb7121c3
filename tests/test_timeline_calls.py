"""One tf.function call's traces (graph_executions `call`) and the timeline minimap's marks (route timeline_marks) on
a dump written by real TensorFlow (tests/programs/timeline_calls.py: 600 steps of eager op, call, eager op).

Oracles from TensorFlow's own DebugDataReader: every call of `step` runs the same graph and writes the same traces,
so the k-th call's traces are the k-th run of them, in TF's trace list; an alert is a trace or an execution whose
CONCISE_HEALTH vector counts a -inf, +inf or NaN, and a trace's alert belongs to the first execution written at or
after it.
"""

from __future__ import annotations

import json

import dumps
import numpy as np
import pytest
from api_helpers import get, make_app, url, wait_indexed
from run_helpers import only_run
from werkzeug.test import Client

from tensorboard_plugin_dbg.analysis import timeline_marks
from tensorboard_plugin_dbg.index.trace_filter import TraceFilter

STEPS = 600


def _reader_view(dump_dir: str):
    """(executions: [(wall, op_type, has_nonfinite)], traces: [(wall, op_name, has_nonfinite)]) read by TF."""
    from tensorflow.python.debug.lib import debug_events_reader as der  # the oracle: tests write and read with TF

    def bad(vector) -> bool:  # CONCISE_HEALTH: [tensor id, size, -inf, +inf, NaN]
        return any(v[2] + v[3] + v[4] > 0 for v in vector)

    with der.DebugDataReader(dump_dir) as reader:
        reader.update()
        execs = [(e.wall_time, e.op_type, bad(e.debug_tensor_values or [])) for e in reader.executions()]
        traces = [(t.wall_time, t.op_name, bad([t.debug_tensor_value])) for t in reader.graph_execution_traces()]
    return execs, traces


@pytest.fixture(scope="module")
def dump():
    path = dumps.make_dump("timeline_calls")
    return path, only_run(path), _reader_view(path)


def test_a_calls_rows_are_the_traces_it_wrote(dump):
    _path, run, (execs, traces) = dump
    calls = [i for i, (_w, op_type, _b) in enumerate(execs) if op_type.startswith("__inference_step")]
    per_call = len(traces) // len(calls)
    assert len(calls) == STEPS and per_call * len(calls) == len(traces)
    for k in (0, 13, 200, STEPS - 1):
        answer = run.graph_executions(0, 100, call=calls[k])
        want = traces[k * per_call : (k + 1) * per_call]
        assert [r["index"] for r in answer["rows"]] == list(range(k * per_call, (k + 1) * per_call))
        assert [r["op_name"] for r in answer["rows"]] == [name for _w, name, _b in want]
        assert answer["call"]["traces"] == per_call and answer["call"]["graph_name"] == "step"
        first_bad = next((k * per_call + j for j, (_w, _n, b) in enumerate(want) if b), None)
        got_first = answer["call"]["first_nonfinite"]
        assert (got_first and got_first["index"]) == first_bad
        if first_bad is not None:
            assert answer["rows"][got_first["position"]]["index"] == first_bad


def test_a_traces_detail_names_the_call_that_ran_it(dump):
    _path, run, (execs, traces) = dump
    calls = [i for i, (_w, op_type, _b) in enumerate(execs) if op_type.startswith("__inference_step")]
    per_call = len(traces) // len(calls)
    for k in (0, 13, STEPS - 1):
        for row in (k * per_call, (k + 1) * per_call - 1):  # its first and last trace
            assert run.graph_execution(row, max_elements=0)["call_index"] == calls[k]


def test_the_call_filter_combines_with_the_others(dump):
    _path, run, (execs, _traces) = dump
    call = [i for i, e in enumerate(execs) if e[1].startswith("__inference")][13]  # a step whose log is -inf
    logs = run.graph_executions(0, 100, TraceFilter(op_type="log"), call=call)
    assert [r["op_name"] for r in logs["rows"]] == ["Log"] and logs["total"] == 1
    bad = run.graph_executions(0, 100, TraceFilter(only_nonfinite=True), call=call)
    assert [r["op_name"] for r in bad["rows"]] == ["Log", "mul", "Sum"]
    assert bad["call"]["first_nonfinite"] == {"index": bad["rows"][0]["index"], "position": 0}
    assert run.graph_executions(0, 100, TraceFilter(op_name="nothing"), call=call)["call"]["first_nonfinite"] is None


def _oracle_exec_of_alerts(execs, traces):
    """The execution of every alert (execution alerts at themselves, trace alerts at the first execution written at
    or after them), in the alert list's order: wall time, executions before traces."""
    walls = [w for w, _t, _b in execs]
    alerts = [(w, 0, i, i) for i, (w, _t, b) in enumerate(execs) if b]
    alerts += [(w, 1, r, int(np.searchsorted(walls, w, "left"))) for r, (w, _n, b) in enumerate(traces) if b]
    return [a[3] for a in sorted(alerts)]


def test_marks_count_every_alert_at_its_execution(dump):
    _path, run, (execs, traces) = dump
    at = _oracle_exec_of_alerts(execs, traces)
    assert len(at) > 1000  # more than one page of alerts: the minimap must not stop at the first page
    for bins in (7, 100, 2000):
        got = timeline_marks.marks(run, bins)
        edges = got["edges"]
        assert edges[0] == 0 and edges[-1] == len(execs) and len(got["counts"]) == min(bins, len(execs))
        want = [sum(edges[i] <= e < edges[i + 1] for e in at) for i in range(len(edges) - 1)]
        assert got["counts"] == want and got["alerts"] == len(at) and got["after_last"] == 0
        assert got["counts"][-1] > 0  # the last alerts, far past the first page, are marked


def test_first_alert_of_each_bin_opens_that_alert(dump):
    path, run, (execs, traces) = dump
    app, _plugin = make_app(path)
    client = Client(app)
    name = wait_indexed(client)["runs"][0]["name"]
    status, _, got = get(client, url("timeline_marks", run=name, bins=40))
    assert status == 200
    at = _oracle_exec_of_alerts(execs, traces)
    for i, first in enumerate(got["first_alert"]):
        lo, hi = got["edges"][i], got["edges"][i + 1]
        inside = [k for k, e in enumerate(at) if lo <= e < hi]
        assert first == (inside[0] if inside else -1)
        if first >= 0:  # that index in the alert list is an alert of this bin
            _, _, page = get(client, url("alerts", run=name, begin=first, end=first + 1))
            alert = page["alerts"][0]
            e = alert["source_index"] if alert["source"] == "execution" else at[first]
            assert lo <= e < hi


def test_marks_are_the_same_from_blocks_of_any_size(dump, monkeypatch):
    """Alerts are placed a block at a time and kept per execution (issue #40 item 1): an execution whose alerts
    span several blocks keeps its count and its first alert."""
    _path, run, (execs, traces) = dump
    at = _oracle_exec_of_alerts(execs, traces)
    table = run.alert_table()
    whole = type(table).blocks
    monkeypatch.setattr(type(table), "blocks", lambda self, size=97: whole(self, 97))
    run.derived.put("alert_executions", None, None)  # stale: the next request places the alerts again
    got = timeline_marks.marks(run, 40)
    edges = got["edges"]
    for i in range(len(edges) - 1):
        inside = [k for k, e in enumerate(at) if edges[i] <= e < edges[i + 1]]
        assert got["counts"][i] == len(inside) and got["first_alert"][i] == (inside[0] if inside else -1)
    assert got["alerts"] == len(at) and len(at) > 97 * 3


def test_marks_follow_the_mutes(dump):
    _path, run, (execs, traces) = dump
    mutes = json.dumps([{"op_type": "Log", "reason": "test"}])
    app, _plugin = make_app(_path)
    client = Client(app)
    name = wait_indexed(client)["runs"][0]["name"]
    _, _, all_marks = get(client, url("timeline_marks", run=name, bins=10))
    _, _, muted = get(client, url("timeline_marks", run=name, bins=10, mutes=mutes))
    logs = sum(1 for _w, n, b in traces if b and n == "Log")
    assert logs > 0 and muted["alerts"] == all_marks["alerts"] - logs
    assert sum(muted["counts"]) == muted["alerts"]


def test_hostile_parameters(dump):
    path, _run, (execs, _traces) = dump
    app, _plugin = make_app(path)
    client = Client(app)
    name = wait_indexed(client)["runs"][0]["name"]
    for bad in ({"bins": "0"}, {"bins": "2001"}, {"bins": "x"}, {"mutes": "[{"}):
        status, _, body = get(client, url("timeline_marks", run=name, **bad))
        assert status == 400 and set(body["error"]) == {"code", "message"}, bad
    for bad in ("-1", "x", "1.5"):
        status, _, body = get(client, url("graph_executions", run=name, begin=0, end=10, call=bad))
        assert status == 400 and set(body["error"]) == {"code", "message"}, bad
    eager_op = next(i for i, e in enumerate(execs) if not e[1].startswith("__inference"))
    for missing, words in ((eager_op, "not a tf.function call"), (len(execs), "not found")):
        status, _, body = get(client, url("graph_executions", run=name, begin=0, end=10, call=missing))
        assert status == 404 and words in body["error"]["message"]
