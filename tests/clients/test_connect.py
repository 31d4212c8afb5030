"""clients.connect against in-process grpc.aio referees: hello, answers, pings, cancellation,
reconnection, and whole matches on the real engine with the bot at one seat."""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import re
import time
from typing import Any

import grpc
import pytest

from clients.bot import Bot, Rejection
from clients.connect import ConnectError, MatchResult, add_bot_arguments, connect, load_bot, run_bot
from clients.heuristic_bot import HeuristicBot
from clients.random_bot import RandomBot
from referee.server.codec import action_from_proto, config_to_proto
from referee.wire.tichu.v1 import referee_pb2 as pb
from referee.rules import Action, Exchange, Observation, Play, RulesConfig, state_from_json
from tests.clients.fakes import (
    BrokenBot,
    EngineReferee,
    ScriptedReferee,
    Stream,
    request_for,
    serving,
    snapshot_of,
)

TOKEN = "seat-0"
LEADING = state_from_json({"hands": ["7s 9j", "8s Kt", "2j", "3s 3p"], "turn": 0})
SHORT = RulesConfig(match_mode="fixed_rounds:2")


def play(servicer: Any, bot: Bot, **options: Any) -> MatchResult:
    """Run `bot` against `servicer` on a fresh in-process server; the match result."""

    async def main() -> MatchResult:
        async with serving(servicer) as address:
            return await connect(bot, address, TOKEN, insecure=True, backoff_s=0.01, **options)

    return asyncio.run(main())


async def join(stream: Stream, version: int = 41, pending: tuple[pb.DecisionRequest, ...] = ()) -> None:
    """Read the Hello; send the Welcome and a Snapshot of LEADING (seat 0 is to lead)."""
    await stream.read_kind("hello")
    rules = config_to_proto(LEADING.config)
    await stream.write(welcome=pb.Welcome(match_id="m", seat=0, team=0, rules=rules, protocol_version=1))
    snapshot = snapshot_of(LEADING, 0, version)
    snapshot.pending.extend(pending)
    await stream.write(snapshot=snapshot)


async def finish(stream: Stream) -> None:
    """Send the MatchResult."""
    await stream.write(result=pb.MatchResult(match_id="m", winner=0, scores=[100, 0], forfeiting_team=-1))


def kinds(log: list[pb.BotMessage]) -> list[str]:
    """The kinds of the messages a bot sent, in order."""
    return [str(m.WhichOneof("kind")) for m in log]


class SlowBot(RandomBot):
    """Thinks for a while before every play."""

    def play(self, obs: Observation) -> Action:
        """A random play, late."""
        time.sleep(0.3)
        return super().play(obs)


def test_hello_pong_and_decision_echo_the_referee() -> None:
    async def script(stream: Stream) -> None:
        await join(stream)
        await stream.write(ping=pb.Ping(nonce=7))
        await stream.write(request=request_for(LEADING, 0, 42, 41))
        await stream.read_kind("decision")
        await finish(stream)

    referee = ScriptedReferee([script])
    bot = RandomBot()
    bot.version = "2.5"
    result = play(referee, bot, name="Rando")
    assert result == MatchResult("m", 0, (100, 0), False, -1, "", {})
    (log,) = referee.streams
    hello = log[0].hello
    assert (hello.token, hello.bot_name, hello.bot_version) == (TOKEN, "Rando", "2.5")
    assert hello.protocol_version == 1
    pong = next(m.pong for m in log if m.WhichOneof("kind") == "pong")
    assert pong.nonce == 7
    decision = next(m.decision for m in log if m.WhichOneof("kind") == "decision")
    assert (decision.request_id, decision.state_version) == (42, 41)
    assert str(action_from_proto(decision.action)) in ("play 7s", "play 9j")
    assert decision.action.text == str(action_from_proto(decision.action))


