"""Test doubles: a bot that answers garbage, and in-process grpc.aio referees (scripted or on the engine)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from typing import Any

import grpc

from clients.bot import Bot, DecisionKind, Harness, decision_kind
from referee.server.codec import action_from_proto, action_to_proto, config_to_proto, event_to_proto
from referee.wire.tichu.v1 import referee_pb2 as pb
from referee.rules import (
    Action,
    CallTichu,
    Decline,
    Event,
    Exchange,
    GiftDragon,
    Observation,
    Pass,
    Play,
    RulesConfig,
    State,
    answer_window,
    apply,
    can_call_tichu,
    new_game,
    observe,
    to_act,
)
from referee.rules.legal import exchange_recipients
from referee.wire.tichu.v1 import referee_pb2_grpc

GARBAGE: tuple[Any, ...] = (
    None,
    "pass",
    42,
    Decline(),
    CallTichu(),
    Play(0),
    Play.of("2j 3j"),
    Play.of("DRG", tichu=True),
    GiftDragon(9),
    Exchange(()),
    Exchange(((0, 2), (0, 3), (0, 4))),
    Exchange(((1, 2), (1, 2), (3, 4))),
    Play("7s"),  # type: ignore[arg-type]
    Pass(),
    True,
)


class BrokenBot(Bot):
    """Answers every question with garbage of the wrong kind or value, and sometimes raises."""

    name = "broken"

    def __init__(self) -> None:
        self.count = 0

    def _garbage(self) -> Any:
        self.count += 1
        if self.count % 5 == 0:
            raise RuntimeError("the bot crashed")
        return GARBAGE[self.count % len(GARBAGE)]

    def play(self, obs: Observation) -> Action:
        """Garbage."""
        return self._garbage()  # type: ignore[no-any-return]

    def grand_tichu(self, obs: Observation) -> bool:
        """Garbage."""
        return self._garbage()  # type: ignore[no-any-return]

    def tichu(self, obs: Observation) -> bool:
        """Garbage."""
        return self._garbage()  # type: ignore[no-any-return]

    def exchange(self, obs: Observation) -> Exchange:
        """Garbage."""
        return self._garbage()  # type: ignore[no-any-return]

    def bomb(self, obs: Observation) -> Play | None:
        """Garbage."""
        return self._garbage()  # type: ignore[no-any-return]

    def gift_dragon(self, obs: Observation) -> int:
        """Garbage."""
        return self._garbage()  # type: ignore[no-any-return]

    def call_tichu_now(self, obs: Observation) -> bool:
        """Garbage."""
        return self._garbage()  # type: ignore[no-any-return]

    def on_event(self, event: object) -> None:
        """Crashes now and then."""
        self._garbage()


PB_KINDS = {
    DecisionKind.GRAND_TICHU: pb.DECISION_KIND_GRAND_TICHU,
    DecisionKind.TICHU_STEP: pb.DECISION_KIND_TICHU_STEP,
    DecisionKind.EXCHANGE: pb.DECISION_KIND_EXCHANGE,
    DecisionKind.PLAY: pb.DECISION_KIND_PLAY,
    DecisionKind.BOMB_WINDOW: pb.DECISION_KIND_BOMB_WINDOW,
    DecisionKind.DRAGON_GIFT: pb.DECISION_KIND_DRAGON_GIFT,
}

Script = Callable[["Stream"], Awaitable[None]]


class Stream:
    """One Play stream as a script sees it: read the bot's messages, write the referee's."""

    def __init__(self, context: Any, log: list[pb.BotMessage]) -> None:
        self.context = context
        self.log = log

    async def read(self) -> pb.BotMessage | None:
        """The bot's next message (logged), or None at the end of its stream."""
        message = await self.context.read()
        if message is grpc.aio.EOF:
            return None
        assert isinstance(message, pb.BotMessage)
        self.log.append(message)
        return message

    async def read_kind(self, *kinds: str, timeout_s: float = 10.0) -> pb.BotMessage:
        """Read until a message of one of `kinds` arrives (the others stay in the log)."""
        async with asyncio.timeout(timeout_s):
            while True:
                message = await self.read()
                assert message is not None, f"the bot closed its stream while awaiting {kinds}"
                if message.WhichOneof("kind") in kinds:
                    return message

    async def write(self, **kind: Any) -> None:
        """Send one RefereeMessage, e.g. write(ping=pb.Ping(nonce=1))."""
        await self.context.write(pb.RefereeMessage(**kind))

    async def abort(self, code: grpc.StatusCode, details: str) -> None:
        """End the stream with a gRPC status."""
        await self.context.abort(code, details)


class ScriptedReferee(referee_pb2_grpc.RefereeServicer):
    """Runs one script per Play stream, in order; logs what the bot sent on each stream."""

    def __init__(self, scripts: Sequence[Script]) -> None:
        self.scripts = list(scripts)
        self.streams: list[list[pb.BotMessage]] = []

    async def Play(self, request_iterator: Any, context: Any) -> None:
        """Hand the stream to the next script."""
        log: list[pb.BotMessage] = []
        self.streams.append(log)
        script = self.scripts.pop(0)
        await script(Stream(context, log))


