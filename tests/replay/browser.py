"""A headless Chromium driven over the Chrome DevTools Protocol: one page, its errors collected.

Used by the HTML viewer's tests and by bench/replay_bench.py. Chromium is Debian's package
(`.ci/run` installs it); the websocket is websocket-client's, the protocol messages are plain JSON.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path
from types import TracebackType
from typing import Any

import websocket

# Where Debian and others put the browser; TICHU_CHROMIUM names another one.
CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
# Windows virtual key codes of the keys the tests press (Input.dispatchKeyEvent wants them).
KEY_CODES = {
    "ArrowLeft": 37,
    "ArrowUp": 38,
    "ArrowRight": 39,
    "ArrowDown": 40,
    "PageUp": 33,
    "PageDown": 34,
    "End": 35,
    "Home": 36,
}


def find_chromium() -> str | None:
    """The path of a Chromium (or Chrome) binary, or None if there is none."""
    named = os.environ.get("TICHU_CHROMIUM")
    if named:
        return shutil.which(named)
    for name in CANDIDATES:
        found = shutil.which(name)
        if found:
            return found
    return None


class BrowserError(RuntimeError):
    """The browser did not start, or a protocol command failed."""


class Browser:
    """One headless Chromium process and one page of it, spoken to over its DevTools websocket."""

    def __init__(self, binary: str, *, timeout_s: float = 30.0) -> None:
        self.timeout_s = timeout_s
        self.profile = Path(tempfile.mkdtemp(prefix="tichu-chromium-"))
        self.process = subprocess.Popen(
            [
                binary,
                "--headless",
                "--no-sandbox",  # CI runs as root, where Chromium's sandbox refuses to start
                "--disable-gpu",
                "--no-first-run",
                "--no-default-browser-check",
                "--disable-extensions",
                "--disable-background-networking",
                "--remote-debugging-port=0",
                f"--user-data-dir={self.profile}",
                "about:blank",
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        self.events: list[dict[str, Any]] = []
        self.errors: list[str] = []
        self.requests: list[str] = []
        self._next_id = 0
        try:
            port = self._port()
            self.ws = websocket.create_connection(
                self._page_socket(port), timeout=timeout_s, suppress_origin=True
            )
            for domain in ("Runtime", "Log", "Page", "Network"):
                self.send(f"{domain}.enable")
        except BaseException:
            self._stop()
            raise

    def _port(self) -> int:
        """The debugging port Chromium chose; it writes it to DevToolsActivePort once listening."""
        marker = self.profile / "DevToolsActivePort"
        deadline = time.monotonic() + self.timeout_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise BrowserError(f"chromium exited with code {self.process.returncode}")
            lines = marker.read_text().splitlines() if marker.exists() else []
            if lines and lines[0].isdigit():
                return int(lines[0])
            time.sleep(0.05)
        raise BrowserError("chromium did not open its debugging port in time")

    def _page_socket(self, port: int) -> str:
        deadline = time.monotonic() + self.timeout_s
        while time.monotonic() < deadline:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=5) as answer:
                targets = json.load(answer)
            pages = [t for t in targets if t.get("type") == "page"]
            if pages:
                return str(pages[0]["webSocketDebuggerUrl"])
            time.sleep(0.05)
        raise BrowserError("chromium opened no page")

    def _note(self, message: dict[str, Any]) -> None:
        """Keep an event; errors and requests are also kept apart for the tests to check."""
        self.events.append(message)
        method, params = message.get("method"), message.get("params", {})
        if method == "Runtime.exceptionThrown":
            details = params.get("exceptionDetails", {})
            text = details.get("exception", {}).get("description") or details.get("text", "")
            self.errors.append(f"exception: {text}")
        elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
            args = " ".join(str(a.get("value", a.get("description", ""))) for a in params.get("args", []))
            self.errors.append(f"console.{params.get('type')}: {args}")
        elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
            self.errors.append(f"log: {params['entry'].get('text', '')}")
        elif method == "Network.requestWillBeSent":
            self.requests.append(str(params.get("request", {}).get("url", "")))

    def send(self, method: str, **params: Any) -> dict[str, Any]:
        """Send one command and return its result; events that arrive meanwhile are noted."""
        self._next_id += 1
        ident = self._next_id
        self.ws.send(json.dumps({"id": ident, "method": method, "params": params}))
        while True:
            message = json.loads(self.ws.recv())
            if message.get("id") == ident:
                if "error" in message:
                    raise BrowserError(f"{method}: {message['error']}")
                result: dict[str, Any] = message.get("result", {})
                return result
            self._note(message)

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page (JSON-like values only)."""
        result = self.send("Runtime.evaluate", expression=expression, returnByValue=True)
        if "exceptionDetails" in result:
            raise BrowserError(f"{expression}: {result['exceptionDetails']}")
        return result.get("result", {}).get("value")

    def wait_for(self, expression: str, timeout_s: float | None = None) -> Any:
        """Poll an expression until it is truthy; its value."""
        deadline = time.monotonic() + (self.timeout_s if timeout_s is None else timeout_s)
        failure = ""
        while True:
            try:
                value = self.evaluate(expression)
            except BrowserError as error:
                # Mid-navigation the old document's context may be gone already: try again.
                value, failure = None, f" (last error: {error})"
            if value:
                return value
            if time.monotonic() > deadline:
                raise BrowserError(f"timed out waiting for {expression}{failure}")
            time.sleep(0.01)

    def navigate(self, url: str) -> None:
        """Load a URL (a change of the hash alone does not reload the page)."""
        result = self.send("Page.navigate", url=url)
        if result.get("errorText"):
            raise BrowserError(f"cannot open {url}: {result['errorText']}")

    def press(self, key: str, times: int = 1) -> None:
        """Press and release a key as a user would: a key down and a key up event each time."""
        code = KEY_CODES.get(key)
        text = ""
        if code is None:  # a printable key: a digit or a letter
            code, text = ord(key.upper()), key
        for _ in range(times):
            down = {"key": key, "windowsVirtualKeyCode": code, "nativeVirtualKeyCode": code}
            if text:
                self.send("Input.dispatchKeyEvent", type="keyDown", text=text, **down)
            else:
                self.send("Input.dispatchKeyEvent", type="rawKeyDown", **down)
            self.send("Input.dispatchKeyEvent", type="keyUp", **down)

    def _stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        shutil.rmtree(self.profile, ignore_errors=True)

    def close(self) -> None:
        """Close the connection, stop the browser and remove its profile folder."""
        try:
            self.ws.close()
        finally:
            self._stop()

    def __enter__(self) -> Browser:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()
