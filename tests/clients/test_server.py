"""clients.connect against the real referee (referee.server): whole matches, four SDK bots."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from clients.bot import Bot, Rejection
from clients.connect import MatchResult, connect
from clients.heuristic_bot import HeuristicBot
from clients.random_bot import RandomBot
from clients.showcase_bot import ShowcaseBot
from referee.rules import Action, Observation
from tests.clients.fakes import BrokenBot

server = pytest.importorskip("referee.server")
server_support = pytest.importorskip("tests.server.support")

# Clocks long enough never to fire in a test that is not about time: the server tests' own.
CALM = server_support.CALM
RULES = json.dumps({"match_mode": "fixed_rounds:2"})


def listening(bot: Bot) -> list[Rejection]:
    """The rejections `bot` will be told about."""
    heard: list[Rejection] = []
    bot.on_rejection = heard.append  # type: ignore[method-assign, assignment]
    return heard


async def play_all(
    bots: Sequence[Bot], seed: str, during: Any = None, tls: tuple[Path, Path] | None = None
) -> tuple[Any, list[MatchResult], Any]:
    """Start a referee, create a match, connect every bot; the table, results and server.

    With `tls` (a certificate and its key) the referee serves TLS and the bots verify it.
    """
    security: dict[str, Any] = {"insecure": True}
    if tls is None:
        running = await server.start_server("127.0.0.1:0", "organiser", insecure=True, defaults=CALM)
        address = running.address
    else:
        cert, key = tls
        running = await server.start_server(
            "127.0.0.1:0", "organiser", tls_cert=cert, tls_key=key, defaults=CALM
        )
        address, security = f"localhost:{running.port}", {"ca_file": str(cert)}
    try:
        table, tokens = running.service.create_match(
            rules_json=RULES, seed=seed, bot_names=[b.name for b in bots], match_id="sdk"
        )
        games = [
            connect(bot, address, token, backoff_s=0.05, **security)
            for bot, token in zip(bots, tokens, strict=True)
        ]
        if during is not None:
            asyncio.get_running_loop().call_soon(during, table)
        results = await asyncio.wait_for(asyncio.gather(*games), 60)
        return table, list(results), running
    finally:
        await running.stop(0)


def test_four_sdk_bots_play_a_match_on_the_referee() -> None:
    bots: list[Bot] = [HeuristicBot(), RandomBot(), ShowcaseBot(), BrokenBot()]
    rejections = [listening(bot) for bot in bots]
    table, results, _ = asyncio.run(play_all(bots, "11"))
    assert table.status == "finished"
    assert len({(r.match_id, r.winner, r.scores) for r in results}) == 1
    assert results[0].scores == tuple(table.state.scores)
    assert len(table.state.history) == 2
    # The SDK never sends anything the referee refuses, even for a bot that answers garbage.
    assert rejections == [[], [], [], []]


class DroppingBot(RandomBot):
    """RandomBot whose stream the test cuts once, on its tenth play."""

    def __init__(self) -> None:
        self.plays = 0
        self.cut: Any = None

    def play(self, obs: Observation) -> Action:
        """Play; on the tenth play, have the referee drop this seat's stream first."""
        self.plays += 1
        if self.plays == 10 and self.cut is not None:
            self.cut()
        return super().play(obs)


def test_a_bot_reconnects_to_the_referee_and_finishes_the_match() -> None:
    dropping = DroppingBot()
    bots: list[Bot] = [HeuristicBot(), dropping, RandomBot(), RandomBot()]

    def arm(table: Any) -> None:
        loop = asyncio.get_running_loop()

        def drop() -> None:
            # Test-only reach into the table: close seat 1's stream as a network failure would.
            conn = table._seats[1].conn
            if conn is not None:
                conn.close("UNAVAILABLE", "the test cut the stream")

        dropping.cut = lambda: loop.call_soon_threadsafe(drop)

    table, results, _ = asyncio.run(play_all(bots, "12", during=arm))
    assert dropping.plays >= 10
    assert table.status == "finished"
    assert results[1].scores == tuple(table.state.scores)
    assert table.statistics()["seats"][1]["reconnections"] == 1


@pytest.mark.skipif(shutil.which("openssl") is None, reason="needs openssl to make a test certificate")
def test_bots_verify_the_referee_over_tls_with_a_ca_file(tmp_path: Path) -> None:
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=localhost"]
        + ["-addext", "subjectAltName=DNS:localhost", "-keyout", str(key), "-out", str(cert)],
        check=True,
        capture_output=True,
    )
    bots: list[Bot] = [RandomBot() for _ in range(4)]
    table, results, _ = asyncio.run(play_all(bots, "13", tls=(cert, key)))
    assert table.status == "finished"
    assert results[0].scores == tuple(table.state.scores)


def test_six_sdk_bots_play_the_six_player_game_over_the_wire() -> None:
    """§16 end to end: six seats, partner exchanges, the Dog's named partner, all over gRPC."""

    async def main() -> tuple[Any, list[MatchResult]]:
        bots: list[Bot] = [
            HeuristicBot(),
            RandomBot(),
            ShowcaseBot(),
            RandomBot(),
            HeuristicBot(),
            ShowcaseBot(),
        ]
        running = await server.start_server(
            "127.0.0.1:0", "organiser", insecure=True, defaults=CALM, keep_records=True
        )
        try:
            rules = json.dumps({"players": 6, "match_mode": "fixed_rounds:2"})
            table, tokens = running.service.create_match(
                rules_json=rules, seed="six", bot_names=[b.name for b in bots], match_id="six"
            )
            games = [
                connect(bot, running.address, token, insecure=True, backoff_s=0.05)
                for bot, token in zip(bots, tokens, strict=True)
            ]
            results = await asyncio.wait_for(asyncio.gather(*games), 120)
            return table, list(results)
        finally:
            await running.stop(0)

    table, results = asyncio.run(main())
    assert table.status == "finished"
    assert len(results) == 6
    assert len(table.state.history) == 2
    stats = table.statistics()["seats"]
    assert all(seat["decisions"] > 0 and seat["timeouts"] == 0 for seat in stats)
    exchanges = [r for r in table.records if r.get("kind") == "decision" and "exchange" in json.dumps(r)]
    assert exchanges, "no exchange decision was recorded"
