"""Many hosts (#28): file sets sharing a tfdbg_run_id in one folder are one run with a host facet — each host's
traces, its first NaN/∞ and how long after the run's first — and different run ids are separate runs."""

from __future__ import annotations

import glob
import os
import shutil

import dumps
import pytest
from api_helpers import make_app, ok, wait_indexed
from werkzeug.test import Client

from tensorboard_plugin_dbg.index import device_queries
from tensorboard_plugin_dbg.reader import file_sets


def _copy_as_host(src: str, dst: str, host: str, traces_bytes: int | None = None) -> None:
    """The dump's files under `host`'s name (same run id); the traces file cut to `traces_bytes` when given."""
    os.makedirs(dst, exist_ok=True)
    for path in glob.glob(os.path.join(src, "tfdbg_events.*")):
        m = file_sets._NAME.match(os.path.basename(path))
        assert m, path
        epoch, suffix = m.group(1), m.group(3)
        target = os.path.join(dst, f"tfdbg_events.{epoch}.{host}.{suffix}")
        shutil.copy(path, target)
        if suffix == "graph_execution_traces" and traces_bytes is not None:
            os.truncate(target, traces_bytes)


def _served(logdir: str):
    app, plugin = make_app(logdir)
    client = Client(app)
    return client, plugin, wait_indexed(client)


def _alone(dump: str, tmp, host: str, traces_bytes: int | None) -> tuple[int, float | None]:
    """(traces, earliest non-finite wall time) of one host's copy read as a run of its own: the oracle."""
    _copy_as_host(dump, str(tmp / host / "run"), host, traces_bytes)
    client, plugin, runs = _served(str(tmp / host))
    try:
        total = runs["runs"][0]["counts"]["graph_executions"]
        rows = ok(client, "graph_executions", run="run", begin=0, end=total, only_nonfinite="true")["rows"]
        return total, min((r["wall_time"] for r in rows), default=None)
    finally:
        plugin.catalog().stop()


@pytest.mark.parametrize("block", [None, 7])
def test_hosts_sharing_a_run_id_are_one_run_with_per_host_facts(demo_dump, tmp_path, monkeypatch, block):
    """`block`: the whole-run passes in blocks of 7 rows, so a host's first NaN/∞ is found across blocks."""
    if block is not None:
        monkeypatch.setattr(device_queries, "_BLOCK", block)
    traces = glob.glob(os.path.join(demo_dump, "*.graph_execution_traces"))[0]
    cut = os.path.getsize(traces) // 2
    _copy_as_host(demo_dump, str(tmp_path / "logs" / "run"), "worker-0")
    _copy_as_host(demo_dump, str(tmp_path / "logs" / "run"), "worker-1", cut)
    expect = {"worker-0": _alone(demo_dump, tmp_path / "a", "worker-0", None)}
    expect["worker-1"] = _alone(demo_dump, tmp_path / "b", "worker-1", cut)
    client, plugin, runs = _served(str(tmp_path / "logs"))
    try:
        assert [r["name"] for r in runs["runs"]] == ["run"] and runs["runs"][0]["hosts"] == ["worker-0", "worker-1"]
        facts = {f["host"]: f for f in ok(client, "devices", run="run")["host_facts"]}
        assert sorted(facts) == ["worker-0", "worker-1"]
        earliest = min(w for _, w in expect.values() if w is not None)
        for host, (total, first_wall) in expect.items():
            assert facts[host]["graph_executions"] == total, host
            nf = facts[host]["first_nonfinite"]
            if first_wall is None:
                assert nf is None, host
                continue
            assert nf["wall_time"] == first_wall and nf["after_first_s"] == first_wall - earliest, host
            row = ok(client, "graph_execution", run="run", index=nf["index"])
            assert row["host"] == host and row["wall_time"] == first_wall
        # the host facet filters to that host's traces
        rows = ok(client, "graph_executions", run="run", begin=0, end=1, host="worker-1")
        assert rows["total"] == expect["worker-1"][0]
    finally:
        plugin.catalog().stop()


def test_two_run_ids_in_one_folder_are_two_runs_never_a_blank_page(demo_dump, tmp_path):
    _copy_as_host(demo_dump, str(tmp_path / "logs" / "mixed"), "worker-0")
    _copy_as_host(dumps.make_dump("clean_mlp"), str(tmp_path / "logs" / "mixed"), "worker-1")
    client, plugin, runs = _served(str(tmp_path / "logs"))
    try:
        names = [r["name"] for r in runs["runs"]]
        assert len(names) == 2 and all(n.startswith("mixed#") for n in names), names
        assert all(r["counts"]["graph_executions"] > 0 for r in runs["runs"])
    finally:
        plugin.catalog().stop()


def test_a_multi_host_run_reserves_its_trace_columns_once(demo_dump, tmp_path, monkeypatch):
    """The trace columns are sized for every host's traces file at the first chunk: sized per file (or grown), each
    next host's file copied the columns (old + new held at once: +22 MiB peak at 8 x 125 k traces, bench/hosts.py)."""
    from tensorboard_plugin_dbg.index import columns

    for k in range(4):
        _copy_as_host(demo_dump, str(tmp_path / "logs" / "run"), f"worker-{k}")
    copies = []
    real_reserve = columns.Columns.reserve

    def spy(self, capacity):
        if len(self) and capacity > self.capacity():
            copies.append((len(self), self.capacity(), capacity))
        return real_reserve(self, capacity)

    real_append = columns.Columns.append

    def append_spy(self, values):
        count = len(next(iter(values.values())))
        if len(self) and len(self) + count > self.capacity():
            copies.append((len(self), self.capacity(), len(self) + count))
        return real_append(self, values)

    monkeypatch.setattr(columns.Columns, "reserve", spy)
    monkeypatch.setattr(columns.Columns, "append", append_spy)
    from tensorboard_plugin_dbg.index.catalog import Catalog

    run = Catalog(str(tmp_path / "logs")).runs()[0]
    assert run.info()["hosts"] == [f"worker-{k}" for k in range(4)]
    assert run.traces.capacity() >= len(run.traces) > 1024  # more rows than a column starts with
    assert copies == []
