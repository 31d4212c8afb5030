"""The ASGI application: security headers, static files with cache headers, Jinja2 templates.

`create_app` mounts the routes it is given (the archive's, the live pages') under one
Starlette application whose every response carries a strict Content-Security-Policy: scripts,
styles and images come from this server only, no inline script runs, nothing may frame a page.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import jinja2
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.routing import BaseRoute, Mount
from starlette.staticfiles import StaticFiles
from starlette.templating import Jinja2Templates
from starlette.types import ASGIApp, Message, Receive, Scope, Send

WEB = Path(__file__).resolve().parent
# Every template escapes what it prints: names come from bots, entrants and configs.
TEMPLATES = Jinja2Templates(
    env=jinja2.Environment(loader=jinja2.FileSystemLoader(str(WEB / "templates")), autoescape=True)
)
STATIC = WEB / "static"

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
SECURITY_HEADERS = (
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (b"cross-origin-opener-policy", b"same-origin"),
)
STATIC_MAX_AGE_S = 3600
MAX_REQUEST_BYTES = 64 * 1024


class SecurityHeaders:
    """Adds the security headers to every response, cache headers to static files, and refuses
    request bodies over MAX_REQUEST_BYTES (413)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        length = dict(scope.get("headers", [])).get(b"content-length", b"0")
        if not length.isdigit() or int(length) > MAX_REQUEST_BYTES:
            await _status(send, 413, b"request too large")
            return
        static = str(scope.get("path", "")).startswith("/static/")

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = [h for h in message.get("headers", []) if h[0] != b"cache-control" or not static]
                headers += list(SECURITY_HEADERS)
                if static:
                    headers.append((b"cache-control", f"public, max-age={STATIC_MAX_AGE_S}".encode()))
                message["headers"] = headers
            await send(message)

        await self.app(scope, receive, with_headers)


async def _status(send: Send, status: int, body: bytes) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"text/plain"), *SECURITY_HEADERS],
        }
    )
    await send({"type": "http.response.body", "body": body})


def create_app(routes: Sequence[BaseRoute] = (), *, debug: bool = False) -> Starlette:
    """The application: `routes`, and the static files under /static."""
    return Starlette(
        debug=debug,
        routes=[*routes, Mount("/static", app=StaticFiles(directory=str(STATIC)), name="static")],
        middleware=[Middleware(SecurityHeaders)],
    )
