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
