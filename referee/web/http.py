"""Serving the web application with uvicorn in the caller's asyncio loop (`--http HOST:PORT`).

The server runs as a task of the loop that runs the referee or the tournament, so a page reads
what the process holds without a second thread; the signals stay the process's own (uvicorn
would otherwise take SIGINT and SIGTERM for itself).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Generator

import uvicorn
from starlette.types import ASGIApp

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8080


def parse_http(text: str) -> tuple[str, int]:
    """HOST:PORT (or :PORT, or PORT) as (host, port); ValueError when it is not one."""
    host, _, port = text.rpartition(":")
    host = host.strip("[]") or DEFAULT_HOST
    if not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError(f"--http {text!r}: give HOST:PORT, e.g. 127.0.0.1:8080 (port 0: any free one)")
    return host, int(port)


class _Server(uvicorn.Server):
    """A uvicorn server that leaves the signals to its process."""

    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None, None, None]:
        yield


class HttpServer:
    """A running web server: its URL, and how to stop it."""

    def __init__(self, server: uvicorn.Server, task: asyncio.Task[None], host: str, port: int) -> None:
        self._server = server
        self._task = task
        self.host = host
        self.port = port

    @property
    def url(self) -> str:
        """The server's base URL, e.g. http://127.0.0.1:8080."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    async def stop(self) -> None:
        """Close the server (open connections are closed too)."""
        self._server.should_exit = True
        with contextlib.suppress(asyncio.CancelledError):
            await self._task


async def start_http(app: ASGIApp, host: str, port: int) -> HttpServer:
    """Start serving `app` on host:port in this loop; OSError when the address cannot be had."""
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", access_log=False, lifespan="off")
    server = _Server(config)
    task = asyncio.create_task(server.serve())
    while not server.started:
        if task.done():
            task.result()  # its error (an address in use: SystemExit from uvicorn)
            raise OSError(f"the web server on {host}:{port} did not start")
        await asyncio.sleep(0.02)
    sockets = [s for srv in server.servers for s in srv.sockets]
    bound = sockets[0].getsockname()[1] if sockets else port
    return HttpServer(server, task, host, int(bound))
