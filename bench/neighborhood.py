"""How fast the graph around an op is answered on a ~20 k-op graph (analysis/neighborhood.py), in-process.

    .venv/bin/python bench/neighborhood.py [--blocks 4000] [--reps 30]

The dump is written once by TensorFlow (bench/graph_program.py, cached under bench/cache/graph-<blocks>), then
indexed by the plugin's Catalog. Timed: the first query (builds the graph's adjacency, cached per run version) and
then K = 1, 4, 8 hops, up / down / both, around ops spread over the graph, with each node's health at the focused
trace (one record read per node). The issue's target: <= 50 ms for K = 8. The layout time of 300 nodes in the
browser's library (dagre) is bench/layout_time.mjs.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from tensorboard_plugin_dbg.analysis import neighborhood  # noqa: E402
from tensorboard_plugin_dbg.index.catalog import Catalog  # noqa: E402


def ensure_dump(blocks: int) -> str:
    out = os.path.join(ROOT, "bench", "cache", f"graph-{blocks}")
    if not os.path.exists(os.path.join(out, ".complete")):
        env = {**os.environ, "CUDA_VISIBLE_DEVICES": "", "TF_CPP_MIN_LOG_LEVEL": "2"}
        program = os.path.join(ROOT, "bench", "graph_program.py")
        subprocess.run([sys.executable, program, os.path.join(out, "dump"), str(blocks)], check=True, env=env)
        open(os.path.join(out, ".complete"), "w").close()
    return os.path.join(out, "dump")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--blocks", type=int, default=4000)
    ap.add_argument("--reps", type=int, default=30)
    args = ap.parse_args(argv)
    dump = ensure_dump(args.blocks)
    t = time.perf_counter()
    catalog = Catalog(dump)
    (run,) = catalog.runs()
    while not run.done:
        catalog.refresh()
    traces = run.graph_executions(0, 1)["total"]
    row = run.graph_execution(traces // 2, max_elements=0)
    graph_id = row["graph_id"]
    ops = run.graph(graph_id)["op_count"]
    print(f"dump: {ops:,} ops in the graph, {traces:,} traces; indexed in {time.perf_counter() - t:.1f} s")
    t = time.perf_counter()
    neighborhood.neighborhood(run, graph_id, row["op_name"], 1, "both", traces // 2)
    print(f"first query (builds the adjacency): {1000 * (time.perf_counter() - t):.1f} ms")
    picks = [run.graph_execution(i, max_elements=0) for i in range(traces // 10, traces, max(traces // 10, 1))]
    for hops in (1, 4, 8):
        for direction in ("up", "down", "both"):
            times, sizes = [], []
            for r in range(args.reps):
                pick = picks[r % len(picks)]
                t = time.perf_counter()
                got = neighborhood.neighborhood(run, graph_id, pick["op_name"], hops, direction, pick["index"])
                times.append(1000 * (time.perf_counter() - t))
                sizes.append(len(got["nodes"]))
            times.sort()
            print(
                f"K={hops} {direction:>4}: median {statistics.median(times):.1f} ms, "
                f"p95 {times[int(0.95 * (len(times) - 1))]:.1f} ms, nodes {min(sizes)}-{max(sizes)}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
