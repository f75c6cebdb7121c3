"""Live writers: a real TF program streams a dump (circular_buffer_size=-1) while the catalog's background
refresher reads it and this thread queries it.

Checked at every poll: each list (executions, graph executions, alerts) is the previous poll's list plus new rows
at the end — every record appears exactly once, in order, never changed afterwards — and no pass reports damage or
fails. After the writer exits and the index is done, the live index equals a cold read of the finished dump.
"""

from __future__ import annotations

import subprocess
import sys
import time

import dumps
import pytest

from tensorboard_plugin_dbg.analysis import root_cause
from tensorboard_plugin_dbg.index.catalog import Catalog

STEPS = 300
TIMEOUT = 240


def _all(run) -> dict:
    info = run.info()
    n_exec, n_tr, n_alerts = (info["counts"][k] for k in ("executions", "graph_executions", "alerts"))
    execs = [r for b in range(0, n_exec, 1000) for r in run.executions(b, min(n_exec, b + 1000))["executions"]]
    rows = [r for b in range(0, n_tr, 1000) for r in run.graph_executions(b, min(n_tr, b + 1000))["rows"]]
    alerts = [a for b in range(0, n_alerts, 1000) for a in run.alerts(b, min(n_alerts, b + 1000))["alerts"]]
    return {
        "info": info,
        # What a record itself says (op types of traces come from the graphs file, which may lag a moment).
        "execution": [(r["wall_time"], r["op_type"], r["num_outputs"], r["nan"], r["neg_inf"]) for r in execs],
        "graph_execution": [
            (r["wall_time"], r["op_name"], r["output_slot"], r["graph_id"], str(r["health"])) for r in rows
        ],
        "alerts": [(a["source"], a["source_index"], a["wall_time"]) for a in alerts],
    }


def _problems(info) -> list:
    return [n for n in info["status"]["notices"] if n["code"] in ("damaged_record", "refresh_failed")]


@pytest.mark.slow  # a live TF program: ~10 s
def test_live_writer_every_record_once_in_order_and_equal_to_cold_read(tmp_path):
    logdir = tmp_path / "logdir"
    dump = logdir / "run"
    logdir.mkdir()
    proc = subprocess.Popen(
        [sys.executable, dumps.program_path("live_writer"), str(dump), str(STEPS), "5"],
        cwd=dumps.ROOT,
        env=dumps.env_for_tf(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    catalog = Catalog(str(logdir), refresh_interval=0.05, first_pass=False)
    catalog.start()
    polls, sizes, previous = 0, set(), None
    deadline = time.monotonic() + TIMEOUT
    try:
        while True:
            assert time.monotonic() < deadline, "writer or index did not finish in time"
            finished = proc.poll() is not None
            runs = catalog.runs()
            if runs:
                now = _all(runs[0])
                assert not _problems(now["info"]), _problems(now["info"])
                if previous is not None:
                    for key in ("execution", "graph_execution"):
                        old, new = previous[key], now[key]
                        assert new[: len(old)] == old, f"{key}: rows changed, vanished or were reordered"
                    # Alerts may be inserted by wall time across the two sources, but none disappears.
                    assert set(previous["alerts"]) <= set(now["alerts"])
                previous = now
                polls += 1
                if not finished:
                    sizes.add(len(now["graph_execution"]))
                if finished and now["info"]["status"]["done"]:
                    break
            time.sleep(0.05)
    finally:
        catalog.stop()
        if proc.poll() is None:
            proc.kill()
        output = proc.communicate()[0]
    assert proc.returncode == 0, output[-3000:]
    catalog.refresh()  # one more pass after the writer closed: nothing new may appear
    live = _all(catalog.runs()[0])
    assert live["execution"] == previous["execution"] and live["graph_execution"] == previous["graph_execution"]
    # Growth was seen while the program ran (not one read of a finished dump).
    assert len(sizes) >= 3, sizes
    cold = _all(Catalog(str(logdir)).runs()[0])
    for key in ("execution", "graph_execution", "alerts"):
        assert live[key] == cold[key], key
    assert live["info"]["counts"] == cold["info"]["counts"]
    assert len(cold["execution"]) >= STEPS and len(cold["graph_execution"]) >= STEPS * 4
    assert cold["info"]["counts"]["alerts"] > 0
    run_live, run_cold = catalog.runs()[0], Catalog(str(logdir)).runs()[0]
    assert run_live.source_files() == run_cold.source_files()
    assert root_cause.analyze(run_live) == root_cause.analyze(run_cold)
    print(f"polls={polls} distinct sizes while writing={len(sizes)} traces={len(cold['graph_execution'])}")
