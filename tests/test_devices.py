"""Device placement on a real two-device dump (tests/programs/devices.py: two logical CPUs, ops pinned with
tf.device in a tf.function and eagerly): each op's and execution's device as the program placed it and as
TensorFlow's own reader reads it; the `devices` counts and the `graph_executions` device/host filters equal a
brute-force pass over every row, on one host and on a two-host run; hostile parameters are a 400."""

from __future__ import annotations

import glob
import json
import os
import shutil
import subprocess
import sys
from collections import Counter

import dumps
import pytest
from api_helpers import get, make_app, ok, url, wait_indexed
from werkzeug.test import Client

from tensorboard_plugin_dbg.__main__ import main
from tensorboard_plugin_dbg.index.catalog import Catalog
from tensorboard_plugin_dbg.index.trace_filter import TraceFilter

CPU0 = "/job:localhost/replica:0/task:0/device:CPU:0"
CPU1 = "/job:localhost/replica:0/task:0/device:CPU:1"


def _tf_reader(dump_dir: str) -> dict:
    """What TensorFlow's DebugDataReader reads (tests/oracle.py, in a subprocess: the viewer never imports TF)."""
    args = [sys.executable, os.path.join(dumps.ROOT, "tests", "oracle.py"), dump_dir, "--no-values"]
    proc = subprocess.run(args, capture_output=True, text=True, timeout=120, env=dumps.env_for_tf(), check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)


def _run_of(logdir: str):
    runs = Catalog(logdir).runs()
    assert len(runs) == 1
    return runs[0]


@pytest.fixture(scope="module")
def dump() -> str:
    return dumps.make_dump("devices")


@pytest.fixture(scope="module")
def run(dump):
    return _run_of(os.path.dirname(dump))


@pytest.fixture(scope="module")
def two_hosts(dump, tmp_path_factory):
    """The same dump as two hosts' file sets of one run (a second copy renamed to host `worker1`)."""
    root = tmp_path_factory.mktemp("two-hosts")
    for path in glob.glob(os.path.join(dump, "tfdbg_events.*")):
        name = os.path.basename(path)
        shutil.copy(path, root / name)
        _prefix, epoch, _host, suffix = name.split(".")
        shutil.copy(path, root / f"tfdbg_events.{epoch}.worker1.{suffix}")
    run = _run_of(str(root))
    assert len(run.hosts()) == 2
    return run


def _all_rows(run) -> list[dict]:
    n = run.info()["counts"]["graph_executions"]
    return [row for b in range(0, n, 1000) for row in run.graph_executions(b, min(n, b + 1000))["rows"]]


def test_each_op_and_execution_is_on_the_device_the_program_pinned_it_to(run):
    rows = _all_rows(run)
    by_op = {r["op_name"]: r["device_name"] for r in rows}
    assert by_op["square_on_cpu0"] == CPU0 and by_op["mul"] == CPU0
    assert by_op["log_on_cpu1"] == CPU1 and by_op["sub"] == CPU1
    execs = run.executions(0, 100)["executions"]
    assert [(e["op_type"], e["device"]) for e in execs if not e["is_function"]] == [
        ("Sub", CPU1),  # x - 1.0 inside `with tf.device("/CPU:1")`
        ("Sqrt", CPU1),
        ("Exp", CPU0),
    ]
    nan_rows = run.graph_executions(0, 10, TraceFilter(only_nonfinite=True, device=CPU1))["rows"]
    assert [r["op_name"] for r in nan_rows] == ["log_on_cpu1", "log_on_cpu1"]  # the NaN made on CPU:1


@pytest.mark.slow  # TensorFlow's reader in a subprocess (~6 s)
def test_devices_match_tensorflows_own_reader(dump, run):
    tf = _tf_reader(dump)
    names = tf["devices"]
    assert sorted(names.values()) == [CPU0, CPU1]
    rows = _all_rows(run)
    assert [r["device_name"] for r in rows] == [t["device_name"] for t in tf["traces"]]
    assert [(r["op_name"], r["output_slot"]) for r in rows] == [(t["op_name"], t["output_slot"]) for t in tf["traces"]]
    execs = run.executions(0, 1000)["executions"]
    want = [
        names[str(e["output_tensor_device_ids"][0])] if e["output_tensor_device_ids"] else None
        for e in tf["executions"]
    ]
    assert [e["device"] for e in execs] == want
    for e, t in zip(execs, tf["executions"]):  # the detail lists every output's device, as before
        detail = run.execution(e["index"])
        assert detail["output_devices"] == [names[str(d)] for d in t["output_tensor_device_ids"]]


def _brute_counts(run) -> dict:
    counts: dict = {}
    for r in _all_rows(run):
        counts.setdefault((r["device_name"], r["host"]), [0, 0])[0] += 1
    n = run.info()["counts"]["executions"]
    for e in run.executions(0, n)["executions"]:
        counts.setdefault((e["device"], e["host"]), [0, 0])[1] += 1
    return counts


@pytest.mark.parametrize("which", ["one_host", "two_hosts"])
def test_device_counts_equal_a_pass_over_every_row(which, run, two_hosts):
    r = run if which == "one_host" else two_hosts
    got = r.device_counts()
    assert got["hosts"] == r.hosts()
    assert {(d["device_name"], d["host"]): [d["graph_executions"], d["executions"]] for d in got["devices"]} == (
        _brute_counts(r)
    )
    keys = [(d["device_name"] is None, d["device_name"], d["host"]) for d in got["devices"]]
    assert keys == sorted(keys)
    assert sum(d["graph_executions"] for d in got["devices"]) == r.info()["counts"]["graph_executions"]
    assert r.device_counts() is got  # cached per index version


