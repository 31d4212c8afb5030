"""Test doubles: a bot that answers garbage, and a scripted in-process grpc.aio referee (a script
per stream) for the connector's protocol cases; whole matches are played on the real referee."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from typing import Any

import grpc

from clients.bot import Bot
from referee.match.messages import Request, Snapshot
from referee.rules import (
    Action,
    CallTichu,
    DecisionKind,
    Decline,
    Exchange,
    GiftDragon,
    Observation,
    Pass,
    Play,
    State,
    can_call_tichu,
    observe,
    owed,
)
from referee.rules.legal import exchange_recipients
from referee.server.codec import message_to_proto, request_to_proto
from referee.wire.tichu.v1 import referee_pb2 as pb
from referee.wire.tichu.v1 import referee_pb2_grpc


def play_of_a_string() -> Any:
    """A Play whose card mask is a string: the pure build takes it, the compiled one raises."""
    return Play("7s")  # type: ignore[arg-type]


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
    play_of_a_string,
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
        garbage = GARBAGE[self.count % len(GARBAGE)]
        return garbage() if garbage is play_of_a_string else garbage

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
    kind = owed(state, seat)
    assert kind is not None, f"seat {seat} owes nothing"
    recipients = exchange_recipients(state, seat) if kind is DecisionKind.EXCHANGE else ()
    can_call = can_call_tichu(state, seat)
    request = Request(request_id, kind, version, 5000, 0, can_call, recipients, seat, state)
    return request_to_proto(request)


def snapshot_of(state: State, seat: int, version: int) -> pb.Snapshot:
    """The seat's Snapshot of `state`."""
    return message_to_proto(Snapshot(version, observe(state, seat), ())).snapshot


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