def test_pings_are_answered_while_the_bot_thinks() -> None:
    async def script(stream: Stream) -> None:
        await join(stream)
        await stream.write(request=request_for(LEADING, 0, 42, 41))
        await asyncio.sleep(0.05)
        await stream.write(ping=pb.Ping(nonce=9))
        await stream.read_kind("decision")
        await finish(stream)

    referee = ScriptedReferee([script])
    play(referee, SlowBot())
    order = kinds(referee.streams[0])
    assert order.index("pong") < order.index("decision")


def test_a_cancelled_request_gets_no_answer() -> None:
    async def script(stream: Stream) -> None:
        await join(stream)
        await stream.write(request=request_for(LEADING, 0, 50, 41))
        await stream.write(cancelled=pb.RequestCancelled(request_id=50, reason="timed out"))
        await stream.write(request=request_for(LEADING, 0, 51, 41))
        await stream.read_kind("decision")
        await asyncio.sleep(0.1)
        await finish(stream)

    referee = ScriptedReferee([script])
    play(referee, SlowBot())
    answered = [m.decision.request_id for m in referee.streams[0] if m.WhichOneof("kind") == "decision"]
    assert answered == [51]


@pytest.mark.parametrize("how", ["closed", "aborted"])
def test_the_bot_reconnects_with_its_token_and_answers_pending_requests(how: str) -> None:
    async def dropped(stream: Stream) -> None:
        await join(stream)
        if how == "aborted":
            await stream.abort(grpc.StatusCode.UNAVAILABLE, "referee restarting")

    async def resumed(stream: Stream) -> None:
        await join(stream, version=44, pending=(request_for(LEADING, 0, 43, 44),))
        await stream.read_kind("decision")
        await finish(stream)

    referee = ScriptedReferee([dropped, resumed])
    result = play(referee, RandomBot())
    assert result.winner == 0
    first, second = referee.streams
    assert first[0].hello.token == second[0].hello.token == TOKEN
    decision = next(m.decision for m in second if m.WhichOneof("kind") == "decision")
    assert (decision.request_id, decision.state_version) == (43, 44)


def test_a_seat_still_held_after_a_drop_is_retried() -> None:
    async def dropped(stream: Stream) -> None:
        await join(stream)

    async def still_held(stream: Stream) -> None:
        await stream.read_kind("hello")
        await stream.abort(grpc.StatusCode.UNAUTHENTICATED, "seat 0 is already connected")

    async def resumed(stream: Stream) -> None:
        await join(stream)
        await finish(stream)

    referee = ScriptedReferee([dropped, still_held, resumed])
    assert play(referee, RandomBot()).winner == 0
    assert len(referee.streams) == 3


def test_a_refused_token_is_not_retried() -> None:
    async def refuse(stream: Stream) -> None:
        await stream.read_kind("hello")
        await stream.abort(grpc.StatusCode.UNAUTHENTICATED, "unknown seat token")

    referee = ScriptedReferee([refuse, refuse])
    with pytest.raises(ConnectError, match="UNAUTHENTICATED"):
        play(referee, RandomBot())
    assert len(referee.streams) == 1


def test_the_bot_gives_up_after_its_retries() -> None:
    async def hang_up(stream: Stream) -> None:
        await stream.read_kind("hello")

    referee = ScriptedReferee([hang_up] * 3)
    with pytest.raises(ConnectError, match="2 reconnections failed"):
        play(referee, RandomBot(), retries=2)
    assert len(referee.streams) == 3


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


CONTROL = {"turn", "window_order", "to_act", "legal_actions", "legal_decisions"}


def _asks_bot(obs: Observation) -> bool:
    """Whether the SDK passes this decision to the bot (a window without a bomb it does not)."""
    return not obs.window_open or any(isinstance(a, Play) for a in obs.legal_decisions)


