"""Every count, digest, record, graph, op, source file, stack frame and alert of real TF dumps equals what TF's
own reader (DebugDataReader, InfNanMonitor) returns for the same dump. The oracle runs in a subprocess with a
timeout because TF's reader can deadlock (FULL_TENSOR)."""

from __future__ import annotations

import math

import dumps
import pytest
from run_helpers import oracle, run_of  # noqa: F401  (their old import path)

from tensorboard_plugin_dbg.index.trace_filter import TraceFilter
from tensorboard_plugin_dbg.reader.schema import MODE_NAMES
from tensorboard_plugin_dbg.reader.tensor_proto import DTYPES

pytestmark = pytest.mark.slow  # TensorFlow's DebugDataReader reads each dump as the oracle: ~6 s per dump

DUMPS = [
    ("eager_ops",),
    ("nested",),
    ("keras_fit",),
    ("data_map",),
    ("mirrored",),
    ("circular",),
    ("circular", "20"),
    ("op_regex",),
    ("demo",),
    ("writer_set",),  # written by the package's own writer (tests/writer_sets.py), no TensorFlow
] + [("modes", m) for m in ("NO_TENSOR", "CURT_HEALTH", "CONCISE_HEALTH", "FULL_HEALTH", "SHAPE")]
_DTYPE_ENUM = {name: enum for enum, (name, _np, _f) in DTYPES.items()}


def health_vector(h: dict):
    """The TF debug vector a TensorHealth dict stands for (the inverse of decoding)."""
    m = h["mode"]
    if m == "CURT_HEALTH":
        return [h["tensor_id"], 1.0 if h["any_inf_or_nan"] else 0.0]
    if m == "CONCISE_HEALTH":
        return [h["tensor_id"], h["size"], h["neg_inf"], h["pos_inf"], h["nan"]]
    if m == "FULL_HEALTH":
        return [
            h["tensor_id"],
            h["device_id"],
            _DTYPE_ENUM[h["dtype"]],
            h["rank"],
            h["size"],
            h["neg_inf"],
            h["pos_inf"],
            h["nan"],
            h["neg"],
            h["zero"],
            h["pos"],
        ]
    if m == "SHAPE":
        return [h["tensor_id"], _DTYPE_ENUM[h["dtype"]], h["rank"], h["size"]] + (h["shape"] + [0] * 6)[:6]
    if m in ("NO_TENSOR", "EMPTY"):
        return []
    raise AssertionError(f"unexpected health {h}")


@pytest.fixture(scope="module", params=DUMPS, ids=lambda p: "-".join(p))
def pair(request):
    dump_dir = dumps.make_dump(*request.param)
    return run_of(dump_dir), oracle(dump_dir)


def test_counts_and_metadata(pair):
    run, o = pair
    info = run.info()
    assert info["status"]["done"] and info["status"]["bytes_read"] == info["status"]["bytes_total"]
    assert not [n for n in info["status"]["notices"] if n["severity"] == "error"]
    c = info["counts"]
    assert c["executions"] == len(o["executions"])
    assert c["graph_executions"] == len(o["traces"])
    assert c["graphs"] == len(o["graphs"])
    assert c["ops"] == len(o["ops"])
    assert c["source_files"] == len(o["source_files"])
    assert c["stack_frames"] == len(o["stack_frames"])
    assert info["tfdbg_run_id"] == o["run_id"] and info["tf_version"] == o["tf_version"]
    assert info["start_time"] == o["start_time"]


def test_executions(pair):
    run, o = pair
    page = run.executions(0, len(o["executions"]))["executions"]
    assert len(page) == len(o["executions"])
    for i, e in enumerate(o["executions"]):
        d = run.execution(i)
        assert page[i]["wall_time"] == d["wall_time"] == e["wall_time"]
        assert page[i]["op_type"] == d["op_type"] == e["op_type"]
        assert d["output_tensor_device_ids"] == e["output_tensor_device_ids"]
        assert d["stack_frame_ids"] == e["stack_frame_ids"]
        assert d["host"] == e["host"]
        assert d["tensor_debug_mode"] == MODE_NAMES[e["mode"]]
        assert d["input_tensor_ids"] == e["input_tensor_ids"]
        assert d["output_tensor_ids"] == e["output_tensor_ids"]
        if e["graph_id"]:
            assert d["graph_id"] == e["graph_id"]
        if e["values"] is not None:
            theirs = [v if v is not None else [] for v in e["values"]]
            ours = [health_vector(h) for h in d["outputs"][: len(theirs)]]
            assert ours == theirs
            assert all(h["mode"] == "EMPTY" for h in d["outputs"][len(theirs) :])


