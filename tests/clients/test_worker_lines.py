"""The worker's seat lines: `TOKEN NAME SEED [SERVER]`, the fourth field naming the game's referee."""

from __future__ import annotations

import asyncio
import io
import json

from clients.random_bot import RandomBot
from clients.worker import serve_seats
from referee.server.serve import start_server
from tests.server.support import ORGANISER


def test_a_line_s_server_field_overrides_the_worker_s_server() -> None:
    async def scenario() -> str:
        running = await start_server("127.0.0.1:0", ORGANISER, insecure=True)
        try:
            _, tokens = running.service.create_match(
                rules_json=json.dumps({"match_mode": "fixed_rounds:1"}), seed="lines"
            )
            lines: asyncio.Queue[str | None] = asyncio.Queue()
            for seat, token in enumerate(tokens):
                lines.put_nowait(f"{token} seat{seat} seed{seat} {running.address}")
            lines.put_nowait(None)
            out = io.StringIO()
            # Nothing listens on the worker's own server: only the lines' field can get them played.
            await asyncio.wait_for(serve_seats(RandomBot, "127.0.0.1:9", True, lines, out), 120)
            return out.getvalue()
        finally:
            await running.stop()

    out = asyncio.run(scenario())
    assert out.count("done ") == 4, out
    assert "failed" not in out
