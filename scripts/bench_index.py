"""Indexing speed and memory of the dbg index on big FULL_HEALTH dumps (a report, not a timed test).

    .venv/bin/python scripts/bench_index.py [--traces 1000000 [10000000 ...]] [--profile]

Dumps come from bench/generate.py (TF's DebugEventsWriter for the first steps, then byte-wise copies of TF's own
trace records with wall time and counts replaced, CRCs recomputed), cached under bench/cache/<N>. Reported:
  * baseline: protobuf-parse-only rate (one DebugEvent.ParseFromString per trace record, this project's schema);
  * index: wall time of a first full pass (Catalog construction: framing, both CRCs, decoding, columns);
  * memory: bytes per indexed trace held by the run's columns (capacity included) plus the per-kind row
    permutation built by the first op/filter query, and the process RSS growth.
"""

from __future__ import annotations

import argparse
import gc
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

import numpy as np  # noqa: E402 (after the sys.path insert above)

from tensorboard_plugin_dbg.index.catalog import Catalog  # noqa: E402
from tensorboard_plugin_dbg.reader import schema, tfrecord  # noqa: E402


def rss() -> int:
    """Resident set size after handing freed heap pages back to the OS (so it counts what is held)."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except OSError:
        pass
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def dump_for(traces: int) -> str:
    out = os.path.join(ROOT, "bench", "cache", str(traces))
    if not os.path.exists(os.path.join(out, ".complete")):
        subprocess.run(
            [sys.executable, os.path.join(ROOT, "bench", "generate.py"), "--traces", str(traces)], check=True
        )
    return out


def baseline(dump: str, records: int = 100_000) -> float:
    path = next(p for p in os.listdir(dump) if p.endswith(".graph_execution_traces"))
    with open(os.path.join(dump, path), "rb") as f:
        data = f.read(records * 300)
    result = tfrecord.scan(np.frombuffer(data, np.uint8), 0)
    payloads = [data[s : s + n] for s, n in zip(result.starts[:records].tolist(), result.lengths[:records].tolist())]
    t = time.perf_counter()
    for p in payloads:
        schema.DebugEvent().ParseFromString(p)
    return len(payloads) / (time.perf_counter() - t)


def bench(traces: int, profile: bool) -> dict:
    dump = dump_for(traces)
    size = sum(os.path.getsize(os.path.join(dump, p)) for p in os.listdir(dump))
    for p in os.listdir(dump):  # warm the page cache so the figure is about indexing, not the disk
        with open(os.path.join(dump, p), "rb") as f:
            while f.read(64 << 20):
                pass
    gc.collect()
    rss0 = rss()
    t = time.perf_counter()
    cpu = time.process_time()
    if profile:
        import cProfile
        import pstats

        prof = cProfile.Profile()
        catalog = prof.runcall(Catalog, dump)
        pstats.Stats(prof).sort_stats("cumulative").print_stats(25)
    else:
        catalog = Catalog(dump)
    elapsed = time.perf_counter() - t
    cpu = time.process_time() - cpu
    run = catalog.runs()[0]
    n = run.info()["counts"]["graph_executions"]
    assert n == traces, (n, traces)
    t = time.perf_counter()
    op = run.graph_executions(0, 50, op_type="Log")  # builds the per-kind permutation
    first_filter = time.perf_counter() - t
    t = time.perf_counter()
    run.graph_executions(n // 2, n // 2 + 100)
    page = time.perf_counter() - t
    held = (
        run.traces.nbytes()
        + run.trace_nf.nbytes()
        + run.derived.latest("kind_rows")[1][0].nbytes  # the permutation the op_type filter above built
    )
    gc.collect()
    return {
        "traces": n,
        "dump_bytes": size,
        "index_s": round(elapsed, 2),
        "index_cpu_s": round(cpu, 2),
        "traces_per_s": int(n / elapsed),
        "bytes_per_trace_columns": round(held / n, 1),
        "rss_growth_per_trace": round((rss() - rss0) / n, 1),
        "nonfinite_rows": len(run.trace_nf),
        "first_filter_query_s": round(first_filter, 3),
        "filtered_total": op["total"],
        "mid_page_100_s": round(page, 4),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--traces", type=int, nargs="+", default=[1_000_000])
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    for n in args.traces:
        print(bench(n, args.profile), flush=True)
    print(
        f"baseline: protobuf parse only = {baseline(dump_for(args.traces[0])):,.0f} trace records/s "
        "(ParseFromString alone, no field access, no framing, no CRC)"
    )


if __name__ == "__main__":
    main()
