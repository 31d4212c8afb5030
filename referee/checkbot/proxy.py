"""The kit's proxy: the bot's Play streams pass through it to the real referee, and it records
everything both ways and injects the faults a check asks for (a cut stream, repeated, delayed or
replayed messages, a request held past its deadline).

One proxy serves every check: the Hello's seat token says which check a stream belongs to.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc

from referee.server.codec import unbundle
from referee.wire.tichu.v1 import referee_pb2 as pb
from referee.wire.tichu.v1 import referee_pb2_grpc

K = pb.DecisionKind


@dataclass(frozen=True, slots=True)
class Faults:
    """What the proxy does to one check's streams (every field off by default)."""

    cut_on_play: bool = False  # end the bot's first stream (UNAVAILABLE) just after its first PLAY request
    duplicate: bool = False  # every request and event reaches the bot twice in a row
    replay_answered: bool = False  # each answered request is sent again after the next request
    delay_ms: int = 0  # every message reaches the bot this much later
    hold_first_ms: int = 0  # the bot's first request (and what follows) is held this long


@dataclass(frozen=True, slots=True)
class Seen:
    """One thing the proxy saw: a message to the bot ("in"), from it ("out"), or a stream's end."""

    at: float  # monotonic seconds
    stream: int  # the bot's streams through this check, from 1
    way: str  # "in", "out", "open" or "closed"
    to_bot: pb.RefereeMessage | None = None
    from_bot: pb.BotMessage | None = None
    note: str = ""


@dataclass
class Trace:
    """Everything one check's bot streams carried, in order, and a signal when it grows."""

    faults: Faults = Faults()
    seen: list[Seen] = field(default_factory=list)
    streams: int = 0
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    cut_done: bool = False
    held_done: bool = False
    held_request_id: int = 0  # the request the kit held (hold_first_ms)

    def add(self, item: Seen) -> None:
        """Record one item and wake whoever waits for the trace to grow."""
        self.seen.append(item)
        self.changed.set()

    # -------------------------------------------------------------- questions the graders ask

    def to_bot(self, kind: str) -> list[tuple[Seen, Any]]:
        """(item, payload) of every message of a oneof kind that reached the bot."""
        return [
            (s, getattr(s.to_bot, kind))
            for s in self.seen
            if s.to_bot is not None and s.to_bot.WhichOneof("kind") == kind
        ]

    def from_bot(self, kind: str) -> list[tuple[Seen, Any]]:
        """(item, payload) of every message of a oneof kind that the bot sent."""
        return [
            (s, getattr(s.from_bot, kind))
            for s in self.seen
            if s.from_bot is not None and s.from_bot.WhichOneof("kind") == kind
        ]

    def requests(self, kind: int | None = None) -> list[pb.DecisionRequest]:
        """The distinct requests the bot was sent (of a kind), first delivery order."""
        found: dict[int, pb.DecisionRequest] = {}
        for _, request in self.to_bot("request"):
            if kind is None or request.kind == kind:
                found.setdefault(request.request_id, request)
        for _, snapshot in self.to_bot("snapshot"):
            for request in snapshot.pending:
                if kind is None or request.kind == kind:
                    found.setdefault(request.request_id, request)
        return list(found.values())

    def decisions(self, request_id: int) -> list[tuple[Seen, pb.Decision]]:
        """The bot's answers to one request."""
        return [(s, d) for s, d in self.from_bot("decision") if d.request_id == request_id]

    def rejections(self) -> list[pb.Rejection]:
        """Every rejection the bot was sent."""
        return [r for _, r in self.to_bot("rejection")]

    def cancelled(self, request_id: int) -> bool:
        """The referee told the bot that this request needs no answer any more."""
        return any(c.request_id == request_id for _, c in self.to_bot("cancelled"))

    def moved_past(self, request: pb.DecisionRequest) -> bool:
        """The bot has heard of a state after the request's (it was answered, or defaulted)."""
        return any(e.state_version > request.state_version for _, e in self.to_bot("event"))


