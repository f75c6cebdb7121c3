"""End-to-end fixtures: Debian's Chromium driven by Playwright (no browser download), screenshots as artifacts."""

from __future__ import annotations

import os

import pytest
from e2e_helpers import screenshot  # noqa: F401  (re-exported for the e2e tests)

from harness import chromium


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = chromium.launch(pw)
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


@pytest.fixture
def page_at(browser):
    """`page_at(width, height)`: a page like `page`'s at another viewport size (closed after the test)."""
    contexts = []

    def make(width: int, height: int):
        context = browser.new_context(viewport={"width": width, "height": height})
        contexts.append(context)
        pg = context.new_page()
        pg.console_watch = ConsoleWatch(pg)
        return pg

    yield make
    for context in contexts:
        context.close()


_HERE = os.path.dirname(os.path.abspath(__file__))


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects by marker
def pytest_collection_modifyitems(config, items):
    """Every test under tests/e2e/ is an end-to-end test (`-m "not e2e"` leaves them out)."""
    for item in items:
        if str(item.path).startswith(_HERE + os.sep):
            item.add_marker(pytest.mark.e2e)