def test_graph_execution_traces(pair):
    run, o = pair
    n = len(o["traces"])
    rows = run.graph_executions(0, n)["rows"]
    assert len(rows) == n
    for i, t in enumerate(o["traces"]):
        d = run.graph_execution(i)
        for r in (rows[i], d):
            assert (r["wall_time"], r["op_type"], r["op_name"], r["output_slot"], r["graph_id"]) == (
                t["wall_time"],
                t["op_type"],
                t["op_name"],
                t["output_slot"],
                t["graph_id"],
            )
            assert r["device_name"] == t["device_name"]
        assert d["graph_chain"] == t["graph_ids"]
        assert d["tensor_debug_mode"] == MODE_NAMES[t["mode"]]
        assert health_vector(d["health"]) == (t["value"] or [])


def test_graphs_and_ops(pair):
    run, o = pair
    for gid, g in o["graphs"].items():
        ours = run.graph(gid)
        assert (ours["name"] or None) == g["name"]
        assert ours["outer_graph_id"] == g["outer"]
        assert sorted(x["graph_id"] for x in ours["inner_graphs"]) == g["inner"]
        assert ours["chain"][-1]["graph_id"] == gid
    for key, op in o["ops"].items():
        gid, name = key.split("/", 1)
        ours = run.op(gid, name)
        assert ours["op_type"] == op["op_type"]
        assert [f"{i['op_name']}:{i['output_slot']}" for i in ours["inputs"]] == op["input_names"]
        assert ours["output_tensor_ids"] == op["output_tensor_ids"]
        assert ours["num_outputs"] == op["num_outputs"]
        assert ours["stack_frame_ids"] == op["stack_frame_ids"]
        assert ours["host"] == op["host"]
        consumers = sorted(
            [c["output_slot"], x["op_name"], x["input_slot"]] for c in ours["consumers"] for x in c["consumers"]
        )
        assert consumers == op["consumers"]
        # trace indices of the op are exactly the oracle's traces of that op
        expected = [i for i, t in enumerate(o["traces"]) if t["graph_id"] == gid and t["op_name"] == name]
        assert ours["traces"]["count"] == len(expected)
        assert ours["traces"]["indices"] == expected[:1000]


def test_source_files_and_stack_frames(pair):
    run, o = pair
    files = run.source_files()["files"]
    assert [[f["host"], f["path"]] for f in files] == [[h, p] for h, p, _ in o["source_files"]]
    for f, (_h, _p, lines) in zip(files, o["source_files"]):
        got = run.source_file(f["index"])
        assert got["lines"] == lines and got["line_count"] == len(lines)
    ids = list(o["stack_frames"])
    frames = run.stack_frames(ids)["frames"]
    assert [[f["host"], f["path"], f["line"], f["function"]] for f in frames] == [o["stack_frames"][i] for i in ids]
    assert {str(k): v for k, v in run.devices.items()} == o["devices"]


def test_alerts(pair):
    run, o = pair
    total = run.info()["counts"]["alerts"]
    alerts = run.alerts(0, total + 5)["alerts"]
    assert len(alerts) == total
    walls = [a["wall_time"] for a in alerts]
    assert walls == sorted(walls)
    theirs_graph = sorted((a[8], a[4], a[5], a[6]) for a in o["alerts"] if a[8] is not None)
    ours_graph = sorted(
        (a["source_index"], a["neg_inf"], a["pos_inf"], a["nan"]) for a in alerts if a["source"] == "graph_execution"
    )
    assert ours_graph == theirs_graph
    # the monitor reports one alert per non-finite eager output; ours is one per execution with summed counts
    sums: dict = {}
    for a in o["alerts"]:
        if a[7] is not None:
            s = sums.setdefault(a[7], [0, 0, 0])
            for k in range(3):
                s[k] = None if a[4 + k] is None or s[k] is None else s[k] + a[4 + k]
    ours_exec = {
        a["source_index"]: [a["neg_inf"], a["pos_inf"], a["nan"]] for a in alerts if a["source"] == "execution"
    }
    assert ours_exec == sums


def test_nonfinite_filter_matches_oracle(pair):
    run, o = pair
    nf = run.graph_executions(0, 10**6, TraceFilter(only_nonfinite=True))
    expected = sorted({a[8] for a in o["alerts"] if a[8] is not None})
    assert [r["index"] for r in nf["rows"]] == expected and nf["total"] == len(expected)
    assert not math.isnan(nf["unfiltered_total"])
