"""Headless Debian Chromium (Playwright, never a downloaded browser): time to a complete paint, and scrolling fps.

Ours renders in TensorBoard's plugin iframe and sets `document.body.dataset.ready = "1"` once runs and every
panel's first page are drawn (frontend/src/store/ready.ts); without that marker the first graph-execution row is
used. The reference is an Angular component in the main document; its first `.graph-execution-index` cell (a row
of its graph-execution list) is its paint signal.

FPS: requestAnimationFrame counting inside the page while the list's scroll container is moved from top to bottom
over a fixed duration, one step per frame, so every frame has to draw new rows.
"""

from __future__ import annotations

import time

from harness import chromium

SCROLL_SECONDS = 5.0

# Runs inside the page: scroll `el` end to end over `ms`, counting frames; returns fps, worst gap, final index.
_SCROLL_JS = """
async ([selector, ms]) => {
  const el = document.querySelector(selector);
  if (!el) return {error: 'no element ' + selector};
  const range = el.scrollHeight - el.clientHeight;
  el.scrollTop = 0;
  await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
  return await new Promise(resolve => {
    const start = performance.now();
    let frames = 0, last = start, worst = 0;
    function step(now) {
      frames += 1;
      worst = Math.max(worst, now - last);
      last = now;
      const t = Math.min(1, (now - start) / ms);
      el.scrollTop = t * range;
      el.dispatchEvent(new Event('scroll'));
      if (t < 1) { requestAnimationFrame(step); return; }
      const secs = (now - start) / 1000;
      resolve({fps: frames / secs, frames, seconds: secs, worst_frame_ms: worst, range,
               reached_bottom: Math.abs(el.scrollTop - range) <= 2});
    }
    requestAnimationFrame(step);
  });
}
"""

SYSTEMS = {
    # which -> (hash route, frame matcher (None: main document), ready selector, fallback, scroll container)
    "dbg": (
        "#dbg",
        "name=dbg",
        'body[data-ready="1"]',
        "[data-testid=ge-list] .vl-row",
        "[data-testid=ge-list] .vl-scroller",
    ),
    "debugger-v2": ("#debugger-v2", None, ".graph-execution-index", None, ".graph-executions-viewport"),
}


def _find_frame(page, matcher: str | None, deadline: float):
    if matcher is None:
        return page.main_frame
    while time.monotonic() < deadline:
        for frame in page.frames:
            if matcher in frame.url:
                return frame
        page.wait_for_timeout(20)
    raise TimeoutError(f"no iframe matching {matcher!r}")


# Runs in every frame before its scripts: notes (on the frame's clock) when `data-ready="1"` is set. It watches only
# that attribute, so it costs the page nothing, and it works for any version of the frontend.
_READY_WATCH_JS = """
(() => {
  new MutationObserver((_, obs) => {
    if (document.body && document.body.dataset.ready === '1') {
      window.__dbgReadyAt = performance.now(); obs.disconnect();
    }
  }).observe(document, {subtree: true, attributes: true, attributeFilter: ['data-ready']});
})();
"""

# In the plugin iframe, once ready: when the marker was set and its clock's origin, which is when TensorBoard's page
# started the iframe's navigation.
_SPLIT_JS = """
() => ({origin: performance.timeOrigin, ready: window.__dbgReadyAt ?? null})
"""


def _page_clock_split(page, frame) -> dict:
    """The same paint on the browser's own clocks, split at the iframe's start: {'paint_page_s' (navigation start to
    the ready marker), 'shell_s' (TensorBoard's page until it starts our iframe), 'iframe_s' (iframe start to
    ready)}. `paint_s` also holds Playwright's round trips and its polling for the marker; these do not."""
    try:
        main_origin = page.main_frame.evaluate("() => performance.timeOrigin")
        sub = frame.evaluate(_SPLIT_JS)
    except Exception:  # noqa: BLE001 — informative only
        return {}
    if sub["ready"] is None:
        return {}
    shell = (sub["origin"] - main_origin) / 1000
    return {"paint_page_s": shell + sub["ready"] / 1000, "shell_s": shell, "iframe_s": sub["ready"] / 1000}


def measure(url: str, which: str, timeout_s: float = 60.0) -> dict:
    """{'paint_s', 'ready_signal', 'fps', 'worst_frame_ms', 'reached_bottom'} (ours also 'paint_page_s',
    'shell_s', 'iframe_s') or {'error': ...}."""
    from playwright.sync_api import sync_playwright

    route, matcher, ready_sel, fallback_sel, scroll_sel = SYSTEMS[which]
    result: dict = {}
    with sync_playwright() as pw:
        browser = chromium.launch(pw)
        try:
            page = browser.new_page(viewport={"width": 1600, "height": 1000})
            if matcher is not None:
                page.add_init_script(_READY_WATCH_JS)
            started = time.monotonic()
            deadline = started + timeout_s
            page.goto(url + "/" + route, wait_until="commit")
            frame = _find_frame(page, matcher, deadline)
            signal = ready_sel
            try:
                frame.wait_for_selector(
                    ready_sel, state="attached", timeout=max(1, (deadline - time.monotonic()) * 1000)
                )
            except Exception:
                if not fallback_sel:
                    raise
                signal = fallback_sel + " (no ready marker)"
                frame.wait_for_selector(fallback_sel, timeout=max(1, (deadline - time.monotonic()) * 1000))
            result["paint_s"] = time.monotonic() - started
            result["ready_signal"] = signal
            if frame is not page.main_frame:
                result.update(_page_clock_split(page, frame))
            scroll = frame.evaluate(_SCROLL_JS, [scroll_sel, SCROLL_SECONDS * 1000])
            result.update(scroll)
        except Exception as e:  # noqa: BLE001 — the table reports it; a broken frontend must not stop the benchmark
            result["error"] = f"{type(e).__name__}: {str(e).splitlines()[0][:200]}"
        finally:
            browser.close()
    return result
