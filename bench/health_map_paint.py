"""Health over time (#18) in the browser: from the click on "Health map" to its canvas painted, on a generated dump.

    .venv/bin/python bench/health_map_paint.py --traces 1000000 [--cache DIR] [--reps 5]

A real TensorBoard with the plugin (harness/tensorboard_process.py) on bench/cache/<N>, Debian Chromium through
Playwright (harness/chromium.py). After the dashboard's ready marker and once the run is read (`status.done`), each
repetition closes and opens the view and times, inside the page, from the click to the frame after the canvas got
its rows (`data-begin` set by the draw): the route's answer plus the paint. The first open pays the rules' and the
map's whole-run tables (cached per run version after it); it is printed apart. Also a click on a cell -> focus.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from harness import chromium  # noqa: E402
from harness.tensorboard_process import TensorBoardProcess  # noqa: E402

_OPEN_JS = """
async () => {
  const canvas = document.querySelector('[data-testid=health-map-canvas]');
  delete canvas.dataset.begin;
  const t0 = performance.now();
  document.querySelector('[data-testid=open-health-map]').click();
  while (canvas.dataset.begin === undefined) await new Promise(r => setTimeout(r, 2));
  await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
  return performance.now() - t0;
}
"""


def _frame(page):
    for _ in range(300):
        for f in page.frames:
            if "plugin_entry.html" in f.url and "name=dbg" in f.url:
                return f
        page.wait_for_timeout(200)
    raise SystemExit("no dbg iframe")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--traces", type=int, default=1_000_000)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--cache", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "cache"))
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    with TensorBoardProcess(os.path.join(args.cache, str(args.traces))) as tb, sync_playwright() as pw:
        while not all(r["status"]["done"] for r in tb.get_json("/data/plugin/dbg/runs")["runs"]):
            time.sleep(0.5)
        browser = chromium.launch(pw)
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        page.goto(tb.url + "/#dbg")
        frame = _frame(page)
        frame.wait_for_function("document.body && document.body.dataset.ready === '1'", timeout=300_000)
        times = []
        for _ in range(args.reps + 1):
            times.append(frame.evaluate(_OPEN_JS))
            frame.locator("[data-testid=close-health-map]").click()
        print(f"first open (whole-run tables built): {times[0]:.0f} ms")
        print(f"open -> painted: median {statistics.median(times[1:]):.0f} ms, max {max(times[1:]):.0f} ms")
        frame.locator("[data-testid=open-health-map]").click()
        canvas = frame.locator("[data-testid=health-map-canvas]")
        geo = canvas.evaluate("c => ({...c.dataset})")
        t0 = time.perf_counter()
        canvas.click(position={"x": int(geo["labelWidth"]) + 2, "y": int(geo["headerHeight"]) + 2})
        frame.wait_for_selector("[data-testid=ge-list] .vl-row.focused", timeout=60_000)
        print(f"cell click -> trace focused: {(time.perf_counter() - t0) * 1000:.0f} ms")
        browser.close()


if __name__ == "__main__":
    main()
