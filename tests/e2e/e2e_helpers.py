"""Helpers for end-to-end tests: open TensorBoard's Debugger tab, find the plugin's iframe, save screenshots."""

from __future__ import annotations

import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ARTIFACTS = os.path.join(ROOT, "test-artifacts")


def screenshot(page, name: str) -> str:
    """Saves a screenshot of the whole page under test-artifacts/NAME.png and returns its path."""
    os.makedirs(ARTIFACTS, exist_ok=True)
    path = os.path.join(ARTIFACTS, name + ".png")
    page.screenshot(path=path)
    return path


def open_debugger(page, base_url: str, timeout_ms: float = 60_000, hash_suffix: str = ""):
    """Loads TensorBoard at #dbg and returns the Frame of the plugin's iframe once its root element exists."""
    page.goto(f"{base_url}/#dbg{hash_suffix}", wait_until="domcontentloaded")
    page.wait_for_selector("iframe", timeout=timeout_ms, state="attached")
    plugin_frame = None
    for _ in range(int(timeout_ms / 100)):
        for frame in page.frames:
            if "plugin_entry.html" in frame.url and "name=dbg" in frame.url:
                plugin_frame = frame
                break
        if plugin_frame:
            break
        page.wait_for_timeout(100)
    assert plugin_frame is not None, [f.url for f in page.frames]
    plugin_frame.wait_for_selector("#dbg-root", timeout=timeout_ms, state="attached")
    return plugin_frame
