"""How fast the timeline's data is answered on a generated dump (in-process, no TensorBoard): the minimap's marks of
every alert (analysis/timeline_marks.py) and one tf.function call's traces (graph_executions `call`,
index/call_queries.py).

    .venv/bin/python bench/timeline.py --traces 1000000 [--reps 20]

Indexes the cached dump (bench/generate.py; made when missing) with the plugin's Catalog, waits for the alert list,
then times: the first marks request (places every alert at its execution: a pass over the alert list, cached per
list and mutes), later ones at 1,000 bins, the same with a mute, and a call's first trace page (alone, and with the
non-finite filter) for every tf.function call in the run (median and max).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import generate

from tensorboard_plugin_dbg.analysis import timeline_marks
from tensorboard_plugin_dbg.analysis.rules import mutes
from tensorboard_plugin_dbg.index.catalog import Catalog
from tensorboard_plugin_dbg.index.trace_filter import TraceFilter


def _ms(f) -> float:
    t = time.perf_counter()
    f()
    return 1000 * (time.perf_counter() - t)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--traces", type=int, default=1_000_000)
    ap.add_argument("--reps", type=int, default=20)
    args = ap.parse_args(argv)
    dump = generate.ensure(args.traces)
    t = time.perf_counter()
    catalog = Catalog(dump)
    (run,) = catalog.runs()
    while not run.done:
        catalog.refresh()
    run.alert_table()
    counts = run.info()["counts"]
    print(
        f"dump: {counts['graph_executions']:,} traces, {counts['executions']:,} executions, "
        f"{counts['alerts']:,} alerts; indexed in {time.perf_counter() - t:.1f} s"
    )
    print(f"marks, first (every alert placed): {_ms(lambda: timeline_marks.marks(run, 1000)):.1f} ms")
    later = [_ms(lambda: timeline_marks.marks(run, 1000)) for _ in range(args.reps)]
    print(f"marks, later: median {statistics.median(later):.2f} ms, max {max(later):.2f} ms")
    mute = (mutes.parse_text("op_type=Log"),)
    print(f"marks with a mute, first: {_ms(lambda: timeline_marks.marks(run, 1000, mute)):.1f} ms")
    m = timeline_marks.marks(run, 1000)
    print(f"  alerts placed: {m['alerts']:,}, after the last execution record: {m['after_last']:,}")
    execs = run.executions(0, counts["executions"])["executions"]
    calls = [e["index"] for e in execs if e["is_function"]]
    for label, kw in (("call page", {}), ("call page, non-finite only", {"only_nonfinite": True})):
        times, sizes = [], []
        for c in calls:
            times.append(_ms(lambda c=c, kw=kw: run.graph_executions(0, 200, TraceFilter(**kw), call=c)))
            sizes.append(run.graph_executions(0, 0, TraceFilter(**kw), call=c)["total"])
        print(
            f"{label}: {len(calls)} calls, median {statistics.median(times):.2f} ms, max {max(times):.2f} ms "
            f"(rows per call: median {statistics.median(sizes):,.0f}, max {max(sizes):,})"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
