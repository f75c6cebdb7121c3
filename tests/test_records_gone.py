"""Records cut away after they were indexed (a dump file truncated or rewritten under a running TensorBoard): the
index still knows the rows, but their bytes are gone. Pages must still answer, each such row saying why its value
is unknown, rows before the cut unchanged; a route about one gone record answers a 404 JSON error naming it."""

from __future__ import annotations

import glob
import json
import os
import shutil

import pytest
from werkzeug.test import Client

from tensorboard_plugin_dbg.api.app import ApiApp
from tensorboard_plugin_dbg.index.catalog import Catalog


@pytest.fixture
def served(demo_dump, tmp_path):
    logdir = str(tmp_path / "dump")
    shutil.copytree(demo_dump, logdir)
    catalog = Catalog(logdir)
    run = catalog.runs()[0]
    client = Client(ApiApp(lambda: catalog))

    def get(route: str, **params):
        query = "&".join(f"{k}={v}" for k, v in {"run": run.name, **params}.items())
        response = client.get(f"/data/plugin/dbg/{route}?{query}")
        return response.status_code, json.loads(response.get_data())

    return logdir, run, get


def _cut(logdir: str, suffix: str, keep: float) -> None:
    [path] = glob.glob(os.path.join(logdir, f"*.{suffix}"))
    os.truncate(path, int(os.path.getsize(path) * keep))


def test_page_rows_past_the_cut_say_their_record_is_gone(served):
    logdir, run, get = served
    total = run.lengths().traces
    status, before = get("graph_executions", begin=0, end=total)
    assert status == 200
    _cut(logdir, "graph_execution_traces", 0.5)
    status, after = get("graph_executions", begin=0, end=total)
    assert status == 200 and after["total"] == total  # nothing the index knew is lost
    gone = [r for r in after["rows"] if r["health"]["mode"] == "UNKNOWN"]
    assert gone and all("can no longer be read" in r["health"]["reason"] for r in gone)
    assert all("graph_execution_traces" in r["health"]["reason"] for r in gone)
    first_gone = gone[0]["index"]
    assert after["rows"][:first_gone] == before["rows"][:first_gone]  # rows before the cut are untouched
    assert [r["op_name"] for r in after["rows"]] == [r["op_name"] for r in before["rows"]]
    status, one = get("graph_execution", index=total - 1)
    assert status == 200 and one["health"]["mode"] == "UNKNOWN" and one["value"] is None
    status, alerts = get("alerts", begin=0, end=1000)
    assert status == 200 and len(alerts["alerts"]) == alerts["total"]


def test_one_gone_execution_is_a_404_that_names_it(served):
    logdir, _run, get = served
    _cut(logdir, "execution", 0.0)
    status, body = get("execution", index=0)
    assert status == 404
    assert body["error"]["code"] == "not_found" and "can no longer be read" in body["error"]["message"]
    status, page = get("executions", begin=0, end=10)  # the digests come from the index's columns
    assert status == 200 and len(page["executions"]) == min(10, page["total"])
