"""End-to-end fixtures: Debian's Chromium driven by Playwright (no browser download), screenshots as artifacts."""

from __future__ import annotations

import shutil

import pytest
from e2e_helpers import open_debugger, screenshot  # noqa: F401  (re-exported for the e2e tests)

CHROMIUM_FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]


def chromium_path() -> str:
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path
    # Never skip: a missing browser is a broken setup, and scripts/setup.sh installs it.
    raise RuntimeError("Debian's chromium is not installed (apt-get install chromium); scripts/setup.sh does this")


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=chromium_path(), headless=True, args=CHROMIUM_FLAGS)
        yield b
        b.close()


class ConsoleWatch:
    """Collects console errors and uncaught page errors, so a test can assert there were none."""

    def __init__(self, page):
        self.errors: list[str] = []
        page.on("console", lambda m: self.errors.append(f"console.{m.type}: {m.text}") if m.type == "error" else None)
        page.on("pageerror", lambda e: self.errors.append(f"pageerror: {e}"))
        # The plugin runs in an iframe; frames' console messages arrive on the page too.


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    pg = context.new_page()
    pg.console_watch = ConsoleWatch(pg)
    yield pg
    context.close()
