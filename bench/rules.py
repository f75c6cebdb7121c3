"""How long the alert rules (#18) and the health map take on a generated dump (in-process, no TensorBoard).

    .venv/bin/python bench/rules.py --traces 1000000 [--reps 3] [--cache DIR]

Indexes the cached dump (bench/generate.py; `--cache` points at another checkout's bench/cache) with the plugin's
own Catalog, then times, on a fresh derived-value cache each repetition: the rules' one pass over the health records
(tensor_scan), every rule's findings (`rules.evaluate`, including the scan), a muted alert page, and health-map pages
(the first page of 50 and of 200 rows x 200 step bins, and one op's row for the sparkline). Peak RSS is printed too.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from tensorboard_plugin_dbg.analysis import alerts, health_map, rules  # noqa: E402
from tensorboard_plugin_dbg.analysis.rules import mutes, tensor_scan  # noqa: E402
from tensorboard_plugin_dbg.index.catalog import Catalog  # noqa: E402
from tensorboard_plugin_dbg.index.derived import DerivedCache  # noqa: E402


def _timed(fn) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--traces", type=int, default=1_000_000)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--cache", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "cache"))
    args = parser.parse_args()
    path = os.path.join(args.cache, str(args.traces))
    t = time.perf_counter()
    run = Catalog(path).runs()[0]
    print(f"indexed {run.info()['counts']['graph_executions']:,} traces in {time.perf_counter() - t:.1f} s")
    mute = mutes.parse_json('[{"op_type": "Relu", "reason": "bench"}]')
    times: dict[str, list[float]] = {}
    for _ in range(args.reps):
        run.derived = DerivedCache()
        alerts.warm_without_rules(run)  # what the refresher builds before it reports the run done
        phases = {
            "tensor_scan": lambda: tensor_scan.scan(run),
            "rules.evaluate (after the scan)": lambda: rules.evaluate(run),
            "alerts page, 1 mute": lambda: alerts.alerts(run, 0, 100, mutes=mute, wait_rules=True),
            "alerts page, 1 mute (again)": lambda: alerts.alerts(run, 100, 200, mutes=mute, wait_rules=True),
            "health_map 50 rows x 200": lambda: health_map.health_map(run, 0, 50, 200),
            "health_map 200 rows x 200": lambda: health_map.health_map(run, 0, 200, 200),
            "health_map 1 op (sparkline)": lambda: health_map.health_map(
                run, 0, 10, 200, op_name=health_map.health_map(run, 0, 1, 1)["rows"][0]["op_name"]
            ),
        }
        for name, fn in phases.items():
            times.setdefault(name, []).append(_timed(fn))
    found = rules.evaluate(run)
    print(f"findings: {found['totals']}")
    for name, values in times.items():
        print(f"{name:32s} median {statistics.median(values):.3f} s  (min {min(values):.3f})")
    print(f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")


if __name__ == "__main__":
    main()
