"""Load: many concurrent clients paging through a big dump on loopback while the plugin is still indexing it.

    python bench/load.py                                  # 50 clients, 1 M traces (bench/generate.py dump)
    python bench/load.py --traces 100000 --clients 20 --requests 30
    python bench/load.py --logdir DIR --clients 5 --requests 10   # any logdir (the test suite's smoke run)

A real TensorBoard (bench/tb_launch.py: our plugin, not the reference one) is started on 127.0.0.1; the clock starts
at its first answer to a route that touches no plugin, so the clients' first requests are what start indexing.
Each client (a thread, fresh connection per request, like a browser's first fetches) makes up to --requests requests
within --duration seconds, after --think seconds of "reading" between them: mostly the next 100-row page of the
graph execution list from a random starting row (wrapping at the current total), plus `runs` polls, alert pages,
execution pages, single traces, ops and source files, as the dashboard does.

Every answer is checked: HTTP 200, JSON, and a page's rows are numbered begin..end-1 with end - begin rows. Any
failure is an error. Printed: requests, errors by kind, latency p50/p95/p99/max overall and for the requests made
while `runs` still said status.done = false, and whether the targets (0 errors, p99 <= 100 ms) were met.
Exit status 1 when there were errors (latency is reported, not enforced).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import sys
import threading
import time
from urllib.parse import urlencode

BENCH_DIR = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, BENCH_DIR)

from procs import BenchTensorBoard

API = "/data/plugin/dbg/"
PAGE = 100


class Shared:
    """What the clients know about the run so far (updated from every `runs` answer)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.run: str | None = None
        self.totals = {"graph_executions": 0, "executions": 0, "alerts": 0, "source_files": 0}
        self.done = False
        self.done_at: float | None = None
        self.op: tuple[str, str] | None = None

    def update(self, body: dict, now: float) -> None:
        if not body.get("runs"):
            return
        info = body["runs"][0]
        with self.lock:
            self.run = info["name"]
            for key in self.totals:
                self.totals[key] = int(info["counts"].get(key, 0))
            if info["status"]["done"] and not self.done:
                self.done, self.done_at = True, now


def _path(route: str, **params) -> str:
    return API + route + ("?" + urlencode(params) if params else "")


def _check_page(body: dict, key: str) -> str | None:
    rows = body.get(key)
    if not isinstance(rows, list) or len(rows) != body["end"] - body["begin"]:
        return "page length"
    if any(r.get("index") != body["begin"] + i for i, r in enumerate(rows)):
        return "row numbering"
    return None


def client(tb, shared: Shared, seed: int, args, results: list, stop_at: float) -> None:
    rng = random.Random(seed)
    cursor = None
    for _ in range(args.requests):
        if time.monotonic() >= stop_at:
            return
        with shared.lock:
            run, totals, indexing, op = shared.run, dict(shared.totals), not shared.done, shared.op
        kind = "runs" if run is None else rng.choices(
            ("page", "runs", "alerts", "executions", "trace", "op", "source"), (60, 10, 8, 6, 8, 4, 4))[0]
        if kind == "page":
            total = totals["graph_executions"]
            cursor = rng.randrange(max(total, 1)) if cursor is None else cursor + PAGE
            if cursor >= total:
                cursor = 0
            path = _path("graph_executions", run=run, begin=cursor, end=cursor + PAGE)
        elif kind == "alerts":
            begin = rng.randrange(max(totals["alerts"], 1))
            path = _path("alerts", run=run, begin=begin, end=begin + PAGE)
        elif kind == "executions":
            path = _path("executions", run=run, begin=0, end=PAGE)
        elif kind == "trace" and totals["graph_executions"]:
            path = _path("graph_execution", run=run, index=rng.randrange(totals["graph_executions"]))
        elif kind == "op" and op:
            path = _path("op", run=run, graph_id=op[0], op_name=op[1])
        elif kind == "source" and totals["source_files"]:
            path = _path("source_file", run=run, index=rng.randrange(totals["source_files"]), begin_line=1,
                         end_line=200)
        else:
            kind, path = "runs", _path("runs")
        error = None
        try:
            status, secs, raw = tb.get(path, timeout=60)
            body = json.loads(raw) if status == 200 else None
            if status != 200:
                error = f"HTTP {status}"
            elif kind == "runs":
                shared.update(body, time.monotonic())
            elif kind == "page":
                error = _check_page(body, "rows")
                if not error and body["rows"] and shared.op is None:
                    shared.op = (body["rows"][0]["graph_id"], body["rows"][0]["op_name"])
            elif kind in ("alerts", "executions"):
                error = _check_page(body, kind)
        except Exception as e:  # noqa: BLE001 - every failure is counted, whatever it is
            secs, error = float("nan"), f"{type(e).__name__}: {e}"
        results.append({"kind": kind, "secs": secs, "error": error, "indexing": indexing})
        if args.think:
            time.sleep(rng.uniform(0, 2 * args.think))


