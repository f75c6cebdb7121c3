"""How long the page's main thread is blocked while Graph Structure lays out a real 300-node neighbourhood, in
Debian's Chromium: the layout in the Web Worker (the panel's way) against dagre on the page's thread (the same
build with `Worker` removed before the page loads, so the panel falls back: how it ran before the worker).

    .venv/bin/python bench/layout_blocking.py [--reps 3]

The dump (bench/dense_graph_program.py, cached under bench/cache/dense-graph) is 30 layers of 30 densely wired
ops in name scopes; at 8 hops around an op in the middle the route's answer reaches its 300-node cap. For each
mode, each rep in a fresh page: draw at 8 hops (as the panel opens it: scopes away from the focused op closed),
then "Expand all" (every scope open, all 300 ops). Measured in the plugin's iframe: the longest long task
(PerformanceObserver 'longtask', tasks over 50 ms) and the longest gap between animation frames from the click to
the drawing, and the layout's own time (dagre, where it ran).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from harness import chromium  # noqa: E402
from harness.tensorboard_process import TensorBoardProcess  # noqa: E402

# Installed in the iframe: long tasks and the longest gap between frames since `__probe.reset()`.
_PROBE = """() => {
  const p = window.__probe = {tasks: [], gap: 0, last: performance.now(),
    reset() { p.tasks = []; p.gap = 0; p.last = performance.now(); }};
  new PerformanceObserver((l) => { for (const e of l.getEntries()) p.tasks.push(e.duration); })
    .observe({type: 'longtask'});
  const frame = (now) => { p.gap = Math.max(p.gap, now - p.last); p.last = now; requestAnimationFrame(frame); };
  requestAnimationFrame(frame);
}"""
# the drawing's layout state; a drawing that an answer is about to replace is marked `data-old`
_DONE = (
    "() => { const d = document.querySelector('[data-testid=gs-drawn]:not([data-old])');"
    " return d && d.dataset.layout; }"
)
_MARK = "() => { document.querySelector('[data-testid=gs-drawn]').dataset.old = '1'; window.__probe.reset(); }"


_UNMARK = "() => { delete document.querySelector('[data-testid=gs-drawn]').dataset.old; }"


def ensure_dump() -> str:
    out = os.path.join(ROOT, "bench", "cache", "dense-graph")
    if not os.path.exists(os.path.join(out, ".complete")):
        env = {**os.environ, "CUDA_VISIBLE_DEVICES": "", "TF_CPP_MIN_LOG_LEVEL": "2"}
        program = os.path.join(ROOT, "bench", "dense_graph_program.py")
        subprocess.run([sys.executable, program, os.path.join(out, "dump")], check=True, env=env)
        open(os.path.join(out, ".complete"), "w").close()
    return out


def _frame(page):
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        for f in page.frames:
            if "plugin_entry.html" in f.url and "name=dbg" in f.url:
                return f
        page.wait_for_timeout(200)
    raise RuntimeError("the dbg iframe did not appear")


def _measure(frame, page, action) -> dict:
    """Runs `action` (a click) and waits for the drawing it starts; the probe's figures over that interval."""
    frame.evaluate(
        "() => { document.querySelector('[data-testid=gs-drawn]').dataset.old = '1'; window.__probe.reset(); }"
    )
    t = time.perf_counter()
    action()
    page.wait_for_timeout(50)
    frame.wait_for_function(f"({_DONE})() === 'worker' || ({_DONE})() === 'main'", timeout=300_000, polling=50)
    wall = time.perf_counter() - t
    page.wait_for_timeout(300)  # the long task entry of the drawing itself is reported after it ends
    probe = frame.evaluate("() => ({tasks: window.__probe.tasks, gap: window.__probe.gap})")
    drawn = frame.locator("[data-testid=gs-drawn]")
    return {
        "where": drawn.get_attribute("data-layout"),
        "layout_ms": float(drawn.get_attribute("data-layout-ms") or 0),
        "longest_task_ms": max(probe["tasks"], default=0.0),
        "longest_frame_gap_ms": probe["gap"],
        "wall_s": wall,
        "ops": frame.locator("[data-testid=gs-node]").count(),
    }


def run_once(browser, tb: TensorBoardProcess, worker: bool) -> tuple[dict, dict]:
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    try:
        page = context.new_page()
        if not worker:
            page.add_init_script("delete self.Worker")
        page.goto(tb.url + "/#dbg")
        frame = _frame(page)
        frame.wait_for_function("document.body && document.body.dataset.ready === '1'", timeout=120_000)
        # focus the op in the middle of the graph (trace #496) as a permalink does: the iframe's own hash
        frame.evaluate(
            "() => { const q = new URLSearchParams(location.hash.slice(1)); q.set('ge', '496');"
            " location.hash = q.toString(); }"
        )
        frame.locator("[data-testid=gs-focus-op]", has_text="layer_").wait_for(timeout=60_000)
        frame.evaluate(_PROBE)
        frame.locator("[data-testid=gs-mode]").click()
        frame.wait_for_function(f"!!({_DONE})() && ({_DONE})() !== 'pending'", timeout=120_000)
        hops = frame.locator("[data-testid=gs-hops]")
        hops.fill("8")
        opened = _measure(frame, page, lambda: hops.dispatch_event("change"))
        expand = frame.locator("[data-testid=gs-expand-all]")
        expanded = _measure(frame, page, lambda: (frame.evaluate(_UNMARK), expand.click()))
        return opened, expanded
    finally:
        context.close()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args(argv)
    logdir = ensure_dump()
    from playwright.sync_api import sync_playwright

    with TensorBoardProcess(logdir, plugins="dbg") as tb, sync_playwright() as pw:
        browser = chromium.launch(pw)
        results: dict[tuple[str, str], list[dict]] = {}
        for _ in range(args.reps):
            for worker in (True, False):  # interleaved: the host's load drifts
                opened, expanded = run_once(browser, tb, worker)
                for step, r in (("opened", opened), ("expand all", expanded)):
                    results.setdefault((r["where"], step), []).append(r)
        browser.close()
    print("where   step        ops  layout (median)  longest task (median / max)  longest frame gap (median / max)")
    for (where, step), rs in sorted(results.items()):

        def med(k: str, rs: list[dict] = rs) -> float:
            return statistics.median(r[k] for r in rs)

        def top(k: str, rs: list[dict] = rs) -> float:
            return max(r[k] for r in rs)

        print(
            f"{where:7} {step:11} {rs[0]['ops']:3}  {med('layout_ms'):8.0f} ms      "
            f"{med('longest_task_ms'):6.0f} / {top('longest_task_ms'):6.0f} ms            "
            f"{med('longest_frame_gap_ms'):6.0f} / {top('longest_frame_gap_ms'):6.0f} ms   ({len(rs)} runs)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
