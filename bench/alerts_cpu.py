"""CPU to all alerts in one process (issue #40 item 2), for `farm-bench` pairs against another checkout's package:

    farm-bench -n 5 -- sh -c 'PYTHONPATH=. exec .venv/bin/python bench/alerts_cpu.py' \
        --vs "sh -c 'PYTHONPATH=/tmp/base exec .venv/bin/python bench/alerts_cpu.py'"

Indexes the cached 1 M-trace dump (bench/generate.py; `--cache` points at another checkout's bench/cache) with the
plugin's Catalog and its `on_complete` steps (alerts.warm: the classification, roles, the root cause, the rules' scan
started on its thread), then asks for the first alert page every 50 ms, as the dashboard does, until the rules'
findings are in it (`rules_pending` false: a page that waits for them, wait_rules, would build the scan a second
time beside the thread's): what TensorBoard does between its first answer and all alerts served, without its HTTP
threads. Prints the CPU seconds of each part.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

if not os.environ.get("PYTHONPATH"):  # else the package PYTHONPATH names (the other side of a pair)
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from tensorboard_plugin_dbg.analysis import alerts  # noqa: E402
from tensorboard_plugin_dbg.index.catalog import Catalog  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--traces", type=int, default=1_000_000)
    parser.add_argument("--cache", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "cache"))
    args = parser.parse_args()
    t0 = time.process_time()
    run = Catalog(os.path.join(args.cache, str(args.traces)), on_complete=alerts.warm).runs()[0]
    t1 = time.process_time()
    page = alerts.alerts(run, 0, 100)
    while page["rules_pending"]:
        time.sleep(0.05)
        page = alerts.alerts(run, 0, 100)
    t2 = time.process_time()
    print(f"index+warm {t1 - t0:.3f} s, rules {t2 - t1:.3f} s, CPU {t2:.3f} s in all; {page['total']:,} alerts")


if __name__ == "__main__":
    main()
