"""Many request threads on several runs while the refresher indexes them, with a watchdog.

Run as `python tests/stress_harness.py LOGDIR [--seconds S] [--threads N] [--reverse-lock-order]`. LOGDIR holds
finished dumps, one per folder; each run is copied into a scratch logdir with its graph execution traces written
bit by bit, so every request below meets a run whose index version keeps changing (every cache goes stale again
and again). Request threads ask, through the real API app, root causes, producer-filtered alert pages, alert pages,
graph execution pages, ops and the runs list of random runs until S seconds have passed and every run is indexed.

Exit status: 0 finished; 3 the watchdog fired (the threads did not finish in time: a deadlock), after printing every
thread's stack; 1 a request failed (its error printed). `--reverse-lock-order` breaks the documented lock order on
purpose (a run's derived-value build takes that run's ingest lock, which the refresher holds while it warms the
run's derived values): the watchdog must catch the deadlock that follows.
"""

from __future__ import annotations

import argparse
import faulthandler
import glob
import json
import os
import random
import shutil
import sys
import tempfile
import threading
import time

from werkzeug.test import Client

from tensorboard_plugin_dbg.api.app import ApiApp
from tensorboard_plugin_dbg.index.catalog import Catalog

PREFIX = "/data/plugin/dbg/"


def _stage(src_logdir: str, dst_logdir: str) -> list[tuple[str, bytes, str]]:
    """Copies every run but its traces file, which is returned as (path to append to, bytes) to write later."""
    pending = []
    for run_dir in sorted(glob.glob(os.path.join(src_logdir, "*"))):
        out = os.path.join(dst_logdir, os.path.basename(run_dir))
        os.makedirs(out)
        for path in glob.glob(os.path.join(run_dir, "tfdbg_events.*")):
            dst = os.path.join(out, os.path.basename(path))
            if path.endswith(".graph_execution_traces"):
                with open(path, "rb") as f:
                    pending.append((dst, f.read(), os.path.basename(run_dir)))
                open(dst, "wb").close()
            else:
                shutil.copy(path, dst)
    return pending


