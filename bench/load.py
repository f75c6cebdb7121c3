"""Load: many concurrent clients paging through a big dump on loopback while the plugin is still indexing it.

    python bench/load.py                                  # 50 clients, 1 M traces (bench/generate.py dump)
    python bench/load.py --traces 100000 --clients 20 --requests 30
    python bench/load.py --logdir DIR --clients 5 --requests 10   # any logdir (the test suite's smoke run)

A real TensorBoard (harness/tb_launch.py: our plugin, not the reference one) is started on 127.0.0.1; the clock starts
at its first answer to a route that touches no plugin, so the clients' first requests are what start indexing.
Each client (fresh TCP connection per request, like a browser's first fetches) makes up to --requests requests
within --duration seconds, after --think seconds of "reading" between them: mostly the next 100-row page of the
graph execution list from a random starting row (wrapping at the current total), plus `runs` polls, alert pages,
execution pages, single traces, ops and source files, as the dashboard does.

The clients are coroutines on one asyncio loop (plain HTTP/1.1 over a new socket per request, as a browser's fetches
to TensorBoard are: werkzeug's server closes every connection after one answer; gzip accepted as a browser does),
timed from connecting to the last byte of the body the answer's Content-Length announces (not to
the server's close, which werkzeug delays ~10 ms waiting for stray input). They used to be 50 threads with http.client:
on 2 cores that client alone burnt ~1 ms of CPU per request under its own GIL, and a thread whose answer had arrived
waited for that GIL before it could read it, so its wait was counted as server latency — which a browser, whose
network stack is not Python, never shows.

Every answer is checked: HTTP 200, JSON, and a page's rows are numbered begin..end-1 with end - begin rows. Any
failure is an error. Printed: requests, errors by kind, latency p50/p95/p99/max overall and for the requests made
while `runs` still said status.done = false, and whether the targets (0 errors, p99 <= 100 ms) were met.
Exit status 1 when there were errors (latency is reported, not enforced).
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import json
import math
import os
import random
import sys
import threading
import time
from urllib.parse import urlencode

try:  # the client's own parsing is CPU taken from the 2 cores the server has
    from orjson import loads as _loads
except ImportError:
    _loads = json.loads

BENCH_DIR = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [BENCH_DIR, os.path.dirname(BENCH_DIR)]  # bench/ and the repository root (harness/)

from page_cache import warm_page_cache  # noqa: E402 (after the sys.path insert above)

from harness.tensorboard_process import TensorBoardProcess  # noqa: E402

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


def _next_request(rng: random.Random, shared: Shared, cursor: int | None) -> tuple[str, str, bool, int | None]:
    """(kind, path, indexing, cursor) of a client's next request, as the dashboard would make it."""
    with shared.lock:
        run, totals, indexing, op = shared.run, dict(shared.totals), not shared.done, shared.op
    kind = (
        "runs"
        if run is None
        else rng.choices(("page", "runs", "alerts", "executions", "trace", "op", "source"), (60, 10, 8, 6, 8, 4, 4))[0]
    )
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
        path = _path("source_file", run=run, index=rng.randrange(totals["source_files"]), begin_line=1, end_line=200)
    else:
        kind, path = "runs", _path("runs")
    return kind, path, indexing, cursor


def _check(shared: Shared, kind: str, status: int, raw: bytes) -> str | None:
    """The error of an answer (None when it is right); updates what the clients know from `runs` and pages."""
    if status != 200:
        return f"HTTP {status}"
    body = _loads(raw)
    if kind == "runs":
        shared.update(body, time.monotonic())
    elif kind == "page":
        error = _check_page(body, "rows")
        if not error and body["rows"] and shared.op is None:
            shared.op = (body["rows"][0]["graph_id"], body["rows"][0]["op_name"])
        return error
    elif kind in ("alerts", "executions"):
        return _check_page(body, kind)
    return None


def _plan(rng: random.Random, shared: Shared, cursor: int | None, args, stop_at: float):
    """(kind, path, indexing, cursor, sent at) of a client's next request; None once its time is up."""
    if time.monotonic() >= stop_at:
        return None
    kind, path, indexing, cursor = _next_request(rng, shared, cursor)
    return kind, path, indexing, cursor, time.monotonic() - (stop_at - args.duration)  # from the load's start


