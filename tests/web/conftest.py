"""The web face's browser tests: Playwright driving Debian's Chromium (Playwright cannot download
its own browser here), given to it as its executable.

The browser lives for one test module, not the session as pytest-playwright's own fixtures do:
Playwright's sync API keeps an event loop running in the test thread while it is started, and
the other tests of the same worker process call asyncio.run, which refuses to start inside one.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, sync_playwright

from tests.web.support import SIZES

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


@pytest.fixture
def open_page(chromium: Any) -> Iterator[Callable[..., Any]]:
    """Open a URL in a fresh page (of a size) and wait until its script says it is ready; the
    test fails on any script error, console error or request refused by the page's CSP."""
    pages: list[Any] = []
    errors: list[str] = []

    def opener(url: str, size: tuple[int, int] = SIZES["laptop"]) -> Any:
        page = chromium.new_page(viewport={"width": size[0], "height": size[1]})
        page.on("pageerror", lambda error: errors.append(f"page error: {error}"))
        page.on("console", lambda m: errors.append(f"console: {m.text}") if m.type == "error" else None)
        page.goto(url)
        try:
            # A page with a script of the archive's is ready when the script says so.
            if page.locator("script[src*='/static/archive/']").count():
                page.wait_for_selector("html[data-ready=true]", state="attached", timeout=30_000)
        except Exception as error:
            raise AssertionError(f"{url} at {size}: not ready ({errors})") from error
        pages.append(page)
        return page

    yield opener
    for page in pages:
        page.close()
    assert errors == []
