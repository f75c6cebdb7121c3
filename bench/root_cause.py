"""How long the root-cause analysis takes, phase by phase, on a generated dump (in-process, no TensorBoard).

    .venv/bin/python bench/root_cause.py --traces 1000000 [--reps 3]

Indexes the cached dump (bench/generate.py; made when missing) with the plugin's own Catalog, then times, on fresh
copies of the derived-value cache each repetition: gathering the columns, containment (contained/expected rows),
the rest of the classification (producer / propagator / unknown), following function inputs, and the detailed
answer (`analyze`: the producer's inputs, forward op, data, skipped sources). The analysis runs when a dump has been
read to its end (alerts.warm), off the first paint's critical path; this is the time it adds there. Peak RSS
growth of the process is printed too.
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

from tensorboard_plugin_dbg.analysis import containment, index_columns, root_cause
from tensorboard_plugin_dbg.analysis.classify import _classify_executions, _classify_traces, _Lazy
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


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--traces", type=int, default=1_000_000)
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args(argv)
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
