"""The web face's browser tests: Playwright driving Debian's Chromium (Playwright cannot download
its own browser here), given to it as its executable.

The browser lives for one test module, not the session as pytest-playwright's own fixtures do:
Playwright's sync API keeps an event loop running in the test thread while it is started, and
the other tests of the same worker process call asyncio.run, which refuses to start inside one.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Page, sync_playwright

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture(scope="module")
def chromium() -> Iterator[Browser]:
    """Debian's Chromium, headless, for one module's tests."""
    if CHROMIUM is None:
        pytest.skip("Chromium is not installed (apt-get install chromium): no browser to test the pages in")
    playwright = sync_playwright().start()
    try:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True)
        try:
            yield browser
        finally:
            browser.close()
    finally:
        playwright.stop()


@pytest.fixture
def page(chromium: Browser) -> Iterator[Page]:
    """A fresh page in a context of its own (no cookies from another test)."""
    context = chromium.new_context(viewport={"width": 1400, "height": 1000})
    try:
        yield context.new_page()
    finally:
        context.close()
