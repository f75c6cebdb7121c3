"""How long the root-cause analysis takes, phase by phase, on a generated dump (in-process, no TensorBoard).

    .venv/bin/python bench/root_cause.py --traces 1000000 [--reps 3]

Indexes the cached dump (bench/generate.py; made when missing) with the plugin's own Catalog, then times, on fresh
copies of the derived-value cache each repetition: gathering the columns, containment (contained/expected rows),
the rest of the classification (producer / propagator / unknown), following function inputs, and the detailed
answer (`analyze`: the producer's inputs, forward op, data, skipped sources). The analysis runs when a dump has been
read to its end (alerts.warm), off the first paint's critical path; this is the time it adds there. Peak RSS
growth of the process is printed too. `--synthetic`: the containment's worst case (a masked chain absorbed every
step, half the rows contained), on hand-made columns.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import generate
import numpy as np

from tensorboard_plugin_dbg.analysis import containment, index_columns, root_cause
from tensorboard_plugin_dbg.analysis.classify import _classify_executions, _classify_traces, _Lazy, classify
from tensorboard_plugin_dbg.analysis.columns import RunColumns
from tensorboard_plugin_dbg.index.catalog import Catalog
from tensorboard_plugin_dbg.index.derived import DerivedCache


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _phases(run) -> dict[str, float]:
    out = {}
    t = time.perf_counter()
    cols = index_columns.gather(run)
    out["gather"] = time.perf_counter() - t
    lookup = _Lazy(cols.make_lookup)
    t = time.perf_counter()
    contained = containment.find(cols, lookup)
    out["containment"] = time.perf_counter() - t
    t = time.perf_counter()
    _classify_traces(cols, lookup, contained)
    _classify_executions(cols)
    out["classify"] = time.perf_counter() - t
    run.derived = DerivedCache()
    t = time.perf_counter()
    root_cause.analyze(run)  # the whole cached path: gather + classify + links + the producer in detail
    out["analyze (all)"] = time.perf_counter() - t
    return out


def masked_columns(traces: int) -> RunColumns:
    """The containment's worst case, synthetic: a -inf mask -> add -> softmax -> loss chain every step, the mask
    and the add non-finite and absorbed every step (half the rows are contained alerts)."""
    steps = traces // 4
    ops = np.tile(np.arange(4), steps)
    flags = np.tile(np.array([1, 1, 0, 0], np.int8), steps)
    return RunColumns(
        trace_wall=np.arange(len(ops), dtype=np.float64),
        trace_op=ops,
        trace_tensor=ops,
        trace_nonfinite=flags,
        op_input_ptr=np.array([0, 0, 1, 2, 3], np.int64),
        op_input_tensor=np.array([0, 1, 2], np.int64),
        op_forwards=np.zeros(4, bool),
        exec_wall=np.zeros(0),
        exec_nonfinite=np.zeros(0, np.int8),
        exec_is_function=np.zeros(0, bool),
        exec_io=lambda i: ([], [], []),
        op_output_ptr=np.arange(5, dtype=np.int64),
        op_output_tensor=np.arange(4, dtype=np.int64),
        tensor_is_input=np.zeros(4, bool),
    )


def synthetic(traces: int, reps: int) -> None:
    cols = masked_columns(traces)
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        cls, _lookup = classify(cols)
        times.append(time.perf_counter() - t)
    n = len(cls.contained.rows) if cls.contained is not None else 0
    print(
        f"synthetic masked chain, {traces:,} traces: classify with containment median {statistics.median(times):.3f} s"
    )
    print(f"  contained rows {n:,}; peak RSS {_rss_mb():.0f} MB")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--traces", type=int, default=1_000_000)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--synthetic", action="store_true", help="only the synthetic all-contained worst case")
    args = ap.parse_args(argv)
    if args.synthetic:
        synthetic(args.traces, args.reps)
        return 0
    dump = generate.ensure(args.traces)
    t = time.perf_counter()
    catalog = Catalog(dump)
    (run,) = catalog.runs()
    while not run.done:
        catalog.refresh()
    print(f"indexed {args.traces:,} traces in {time.perf_counter() - t:.1f} s; rss {_rss_mb():.0f} MB")
    rss0 = _rss_mb()
    reps = [_phases(run) for _ in range(args.reps)]
    for phase in reps[0]:
        times = [r[phase] for r in reps]
        print(f"{phase:>14}: median {statistics.median(times):.3f} s  (runs {', '.join(f'{x:.3f}' for x in times)})")
    result = root_cause.analyze(run)
    p = result["producer"] or {}
    print(f"answer: {result['status']} {p.get('op_type')} {p.get('op_name')}; contained {result['contained']:,}")
    print(f"peak RSS growth during the analysis: {_rss_mb() - rss0:.0f} MB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
