"""A headless Chromium driven by Playwright: one page, its errors and requests collected.

Used by the HTML viewer's tests and by bench/replay_bench.py. Chromium is Debian's package
(`.ci/run` installs it), given to Playwright as its executable (Playwright cannot download its
own browser here). Playwright's sync API holds the calling thread's event loop while the browser
is open: play matches (asyncio) before opening it, or in another thread.
"""

from __future__ import annotations

import os
import shutil
from types import TracebackType
from typing import Any

# Where Debian and others put the browser; TICHU_CHROMIUM names another one.
CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def find_chromium() -> str | None:
    """The Chromium binary to use ($TICHU_CHROMIUM, else the first candidate on PATH), or None."""
    named = os.environ.get("TICHU_CHROMIUM")
    if named:
        return shutil.which(named)
    return next((found for name in CANDIDATES if (found := shutil.which(name))), None)


class BrowserError(RuntimeError):
    """The browser could not do what it was asked."""


class Browser:
    """One headless Chromium page; `errors` collects script exceptions and console errors,
    `requests` every URL the page asked for."""

    def __init__(self, binary: str, *, timeout_s: float = 30.0) -> None:
        from playwright.sync_api import sync_playwright

        self.timeout_s = timeout_s
        self.errors: list[str] = []
        self.requests: list[str] = []
        self._playwright = sync_playwright().start()
        try:
            self._browser = self._playwright.chromium.launch(executable_path=binary, args=["--no-sandbox"])
            self.page = self._browser.new_page(viewport={"width": 1400, "height": 1000})
        except BaseException:
            self._playwright.stop()
            raise
        self.page.set_default_timeout(timeout_s * 1000)
        self.page.on("pageerror", lambda error: self.errors.append(f"exception: {error}"))
        self.page.on(
            "console",
            lambda m: self.errors.append(f"console.{m.type}: {m.text}") if m.type == "error" else None,
        )
        self.page.on("request", lambda request: self.requests.append(request.url))

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page (JSON-like values only)."""
        try:
            return self.page.evaluate(f"() => ({expression})")
        except Exception as error:
            raise BrowserError(f"{expression}: {error}") from None

    def wait_for(self, expression: str, timeout_s: float | None = None) -> Any:
        """Wait until an expression is truthy; its value."""
        timeout_ms = (self.timeout_s if timeout_s is None else timeout_s) * 1000
        try:
            self.page.wait_for_function(f"() => ({expression})", timeout=timeout_ms)
        except Exception as error:
            raise BrowserError(f"timed out waiting for {expression}: {error}") from None
        return self.evaluate(expression)

    def navigate(self, url: str) -> None:
        """Load a URL."""
        try:
            self.page.goto(url)
        except Exception as error:
            raise BrowserError(f"cannot open {url}: {error}") from None

    def press(self, key: str, times: int = 1) -> None:
        """Press and release a key as a user would, `times` times."""
        for _ in range(times):
            self.page.keyboard.press(key)

    def close(self) -> None:
        """Close the page and stop the browser."""
        try:
            self._browser.close()
        finally:
            self._playwright.stop()

    def __enter__(self) -> Browser:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()
