"""Test support for the gRPC referee: a real server on 127.0.0.1:0 and scripted bots over real streams."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import random
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import grpc
from google.protobuf.message import Message

from referee.codec import pb
from referee.rules import parse_cards
from referee.server import RunningServer, start_server
from referee.table import ClockSettings, Table
from referee.wire.tichu.v1 import referee_pb2_grpc

T = TypeVar("T")
ORGANISER = "organiser-secret-for-tests"
ORGANISER_METADATA = (("authorization", f"Bearer {ORGANISER}"),)
# Clocks long enough never to fire by accident in tests that are not about time.
CALM = ClockSettings(
    decision_ms=20_000,
    bank_ms=0,
    grace_ms=200,
    window_ms=20_000,
    heartbeat_interval_ms=30_000,
    heartbeat_timeout_ms=30_000,
    reconnect_grace_ms=30_000,
)
CARD = re.compile(
    r"(?<![A-Za-z0-9])(?:10|[2-9JQKA])[jspt](?![A-Za-z0-9])|(?<![A-Za-z])(?:MJ|DOG|PHX|DRG)(?![A-Za-z])"
)
K = pb.DecisionKind


def run(coro: Coroutine[Any, Any, T], timeout_s: float = 60.0) -> T:
    """Run a test scenario in a fresh event loop, with a time limit so a hang fails instead."""

    async def limited() -> T:
        async with asyncio.timeout(timeout_s):
            return await coro

    return asyncio.run(limited())


@dataclass
class Referee:
    """A running referee and a client channel to it."""

    server: RunningServer | None  # None in a process that only runs bots
    channel: grpc.aio.Channel
    stub: referee_pb2_grpc.RefereeStub

    def table(self, match_id: str) -> Table:
        """The Table behind a match (the test runs in the server's process)."""
        assert self.server is not None
        return self.server.service.tables[match_id]

    def create_here(self, **fields: Any) -> tuple[Table, list[str]]:
        """Create a match through the service's Python API."""
        assert self.server is not None
        return self.server.service.create_match(**fields)

    async def create(self, **fields: Any) -> pb.CreateMatchResponse:
        """CreateMatch with the organiser token."""
        response: pb.CreateMatchResponse = await self.stub.CreateMatch(
            pb.CreateMatchRequest(**fields), metadata=ORGANISER_METADATA
        )
        return response


@asynccontextmanager
async def referee(
    defaults: ClockSettings = CALM, now: Callable[[], float] | None = None, replay_dir: Path | None = None
) -> AsyncIterator[Referee]:
    """A referee on a free local port, plaintext, and a channel to it (writing replays to
    `replay_dir` when given)."""
    extra: dict[str, Any] = {} if now is None else {"now": now}
    if replay_dir is not None:
        extra["replay_dir"] = replay_dir
    server = await start_server(
        "127.0.0.1:0", ORGANISER, insecure=True, defaults=defaults, keep_records=True, **extra
    )
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{server.port}")
    try:
        yield Referee(server, channel, referee_pb2_grpc.RefereeStub(channel))  # type: ignore[no-untyped-call]
    finally:
        await channel.close()
        await server.stop(0)


Policy = Callable[["Bot", pb.DecisionRequest], Awaitable[pb.Action | None] | pb.Action | None]


def strings_in(msg: Message) -> list[str]:
    """Every string field in a protobuf message, nested messages included."""
    out: list[str] = []
    for descriptor, value in msg.ListFields():
        values = value if descriptor.is_repeated else [value]
        for item in values:
            if isinstance(item, Message):
                out.extend(strings_in(item))
            elif isinstance(item, str):
                out.append(item)
    return out


def cards_in(msg: Message) -> set[str]:
    """Every card named anywhere in a message (inside JSON strings too)."""
    found: set[str] = set()
    for text in strings_in(msg):
        found.update(CARD.findall(text))
    return found


class Bot:
    """A scripted bot on one real Play stream: answers requests with its policy, records everything."""

    def __init__(
        self, ref: Referee, token: str, policy: Policy | None = None, name: str = "scripted"
    ) -> None:
        self.ref = ref
        self.token = token
        self.policy = policy
        self.name = name
        self.call: Any = None
        self.received: list[pb.RefereeMessage] = []
        self.seat = -1
        self.version = 0
        self.round = 0
        self.hand: set[str] = set()
        self.requests: dict[int, pb.DecisionRequest] = {}
        self.settled: set[int] = set()  # request ids answered (or cancelled by the referee)
        self.result: pb.MatchResult | None = None
        self.error: grpc.aio.AioRpcError | None = None
        self.answer_pings = True
        self.accept_bundles = True  # as the SDK does; read() hands out a Bundle's messages one by one
        self.bundles = 0  # Bundles received
        self._unread: collections.deque[pb.RefereeMessage] = collections.deque()

    async def open(self, hello: pb.Hello | None = None) -> None:
        """Open the stream and send the Hello."""
        self.call = self.ref.stub.Play()
        await self.send(
            hello=hello
            or pb.Hello(
                token=self.token,
                bot_name=self.name,
                bot_version="test",
                protocol_version=1,
                accept_bundles=self.accept_bundles,
            )
        )

    async def send(self, **kind: Any) -> None:
        """Send one BotMessage (keyword: its oneof field)."""
        if "decision" in kind:
            self.settled.add(kind["decision"].request_id)
        await self.call.write(pb.BotMessage(**kind))

    async def decide(
        self, request: pb.DecisionRequest, action: pb.Action, version: int | None = None
    ) -> None:
        """Answer a request."""
        await self.send(
            decision=pb.Decision(
                request_id=request.request_id,
                action=action,
                state_version=request.state_version if version is None else version,
            )
        )

    async def read(self) -> pb.RefereeMessage | None:
        """The next message (None at the end of the stream); pings are answered on the way."""
        if self._unread:
            msg = self._unread.popleft()
        else:
            try:
                msg = await self.call.read()
            except grpc.aio.AioRpcError as error:
                self.error = error
                return None
            if msg is grpc.aio.EOF:
                return None
            if msg.WhichOneof("kind") == "bundle":
                assert self.accept_bundles, "a Bundle for a bot that did not accept them"
                assert len(msg.bundle.messages) > 1, "a Bundle of one message"
                self.bundles += 1
                self._unread.extend(msg.bundle.messages)
                msg = self._unread.popleft()
        self.track(msg)
        if msg.WhichOneof("kind") == "result":
            # As the SDK does: nothing more to say, so the referee may end the call at once.
            with contextlib.suppress(grpc.aio.AioRpcError, asyncio.InvalidStateError):
                await self.call.done_writing()
        if msg.WhichOneof("kind") == "ping" and self.answer_pings:
            with contextlib.suppress(grpc.aio.AioRpcError):  # the stream is ending; read says how
                await self.send(pong=pb.Pong(nonce=msg.ping.nonce))
        return msg

    async def until(
        self, predicate: Callable[[pb.RefereeMessage], bool], timeout_s: float = 10.0
    ) -> pb.RefereeMessage:
        """Read until a message matches (requests are not answered meanwhile)."""
        async with asyncio.timeout(timeout_s):
            while True:
                msg = await self.read()
                if msg is None:
                    raise AssertionError(f"stream ended ({self.error}) before the expected message")
                if predicate(msg):
                    return msg

    async def request(self, kind: int | None = None, timeout_s: float = 10.0) -> pb.DecisionRequest:
        """Read until a decision request (of a kind) arrives."""
        msg = await self.until(
            lambda m: m.WhichOneof("kind") == "request" and (kind is None or m.request.kind == kind),
            timeout_s,
        )
        return msg.request

    async def rejection(self, timeout_s: float = 10.0) -> pb.Rejection:
        """Read until a rejection arrives."""
        msg = await self.until(lambda m: m.WhichOneof("kind") == "rejection", timeout_s)
        return msg.rejection

    async def play(self, stop: Callable[[pb.RefereeMessage], bool] | None = None) -> None:
        """Answer every request with the policy until the match ends (or `stop` matches)."""
        for request in list(self.requests.values()):
            if request.request_id not in self.settled:  # read earlier but not answered yet
                await self._answer(request)
        while True:
            msg = await self.read()
            if msg is None or msg.WhichOneof("kind") == "result":
                return
            if stop is not None and stop(msg):
                return
            if msg.WhichOneof("kind") == "snapshot":
                for pending in msg.snapshot.pending:
                    if pending.request_id not in self.settled:
                        await self._answer(pending)
            if msg.WhichOneof("kind") == "request":
                await self._answer(msg.request)

    async def _answer(self, request: pb.DecisionRequest) -> None:
        if self.policy is None:
            return
        chosen = self.policy(self, request)
        action = await chosen if asyncio.iscoroutine(chosen) else chosen
        if isinstance(action, pb.Action):
            await self.decide(request, action)

    def track(self, msg: pb.RefereeMessage) -> None:
        """Follow the seat's hand, round and state version from what the referee says."""
        self.received.append(msg)
        kind = msg.WhichOneof("kind")
        if kind == "welcome":
            self.seat = msg.welcome.seat
        elif kind == "snapshot":
            obs = json.loads(msg.snapshot.observation_json)
            self.version = msg.snapshot.state_version
            self.round = obs["round"]
            self.hand = set(obs["hand"].split())
            for pending in msg.snapshot.pending:
                self.requests[pending.request_id] = pending
        elif kind == "request":
            self.requests[msg.request.request_id] = msg.request
            self.version = max(self.version, msg.request.state_version)
        elif kind == "cancelled":
            self.settled.add(msg.cancelled.request_id)
        elif kind == "result":
            self.result = msg.result
        elif kind == "event":
            self.version = msg.event.state_version
            data = json.loads(msg.event.json)
            etype = data["type"]
            if etype == "round_started":
                self.round = data["round"]
                self.hand = set()
            elif etype == "cards_dealt" and data["seat"] == self.seat:
                self.hand |= set(data["cards"].split())
            elif etype == "exchange_submitted" and data["seat"] == self.seat:
                self.hand -= {card for _, card in data["gifts"]}
            elif etype == "cards_received" and data["seat"] == self.seat:
                self.hand |= {card for _, card in data["received"]}
            elif etype == "played" and data["seat"] == self.seat:
                self.hand -= set(data["cards"].split())

    def sorted_hand(self) -> list[str]:
        """The hand, lowest first (R-DEF-2)."""
        return [str(c) for c in parse_cards(sorted(self.hand))]

    async def close(self) -> None:
        """Cancel the stream."""
        if self.call is not None:
            self.call.cancel()


def exchange_lowest(bot: Bot, request: pb.DecisionRequest) -> pb.Action:
    """The exchange the default would make: the lowest cards, to the recipients in order."""
    cards = bot.sorted_hand()
    return pb.Action(
        exchange=pb.ExchangeCards(
            gifts=[pb.Gift(to=to, card=card) for to, card in zip(request.exchange_to, cards, strict=False)]
        )
    )


def random_policy(seed: int | str, bomb_rate: float = 0.5, call_rate: float = 0.03) -> Policy:
    """A random bot: rare calls, random plays, sometimes a bomb in a window."""
    rng = random.Random(seed)

    def choose(bot: Bot, request: pb.DecisionRequest) -> pb.Action:
        legal = list(request.legal_actions)
        if request.kind == K.DECISION_KIND_EXCHANGE:
            cards = rng.sample(sorted(bot.hand), request.exchange_give)
            gifts = [pb.Gift(to=to, card=card) for to, card in zip(request.exchange_to, cards, strict=True)]
            return pb.Action(exchange=pb.ExchangeCards(gifts=gifts))
        if request.kind in (K.DECISION_KIND_GRAND_TICHU, K.DECISION_KIND_TICHU_STEP):
            call = rng.random() < call_rate
            return next(a for a in legal if (a.text in ("grand_tichu", "tichu")) == call)
        if request.kind == K.DECISION_KIND_BOMB_WINDOW:
            bombs = [a for a in legal if a.WhichOneof("kind") == "play"]
            if bombs and rng.random() < bomb_rate:
                return rng.choice(bombs)
            return next(a for a in legal if a.WhichOneof("kind") == "decline")
        return rng.choice(legal)

    return choose


def first_policy(bot: Bot, request: pb.DecisionRequest) -> pb.Action:
    """A deterministic bot: the lowest exchange, no calls, declines windows, else the first legal action."""
    if request.kind == K.DECISION_KIND_EXCHANGE:
        return exchange_lowest(bot, request)
    legal = list(request.legal_actions)
    for preferred in ("no_grand_tichu", "no_tichu", "decline", "pass"):
        for action in legal:
            if action.text == preferred:
                return action
    return legal[0]


async def join(
    ref: Referee, tokens: Sequence[str], policies: Sequence[Policy | None], timeout_s: float = 10.0
) -> list[Bot]:
    """Connect one bot per seat (in seat order) and wait until each has its Welcome."""
    bots = [
        Bot(ref, token, policy, name=f"bot{seat}")
        for seat, (token, policy) in enumerate(zip(tokens, policies, strict=True))
    ]
    for bot in bots:
        await bot.open()
        await bot.until(lambda m: m.WhichOneof("kind") == "welcome", timeout_s)
    return bots