def _record(shared: Shared, results: list, plan: tuple, answer) -> None:
    """Checks `answer` ((status, seconds, body), or the exception the request raised) and adds the result."""
    kind, _path, indexing, _cursor, at = plan
    if isinstance(answer, Exception):  # every failure is counted, whatever it is
        secs, error = float("nan"), f"{type(answer).__name__}: {answer}"
    else:
        status, secs, raw = answer
        try:
            error = _check(shared, kind, status, raw)
        except Exception as e:  # noqa: BLE001 - an answer that does not parse is an error too
            error = f"{type(e).__name__}: {e}"
    results.append({"kind": kind, "secs": secs, "error": error, "indexing": indexing, "at": at})


async def _fetch(port: int, path: str, timeout: float) -> tuple[int, float, bytes]:
    """(status, seconds from connecting to the answer's last byte, body): GET on a new connection, as a browser's
    first fetch (gzip accepted). Like a browser, it is done when the body its headers announce has arrived: the
    server closes the connection only after waiting ~10 ms for stray input (werkzeug), which no page waits for."""
    started = time.perf_counter()
    reader, writer = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", port), timeout)
    try:
        writer.write(
            f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAccept-Encoding: gzip\r\n"
            "Connection: close\r\n\r\n".encode()
        )
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), timeout)
        lines = head[:-4].decode("latin-1").split("\r\n")
        headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
        if "content-length" in headers:
            body = await asyncio.wait_for(reader.readexactly(int(headers["content-length"])), timeout)
        else:  # chunked or close-delimited: to EOF
            body = await asyncio.wait_for(reader.read(), timeout)
        secs = time.perf_counter() - started
    finally:
        writer.close()
    status = int(lines[0].split()[1])
    if headers.get("transfer-encoding", "").lower() == "chunked":
        body = _unchunk(body)
    if headers.get("content-encoding") == "gzip":
        body = gzip.decompress(body)
    return status, secs, body


def _unchunk(data: bytes) -> bytes:
    out, at = [], 0
    while True:
        end = data.index(b"\r\n", at)
        size = int(data[at:end].split(b";")[0], 16)
        if size == 0:
            return b"".join(out)
        out.append(data[end + 2 : end + 2 + size])
        at = end + 2 + size + 2


async def async_client(port: int, shared: Shared, seed: int, args, results: list, stop_at: float) -> None:
    rng, cursor = random.Random(seed), None
    for _ in range(args.requests):
        plan = _plan(rng, shared, cursor, args, stop_at)
        if plan is None:
            return
        cursor = plan[3]
        try:
            answer = await _fetch(port, plan[1], timeout=60)
        except Exception as e:  # noqa: BLE001 - counted by _record
            answer = e
        _record(shared, results, plan, answer)
        if args.think:
            await asyncio.sleep(rng.uniform(0, 2 * args.think))


async def _run_async_clients(port: int, shared: Shared, args, results: list, stop_at: float) -> int:
    """Runs the clients; returns how many did not finish in time."""
    tasks = [asyncio.ensure_future(async_client(port, shared, i, args, results, stop_at)) for i in range(args.clients)]
    _done, pending = await asyncio.wait(tasks, timeout=args.duration + 120)
    for t in pending:
        t.cancel()
    return len(pending)


def percentiles(values: list[float]) -> dict:
    values = sorted(v for v in values if not math.isnan(v))
    if not values:
        return {}

    def at(q: float) -> float:
        return values[min(len(values) - 1, int(q * len(values)))] * 1000

    return {"n": len(values), "p50_ms": at(0.50), "p95_ms": at(0.95), "p99_ms": at(0.99), "max_ms": values[-1] * 1000}