def _filters(run) -> list[dict]:
    devices = sorted({d["device_name"] for d in run.device_counts()["devices"] if d["device_name"]})
    out: list[dict] = []
    for device in [None, *devices, "/job:localhost/replica:0/task:0/device:GPU:7"]:
        for host in [None, *run.hosts(), "no-such-host"]:
            for extra in ({}, {"only_nonfinite": True}, {"op_type": "Log"}, {"op_name": "SUB"}):
                if device is not None or host is not None:
                    out.append({"device": device, "host": host, **extra})
    return out


@pytest.mark.parametrize("which", ["one_host", "two_hosts"])
def test_filtered_rows_equal_a_brute_force_filter(which, run, two_hosts):
    r = run if which == "one_host" else two_hosts
    rows = _all_rows(r)
    nonfinite = set(r.trace_arrays()["nonfinite_rows"].tolist())
    checked = Counter()
    for f in _filters(r):
        want = [
            row["index"]
            for row in rows
            if (f["device"] is None or row["device_name"] == f["device"])
            and (f["host"] is None or row["host"] == f["host"])
            and (not f.get("only_nonfinite") or row["index"] in nonfinite)
            and (f.get("op_type") is None or row["op_type"] == f["op_type"])
            and (f.get("op_name") is None or f["op_name"].lower() in row["op_name"].lower())
        ]
        page = r.graph_executions(0, 1000, TraceFilter(**f))
        assert [x["index"] for x in page["rows"]] == want, f
        assert page["total"] == len(want) and page["unfiltered_total"] == len(rows), f
        assert all(x["device_name"] == f["device"] for x in page["rows"] if f["device"]), f
        checked["empty" if not want else "some"] += 1
    assert checked["empty"] >= 4 and checked["some"] >= 8, checked  # unknown names match nothing; known ones do


@pytest.fixture(scope="module")
def client(dump):
    app, _plugin = make_app(os.path.dirname(dump))
    c = Client(app)
    wait_indexed(c)
    return c, os.path.basename(dump)


def test_devices_route_and_filter_params(client, run):
    c, name = client
    body = ok(c, "devices", run=name)
    assert body["run"] == name and body["devices"] == run.device_counts()["devices"]
    page = ok(c, "graph_executions", run=name, begin=0, end=100, device=CPU1)
    assert {r["op_name"] for r in page["rows"]} == {"sub/y", "sub", "log_on_cpu1"}
    for unknown in ({"device": "/job:x/device:TPU:0"}, {"host": "🤖"}, {"device": CPU1, "host": "elsewhere"}):
        page = ok(c, "graph_executions", run=name, begin=0, end=100, **unknown)
        assert page["total"] == 0 and page["rows"] == [] and page["unfiltered_total"] > 0


@pytest.mark.parametrize(
    "params",
    [
        {"device": "CPU:1"},  # not a full name
        {"device": CPU1 + " "},
        {"device": "/a\x00b"},
        {"device": "/x\r\nX-Injected: 1"},
        {"device": "/" + "x" * 5000},
        {"host": "a b"},
        {"host": "\x00"},
        {"host": "h\n"},
    ],
)
def test_hostile_device_and_host_are_400(client, params):
    c, name = client
    status, _, body = get(c, url("graph_executions", run=name, begin=0, end=10, **params))
    assert status == 400 and set(body) == {"error"} and body["error"]["code"] == "bad_parameter", body
    assert next(iter(params)) in body["error"]["message"]


def test_repeated_or_misplaced_device_param_is_400(client):
    c, name = client
    status, _, body = get(c, url("graph_executions", run=name, begin=0, end=10) + f"&device={CPU0}&device={CPU1}")
    assert status == 400 and "once" in body["error"]["message"]
    status, _, body = get(c, url("devices", run=name, device=CPU0))
    assert status == 400 and "unknown parameter" in body["error"]["message"]
    status, _, body = get(c, url("devices", run="no-such-run"))
    assert status == 404 and body["error"]["code"] == "not_found"


def test_report_names_the_producers_device(dump, capsys):
    """The headless report's root cause says where the NaN was made (the Log pinned to CPU:1), text and JSON."""
    assert main(["report", os.path.dirname(dump)]) == 1
    out = capsys.readouterr().out
    lines = out.splitlines()
    at = next(i for i, line in enumerate(lines) if "first producer:" in line)
    assert "op log_on_cpu1 (Log)" in lines[at] and lines[at + 1] == f"  device: {CPU1}", out
    assert main(["report", os.path.dirname(dump), "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["runs"][0]["producer"]["device"] == CPU1


def test_one_device_runs_filter_keeps_every_row():
    """A one-device run (most runs): its device filter keeps every row, alone or with the others, at no cost."""
    r = _run_of(os.path.dirname(dumps.make_dump("nan_sqrt", "FULL_HEALTH")))
    (device,) = {d["device_name"] for d in r.device_counts()["devices"] if d["graph_executions"]}
    n = r.info()["counts"]["graph_executions"]
    assert r.graph_executions(0, 1000, TraceFilter(device=device)) == r.graph_executions(0, 1000) and n > 0
    for f in ({"only_nonfinite": True}, {"op_type": "Sqrt"}, {"op_name": "sqrt", "only_nonfinite": True}):
        on_device = r.graph_executions(0, 1000, TraceFilter(device=device, **f))
        assert on_device == r.graph_executions(0, 1000, TraceFilter(**f)), f
    assert r.graph_executions(0, 1000, TraceFilter(device=device, only_nonfinite=True))["total"] > 0
