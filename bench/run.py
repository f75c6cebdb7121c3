"""Benchmark: our `dbg` plugin against TensorBoard's built-in Debugger V2, on the same dump, in one run.

    python bench/run.py --traces 100000 [--no-browser] [--no-reference] [--no-ours]

Each system gets its own real TensorBoard process holding only its own debugger (harness/tb_launch.py), one after the
other so they never compete for the 2 cores, and is queried only through its own routes (bench/systems.py).
Clocks start at TensorBoard's first HTTP answer. Memory is VmHWM/VmRSS from /proc against an idle TensorBoard of
the same plugin set on an empty logdir. The markdown table is printed and written to bench/results/.
"""

from __future__ import annotations

import argparse
import datetime
import glob
import json
import os
import platform
import struct
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # the repository root (harness/)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # bench/
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import generate
from page_cache import warm_page_cache
from report import Table, summary
from systems import NotAvailable, Ours, Reference

from harness.tensorboard_process import TensorBoardProcess

BENCH_DIR = os.path.dirname(os.path.abspath(__file__))

RESULTS = os.path.join(BENCH_DIR, "results")
REFERENCE_MAX_TRACES = 3_000_000  # above this the reference needs > ~2 GB and minutes; skipped and said so
POLL_S = 0.1
PARSE_SAMPLE = 2_000_000


def bench_tensorboard(logdir: str, which: str) -> TensorBoardProcess:
    """A TensorBoard holding only `which`'s debugger (harness/tb_launch.py), its RSS sampled."""
    return TensorBoardProcess(
        logdir,
        plugins=which,
        extra_args=("--load_fast", "false"),
        measure_rss=True,
        ready_path="/data/environment",  # touches no plugin: neither debugger reads before the clock starts
    )


def parse_only_rate(dump: str, limit: int = PARSE_SAMPLE) -> dict:
    """Records/s of framing + protobuf-parsing every trace record (TF's generated DebugEvent class, upb)."""
    from tensorflow.core.protobuf import debug_event_pb2

    path = glob.glob(os.path.join(dump, "*.graph_execution_traces"))[0]
    parse = debug_event_pb2.DebugEvent.FromString
    unpack = struct.Struct("<Q").unpack_from
    count = 0
    started = time.perf_counter()
    with open(path, "rb") as f:
        buf = f.read(min(os.path.getsize(path), limit * 260))
    pos, n = 0, len(buf)
    while pos + 12 <= n and count < limit:
        (length,) = unpack(buf, pos)
        end = pos + 12 + length + 4
        if end > n:
            break
        parse(buf[pos + 12 : pos + 12 + length])
        count += 1
        pos = end
    secs = time.perf_counter() - started
    return {"records": count, "seconds": secs, "rate": count / secs if secs else None}


def idle_rss(which: str) -> int:
    """RSS of an idle TensorBoard with this plugin set on an empty logdir, after its debugger's first route call."""
    with tempfile.TemporaryDirectory() as empty, bench_tensorboard(empty, which) as tb:
        tb.get(f"/data/plugin/{which}/runs")
        tb.get("/data/plugins_listing")
        time.sleep(2.0)
        return tb.rss_bytes()


MARGINAL_TRACES = 20_000  # the small dump of the per-trace peak figure (issue #25): same generator, 20 k traces
MARGINAL_TARGET_B = 32  # ≤ 32 B of peak RSS per extra trace (it was ~87; the reference needs ~520)


def small_dump_peak_rss(cls, which: str, small_dump: str, small_traces: int, browser: bool) -> tuple[int, int]:
    """Peak RSS (VmHWM) once every alert of a small dump is served, and once the routes were asked and (`browser`)
    the dashboard opened, as the big run does: subtracting them from the big run's peaks at the same moments
    leaves the per-trace cost without the fixed costs (imports, graph, source files, a block's temporaries) that
    the idle baseline still includes."""
    with bench_tensorboard(small_dump, which) as tb:
        system = cls(tb, small_traces)
        wait_indexed(system, tb, small_traces, 120)
        served = tb.peak_rss_bytes()
        time_routes(system, tb, small_traces, 1)
        if browser:
            import browser as chromium_page

            chromium_page.measure(tb.url, which)
        return served, tb.peak_rss_bytes()