def _cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (all its threads), from /proc."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _timeline(results: list, window: float = 0.5) -> list[dict]:
    """Latency per `window` seconds of send time: where in the run the slow answers were (start-up, indexing...)."""
    out = []
    for w in sorted({int(r["at"] // window) for r in results}):
        p = percentiles([r["secs"] for r in results if int(r["at"] // window) == w])
        if p:
            out.append({"from_s": w * window, **p})
    return out


def run_load(logdir: str, args) -> dict:
    shared, results = Shared(), []
    dump_read_s = warm_page_cache(logdir)  # from the page cache, as a dump just written is (see page_cache.py)
    with TensorBoardProcess(
        logdir, "dbg", extra_args=("--load_fast", "false"), measure_rss=True, ready_path="/data/environment"
    ) as tb:
        cpu_before = _cpu_seconds(tb.proc.pid)
        started = time.monotonic()
        stop_at = started + args.duration
        hung = asyncio.run(_run_async_clients(tb.port, shared, args, results, stop_at))
        elapsed = time.monotonic() - started
        server_cpu = _cpu_seconds(tb.proc.pid) - cpu_before
        # Indexing may outlast the load: wait (bounded) so the report says how long it took.
        deadline = time.monotonic() + 300
        while not shared.done and time.monotonic() < deadline:
            body = tb.get_json(_path("runs"))
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
        "logdir": logdir,
        "clients": args.clients,
        "client": "asyncio",
        "requests": len(results),
        "seconds": round(elapsed, 2),
        "server_cpu_s": round(server_cpu, 2),
        "dump_read_s": round(dump_read_s, 2),
        "think_s": args.think,
        "errors": errors,
        "error_count": sum(errors.values()),
        "latency": overall,
        "latency_while_indexing": percentiles([r["secs"] for r in results if r["indexing"]]),
        "latency_by_kind": {
            k: percentiles([r["secs"] for r in results if r["kind"] == k]) for k in sorted({r["kind"] for r in results})
        },
        "requests_while_indexing": sum(r["indexing"] for r in results),
        "indexing_done_s": round(shared.done_at - started, 2) if shared.done_at else None,
        "graph_executions": shared.totals["graph_executions"],
        "peak_rss_mb": round(peak / 2**20),
        "targets_met": not errors and overall.get("p99_ms", 1e9) <= 100,
        "timeline": _timeline(results),
        "slowest": sorted(
            (
                {"kind": r["kind"], "at_s": round(r["at"], 3), "ms": round(r["secs"] * 1000, 1)}
                for r in results
                if not math.isnan(r["secs"])
            ),
            key=lambda r: -r["ms"],
        )[:20],
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
    print(
        f"load: {report['clients']} clients ({report['client']}), "
        f"{report['requests']} requests in {report['seconds']} s "
        f"(think {args.think} s), {report['requests_while_indexing']} while indexing; "
        f"{report['graph_executions']:,} graph executions; indexing done after {report['indexing_done_s']} s; "
        f"peak RSS {report['peak_rss_mb']} MB; "
        f"server CPU {report['server_cpu_s']} s during the load (indexing included)"
    )
    print(
        f"latency all:            p50 {lat.get('p50_ms', 0):.1f} ms  p95 {lat.get('p95_ms', 0):.1f} ms  "
        f"p99 {lat.get('p99_ms', 0):.1f} ms  max {lat.get('max_ms', 0):.1f} ms"
    )
    if idx:
        print(
            f"latency while indexing: p50 {idx['p50_ms']:.1f} ms  p95 {idx['p95_ms']:.1f} ms  "
            f"p99 {idx['p99_ms']:.1f} ms  max {idx['max_ms']:.1f} ms  (n={idx['n']})"
        )
    for kind, p in report["latency_by_kind"].items():
        print(
            f"  {kind:<11} n={p['n']:<5} p50 {p['p50_ms']:.1f} ms  p99 {p['p99_ms']:.1f} ms  max {p['max_ms']:.1f} ms"
        )
    print(
        "latency by send time: "
        + "  ".join(f"{w['from_s']:.1f}s n={w['n']} p99 {w['p99_ms']:.0f}" for w in report["timeline"])
    )
    print(f"errors: {report['error_count']} {report['errors'] or ''}")
    print("targets (0 errors, p99 <= 100 ms): " + ("met" if report["targets_met"] else "NOT met"))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=2)
    return 1 if report["error_count"] else 0


if __name__ == "__main__":
    sys.exit(main())
