"""Debian's headless Chromium driven by Playwright: the one browser setup of the end-to-end tests and the benchmarks.

Playwright's own browser download is never used: the system's `chromium` (scripts/setup.sh installs it) is passed
as `executable_path`.
"""

from __future__ import annotations

import shutil
from typing import Any

FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]


def find() -> str | None:
    """The path of Debian's chromium, or None when it is not installed."""
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path
    return None


def executable() -> str:
    path = find()
    if path is None:
        # Never skip: a missing browser is a broken setup, and scripts/setup.sh installs it.
        raise RuntimeError("Debian's chromium is not installed (apt-get install chromium); scripts/setup.sh does this")
    return path


def launch(playwright: Any, headless: bool = True) -> Any:
    """A Browser from `sync_playwright()`'s object: Debian's chromium with FLAGS."""
    return playwright.chromium.launch(executable_path=executable(), headless=headless, args=FLAGS)
