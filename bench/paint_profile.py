"""Where the dashboard's paint time goes: a waterfall of one cold page load, from the browser's own clocks.

    .venv/bin/python bench/paint_profile.py --traces 1000000 [--which dbg|debugger-v2] [--loads 2]

Starts TensorBoard on the cached dump (harness/tb_launch.py, one debugger), waits until it is fully indexed (as
bench/run.py does before its paint figure), then loads `/#dbg` (or `/#debugger-v2`) in a fresh headless Chromium
per load, exactly like bench/browser.py, and prints every request of TensorBoard's page and of the plugin iframe
with its start, time to first byte (on localhost: mostly server time) and end, all on the main document's clock,
plus long tasks (> 50 ms of main-thread work), first contentful paint, the iframe's own milestones and the moment
the ready marker appears. Then it times TensorBoard's shell routes and our first requests again on a warm server
(fresh connection each, median of 5), and `/data/plugins_listing` on a process without our plugin, to separate
our plugin's share of the shell (is_active) from TensorBoard's own.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # the repository root (harness/)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # bench/
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import browser
from systems import Ours, Reference

from harness import chromium
from harness.tensorboard_process import TensorBoardProcess

BENCH_DIR = os.path.dirname(os.path.abspath(__file__))
LAUNCH_ARGS = ("--load_fast", "false")

# Runs in every frame before its own scripts: long tasks and the moment the ready marker is set, on this frame's
# clock (performance.now()); the collector converts each frame's times to the main document's via timeOrigin.
_INIT_JS = """
(() => {
  const rec = window.__paint = {longtasks: [], ready: null, iframeAdded: null};
  try {
    new PerformanceObserver((l) => { for (const e of l.getEntries()) rec.longtasks.push([e.startTime, e.duration]); })
      .observe({type: 'longtask', buffered: true});
  } catch (e) {}
  const watch = () => {
    new MutationObserver(() => {
      if (rec.ready === null && document.body && document.body.dataset.ready === '1') rec.ready = performance.now();
      if (rec.iframeAdded === null && document.querySelector('iframe')) rec.iframeAdded = performance.now();
    }).observe(document, {subtree: true, childList: true, attributes: true, attributeFilter: ['data-ready']});
  };
  if (document.documentElement) watch(); else document.addEventListener('readystatechange', watch, {once: true});
})();
"""

_COLLECT_JS = """
() => {
  const nav = performance.getEntriesByType('navigation')[0];
  const pick = (e) => ({name: e.name, type: e.initiatorType || 'navigation', start: e.startTime,
    reqStart: e.requestStart, ttfb: e.responseStart, end: e.responseEnd, transfer: e.transferSize,
    encoded: e.encodedBodySize, decoded: e.decodedBodySize});
  return {origin: performance.timeOrigin, nav: nav ? Object.assign(pick(nav), {
            domInteractive: nav.domInteractive, domContentLoaded: nav.domContentLoadedEventEnd,
            load: nav.loadEventEnd}) : null,
          resources: performance.getEntriesByType('resource').map(pick),
          paints: performance.getEntriesByType('paint').map((e) => [e.name, e.startTime]),
          marks: performance.getEntriesByType('mark').map((e) => [e.name, e.startTime]),
          measures: performance.getEntriesByType('measure').map((e) => [e.name, e.startTime, e.duration]),
          rec: window.__paint || null};
}
"""


# TensorBoard's own marks (zone.js patching, feature usage): many, and not about the load.
_NOISE = ("Zone", "mark_feature_usage")


def _short(url: str) -> str:
    p = urllib.parse.urlsplit(url)
    return (p.path + ("?" + p.query if p.query else ""))[:90]


def load_once(url: str, which: str, timeout_s: float = 60.0) -> dict:
    """One cold load in a fresh browser, as browser.measure does; the collected timings of both documents."""
    from playwright.sync_api import sync_playwright

    route, matcher, ready_sel, _, _ = browser.SYSTEMS[which]
    with sync_playwright() as pw:
        b = chromium.launch(pw)
        try:
            page = b.new_page(viewport={"width": 1600, "height": 1000})
            page.add_init_script(_INIT_JS)
            started = time.monotonic()
            page.goto(url + "/" + route, wait_until="commit")
            frame = browser._find_frame(page, matcher, started + timeout_s)
            frame.wait_for_selector(ready_sel, state="attached", timeout=timeout_s * 1000)
            wall = time.monotonic() - started
            page.wait_for_timeout(300)  # let late resource entries and long tasks land
            main = page.main_frame.evaluate(_COLLECT_JS)
            sub = frame.evaluate(_COLLECT_JS) if frame is not page.main_frame else None
            if sub is None:  # the reference draws in the main document: its ready moment is "now" (just seen)
                main["rec"]["ready"] = main["rec"]["ready"] or None
        finally:
            b.close()
    return {"wall_s": wall, "main": main, "sub": sub}


def print_waterfall(res: dict) -> None:
    main, sub = res["main"], res["sub"]
    rows = []  # (start_ms, text)
    base = main["origin"]

    def add_doc(doc: dict, label: str) -> float:
        shift = doc["origin"] - base
        nav = doc["nav"]
        if nav:
            rows.append(
                (
                    shift + nav["start"],
                    f"{label} document {_short(nav['name'])}",
                    shift + nav["ttfb"],
                    shift + nav["end"],
                    nav["encoded"],
                    nav["decoded"],
                )
            )
            for k in ("domInteractive", "domContentLoaded", "load"):
                if nav.get(k):
                    rows.append((shift + nav[k], f"{label} {k}", None, None, None, None))
        for r in doc["resources"]:
            rows.append(
                (
                    shift + r["start"],
                    f"{label} {r['type']:<14} {_short(r['name'])}",
                    shift + r["ttfb"] if r["ttfb"] else None,
                    shift + r["end"],
                    r["encoded"],
                    r["decoded"],
                )
            )
        for name, t in doc["paints"]:
            rows.append((shift + t, f"{label} paint {name}", None, None, None, None))
        for name, t in doc["marks"]:
            if name.startswith(_NOISE):
                continue
            rows.append((shift + t, f"{label} mark {name}", None, None, None, None))
        for name, t, d in doc["measures"]:
            if name.startswith(_NOISE):
                continue
            rows.append((shift + t, f"{label} measure {name} ({d:.0f} ms)", None, shift + t + d, None, None))
        rec = doc.get("rec") or {}
        for t, d in rec.get("longtasks", []):
            rows.append((shift + t, f"{label} LONG TASK {d:.0f} ms", None, shift + t + d, None, None))
        if rec.get("iframeAdded") is not None and label == "tb":
            rows.append((shift + rec["iframeAdded"], "tb <iframe> element added", None, None, None, None))
        if rec.get("ready") is not None:
            rows.append((shift + rec["ready"], f"{label} body[data-ready=1] SET", None, None, None, None))
        return shift

    add_doc(main, "tb")
    if sub:
        shift = add_doc(sub, "ifr")
        rows.append((shift, "ifr timeOrigin (iframe navigation starts)", None, None, None, None))
    rows.sort(key=lambda r: r[0])
    print(
        f"{'start':>7} {'ttfb':>7} {'end':>7} {'dur':>6} {'wait':>6} {'bytes':>9}  what"
        "   (ms on the main document's clock)"
    )
    for start, text, ttfb, end, enc, dec in rows:

        def fmt(v):
            return f"{v:7.0f}" if v is not None else " " * 7

        dur = f"{end - start:6.0f}" if end is not None else " " * 6
        wait = f"{ttfb - start:6.0f}" if ttfb is not None else " " * 6
        size = f"{dec:9d}" if dec else " " * 9
        zipped = f" (gz {enc})" if enc and dec and enc != dec else ""
        print(f"{start:7.0f} {fmt(ttfb)} {fmt(end)} {dur} {wait} {size}  {text}{zipped}")
    print(f"wall clock (python, goto → ready selector seen): {res['wall_s']:.3f} s")


def summary_line(res: dict) -> str:
    main, sub = res["main"], res["sub"]
    shift = (sub["origin"] - main["origin"]) if sub else 0.0
    ready = (sub or main)["rec"].get("ready")
    ready_ms = shift + ready if ready is not None else float("nan")
    longs = sum(d for _, d in main["rec"]["longtasks"]) + (sum(d for _, d in sub["rec"]["longtasks"]) if sub else 0)
    return (
        f"ready at {ready_ms:.0f} ms on the page clock (wall {res['wall_s'] * 1000:.0f} ms); TB shell until the "
        f"iframe starts: {shift:.0f} ms; iframe start → ready: {ready_ms - shift:.0f} ms; long tasks {longs:.0f} ms"
    )


def _loadavg() -> str:
    with open("/proc/loadavg") as f:
        return f.read().strip()


def _median_get(tb, path: str, n: int = 5) -> tuple[float, int]:
    times, size = [], 0
    for _ in range(n):
        _, _, body, secs = tb.get(path)
        times.append(secs)
        size = len(body)
    return statistics.median(times), size


def server_times(tb, paths: list[str]) -> None:
    print("\nwarm server, fresh connection, median of 5:")
    for p in paths:
        secs, size = _median_get(tb, p)
        print(f"  {secs * 1000:7.1f} ms {size:9d} B  {p}")
        if size < 200 and p.startswith("/data/plugin/"):  # an error or an empty answer: say which
            print(f"      body: {tb.get(p)[2][:200]!r}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--traces", type=int, default=1_000_000)
    ap.add_argument("--which", choices=sorted(browser.SYSTEMS), default="dbg")
    ap.add_argument("--loads", type=int, default=2, help="cold page loads (a fresh browser each)")
    ap.add_argument("--no-baseline", action="store_true", help="skip the plugins_listing comparison without dbg")
    ap.add_argument("--url", help="profile a TensorBoard already running at this URL (already indexed; no baseline)")
    args = ap.parse_args(argv)
    if args.url:
        tb = TensorBoardProcess("", args.which)  # not entered: only its HTTP helpers, pointed at the given server
        tb.url, tb.port = args.url.rstrip("/"), int(urllib.parse.urlsplit(args.url).port or 80)
        profile(tb, args)
        return 0
    dump = os.path.join(BENCH_DIR, "cache", str(args.traces))
    if not os.path.exists(os.path.join(dump, ".complete")):
        print(f"no dump at {dump}: run bench/generate.py --traces {args.traces}", file=sys.stderr)
        return 2
    cls = Ours if args.which == "dbg" else Reference
    print(f"load: {_loadavg()}")
    with TensorBoardProcess(dump, args.which, extra_args=LAUNCH_ARGS, ready_path="/data/environment") as tb:
        system = cls(tb, args.traces)
        t0 = time.monotonic()
        system.kick()
        while not system.poll()["done"]:
            if time.monotonic() - t0 > 600:
                raise RuntimeError("not indexed within 600 s")
            time.sleep(0.2)
        print(f"indexed in {time.monotonic() - t0:.1f} s")
        profile(tb, args)
    if not args.no_baseline:
        # The same logdir without our plugin: what TensorBoard's own plugins cost the shell's listing.
        with TensorBoardProcess(dump, "none", extra_args=LAUNCH_ARGS, ready_path="/data/environment") as tb:
            tb.get("/data/plugins_listing")
            server_times(tb, ["/data/plugins_listing", "/data/runs"])
    return 0


def profile(tb, args) -> None:
    """The cold page loads, then the warm server times of the shell's and our first requests."""
    for i in range(args.loads):
        res = load_once(tb.url, args.which)
        print(f"\n=== load {i + 1} (load avg {_loadavg().split()[0]}) ===")
        print_waterfall(res)
        print(summary_line(res))
    paths = ["/", "/data/environment", "/data/plugins_listing", "/data/runs", "/data/plugin_entry.html?name=dbg"]
    if args.which == "dbg":
        run = tb.get_json("/data/plugin/dbg/runs")["runs"][0]["name"]

        def q(route, **kw):
            return f"/data/plugin/dbg/{route}?" + urllib.parse.urlencode({"run": run, **kw})

        paths += [
            "/data/plugin/dbg/index.js",
            "/data/plugin/dbg/runs",
            q("root_cause"),
            q("alerts", begin=0, end=100),
            q("alerts", begin=0, end=1000),
            q("alerts", begin=0, end=200, type="InfNanAlert"),
            q("executions", begin=0, end=40),
            q("graph_executions", begin=0, end=200),
            q("source_files"),
        ]
    server_times(tb, paths)


if __name__ == "__main__":
    sys.exit(main())
