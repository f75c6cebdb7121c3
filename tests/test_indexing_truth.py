"""Issue #29: nothing the dashboard shows while a dump is being read contradicts the header. The progress counts
every file of the run from the first answer (so it never reads 100 % before the largest file is counted, then
drops), and the root cause says "reading" while its cached analysis has not seen the rows the header counts."""

from __future__ import annotations

import dumps

from tensorboard_plugin_dbg.analysis import report_text, root_cause, run_verdict
from tensorboard_plugin_dbg.index.catalog import Catalog


def test_progress_counts_every_file_from_the_first_read():
    catalog = Catalog(dumps.make_dump("nan_div"), first_pass=False)
    catalog.refresh()  # discovery and one pass: the run exists
    run = catalog.runs()[0]
    total = run.info()["status"]["bytes_total"]
    fresh = Catalog(dumps.make_dump("nan_div"), first_pass=False)
    fresh._problems = fresh._discover()  # the run, before any of its files is read
    run = fresh.runs()[0]
    seen: list[tuple[int, int]] = []
    read_file = run.read_file

    def watched(code, state):
        status = run.info()["status"]
        seen.append((status["bytes_read"], status["bytes_total"]))
        read_file(code, state)

    run.read_file = watched  # type: ignore[method-assign]
    run.refresh()
    assert len(seen) >= 3
    assert all(t == total for _r, t in seen), seen  # the whole run's size from the first file on
    shares = [r / t for r, t in seen]
    assert shares == sorted(shares) and shares[0] < 1, shares


def test_root_cause_says_reading_while_its_analysis_lags_the_header():
    run = Catalog(dumps.make_dump("clean_mlp")).runs()[0]
    version = run.version
    empty = Catalog(dumps.make_dump("clean_mlp"), first_pass=False)
    empty._problems = empty._discover()
    early = empty.runs()[0]
    assert root_cause.analyze(early)["status"] == "unknown"  # nothing read yet: the analysis of 0 rows, cached
    early.refresh()
    early.version, early.done = 0, False  # as in the middle of the first pass: rows published, version not bumped
    assert early.info()["counts"]["graph_executions"] > 0
    got = run_verdict.root_cause(early)
    assert got["status"] == "reading", got
    assert "recorded (yet)" not in got["message"] and "reading" in got["message"].lower()
    head = report_text.run_section({"run": early.name, **got, "notices": []}).splitlines()[0]
    assert "READING" in head, head
    assert run.version == version and run_verdict.root_cause(run)["status"] == "clean"  # read to its end: clean


def _read_without_traces(program: str):
    """The run after a pass that read every file but graph_execution_traces (a 2 M-trace file is read last, for
    minutes): as in the middle of the first pass (rows published, not done)."""
    early_catalog = Catalog(dumps.make_dump(program, "FULL_HEALTH"), first_pass=False)
    early_catalog._problems = early_catalog._discover()
    early = early_catalog.runs()[0]
    read_file = early.read_file

    def all_but_traces(code, state):
        if not state.path.endswith(".graph_execution_traces"):
            read_file(code, state)

    early.read_file = all_but_traces  # type: ignore[method-assign]
    early.refresh()
    early.done = False
    return early


def test_no_diagnosis_before_the_traces_that_would_contradict_it_are_read():
    """#38 item 6: the executions say a tf.function call returned NaN/∞ while its traces are not read yet; the card
    and the report must not diagnose a dropped circular buffer (or anything): "reading graph execution traces"."""
    early = _read_without_traces("nan_div")
    assert early.info()["counts"]["executions"] > 0 and early.info()["counts"]["graph_executions"] == 0
    got = run_verdict.root_cause(early)
    assert got["status"] == "reading", got
    assert "circular buffer" not in got["message"] and "reading graph execution traces" in got["message"].lower()
    assert "the root cause follows" in got["message"] and got["producer"] is None  # no op named before it is known
    head = report_text.run_section({"run": early.name, **got, "notices": []}).splitlines()[0]
    assert "READING" in head and "buffer" not in head, head
    done = Catalog(dumps.make_dump("nan_div", "FULL_HEALTH")).runs()[0]
    assert run_verdict.root_cause(done)["status"] == "found"  # read to its end: the producer
