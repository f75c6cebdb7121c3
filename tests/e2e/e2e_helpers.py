"""Helpers for end-to-end tests: screenshots, the program lines the Source Code panel must highlight (opening the
dashboard: e2e_page.py)."""

from __future__ import annotations

import os
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ARTIFACTS = os.path.join(ROOT, "test-artifacts")


def screenshot(page, name: str) -> str:
    """Saves a screenshot of the whole page under test-artifacts/NAME.png and returns its path."""
    os.makedirs(ARTIFACTS, exist_ok=True)
    path = os.path.join(ARTIFACTS, name + ".png")
    page.screenshot(path=path)
    return path


def program_line(path: str, needle: str) -> tuple[int, str]:
    """(1-based number, text) of the one line of the program at `path` (relative to the repository) holding
    `needle`: the line a test expects the Source Code panel to highlight, found in the program itself."""
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        hits = [(i, line.rstrip("\n")) for i, line in enumerate(f, 1) if needle in line]
    assert len(hits) == 1, f"{path}: {needle!r} must be on exactly one line, found {hits}"
    return hits[0]


# In the plugin's frame: the highlighted line of the Source Code panel (CodeMirror) and the number its line-number
# gutter shows beside it (the gutter element at the same height).
_FOCUSED_LINE_JS = """
() => {
  const lines = document.querySelectorAll('.cm-focus-line');
  if (lines.length !== 1) return {count: lines.length};
  const top = lines[0].getBoundingClientRect().top;
  const gutter = [...document.querySelectorAll('.cm-lineNumbers .cm-gutterElement')]
    .find(g => g.textContent.trim() && Math.abs(g.getBoundingClientRect().top - top) < 2);
  return {count: 1, number: gutter ? Number(gutter.textContent.trim()) : null, text: lines[0].textContent};
}
"""


def focused_source_line(frame) -> tuple[int | None, str]:
    """(line number, text) of the one line the Source Code panel highlights."""
    got = frame.evaluate(_FOCUSED_LINE_JS)
    assert got["count"] == 1, f"{got['count']} highlighted source lines, want 1"
    return got["number"], got["text"]


def wait_focused_source_line(frame, path: str, needle: str, timeout_s: float = 20) -> int:
    """Waits until the Source Code panel highlights exactly the program's line holding `needle` (its number in the
    gutter and its text); returns the number."""
    number, text = program_line(path, needle)
    deadline = time.monotonic() + timeout_s
    got: tuple[int | None, str] | None = None
    while time.monotonic() < deadline:
        try:
            got = focused_source_line(frame)
        except AssertionError:
            got = None
        if got == (number, text):
            return number
        time.sleep(0.1)
    raise AssertionError(f"highlighted source line {got!r}, want line {number} of {path}: {text!r}")