def percentiles(values: list[float]) -> dict:
    values = sorted(v for v in values if not math.isnan(v))
    if not values:
        return {}

    def at(q: float) -> float:
        return values[min(len(values) - 1, int(q * len(values)))] * 1000

    return {"n": len(values), "p50_ms": at(0.50), "p95_ms": at(0.95), "p99_ms": at(0.99), "max_ms": values[-1] * 1000}


def run_load(logdir: str, args) -> dict:
    shared, results = Shared(), []
    with BenchTensorBoard(logdir, "dbg") as tb:
        started = time.monotonic()
        stop_at = started + args.duration
        threads = [threading.Thread(target=client, args=(tb, shared, i, args, results, stop_at), daemon=True)
                   for i in range(args.clients)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=args.duration + 120)
        hung = sum(t.is_alive() for t in threads)
        elapsed = time.monotonic() - started
        # Indexing may outlast the load: wait (bounded) so the report says how long it took.
        deadline = time.monotonic() + 300
        while not shared.done and time.monotonic() < deadline:
            body, _ = tb.get_json(_path("runs"))
            shared.update(body, time.monotonic())
            time.sleep(0.2)
        peak = tb.peak_rss_bytes()
    errors: dict[str, int] = {}
    for r in results:
        if r["error"]:
            errors[r["error"]] = errors.get(r["error"], 0) + 1
    if hung:
        errors["client did not finish"] = hung
    overall = percentiles([r["secs"] for r in results])
    return {
        "logdir": logdir, "clients": args.clients, "requests": len(results), "seconds": round(elapsed, 2),
        "think_s": args.think, "errors": errors, "error_count": sum(errors.values()),
        "latency": overall, "latency_while_indexing": percentiles([r["secs"] for r in results if r["indexing"]]),
        "latency_by_kind": {k: percentiles([r["secs"] for r in results if r["kind"] == k])
                            for k in sorted({r["kind"] for r in results})},
        "requests_while_indexing": sum(r["indexing"] for r in results),
        "indexing_done_s": round(shared.done_at - started, 2) if shared.done_at else None,
        "graph_executions": shared.totals["graph_executions"], "peak_rss_mb": round(peak / 2**20),
        "targets_met": not errors and overall.get("p99_ms", 1e9) <= 100,
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--traces", type=int, default=1_000_000, help="bench/generate.py dump size (default 1 M)")
    ap.add_argument("--logdir", help="serve this logdir instead of a generated dump")
    ap.add_argument("--clients", type=int, default=50)
    ap.add_argument("--requests", type=int, default=40, help="most requests per client")
    ap.add_argument("--duration", type=float, default=60, help="most seconds of load")
    ap.add_argument("--think", type=float, default=0.05, help="mean seconds a client waits between requests")
    ap.add_argument("--json", help="also write the figures here")
    args = ap.parse_args(argv)
    if args.logdir:
        logdir = args.logdir
    else:
        import generate

        logdir = generate.ensure(args.traces)
    report = run_load(logdir, args)
    lat, idx = report["latency"], report["latency_while_indexing"]
    print(f"load: {report['clients']} clients, {report['requests']} requests in {report['seconds']} s "
          f"(think {args.think} s), {report['requests_while_indexing']} while indexing; "
          f"{report['graph_executions']:,} graph executions; indexing done after {report['indexing_done_s']} s; "
          f"peak RSS {report['peak_rss_mb']} MB")
    print(f"latency all:            p50 {lat.get('p50_ms', 0):.1f} ms  p95 {lat.get('p95_ms', 0):.1f} ms  "
          f"p99 {lat.get('p99_ms', 0):.1f} ms  max {lat.get('max_ms', 0):.1f} ms")
    if idx:
        print(f"latency while indexing: p50 {idx['p50_ms']:.1f} ms  p95 {idx['p95_ms']:.1f} ms  "
              f"p99 {idx['p99_ms']:.1f} ms  max {idx['max_ms']:.1f} ms  (n={idx['n']})")
    for kind, p in report["latency_by_kind"].items():
        print(f"  {kind:<11} n={p['n']:<5} p50 {p['p50_ms']:.1f} ms  p99 {p['p99_ms']:.1f} ms  max {p['max_ms']:.1f} ms")
    print(f"errors: {report['error_count']} {report['errors'] or ''}")
    print("targets (0 errors, p99 <= 100 ms): " + ("met" if report["targets_met"] else "NOT met"))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=2)
    return 1 if report["error_count"] else 0


if __name__ == "__main__":
    sys.exit(main())