class Proxy(referee_pb2_grpc.RefereeServicer):
    """Play streams from the bot to the referee at `upstream`, through the faults of their check."""

    def __init__(self, upstream: str) -> None:
        self.channel = grpc.aio.insecure_channel(upstream)
        self.stub = referee_pb2_grpc.RefereeStub(self.channel)  # type: ignore[no-untyped-call]
        self.traces: dict[str, Trace] = {}  # by seat token

    async def Play(  # noqa: N802 (the gRPC method's name)
        self, request_iterator: AsyncIterator[pb.BotMessage], context: grpc.aio.ServicerContext
    ) -> None:
        """Forward one bot stream, recording it and applying its check's faults."""
        first = await anext(aiter(request_iterator), None)
        if first is None or first.WhichOneof("kind") != "hello" or first.hello.token not in self.traces:
            # Not one of the kit's seats: let the referee give its own answer.
            trace = Trace()
        else:
            trace = self.traces[first.hello.token]
        trace.streams += 1
        stream = trace.streams
        trace.add(Seen(time.monotonic(), stream, "open"))
        outbox: asyncio.Queue[pb.BotMessage | None] = asyncio.Queue()
        if first is not None:
            trace.add(Seen(time.monotonic(), stream, "out", from_bot=first))
            outbox.put_nowait(first)

        async def outgoing() -> AsyncIterator[pb.BotMessage]:
            while (message := await outbox.get()) is not None:
                yield message

        async def pump_up() -> None:
            async for message in request_iterator:
                trace.add(Seen(time.monotonic(), stream, "out", from_bot=message))
                outbox.put_nowait(message)
            outbox.put_nowait(None)

        call = self.stub.Play(outgoing())
        up = asyncio.create_task(pump_up())
        # What the referee sent, stamped as it arrived: a delay is latency, not a slower line.
        down: asyncio.Queue[tuple[float, pb.RefereeMessage] | BaseException | None] = asyncio.Queue()
        answered: list[pb.DecisionRequest] = []  # for replay_answered: sent again after the next

        async def pump_down() -> None:
            try:
                async for envelope in call:
                    for message in unbundle(envelope):
                        for copy in self._shape(trace, message, answered):
                            down.put_nowait((time.monotonic(), copy))
                down.put_nowait(None)
            except grpc.aio.AioRpcError as error:
                down.put_nowait(error)

        reader = asyncio.create_task(pump_down())
        why = "the referee ended the stream"
        try:
            while isinstance(item := await down.get(), tuple):
                arrived, copy = item
                wait_s = arrived + trace.faults.delay_ms / 1000 - time.monotonic()
                if wait_s > 0:
                    await asyncio.sleep(wait_s)
                held = self._to_hold(trace, copy)
                if held:
                    trace.held_done, trace.held_request_id = True, held
                    await asyncio.sleep(trace.faults.hold_first_ms / 1000)
                trace.add(Seen(time.monotonic(), stream, "in", to_bot=copy))
                await context.write(copy)
                if self._cut_now(trace, copy):
                    why = "the kit cut the stream"
                    await context.abort(grpc.StatusCode.UNAVAILABLE, "check-bot: the stream was cut")
            if isinstance(item, grpc.aio.AioRpcError):
                why = f"the referee ended the stream: {item.code().name}"
                await context.abort(item.code(), item.details() or "")
        finally:
            trace.add(Seen(time.monotonic(), stream, "closed", note=why))
            # End the upstream request iterator before the call: gRPC's task that reads it
            # would otherwise be left waiting on the outbox when the loop closes.
            outbox.put_nowait(None)
            for task in (up, reader):
                task.cancel()
            call.cancel()
            for task in (up, reader):
                with contextlib.suppress(asyncio.CancelledError, grpc.aio.AioRpcError):
                    await task

    def _shape(
        self, trace: Trace, message: pb.RefereeMessage, answered: list[pb.DecisionRequest]
    ) -> list[pb.RefereeMessage]:
        """What the bot gets for one referee message under its check's faults."""
        kind = message.WhichOneof("kind")
        copies = [message]
        if trace.faults.duplicate and kind in ("request", "event"):
            copies = [message, message]
        if trace.faults.replay_answered and kind == "request":
            stale = [
                pb.RefereeMessage(request=old)
                for old in answered
                if old.request_id != message.request.request_id and trace.decisions(old.request_id)
            ]
            answered[:] = [old for old in answered if not trace.decisions(old.request_id)]
            answered.append(message.request)
            copies = copies + stale
        return copies

    @staticmethod
    def _to_hold(trace: Trace, sent: pb.RefereeMessage) -> int:
        """The id of the request to hold in this message, if the kit holds one and it is the first."""
        if not trace.faults.hold_first_ms or trace.held_done:
            return 0
        kind = sent.WhichOneof("kind")
        if kind == "request":
            return int(sent.request.request_id)
        if kind == "snapshot" and sent.snapshot.pending:
            return int(sent.snapshot.pending[0].request_id)
        return 0

    @staticmethod
    def _cut_now(trace: Trace, sent: pb.RefereeMessage) -> bool:
        if not trace.faults.cut_on_play or trace.cut_done:
            return False
        if sent.WhichOneof("kind") == "request" and sent.request.kind == K.DECISION_KIND_PLAY:
            trace.cut_done = True
            return True
        return False

    async def close(self) -> None:
        """Close the channel to the referee."""
        await self.channel.close()


async def start_proxy(upstream: str, unix_socket: Path | None = None) -> tuple[grpc.aio.Server, Proxy, int]:
    """A proxy on 127.0.0.1 (a free port), plaintext, in front of the referee at `upstream`; on
    `unix_socket` too, for a bot in a sandbox (referee.sandbox)."""
    proxy = Proxy(upstream)
    server = grpc.aio.server()
    referee_pb2_grpc.add_RefereeServicer_to_server(proxy, server)  # type: ignore[no-untyped-call]
    port = server.add_insecure_port("127.0.0.1:0")
    if unix_socket is not None and not server.add_insecure_port(f"unix:{unix_socket}"):
        raise OSError(f"cannot listen on the Unix socket {unix_socket}")
    await server.start()
    return server, proxy, port