def request_for(state: State, seat: int, request_id: int, version: int) -> pb.DecisionRequest:
    """The DecisionRequest a referee sends `seat` for the decision it owes in `state`."""
    obs = observe(state, seat)
    kind = decision_kind(obs)
    assert kind is not None, f"seat {seat} owes nothing"
    request = pb.DecisionRequest(
        request_id=request_id,
        kind=PB_KINDS[kind],
        state_version=version,
        deadline_ms=5000,
        can_call_tichu=can_call_tichu(state, seat),
    )
    if kind is DecisionKind.EXCHANGE:
        recipients = exchange_recipients(state, seat)
        request.exchange_give = len(recipients)
        request.exchange_to.extend(recipients)
    else:
        request.legal_actions.extend(action_to_proto(a) for a in obs.legal_decisions)
    return request


def snapshot_of(state: State, seat: int, version: int) -> pb.Snapshot:
    """The seat's Snapshot of `state`."""
    return pb.Snapshot(state_version=version, observation_json=json.dumps(observe(state, seat).to_json()))


class EngineReferee(referee_pb2_grpc.RefereeServicer):
    """A whole match on the real engine with one remote seat; local bots take the others.

    It checks what a referee checks (the token, each decision's request id and state version,
    legality through apply) and records every failure in `errors` rather than raising.
    """

    def __init__(
        self, config: RulesConfig, seed: int, others: Sequence[Bot], seat: int = 0, token: str = "seat-0"
    ) -> None:
        self.seat = seat
        self.token = token
        self.state, _ = new_game(config, seed)
        self.version = 0
        self.seq = 0
        self.request_id = 100
        bots = list(others)
        self.locals = {s: Harness(bots.pop(0), s) for s in range(config.players) if s != seat}
        for s, harness in self.locals.items():
            harness.bot.rng.seed(f"{seed}/{s}")  # the same match every run
        self.errors: list[str] = []
        self.asked: list[Observation] = []  # observe(state, seat) for every request the bot got
        self.received: list[pb.BotMessage] = []
        self.calls = 0

    async def Play(self, request_iterator: Any, context: Any) -> None:
        """Play the match on this stream."""
        stream = Stream(context, self.received)
        hello = await stream.read()
        if hello is None or hello.WhichOneof("kind") != "hello" or hello.hello.token != self.token:
            await stream.abort(grpc.StatusCode.UNAUTHENTICATED, "unknown seat token")
            return
        await stream.write(
            welcome=pb.Welcome(
                match_id="m1",
                seat=self.seat,
                team=self.seat % 2,
                rules=config_to_proto(self.state.config),
                protocol_version=1,
            )
        )
        await stream.write(snapshot=snapshot_of(self.state, self.seat, self.version))
        try:
            while not self.state.is_over:
                await self._step(stream)
        except Exception as error:  # the test reads errors; the stream must end cleanly
            self.errors.append(f"{type(error).__name__}: {error}")
            return
        winner = self.state.winner
        result = pb.MatchResult(match_id="m1", winner=-1 if winner is None else winner, forfeiting_team=-1)
        result.scores.extend(self.state.scores)
        await stream.write(result=result)

    async def _step(self, stream: Stream) -> None:
        seats = to_act(self.state)
        if self.state.window and self.state.gift < 0:
            answers: dict[int, Action] = {}
            for s in seats:
                answers[s] = await self._answer(stream, s)
            self.state, events = answer_window(self.state, answers)
        else:
            seat = seats[0]
            action = await self._answer(stream, seat)
            self.state, events = apply(self.state, seat, action)
        await self._publish(stream, events)

    async def _answer(self, stream: Stream, seat: int) -> Action:
        if seat != self.seat:
            return self.locals[seat].decide(observe(self.state, seat))
        self.request_id += 1
        request = request_for(self.state, seat, self.request_id, self.version)
        self.asked.append(observe(self.state, seat))
        await stream.write(request=request)
        while True:
            message = await stream.read_kind("decision", "out_of_turn")
            if message.WhichOneof("kind") == "out_of_turn":
                action = action_from_proto(message.out_of_turn.action)
                if not isinstance(action, CallTichu):
                    raise AssertionError(f"unexpected out-of-turn {action}")
                self.calls += 1
                self.state, events = apply(self.state, seat, action)
                await self._publish(stream, events)
                continue
            decision = message.decision
            if decision.request_id != request.request_id:
                raise AssertionError(f"decision for {decision.request_id}, asked {request.request_id}")
            if decision.state_version != request.state_version:
                raise AssertionError(f"state_version {decision.state_version} != {request.state_version}")
            action = action_from_proto(decision.action)
            if isinstance(action, Play) and action.tichu:
                self.calls += 1
            return action

    async def _publish(self, stream: Stream, events: list[Event]) -> None:
        self.version += 1
        for event in events:
            if event.visible_to(self.seat):
                self.seq += 1
                await stream.write(event=event_to_proto(event, self.seq, self.version))


@asynccontextmanager
async def serving(servicer: Any) -> AsyncIterator[str]:
    """A grpc.aio server on 127.0.0.1 with `servicer`, for the block; yields its address."""
    server = grpc.aio.server()
    referee_pb2_grpc.add_RefereeServicer_to_server(servicer, server)  # type: ignore[no-untyped-call]
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    try:
        yield f"127.0.0.1:{port}"
    finally:
        await server.stop(0)
