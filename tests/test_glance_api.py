"""Issue #19 on the server side: the run at the logdir's top is named after its folder, `runs` says "scanning"
before the first pass, a clean run not yet fully read is not called clean, the runs overview's per-run summary, the
report's summary counts only the runs holding NaN/∞, and the root-cause card's text is the report's section."""

from __future__ import annotations

import os
import shutil

import dumps
from api_helpers import make_app, ok, wait_indexed
from werkzeug.test import Client

from tensorboard_plugin_dbg.__main__ import main
from tensorboard_plugin_dbg.analysis import report_text, run_verdict
from tensorboard_plugin_dbg.index.catalog import Catalog
from tensorboard_plugin_dbg.index.trace_filter import TraceFilter


def test_logdir_itself_is_named_after_its_folder(demo_dump):
    catalog = Catalog(demo_dump)
    assert [r.name for r in catalog.runs()] == [os.path.basename(demo_dump)]


def test_top_run_keeps_dot_when_a_subfolder_has_the_same_name(tmp_path):
    top = tmp_path / "logs"
    shutil.copytree(dumps.make_dump("nan_div"), top)
    shutil.copytree(dumps.make_dump("clean_mlp"), top / "logs")
    assert [r.name for r in Catalog(str(top)).runs()] == [".", "logs"]


def test_runs_say_scanning_before_the_first_pass(tmp_path):
    catalog = Catalog(str(tmp_path), first_pass=False)
    assert [n["code"] for n in catalog.notices()] == ["scanning"]
    catalog.refresh()
    assert [n["code"] for n in catalog.notices()] == ["no_dump_found"]


def test_clean_run_still_being_read_is_clean_so_far():
    run = Catalog(dumps.make_dump("clean_mlp")).runs()[0]
    assert run_verdict.root_cause(run)["status"] == "clean"
    run.done = False  # as while the refresher is still reading it
    got = run_verdict.root_cause(run)
    n = run.info()["counts"]["graph_executions"]
    assert got["status"] == "clean_so_far", got
    assert got["message"].startswith(f"No NaN/∞ in the first {n:,} graph execution traces read so far"), got
    assert "clean" not in report_text.run_section({"run": run.name, **got, "notices": []}).lower().split("\n")[0]


def test_runs_route_summaries_and_root_cause_text(demo_dump, tmp_path):
    logdir = tmp_path / "logdir"
    shutil.copytree(dumps.make_dump("clean_mlp"), logdir / "a_clean")
    shutil.copytree(demo_dump, logdir / "b_demo")
    app, _plugin = make_app(str(logdir))
    client = Client(app)
    wait_indexed(client)
    runs = {r["name"]: r for r in ok(client, "runs")["runs"]}
    clean = runs["a_clean"]["summary"]  # its rule findings (none) once the rules' thread judged them (#29)
    assert (clean["status"], clean["first_nan"], clean.get("rule_findings", 0)) == ("clean", None, 0)
    demo = runs["b_demo"]["summary"]
    assert demo["status"] == "found"
    first = demo["first_nan"]
    assert (first["op_name"], first["op_type"], first["graph_name"]) == ("Log", "Log", "train_step")
    assert first["file"].endswith("buggy_mlp.py") and first["line"] > 0 and first["wall_time"] > 0
    rc = ok(client, "root_cause", run="b_demo")
    run = Catalog(str(logdir)).run("b_demo")
    assert rc["report_text"] == report_text.run_section(report_text.run_result(run))
    assert rc["report_text"].startswith("run b_demo: FOUND")


def test_report_summary_counts_runs_with_nonfinite(demo_dump, tmp_path, capsys):
    logdir = tmp_path / "logdir"
    shutil.copytree(dumps.make_dump("clean_mlp"), logdir / "a_clean")
    shutil.copytree(dumps.make_dump("clean_mlp"), logdir / "b_clean")
    shutil.copytree(demo_dump, logdir / "c_demo")
    assert main(["report", str(logdir)]) == 1
    out = capsys.readouterr().out
    assert out.rstrip().splitlines()[-1] == "3 runs: 1 holds NaN/∞, 2 clean (exit 1)", out
    lines = [line for line in out.splitlines() if line.strip()]
    assert len(lines) == len(set(lines)), out  # no repeated line
    assert "alerts (one per non-finite traced tensor or eager execution)" in out


def test_op_type_filter_is_case_insensitive(demo_dump):
    run = Catalog(demo_dump).runs()[0]
    exact = run.graph_executions(0, 100, TraceFilter(op_type="Log"))
    assert exact["total"] > 0
    assert run.graph_executions(0, 100, TraceFilter(op_type="log")) == exact
    assert run.graph_executions(0, 100, TraceFilter(op_type="LOG"))["total"] == exact["total"]