def test_a_whole_match_over_the_wire_matches_the_engine() -> None:
    bot = RecordingBot()
    referee = EngineReferee(SHORT, 3, [RandomBot(), HeuristicBot(), RandomBot()])
    result = play(referee, bot)
    assert referee.errors == []
    assert result.scores == referee.state.scores
    expected = [o for o in referee.asked if _asks_bot(o)]
    assert len(bot.seen) == len(expected) > 30
    for got, want in zip(bot.seen, expected, strict=True):
        for field in dataclasses.fields(Observation):
            if field.name not in CONTROL:
                assert getattr(got, field.name) == getattr(want, field.name), field.name
        if not isinstance(got.legal_decisions[0], Exchange):
            assert [str(a) for a in got.legal_decisions] == [str(a) for a in want.legal_decisions]
            assert [str(a) for a in got.legal_actions] == [str(a) for a in want.legal_actions]


def test_a_broken_bot_sends_only_legal_actions_over_the_wire() -> None:
    referee = EngineReferee(SHORT, 5, [RandomBot(), RandomBot(), RandomBot()])
    play(referee, BrokenBot())
    assert referee.errors == []
    assert referee.state.is_over


class CallerBot(HeuristicBot):
    """Calls Tichu out of turn at the first chance of every round."""

    def call_tichu_now(self, obs: Observation) -> bool:
        """Always."""
        return True


def test_spontaneous_calls_reach_the_referee() -> None:
    # No Grand Tichu and no pre-exchange step: the first chance to call comes after the exchange.
    config = dataclasses.replace(
        SHORT, grand_tichu_enabled=False, tichu_call_exchange_mode="after_exchange_only"
    )
    referee = EngineReferee(config, 8, [RandomBot(), RandomBot(), RandomBot()])
    play(referee, CallerBot())
    assert referee.errors == []
    assert referee.calls == len(referee.state.history) == 2


def test_load_bot_and_the_command_line(
    tmp_path: Any, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # run_bot configures logging for its process; here that would bind it to capsys's stream.
    monkeypatch.setattr("referee.log.configure", lambda **_: None)
    assert isinstance(load_bot("clients.random_bot:RandomBot"), RandomBot)
    source = tmp_path / "mybot.py"
    source.write_text(
        "from clients.random_bot import RandomBot\n\n\nclass Mine(RandomBot):\n    name = 'm'\n"
    )
    assert load_bot(f"{source}:Mine").name == "m"
    with pytest.raises(ValueError, match="MODULE:CLASS"):
        load_bot("clients.random_bot")
    with pytest.raises(ValueError, match="not a subclass"):
        load_bot("clients.bot:DecisionKind")

    parser = argparse.ArgumentParser()
    add_bot_arguments(parser)
    referee = EngineReferee(SHORT, 2, [RandomBot(), RandomBot(), RandomBot()])

    async def main() -> int:
        async with serving(referee) as address:
            args = parser.parse_args(
                ["clients.random_bot:RandomBot", "--server", address, "--token", TOKEN, "--insecure"]
            )
            return await asyncio.to_thread(run_bot, args)

    assert asyncio.run(main()) == 0
    assert referee.errors == []
    # The bots play at random: a short match can end level, and a score can be negative.
    assert re.match(
        r"match m1: (team [AB] won|a draw), -?\d+ - -?\d+", capsys.readouterr().out.splitlines()[-1]
    )
    no_token = parser.parse_args(["clients.random_bot:RandomBot", "--token", ""])
    assert run_bot(no_token) == 2


def test_rejections_reach_the_bot() -> None:
    async def script(stream: Stream) -> None:
        await join(stream)
        rejection = pb.Rejection(
            reason=pb.REJECTION_REASON_STALE, message="decided on state 40", request_id=42, state_version=41
        )
        await stream.write(rejection=rejection)
        await stream.write(request=request_for(LEADING, 0, 43, 41))
        await stream.read_kind("decision")
        await finish(stream)

    class Listener(RandomBot):
        def __init__(self) -> None:
            self.rejections: list[Rejection] = []

        def on_rejection(self, rejection: Rejection) -> None:
            self.rejections.append(rejection)

    bot = Listener()
    play(ScriptedReferee([script]), bot)
    assert bot.rejections == [Rejection("stale", "", "decided on state 40", 42, 41)]
