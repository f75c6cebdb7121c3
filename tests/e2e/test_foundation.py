"""Foundation end to end: a real `tensorboard` finds the plugin, lists it active, and the tab renders in Chromium."""

from __future__ import annotations

import gzip
import os
import re
import urllib.error
import urllib.request

from e2e_helpers import ARTIFACTS, screenshot
from e2e_page import open_dashboard

from harness.tensorboard_process import TensorBoardProcess


def test_plugins_listing_reports_dbg_active(demo_logdir):
    with TensorBoardProcess(demo_logdir) as tb:
        listing = tb.get_json("/data/plugins_listing")
        assert "dbg" in listing, sorted(listing)
        entry = listing["dbg"]
        assert entry["enabled"] is True, entry
        assert entry["tab_name"] == "Debugger (dbg)"
        # TensorBoard's Debugger V2 stays registered, inactive, under another name (issue #40 item 17).
        v2 = listing["debugger-v2"]
        assert v2["enabled"] is False and v2["tab_name"] == "Debugger V2" != entry["tab_name"], v2
        assert entry["loading_mechanism"]["type"] == "IFRAME"
        # The ES module is served from inside the package, and nothing outside its folder is.
        status, headers, body, _ = tb.get("/data/plugin/dbg/index.js")
        assert status == 200 and b"render" in body
        assert "javascript" in headers.get("Content-Type", "")
        status, _, _, _ = tb.get("/data/plugin/dbg/static/..%2F..%2Fplugin.py")
        assert status == 404
        _check_bundle_caching(tb, headers, body)


def _check_bundle_caching(tb, headers, body):
    """The lazily loaded editor chunk that index.js names is served (cached for good: its name holds its content
    hash); the bundle is gzipped when asked and revalidates with its ETag (static_files.py)."""
    [chunk] = set(re.findall(rb"static/(source-editor\.[0-9a-f]{16}\.js)", body))
    status, chunk_headers, chunk_body, _ = tb.get("/data/plugin/dbg/static/" + chunk.decode())
    assert status == 200 and len(chunk_body) > 100_000
    assert "immutable" in chunk_headers["Cache-Control"] and headers["Cache-Control"] == "no-cache"
    req = urllib.request.Request(tb.url + "/data/plugin/dbg/index.js", headers={"Accept-Encoding": "gzip"})
    with urllib.request.urlopen(req, timeout=30) as resp:
        assert resp.headers["Content-Encoding"] == "gzip" and gzip.decompress(resp.read()) == body
    req = urllib.request.Request(tb.url + "/data/plugin/dbg/index.js", headers={"If-None-Match": headers["ETag"]})
    try:
        urllib.request.urlopen(req, timeout=30)
        raise AssertionError("expected 304 Not Modified")
    except urllib.error.HTTPError as e:
        assert e.code == 304


def test_debugger_tab_renders_in_chromium(demo_logdir, page):
    with TensorBoardProcess(demo_logdir) as tb:
        frame = open_dashboard(page, tb, wait_ready=False)
        assert frame.locator("#dbg-root").count() == 1
        # The tab is shown directly in TensorBoard's tab bar, not under "inactive"; Debugger V2 is not.
        assert page.get_by_text("Debugger (dbg)", exact=True).first.is_visible()
        assert not page.get_by_text("Debugger V2", exact=True).first.is_visible()
        screenshot(page, "foundation-debugger-tab")
        assert page.console_watch.errors == [], page.console_watch.errors
        assert os.path.getsize(os.path.join(ARTIFACTS, "foundation-debugger-tab.png")) > 0