def marginal_peak_per_trace(res: dict, traces: int, end: bool = False) -> float | None:
    """The issue's figure: (peak RSS of the big run − peak RSS of the 20 k run, both taken once every alert is
    served, or with `end` at the end: routes asked, dashboard opened — the peak a user's machine feels, issue #40)
    ÷ (the trace difference), in bytes per trace."""
    small, big = (
        (res.get("small_peak_rss_end"), res.get("peak_rss"))
        if end
        else (
            res.get("small_peak_rss"),
            res.get("peak_rss_served"),
        )
    )
    small_n = res.get("small_traces")
    if not (small and big and small_n) or traces <= small_n:
        return None
    return (big - small) / (traces - small_n)


def process_cpu_s(pid: int) -> float:
    """User + system CPU seconds of a process, all its threads (/proc/PID/stat): less moved by the host's load than
    a wall clock when eight people share two cores."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def wait_indexed(system, tb, traces: int, timeout: float) -> dict:
    """Polls until everything is read and the alert total is stable; times the polls and a 100-row page meanwhile,
    and counts the TensorBoard process's CPU seconds from here to all alerts (`cpu_all_alerts_s`)."""
    out = {"latencies_while_indexing": [], "first_alert_s": None, "all_alerts_s": None, "polls": 0}
    t0 = tb.first_answer
    cpu0 = process_cpu_s(tb.proc.pid)
    kicked = time.monotonic()  # before the kick: a first request that blocks while it reads counts as indexing
    system.kick()
    candidate = None  # (time, alerts) of the first done poll with this alert count
    state = {}
    while time.monotonic() - t0 < timeout:
        try:
            state = system.poll()
        except RuntimeError as e:  # an HTTP error while indexing: counted and shown, then keep polling
            out.setdefault("poll_errors", []).append(str(e)[:200])
            time.sleep(POLL_S)
            continue
        now = time.monotonic()
        out["polls"] += 1
        out["latencies_while_indexing"] += state["latencies"]
        if state["alerts"] and out["first_alert_s"] is None:
            out["first_alert_s"] = now - t0
        if state["done"]:
            if candidate and candidate[1] == state["alerts"]:
                out["all_alerts_s"] = candidate[0] - t0
                out["index_s"] = candidate[0] - kicked
                out["cpu_all_alerts_s"] = candidate[2] - cpu0
                break
            candidate = (now, state["alerts"], process_cpu_s(tb.proc.pid))
        else:
            candidate = None
            secs = tb.get(system.page_path(0)).seconds
            out["latencies_while_indexing"].append(secs)
        time.sleep(POLL_S)
    out["traces_read"] = state.get("read")
    out["alerts"] = state.get("alerts")
    if out["all_alerts_s"] is None:
        out["error"] = f"not done within {timeout:.0f}s (read {state.get('read')} of {traces})"
    return out


