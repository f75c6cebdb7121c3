"""Which of the dashboard's first requests raise TensorBoard's peak RSS, per trace (issue #40 item 1).

The issue's memory figure is the peak (VmHWM) a user's machine feels: TensorBoard indexes the dump and the dashboard
opens on it. `bench/run.py` reports it as the slope between the 20 k and the big dump of the same generator. This
script finds where that peak comes from: it opens the dashboard once in headless Chromium to learn the requests it
makes (in order), then, in a fresh TensorBoard on the same dump, indexes, and replays those requests one at a time,
resetting the peak before each (`/proc/PID/clear_refs`, "5") and reading VmHWM and VmRSS after it. Done on both
dumps, the per-request growth over the small dump, per extra trace, says which request costs memory per trace.

    .venv/bin/python bench/dashboard_memory.py --traces 1000000 [--top 15]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # the repository root (harness/)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # bench/

import generate
from run import MARGINAL_TRACES, bench_tensorboard, wait_indexed
from systems import Ours

from harness import chromium
from harness.tensorboard_process import proc_status_kib

PREFIX = "/data/plugin/dbg/"


def dashboard_requests(dump: str, traces: int) -> list[str]:
    """The plugin requests the dashboard makes until it is ready and quiet, in the order it made them."""
    from playwright.sync_api import sync_playwright

    seen: list[str] = []
    with bench_tensorboard(dump, "dbg") as tb:
        wait_indexed(Ours(tb, traces), tb, traces, 300)
        with sync_playwright() as pw:
            browser = chromium.launch(pw)
            try:
                page = browser.new_page(viewport={"width": 1600, "height": 1000})
                page.on("request", lambda r: seen.append(r.url))
                page.goto(tb.url + "/#dbg", wait_until="commit")
                deadline = time.monotonic() + 60
                while time.monotonic() < deadline:
                    frames = [f for f in page.frames if "name=dbg" in f.url]
                    if frames and frames[0].query_selector('body[data-ready="1"]'):
                        break
                    page.wait_for_timeout(50)
                page.wait_for_timeout(3000)  # the lazy panels' requests after the ready marker
            finally:
                browser.close()
    paths = []
    for url in seen:
        parts = urllib.parse.urlsplit(url)
        if parts.path.startswith(PREFIX):
            paths.append(parts.path + ("?" + parts.query if parts.query else ""))
    return paths


def _reset_peak(pid: int) -> None:
    with open(f"/proc/{pid}/clear_refs", "w") as f:
        f.write("5")


def replay(dump: str, traces: int, paths: list[str]) -> list[tuple[str, int, int]]:
    """(path, peak over the RSS before it, RSS growth it left) in bytes, for each request in turn, after indexing;
    the first row is indexing itself (peak over idle, RSS left)."""
    rows = []
    with bench_tensorboard(dump, "dbg") as tb:
        pid = tb.proc.pid
        idle = proc_status_kib(pid, "VmRSS")
        _reset_peak(pid)
        wait_indexed(Ours(tb, traces), tb, traces, 300)
        time.sleep(1.0)  # the rules' scan runs on its own thread after `done`
        rss = proc_status_kib(pid, "VmRSS")
        rows.append(("(indexing, rules' scan)", (proc_status_kib(pid, "VmHWM") - idle) * 1024, (rss - idle) * 1024))
        for path in paths:
            before = proc_status_kib(pid, "VmRSS")
            _reset_peak(pid)
            tb.get(path)
            after = proc_status_kib(pid, "VmRSS")
            rows.append((path, (proc_status_kib(pid, "VmHWM") - before) * 1024, (after - before) * 1024))
        rows.append(("(whole session) VmHWM since the last reset, RSS", 0, proc_status_kib(pid, "VmRSS") * 1024))
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--traces", type=int, default=1_000_000)
    ap.add_argument("--top", type=int, default=15)
    args = ap.parse_args(argv)
    big, small = generate.ensure(args.traces), generate.ensure(MARGINAL_TRACES)
    paths = dashboard_requests(big, args.traces)
    print(f"{len(paths)} dashboard requests", flush=True)
    runs = {n: replay(d, n, paths) for n, d in ((MARGINAL_TRACES, small), (args.traces, big))}
    extra = args.traces - MARGINAL_TRACES
    per = []
    for (path, s_peak, s_left), (_, b_peak, b_left) in zip(runs[MARGINAL_TRACES], runs[args.traces]):
        per.append(((b_peak - s_peak) / extra, (b_left - s_left) / extra, b_peak, path))
    print("| peak over the RSS before, B per extra trace | RSS left, B per extra trace | peak, 1 M, MiB | request |")
    print("|---|---|---|---|")
    for p, left, b_peak, path in sorted(per, key=lambda r: -r[0])[: args.top]:
        name = path[len(PREFIX) :] if path.startswith(PREFIX) else path
        print(f"| {p:.1f} | {left:.1f} | {b_peak / 2**20:.1f} | `{name}` |")
    held = sum(r[1] for r in per)
    print(f"RSS left by indexing and every request, B per extra trace: {held:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
