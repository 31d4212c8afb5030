"""clients.connect against a scripted in-process grpc.aio referee: hello, answers, pings,
cancellation, reconnection, refusals (whole matches on the real referee: test_server.py)."""

from __future__ import annotations

import argparse
import asyncio
import time
from typing import Any

import grpc
import pytest

from clients.bot import Bot
from clients.codec import referee_messages
from clients.connect import ConnectError, MatchResult, add_bot_arguments, connect, run_bot
from clients.loading import load_bot
from clients.random_bot import RandomBot
from referee.match.messages import Rejection, RejectionReason, ResultMessage
from referee.match.outcome import Termination
from referee.rules import Action, Observation, RulesConfig, state_from_json
from referee.server.codec import action_from_proto, config_to_proto
from referee.wire.tichu.v1 import referee_pb2 as pb
from tests.clients.fakes import (
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
    # The scripted result sends no summary: none is read back, and the termination is read from
    # the winner and the reason, as of a referee older than the field.
    summary = {"match_id": "m", "state_version": 0, "seats": []}
    assert result == MatchResult("m", 0, (100, 0), False, -1, "", summary, termination="played_out")
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
    with pytest.raises(ValueError, match="not derived from Bot"):
        load_bot("clients.bot:DecisionKind")

    no_token = argparse.ArgumentParser()
    add_bot_arguments(no_token)
    assert run_bot(no_token.parse_args(["clients.random_bot:RandomBot", "--token", ""])) == 2


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
    assert bot.rejections == [Rejection(RejectionReason.STALE, "", "decided on state 40", 42, 41)]


class HearingBot(RandomBot):
    """Keeps every event it hears."""

    def __init__(self) -> None:
        self.heard: list[object] = []

    def on_event(self, event: object) -> None:
        """Keep it."""
        self.heard.append(event)


def test_a_repeated_request_is_answered_once_and_a_repeated_event_heard_once() -> None:
    # A network or a proxy may deliver a message twice (tichu check-bot's duplicates check).
    event = pb.GameEvent(
        seq=1,
        state_version=42,
        type="call_declined",
        json='{"type": "call_declined", "seat": 1, "call": "tichu"}',
    )

    async def script(stream: Stream) -> None:
        await join(stream)
        await stream.write(event=event)
        await stream.write(event=event)
        request = request_for(LEADING, 0, 42, 42)
        await stream.write(request=request)
        await stream.write(request=request)
        await stream.read_kind("decision")
        await asyncio.sleep(0.2)
        await stream.write(request=request_for(LEADING, 0, 43, 42))
        await stream.read_kind("decision")
        await finish(stream)

    referee = ScriptedReferee([script])
    bot = HearingBot()
    play(referee, bot)
    answered = [m.decision.request_id for m in referee.streams[0] if m.WhichOneof("kind") == "decision"]
    assert answered == [42, 43]
    assert len(bot.heard) == 1


def sdk_result(message: pb.MatchResult) -> MatchResult:
    """The SDK's MatchResult of a wire result, read as the connector reads it (clients.codec)."""
    (end,) = referee_messages(pb.RefereeMessage(result=message))
    assert isinstance(end, ResultMessage)
    return MatchResult.of(end.result)


def test_the_sdk_reads_how_the_match_ended_and_its_rounds_and_an_older_referee_leaves_them_out() -> None:
    message = pb.MatchResult(
        match_id="m",
        winner=1,
        scores=[300, 1020],
        reason="team B won 1020 to 300",
        termination=pb.TERMINATION_PLAYED_OUT,
        round_scores=[pb.RoundScore(points_a=300, points_b=400), pb.RoundScore(points_a=0, points_b=620)],
    )
    result = sdk_result(message)
    assert result.termination == "played_out" and result.round_scores == ((300, 400), (0, 620))
    # Each name is the one the replay's result line and the match core use.
    names = {name: sdk_result(pb.MatchResult(termination=name, winner=-1)).termination
             for name in pb.Termination.DESCRIPTOR.values_by_name}  # fmt: skip
    assert set(names.values()) == {t.value for t in Termination}
    # An older referee sends neither: the termination is read back from the winner and the reason.
    older = sdk_result(pb.MatchResult(match_id="m", winner=0, scores=[100, 0]))
    assert older.termination == "played_out" and older.round_scores == ()
    forfeit = sdk_result(pb.MatchResult(winner=0, scores=[0, 0], forfeit=True, forfeiting_team=1))
    assert forfeit.forfeit and forfeit.forfeiting_team == 1 and forfeit.termination != "played_out"
