"""clients.connect against the real referee (referee.server): whole matches, four SDK bots."""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import re
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from clients.bot import Bot, decision_kind
from clients.connect import MatchResult, add_bot_arguments, connect, run_bot
from clients.heuristic_bot import HeuristicBot
from clients.local import play_match
from clients.random_bot import RandomBot
from clients.showcase_bot import ShowcaseBot
from referee.match.messages import Rejection
from referee.match.records import CallRecord, DecisionRecord, EventRecord, RejectionRecord, WindowRecord
from referee.rules import Action, DecisionKind, Exchange, Observation, Play, RulesConfig
from referee.rules.events import Called
from tests.clients.fakes import BrokenBot
from tests.server.support import ORGANISER

server = pytest.importorskip("referee.server.serve")
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
    bots: Sequence[Bot],
    seed: str,
    during: Any = None,
    tls: tuple[Path, Path] | None = None,
    rules: str = RULES,
) -> tuple[Any, list[MatchResult], Any]:
    """Start a referee, create a match, connect every bot; the table, results and server.

    With `tls` (a certificate and its key) the referee serves TLS and the bots verify it.
    """
    security: dict[str, Any] = {"insecure": True}
    if tls is None:
        running = await server.start_server(
            "127.0.0.1:0", ORGANISER, insecure=True, defaults=CALM, keep_records=True
        )
        address = running.address
    else:
        cert, key = tls
        running = await server.start_server(
            "127.0.0.1:0", ORGANISER, tls_cert=cert, tls_key=key, defaults=CALM
        )
        address, security = f"localhost:{running.port}", {"ca_file": str(cert)}
    try:
        table, tokens = running.service.create_match(
            rules_json=rules, seed=seed, bot_names=[b.name for b in bots], match_id="sdk"
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
            # Close seat 1's stream as a network failure would.
            table.drop(1, "the test cut the stream")

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
            "127.0.0.1:0", ORGANISER, insecure=True, defaults=CALM, keep_records=True
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
    exchanges = [r for r in table.records if isinstance(r, DecisionRecord) and isinstance(r.action, Exchange)]
    assert exchanges, "no exchange decision was recorded"


class RecordingBot(HeuristicBot):
    """HeuristicBot that keeps every observation it is asked to decide on."""

    def __init__(self) -> None:
        self.seen: list[Observation] = []

    def play(self, obs: Observation) -> Action:
        """Record, then play."""
        self.seen.append(obs)
        return super().play(obs)

    def grand_tichu(self, obs: Observation) -> bool:
        """Record, then answer."""
        self.seen.append(obs)
        return super().grand_tichu(obs)

    def tichu(self, obs: Observation) -> bool:
        """Record, then answer."""
        self.seen.append(obs)
        return super().tichu(obs)

    def exchange(self, obs: Observation) -> Exchange:
        """Record, then give."""
        self.seen.append(obs)
        return super().exchange(obs)

    def bomb(self, obs: Observation) -> Play | None:
        """Record (in a window: play() asks bomb() too), then decide."""
        if obs.window_open:
            self.seen.append(obs)
        return super().bomb(obs)

    def gift_dragon(self, obs: Observation) -> int:
        """Record, then give."""
        self.seen.append(obs)
        return super().gift_dragon(obs)


# What only the referee knows, which a network bot learns from the request at hand (README).
CONTROL = {"turn", "window_order", "to_act", "legal_actions", "legal_decisions"}


def _lineup() -> list[Bot]:
    return [RecordingBot(), RandomBot(), HeuristicBot(), ShowcaseBot()]


def test_a_match_over_the_wire_is_the_match_played_in_process() -> None:
    # The same seed and the same bots, seeded alike, in clients.local and on the referee: the
    # same game, and at every decision the same observation, folded from the referee's snapshot
    # and events on one side and the engine's own observe() on the other.
    local_bots = _lineup()
    local = play_match(local_bots, RulesConfig(match_mode="fixed_rounds:2"), seed=3)
    wire_bots = _lineup()
    for seat, bot in enumerate(wire_bots):
        bot.rng.seed(f"tichu-bot/3/{seat}")  # as clients.local seeds them
    table, results, _ = asyncio.run(play_all(wire_bots, "3"))
    assert results[0].scores == local.scores and len(table.state.history) == local.rounds == 2
    seen_local = local_bots[0].seen  # type: ignore[attr-defined]
    seen_wire = wire_bots[0].seen  # type: ignore[attr-defined]
    assert len(seen_wire) == len(seen_local) > 30
    for wire, here in zip(seen_wire, seen_local, strict=True):
        for field in dataclasses.fields(Observation):
            if field.name not in CONTROL:
                assert getattr(wire, field.name) == getattr(here, field.name), field.name
        if not isinstance(wire.legal_decisions[0], Exchange):
            assert [str(a) for a in wire.legal_decisions] == [str(a) for a in here.legal_decisions]
            assert [str(a) for a in wire.legal_actions] == [str(a) for a in here.legal_actions]


class CallerBot(HeuristicBot):
    """Calls Tichu out of turn at the first chance of every round."""

    def call_tichu_now(self, obs: Observation) -> bool:
        """Always."""
        return True


def test_spontaneous_calls_reach_the_referee() -> None:
    # No Grand Tichu and no pre-exchange step: the first chance to call comes after the exchange.
    rules = json.dumps(
        {
            "match_mode": "fixed_rounds:2",
            "grand_tichu_enabled": False,
            "tichu_call_exchange_mode": "after_exchange_only",
        }
    )
    bots: list[Bot] = [CallerBot(), RandomBot(), RandomBot(), RandomBot()]
    table, _, _ = asyncio.run(play_all(bots, "8", rules=rules))
    # Each round's call goes out of turn, or with the first play (R-CALL-7); the referee takes it.
    records = table.records
    called = [r.event for r in records if isinstance(r, EventRecord) and isinstance(r.event, Called)]
    assert [(e.seat, e.call) for e in called] == [(0, "tichu"), (0, "tichu")]
    flagged = [
        r for r in records if isinstance(r, DecisionRecord) and isinstance(r.action, Play) and r.action.tichu
    ]
    assert len(flagged) + sum(isinstance(r, CallRecord) for r in records) == 2
    assert not any(isinstance(r, RejectionRecord) for r in records)


class CallerOnItsTurn(HeuristicBot):
    """Calls Tichu out of turn when asked to play, at the first chance of every round."""

    def call_tichu_now(self, obs: Observation) -> bool:
        """When a play is owed."""
        return decision_kind(obs) is DecisionKind.PLAY


def moves_by_seat(records: Sequence[object]) -> dict[int, list[str]]:
    """Each seat's moves in its own order, in the replay's words, without times: its decisions,
    its calls out of turn and its window answers."""
    moves: dict[int, list[str]] = {}
    for record in records:
        if isinstance(record, DecisionRecord):
            moves.setdefault(record.seat, []).append(f"{record.decision}: {record.action}")
        elif isinstance(record, CallRecord):
            moves.setdefault(record.seat, []).append(f"call: {record.action}")
        elif isinstance(record, WindowRecord):
            for seat, answer in record.answers:
                moves.setdefault(seat, []).append(f"window: {answer}")
    return moves


def test_the_same_bots_leave_the_same_moves_in_process_and_over_the_wire() -> None:
    # One seat driver behind both (clients.driver): a call out of turn rides on the play it comes
    # with (R-CALL-7) in one process as over gRPC, where it used to be a message of its own.
    def lineup() -> list[Bot]:
        return [CallerOnItsTurn(), RandomBot(), HeuristicBot(), ShowcaseBot()]

    rules: dict[str, Any] = {"match_mode": "fixed_rounds:2", "grand_tichu_enabled": False}
    local_records: list[object] = []
    play_match(lineup(), RulesConfig(**rules), seed=5, on_record=local_records.append)
    wire_bots = lineup()
    for seat, bot in enumerate(wire_bots):
        bot.rng.seed(f"tichu-bot/5/{seat}")  # as clients.local seeds them
    table, _, _ = asyncio.run(play_all(wire_bots, "5", rules=json.dumps(rules)))
    local, wire = moves_by_seat(local_records), moves_by_seat(table.records)
    assert local == wire
    # The call rode on a play: one move, no call of its own.
    assert any(move.startswith("play: ") and "tichu" in move for move in local[0]), local[0]
    assert not any(move.startswith("call: ") for move in local[0]), local[0]


def test_tichu_bot_plays_a_seat_from_the_command_line(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # run_bot configures logging for its process; here that would bind it to capsys's stream.
    monkeypatch.setattr("referee.log.configure", lambda **_: None)
    parser = argparse.ArgumentParser()
    add_bot_arguments(parser)

    async def main() -> int:
        running = await server.start_server("127.0.0.1:0", ORGANISER, insecure=True, defaults=CALM)
        try:
            _, tokens = running.service.create_match(rules_json=RULES, seed="2", match_id="cli")
            command = ["clients.random_bot:RandomBot", "--server", running.address, "--token", tokens[0]]
            others = [connect(RandomBot(), running.address, token, insecure=True) for token in tokens[1:]]
            code = asyncio.to_thread(run_bot, parser.parse_args([*command, "--insecure"]))
            finished = await asyncio.gather(code, *others)
            exit_code = finished[0]
            assert isinstance(exit_code, int)
            return exit_code
        finally:
            await running.stop(0)

    assert asyncio.run(main()) == 0
    # The bots play at random: a short match can end level, and a score can be negative. The other
    # seats' bots log to the same captured output, so the result line is looked for among them.
    result = re.compile(r"match cli: (team [AB] won|a draw), -?\d+ - -?\d+")
    assert any(result.match(line) for line in capsys.readouterr().out.splitlines())


def test_tichu_bot_takes_a_token_that_begins_with_a_dash(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # A seat token of an older referee may begin with '-', and `--token -...` is how the README
    # shows it: `tichu` itself (referee.cli.main) must take it, and the referee must accept it.
    monkeypatch.setattr("referee.log.configure", lambda **_: None)
    from referee.cli import main as tichu
    from tests.server.test_tokens import dashed_match_id, legacy_token

    async def main() -> int:
        running = await server.start_server(
            "127.0.0.1:0", server_support.ORGANISER, insecure=True, defaults=CALM
        )
        try:
            match_id = dashed_match_id(running.service)
            _, tokens = running.service.create_match(rules_json=RULES, seed="3", match_id=match_id)
            old = legacy_token(running.service, match_id, 0)
            assert old.startswith("-") and tokens[0] != old
            command = ["bot", "clients.random_bot:RandomBot", "--server", running.address, "--insecure"]
            code = asyncio.to_thread(tichu, [*command, "--token", old])
            others = [connect(RandomBot(), running.address, token, insecure=True) for token in tokens[1:]]
            finished = await asyncio.gather(code, *others)
            exit_code = finished[0]
            assert isinstance(exit_code, int)
            return exit_code
        finally:
            await running.stop(0)

    assert asyncio.run(main()) == 0
    assert any(line.startswith("match dash-") for line in capsys.readouterr().out.splitlines())