def time_routes(system, tb, traces: int, reps: int) -> dict:
    paths = {
        "page_start": (system.page_path(0), 0),
        "page_middle": (system.page_path(max(0, traces // 2 - 50)), max(0, traces // 2 - 50)),
        "page_end": (system.page_path(max(0, traces - 100)), max(0, traces - 100)),
        "alerts": (system.alerts_path(), None),
        "op": (system.op_path(), None),
        "source_file": (system.source_path(), None),
    }
    out = {}
    for name, (path, begin) in paths.items():
        status, _, body, _ = tb.get(path)  # warm-up, and a correctness check of the answer
        if status != 200:
            out[name] = {"error": f"HTTP {status}: {body[:150]!r}"}
            continue
        if begin is not None and not system.check_page(json.loads(body), begin):
            out[name] = {"error": "page did not hold the rows asked for"}
            continue
        out[name] = summary([tb.get(path).seconds for _ in range(reps)])
    # 100 rows as a list shows them, health included: one request of ours, two of the reference's (in sequence)
    middle = max(0, traces // 2 - 50)
    health_paths = system.health_page_paths(middle)
    answers = [tb.get(path) for path in health_paths]
    if all(a.status == 200 for a in answers):
        out["health_page"] = summary([sum(tb.get(path).seconds for path in health_paths) for _ in range(reps)])
    else:
        failed = [f"HTTP {a.status}: {a.body[:100]!r}" for a in answers if a.status != 200]
        out["health_page"] = {"error": "; ".join(failed)}
    return out


def bench_system(cls, which: str, dump: str, traces: int, args) -> dict:
    res: dict = {"which": which, "traces": traces}
    try:
        res["idle_rss"] = idle_rss(which)
        small_n = MARGINAL_TRACES
        small = small_dump_peak_rss(cls, which, generate.ensure(small_n), small_n, not args.no_browser)
        res["small_peak_rss"], res["small_peak_rss_end"] = small
        res["small_traces"] = small_n
        res["dump_read_s"] = warm_page_cache(dump)
        with bench_tensorboard(dump, which) as tb:
            system = cls(tb, traces)
            timeout = max(120.0, 300.0 * traces / 1e6)  # Debugger V2 took 145 s at 1 M on a loaded shared host
            res.update(wait_indexed(system, tb, traces, timeout))
            res["peak_rss_served"] = tb.peak_rss_bytes()  # the peak once every alert is served (issue #25)
            res["rss_indexed"] = tb.rss_bytes()
            if "error" not in res:
                res["routes"] = time_routes(system, tb, traces, args.reps)
                if not args.no_browser:
                    import browser

                    res["browser"] = browser.measure(tb.url, which)
            res["rss_end"] = tb.rss_bytes()  # after every route and the browser: what the queries' caches hold
            res["peak_rss"] = tb.peak_rss_bytes()
    except NotAvailable as e:
        res["error"] = f"not available: {e}"
    except Exception as e:  # noqa: BLE001 — report, never crash: the other column is still worth having
        res["error"] = f"{type(e).__name__}: {str(e)[:300]}"
    return res


def _route_stat(res: dict, route: str, key: str):
    r = res.get("routes", {}).get(route)
    if r is None:
        return None
    return r.get(key) if "error" not in r else f"error: {r['error'][:60]}"


def build_table(n: int, ours: dict, ref: dict, parse: dict) -> Table:
    t = Table("dbg (ours)", "Debugger V2 (reference)")
    m = n / 1e6
    for label, res in (("ours", ours), ("reference", ref)):
        if res.get("error"):
            t.note(
                f"**{label} unavailable**",
                res["error"] if label == "ours" else "",
                res["error"] if label == "reference" else "",
            )
    o_all, r_all = ours.get("all_alerts_s"), ref.get("all_alerts_s")
    t.add(
        "all alerts served (s after first answer)",
        o_all,
        r_all,
        "s",
        target="≥ 15× sooner at 1 M" if n == 1_000_000 else "≥ 15× sooner (1 M target)",
        check=lambda: (r_all / o_all >= 15) if (o_all and r_all) else None,
    )
    t.add(
        "TensorBoard's CPU to all alerts (s, all threads)",
        ours.get("cpu_all_alerts_s"),
        ref.get("cpu_all_alerts_s"),
        "s",
    )
    t.add("first alert served (s)", ours.get("first_alert_s"), ref.get("first_alert_s"), "s")
    t.add("alerts served (total)", ours.get("alerts"), ref.get("alerts"), "int", lower_is_better=False)
    t.add("traces read", ours.get("traces_read"), ref.get("traces_read"), "int", lower_is_better=False)
    # not a comparison: how long reading the dump into the page cache took before each system started (long: it
    # had gone cold; see page_cache.warm_page_cache)
    t.add(
        "dump read into the page cache first (s)",
        *(f"{r['dump_read_s']:.2f} s" if "dump_read_s" in r else None for r in (ours, ref)),
        "",
    )
    o_idx, r_idx = ours.get("index_s"), ref.get("index_s")
    idx_target = {1_000_000: 2.0, 10_000_000: 20.0}.get(n, 2.0 * m)
    t.add(
        "indexing time (s)",
        o_idx,
        r_idx,
        "s",
        target=f"≤ {idx_target:g} s" + ("" if n in (1_000_000, 10_000_000) else " (2 s/M, scaled)"),
        check=lambda: o_idx <= idx_target if o_idx else None,
    )
    o_rate = n / o_idx if o_idx else None
    r_rate = n / r_idx if r_idx else None
    t.add("indexing rate (traces/s)", o_rate, r_rate, "/s", lower_is_better=False)
    p_rate = parse.get("rate")
    t.add("protobuf parse-only rate, same run (traces/s)", p_rate, p_rate, "/s", lower_is_better=False)
    t.note(
        "indexing rate ÷ parse-only rate",
        f"{o_rate / p_rate:.2f}×" if o_rate and p_rate else "—",
        f"{r_rate / p_rate:.2f}×" if r_rate and p_rate else "—",
    )
    for key, label in (
        ("idle_rss", "idle TensorBoard RSS (empty logdir)"),
        ("peak_rss", "peak RSS (VmHWM)"),
        ("rss_indexed", "RSS once indexed"),
        ("rss_end", "RSS after every query"),
    ):
        t.add(label, ours.get(key), ref.get(key), "MiB")
    for key, label in (
        ("rss_indexed", "RSS growth over idle once indexed, per trace"),
        ("rss_end", "RSS growth over idle after every query, per trace"),
        ("peak_rss", "peak RSS growth over idle, per trace"),
    ):
        held = {
            k: (r[key] - r["idle_rss"]) / n if r.get(key) and r.get("idle_rss") else None
            for k, r in (("o", ours), ("r", ref))
        }
        t.add(
            label,
            held["o"],
            held["r"],
            "B",
            target="≤ 48 B",
            check=lambda held=held: held["o"] <= 48 if held["o"] is not None else None,
        )
    marginal = {k: marginal_peak_per_trace(r, n) for k, r in (("o", ours), ("r", ref))}
    t.add(
        f"peak RSS growth over the {MARGINAL_TRACES // 1000} k dump once every alert is served, per extra trace",
        marginal["o"],
        marginal["r"],
        "B",
        target=f"≤ {MARGINAL_TARGET_B} B",
        check=lambda: marginal["o"] <= MARGINAL_TARGET_B if marginal["o"] is not None else None,
    )
    marginal_end = {k: marginal_peak_per_trace(r, n, end=True) for k, r in (("o", ours), ("r", ref))}
    t.add(
        f"peak RSS growth over the {MARGINAL_TRACES // 1000} k dump at the end (routes asked, dashboard opened on "
        "both), per extra trace",
        marginal_end["o"],
        marginal_end["r"],
        "B",
        target=f"≤ {MARGINAL_TARGET_B} B",
        check=lambda: marginal_end["o"] <= MARGINAL_TARGET_B if marginal_end["o"] is not None else None,
    )
    for route, label in (
        ("page_start", "100-row page at start"),
        ("page_middle", "100-row page at middle"),
        ("page_end", "100-row page at end"),
        ("health_page", "100 rows with their health at middle (reference: digests + data)"),
        ("alerts", "100 alerts"),
        ("op", "op info"),
        ("source_file", "source file (math_ops.py, whole)"),
    ):
        for stat in ("median", "p95"):
            o, r = _route_stat(ours, route, stat), _route_stat(ref, route, stat)
            target = "≤ 5 ms" if stat == "median" and route.startswith("page") else ""
            t.add(
                f"{label}, {stat}",
                o,
                r,
                "ms",
                target=target,
                check=lambda o=o: (o <= 0.005) if isinstance(o, float) else None,
            )
    w = {k: summary(r.get("latencies_while_indexing", [])) for k, r in (("o", ours), ("r", ref))}
    t.note(
        "HTTP errors while indexing",
        *(
            f"{len(r.get('poll_errors', []))}"
            + (f" (first: {r['poll_errors'][0][:120]})" if r.get("poll_errors") else "")
            for r in (ours, ref)
        ),
    )
    t.add("requests while indexing, median", w["o"]["median"], w["r"]["median"], "ms")
    t.add(
        "requests while indexing, p95",
        w["o"]["p95"],
        w["r"]["p95"],
        "ms",
        target="≤ 50 ms",
        check=lambda: w["o"]["p95"] <= 0.050 if w["o"]["p95"] is not None else None,
    )
    ob, rb = ours.get("browser", {}), ref.get("browser", {})
    t.add(
        "dashboard painted (s after load, index ready)",
        ob.get("paint_s") or ob.get("error"),
        rb.get("paint_s") or rb.get("error"),
        "s",
        target="≤ 1.5 s",
        check=lambda: ob["paint_s"] <= 1.5 if ob.get("paint_s") else None,
    )
    # the same paint on the browser's own clock (no Playwright round trips), split where TensorBoard's page (the
    # same for both systems) starts the plugin's iframe; the reference runs inside TensorBoard's page: no split
    t.add("  painted, page clock (navigation start to ready)", ob.get("paint_page_s"), rb.get("paint_page_s"), "s")
    t.add("  of which TensorBoard's page until our iframe starts", ob.get("shell_s"), None, "s")
    t.add("  of which our iframe (start to all six panels drawn)", ob.get("iframe_s"), None, "s")
    t.add(
        "scroll list end to end, fps",
        ob.get("fps") or ob.get("error"),
        rb.get("fps") or rb.get("error"),
        "fps",
        lower_is_better=False,
        target="≥ 50 fps",
        check=lambda: ob["fps"] >= 50 if ob.get("fps") else None,
    )
    t.add(
        "scroll: worst frame",
        ob.get("worst_frame_ms", 0) / 1000 or None,
        rb.get("worst_frame_ms", 0) / 1000 or None,
        "ms",
    )
    t.note("scroll reached the last row", str(ob.get("reached_bottom", "—")), str(rb.get("reached_bottom", "—")))
    return t


def marginal_line(ours: dict) -> str:
    """The issue-#25 memory figure on a line of its own, with its verdict."""
    small = ours.get("small_peak_rss")
    big = ours.get("peak_rss_served")
    per = marginal_peak_per_trace(ours, ours.get("traces", 0))
    if per is None:
        return f"peak RSS per extra trace (ours, {MARGINAL_TRACES:,} → this dump): n/a"
    verdict = "PASS" if per <= MARGINAL_TARGET_B else "FAIL"
    line = (
        f"peak RSS per extra trace (ours, VmHWM once every alert is served, {MARGINAL_TRACES:,}-trace dump "
        f"{small / 2**20:.1f} MiB → {ours['traces']:,}-trace dump {big / 2**20:.1f} MiB): {per:.1f} B/trace, "
        f"target ≤ {MARGINAL_TARGET_B} B: {verdict}"
    )
    end = marginal_peak_per_trace(ours, ours.get("traces", 0), end=True)
    if end is not None:
        line += (
            f"\npeak RSS per extra trace at the end (routes asked, dashboard opened on both dumps: "
            f"{ours['small_peak_rss_end'] / 2**20:.1f} MiB → {ours['peak_rss'] / 2**20:.1f} MiB): {end:.1f} B/trace, "
            f"target ≤ {MARGINAL_TARGET_B} B: {'PASS' if end <= MARGINAL_TARGET_B else 'FAIL'}"
        )
    return line


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--traces", type=int, default=100_000)
    ap.add_argument("--no-browser", action="store_true")
    ap.add_argument("--no-reference", action="store_true")
    ap.add_argument("--no-ours", action="store_true")
    ap.add_argument("--reps", type=int, default=30, help="timed repetitions per route")
    ap.add_argument("--out", default=None, help="results file prefix (default bench/results/bench-N-TIME)")
    args = ap.parse_args(argv)
    n = args.traces

    dump = generate.ensure(n)
    print(f"dump: {dump}", flush=True)
    parse = parse_only_rate(dump)
    print(f"parse-only: {parse['records']} records in {parse['seconds']:.2f}s", flush=True)
    ref: dict = {"error": "skipped (--no-reference)"}
    if not args.no_reference and n > REFERENCE_MAX_TRACES:
        ref = {
            "error": f"skipped above {REFERENCE_MAX_TRACES:,} traces: it would need ~480 B/trace "
            f"(~{n * 480 / 2**30:.1f} GiB) and minutes"
        }
    elif not args.no_reference:
        print("reference ...", flush=True)
        ref = bench_system(Reference, "debugger-v2", dump, n, args)
    ours: dict = {"error": "skipped (--no-ours)"}
    if not args.no_ours:
        print("ours ...", flush=True)
        ours = bench_system(Ours, "dbg", dump, n, args)

    table = build_table(n, ours, ref, parse)
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    header = (
        f"# dbg vs Debugger V2 — {n:,} FULL_HEALTH traces\n\n{stamp}, {platform.node()}, "
        f"{os.cpu_count()} cores, Python {platform.python_version()}; dump `{os.path.relpath(dump)}` "
        f"(bench/generate.py). Ratio = how many times better ours is.\n"
    )
    text = header + "\n" + table.markdown() + "\n" + marginal_line(ours) + "\n"
    print(text, flush=True)
    os.makedirs(RESULTS, exist_ok=True)
    prefix = args.out or os.path.join(RESULTS, f"bench-{n}-{stamp}")
    with open(prefix + ".md", "w") as f:
        f.write(text)
    with open(prefix + ".json", "w") as f:
        json.dump(
            {"traces": n, "parse_only": parse, "ours": ours, "reference": ref, "failures": table.failures},
            f,
            indent=1,
            default=str,
        )
    print(f"written: {prefix}.md, {prefix}.json", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
