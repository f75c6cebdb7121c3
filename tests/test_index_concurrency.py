"""Queries on several threads while the refresher appends: no exception, counts only grow, every page is
consistent, and the end state equals a fresh read of the finished files."""

from __future__ import annotations

import glob
import os
import shutil
import threading
import time

import dumps
import numpy as np

from tensorboard_plugin_dbg.index.catalog import Catalog
from tensorboard_plugin_dbg.reader import tfrecord


def test_readers_while_ingesting(tmp_path):
    src = dumps.make_dump("demo")
    out = tmp_path / "run"
    os.makedirs(out)
    traces_path = None
    for path in glob.glob(os.path.join(src, "tfdbg_events.*")):
        dst = out / os.path.basename(path)
        if path.endswith(".graph_execution_traces"):
            traces_path = dst
            with open(path, "rb") as f:
                data = f.read()
            open(dst, "wb").close()  # an empty file, written later
        else:
            shutil.copy(path, dst)
    scan = tfrecord.scan(np.frombuffer(data, np.uint8), 0)
    frames = [data[s - 12:s + n + 4] for s, n in zip(scan.starts.tolist(), scan.lengths.tolist())]
    copies = 40
    catalog = Catalog(str(tmp_path), refresh_interval=0.02)
    catalog.start()
    errors: list = []
    stop = threading.Event()

    def writer():
        with open(traces_path, "ab") as f:
            for _ in range(copies):
                blob = b"".join(frames)
                for cut in (len(blob) // 3, len(blob)):  # flushes that split records
                    f.write(blob[:cut] if cut < len(blob) else blob[len(blob) // 3:])
                    f.flush()
                    time.sleep(0.003)

    def reader():
        last = 0
        try:
            while not stop.is_set():
                run = catalog.run("run")
                n = run.info()["counts"]["graph_executions"]
                assert n >= last
                last = n
                page = run.graph_executions(max(0, n - 20), n)
                assert [r["index"] for r in page["rows"]] == list(range(max(0, n - 20), page["end"]))
                nf = run.graph_executions(0, 50, only_nonfinite=True)
                assert all(r["health"]["nan"] + r["health"]["neg_inf"] + r["health"]["pos_inf"] > 0
                           for r in nf["rows"])
                logs = run.graph_executions(0, 10, op_type="Log")
                assert all(r["op_type"] == "Log" for r in logs["rows"])
                run.alerts(0, 5)
                if n:
                    row = run.graph_execution(n - 1)
                    run.op(row["graph_id"], row["op_name"], near=n - 1)
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=reader) for _ in range(3)]
    for t in threads:
        t.start()
    writer()
    deadline = time.time() + 20
    while time.time() < deadline and catalog.run("run").info()["counts"]["graph_executions"] < copies * len(frames):
        time.sleep(0.05)
    stop.set()
    for t in threads:
        t.join()
    catalog.stop()
    assert not errors, errors[0]
    live = catalog.run("run")
    fresh = Catalog(str(tmp_path)).run("run")
    n = copies * len(frames)
    assert live.info()["counts"] == fresh.info()["counts"] and live.info()["counts"]["graph_executions"] == n
    assert live.graph_executions(0, n)["rows"] == fresh.graph_executions(0, n)["rows"]
    assert live.alerts(0, n)["alerts"] == fresh.alerts(0, n)["alerts"]