def _writer(pending, stop: threading.Event, seconds: float, copies: int) -> None:
    """Writes each traces file `copies` times over (a bigger run: longer builds), spread over `seconds`, a
    chunk of a few KiB at a time: each refresh pass finds new rows, so every run's version keeps moving."""
    blobs = [data * copies for _, data, _ in pending]
    cursors = [0] * len(pending)
    ticks = max(1, int(seconds / 0.01))
    while not stop.is_set() and any(c < len(b) for c, b in zip(cursors, blobs)):
        for i, (path, _, _) in enumerate(pending):
            if cursors[i] < len(blobs[i]):
                step = max(1, len(blobs[i]) // ticks) * random.randint(1, 3)
                with open(path, "ab") as f:
                    f.write(blobs[i][cursors[i] : cursors[i] + step])
                cursors[i] += step
        time.sleep(0.01)


def _requests(
    client: Client, names: list[str], until: float, all_done, failures: list, rng: random.Random, pair=None
) -> None:
    while not failures and (time.monotonic() < until or not all_done()):
        run = rng.choice(names)
        choice = rng.randrange(8 if pair else 6)
        if choice >= 6:  # two comparisons in opposite directions (two browser tabs): each reads both runs
            b, a = pair if choice == 6 else pair[::-1]
            path, query = "compare", {"b": b, "a": a, "begin": 0, "end": 20}
        elif choice == 0:
            path, query = "root_cause", {"run": run}
        elif choice == 1:
            path, query = "alerts", {"run": run, "begin": 0, "end": 50, "role": "producer"}
        elif choice == 2:
            path, query = "alerts", {"run": run, "begin": rng.randrange(20), "end": 100}
        elif choice == 3:
            path, query = "graph_executions", {"run": run, "begin": rng.randrange(100), "end": 200}
        elif choice == 4:
            path, query = "graph_executions", {"run": run, "begin": 0, "end": 50, "only_nonfinite": "true"}
        else:
            path, query = "runs", {}
        resp = client.get(PREFIX + path, query_string=query)
        if resp.status_code >= 500 or (resp.status_code >= 400 and path == "runs"):
            failures.append(f"{path} {query}: {resp.status_code} {resp.get_data(as_text=True)[:500]}")


def _force_whole_run_lookup() -> None:
    """Makes every classification ask the index for its whole-run lookup (rows by kind), as it does on runs whose
    alerts' inputs are not found in their own step: the path where the analysis needs an index table while it
    builds its own (the lock-order deadlock this harness was written to catch took that path)."""
    from tensorboard_plugin_dbg.analysis import root_cause

    original = root_cause.classify

    def classify_with_lookup(cols, *args, **kwargs):  # classify(cols, guarded, lookup) since #29
        if cols.make_lookup is not None:
            cols.make_lookup()
        return original(cols, *args, **kwargs)

    root_cause.classify = classify_with_lookup


def _reverse_lock_order(catalog: Catalog) -> None:
    """Makes every derived-value build of a run take the run's ingest lock (the order the lock-order rule forbids:
    the refresher holds the ingest lock while it builds derived values)."""
    from tensorboard_plugin_dbg.index import derived

    original = derived.DerivedCache._build

    def build_under_ingest(self, name, key, build):
        with self.owner_ingest_lock:
            time.sleep(0.001)
            return original(self, name, key, build)

    derived.DerivedCache._build = build_under_ingest
    for run in catalog.runs():
        run.derived.owner_ingest_lock = run.ingest_lock


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("logdir")
    parser.add_argument("--seconds", type=float, default=6.0)
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--deadline", type=float, default=60.0, help="watchdog: seconds before it fires")
    parser.add_argument("--copies", type=int, default=20, help="each traces file written this many times over")
    parser.add_argument("--reverse-lock-order", action="store_true")
    parser.add_argument("--compare", nargs=2, metavar=("RUN_A", "RUN_B"), help="also compare these runs, both ways")
    args = parser.parse_args()
    scratch = tempfile.mkdtemp(prefix="dbg-stress-")
    try:
        return _run(args, scratch)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _run(args, scratch: str) -> int:
    pending = _stage(args.logdir, scratch)
    catalog = Catalog(scratch, refresh_interval=0.01)
    _force_whole_run_lookup()
    if args.reverse_lock_order:
        _reverse_lock_order(catalog)
    names = [r.name for r in catalog.runs()]
    client = Client(ApiApp(lambda: catalog))
    stop, failures = threading.Event(), []
    writer = threading.Thread(target=_writer, args=(pending, stop, args.seconds * 0.8, args.copies), daemon=True)
    writer.start()
    catalog.start()

    def all_done() -> bool:
        return not writer.is_alive() and all(r.done for r in catalog.runs())

    until = time.monotonic() + args.seconds
    workers = [
        threading.Thread(
            target=_requests,
            args=(client, names, until, all_done, failures, random.Random(i), args.compare),
            daemon=True,
        )
        for i in range(args.threads)
    ]
    for w in workers:
        w.start()
    deadline = time.monotonic() + args.deadline
    for w in workers:
        w.join(max(0.0, deadline - time.monotonic()))
    if any(w.is_alive() for w in workers):
        print(f"WATCHDOG: request threads still running after {args.deadline} s; every thread's stack:", flush=True)
        faulthandler.dump_traceback(file=sys.stdout, all_threads=True)
        sys.stdout.flush()
        shutil.rmtree(scratch, ignore_errors=True)  # os._exit skips main()'s cleanup
        os._exit(3)  # the deadlocked threads would keep the process alive
    stop.set()
    catalog.stop()
    if failures:
        print("\n".join(failures[:5]))
        return 1
    print(json.dumps({"runs": names, "alerts": [r.info()["counts"]["alerts"] for r in catalog.runs()]}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
