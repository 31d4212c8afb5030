"""A tournament's pages served while it runs: uvicorn in the runner's own asyncio loop."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TextIO

from referee.tournament.config import TournamentConfig
from referee.tournament.runner import EXIT_INTERRUPTED, TournamentError
from referee.web.app import create_app
from referee.web.archive import Archive, archive_routes, home_route
from referee.web.http import start_http
from referee.web.store_reader import info_from_config

LINGER_S = 4.0


async def run_with_pages(
    run: Coroutine[Any, Any, int], config: TournamentConfig, http: tuple[str, int], out: TextIO
) -> int:
    """Serve the tournament's pages on http (host, port) while `run` (the tournament) plays; its result."""
    archive = Archive()
    source = archive.add_tournament(info_from_config(config))
    app = create_app([*archive_routes(archive), home_route(archive)])
    try:
        server = await start_http(app, *http)
    except (OSError, SystemExit) as error:
        run.close()
        raise TournamentError(f"cannot serve the pages on {http[0]}:{http[1]}: {error}") from None
    print(f"Pages: {server.url}/tournaments/{source.tid}", file=out, flush=True)
    try:
        code = await run
        if code != EXIT_INTERRUPTED:
            # Open pages poll every 2 s: this lets them show the last games before the server goes.
            await asyncio.sleep(LINGER_S)
        return code
    finally:
        await server.stop()
