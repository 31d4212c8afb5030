"""A scripted seat on one real Play stream: the one wire-level client of the check-bot kit, the
tests and the benchmarks.

It speaks the protocol message by message (no SDK, no Observation): open the stream with a
Hello, read what the referee sends (Bundles split, pings answered), answer requests with a policy
or by hand, and keep what a caller needs to look at (every message, the seat's hand, round and
latest state version, the requests, the result). A test awaits its reads (`open`, `until`,
`request`, `play`); the kit's seats play in the background (`start`, then `close`). A policy is a
function of the seat and a DecisionRequest that returns the Action to send (or None to stay
silent): `first_policy`, `random_policy` and `bomber_policy`.

It lives in referee, not clients, because the kit is part of referee and referee never imports
clients (tests/test_layers.py).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import random
import time
from collections.abc import Awaitable, Callable
from typing import Any

import grpc

from referee.match import PROTOCOL_VERSION
from referee.rules import parse_cards
from referee.wire.tichu.v1 import referee_pb2 as pb

K = pb.DecisionKind
Policy = Callable[["ScriptedSeat", pb.DecisionRequest], Awaitable[pb.Action | None] | pb.Action | None]
# The answers of a seat that never calls and never bombs.
QUIET = ("no_grand_tichu", "no_tichu", "decline", "pass")


class ScriptedSeat:
    """One scripted seat on a real Play stream; `open_call()` opens it (e.g. `stub.Play`)."""

    def __init__(
        self,
        open_call: Callable[[], Any],
        token: str,
        policy: Policy | None = None,
        name: str = "scripted",
        *,
        bot_version: str = "test",
    ) -> None:
        self.open_call = open_call
        self.token = token
        self.policy = policy
        self.name = name
        self.bot_version = bot_version
        self.call: Any = None
        self.task: asyncio.Task[None] | None = None  # the background play of `start`
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
        self.last_arrived = 0.0  # when the last message came off the network (monotonic seconds)
        # False: `received` stays empty. A seat that plays for minutes (the benchmarks) would
        # otherwise hold every message, and each full collection of its process would walk them.
        self.keep_received = True
        self._unread: collections.deque[pb.RefereeMessage] = collections.deque()

    def hello(self) -> pb.Hello:
        """The Hello this seat says unless told another."""
        return pb.Hello(
            token=self.token,
            bot_name=self.name,
            bot_version=self.bot_version,
            protocol_version=PROTOCOL_VERSION,
            accept_bundles=self.accept_bundles,
        )

    async def open(self, hello: pb.Hello | None = None) -> None:
        """Open the stream and send the Hello."""
        self.call = self.open_call()
        await self.send(hello=hello or self.hello())

    def start(self) -> None:
        """Open the stream now and play in the background until the match ends or `close`."""
        # The call is opened here, not in the task, so that a `close` before the task first runs
        # still has a call to cancel.
        self.call = self.open_call()
        self.task = asyncio.create_task(self._play_in_background())

    async def _play_in_background(self) -> None:
        # The stream may end under a background seat at any moment (the match stopped, `close`):
        # a write that fails then is its end, not an error to report.
        with contextlib.suppress(grpc.aio.AioRpcError, asyncio.InvalidStateError):
            await self.send(hello=self.hello())
            await self.play()

    async def send(self, **kind: Any) -> None:
        """Send one BotMessage (keyword: its oneof field)."""
        if "decision" in kind:
            self.settled.add(kind["decision"].request_id)
        await self.call.write(pb.BotMessage(**kind))

    async def decide(
        self, request: pb.DecisionRequest, action: pb.Action, version: int | None = None
    ) -> None:
        """Answer a request (with the request's state version unless told another)."""
        decision = pb.Decision(
            request_id=request.request_id,
            action=action,
            state_version=request.state_version if version is None else version,
        )
        await self.send(decision=decision)

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
            self.last_arrived = time.monotonic()
            if msg is grpc.aio.EOF:
                return None
            if msg.WhichOneof("kind") == "bundle":
                if not self.accept_bundles:
                    raise AssertionError("a Bundle for a seat that did not accept them")
                if len(msg.bundle.messages) < 2:
                    raise AssertionError("a Bundle of fewer than two messages")
                self.bundles += 1
                self._unread.extend(msg.bundle.messages)
                msg = self._unread.popleft()
        self.track(msg)
        kind = msg.WhichOneof("kind")
        if kind == "result":
            # As the SDK does: nothing more to say, so the referee may end the call at once.
            with contextlib.suppress(grpc.aio.AioRpcError, asyncio.InvalidStateError):
                await self.call.done_writing()
        if kind == "ping" and self.answer_pings:
            with contextlib.suppress(grpc.aio.AioRpcError):  # the stream is ending; read says how
                await self.send(pong=pb.Pong(nonce=msg.ping.nonce))
        return msg

    async def until(
        self, predicate: Callable[[pb.RefereeMessage], bool], timeout_s: float = 30.0
    ) -> pb.RefereeMessage:
        """Read until a message matches (requests are not answered meanwhile)."""
        async with asyncio.timeout(timeout_s):
            while True:
                msg = await self.read()
                if msg is None:
                    raise AssertionError(f"stream ended ({self.error}) before the expected message")
                if predicate(msg):
                    return msg

    async def request(self, kind: int | None = None, timeout_s: float = 30.0) -> pb.DecisionRequest:
        """Read until a decision request (of a kind) arrives."""
        msg = await self.until(
            lambda m: m.WhichOneof("kind") == "request" and (kind is None or m.request.kind == kind),
            timeout_s,
        )
        return msg.request

    async def rejection(self, timeout_s: float = 30.0) -> pb.Rejection:
        """Read until a rejection arrives."""
        msg = await self.until(lambda m: m.WhichOneof("kind") == "rejection", timeout_s)
        return msg.rejection

    async def play(self, stop: Callable[[pb.RefereeMessage], bool] | None = None) -> None:
        """Answer every request with the policy until the match ends (or `stop` matches)."""
        for request in list(self.requests.values()):
            if request.request_id not in self.settled:  # read earlier but not answered yet
                await self.answer(request)
        while True:
            msg = await self.read()
            if msg is None or msg.WhichOneof("kind") == "result":
                return
            if stop is not None and stop(msg):
                return
            if msg.WhichOneof("kind") == "snapshot":
                for pending in msg.snapshot.pending:
                    if pending.request_id not in self.settled:
                        await self.answer(pending)
            if msg.WhichOneof("kind") == "request":
                await self.answer(msg.request)

    async def answer(self, request: pb.DecisionRequest) -> None:
        """Answer one request with the policy (a silent policy sends nothing)."""
        if self.policy is None:
            return
        chosen = self.policy(self, request)
        action = await chosen if asyncio.iscoroutine(chosen) else chosen
        if isinstance(action, pb.Action):
            await self.decide(request, action)

    def track(self, msg: pb.RefereeMessage) -> None:
        """Follow the seat's hand, round and state version from what the referee says."""
        if self.keep_received:
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
            self._follow(msg.event)

    def _follow(self, event: pb.GameEvent) -> None:
        self.version = event.state_version
        etype = event.type
        if etype == "round_started":
            self.round = json.loads(event.json)["round"]
            self.hand = set()
        elif etype in ("cards_dealt", "exchange_submitted", "cards_received", "played"):
            data = json.loads(event.json)
            if data["seat"] != self.seat:
                return
            if etype == "cards_dealt":
                self.hand |= set(data["cards"].split())
            elif etype == "exchange_submitted":
                self.hand -= {card for _, card in data["gifts"]}
            elif etype == "cards_received":
                self.hand |= {card for _, card in data["received"]}
            else:
                self.hand -= set(data["cards"].split())

    def sorted_hand(self) -> list[str]:
        """The hand, lowest first (R-DEF-2)."""
        return [str(c) for c in parse_cards(sorted(self.hand))]

    async def close(self) -> None:
        """Cancel the stream, and wait for the background play (`start`) to end."""
        if self.call is not None:
            self.call.cancel()
        if self.task is not None:
            with contextlib.suppress(asyncio.CancelledError):  # how a cancelled call's read ends
                await self.task


def exchange_lowest(seat: ScriptedSeat, request: pb.DecisionRequest) -> pb.Action:
    """The exchange the default would make: the lowest cards, to the recipients in order."""
    cards = seat.sorted_hand()
    gifts = [pb.Gift(to=to, card=card) for to, card in zip(request.exchange_to, cards, strict=False)]
    return pb.Action(exchange=pb.ExchangeCards(gifts=gifts))


def first_policy(seat: ScriptedSeat, request: pb.DecisionRequest) -> pb.Action:
    """A deterministic seat: the lowest exchange, no calls, declines windows, else the first legal action."""
    if request.kind == K.DECISION_KIND_EXCHANGE:
        return exchange_lowest(seat, request)
    legal = list(request.legal_actions)
    for preferred in QUIET:
        for action in legal:
            if action.text == preferred:
                return action
    return legal[0]


def random_policy(seed: int | str, bomb_rate: float = 0.5, call_rate: float = 0.03) -> Policy:
    """A random seat: rare calls, random plays, sometimes a bomb in a window."""
    rng = random.Random(seed)

    def choose(seat: ScriptedSeat, request: pb.DecisionRequest) -> pb.Action:
        legal = list(request.legal_actions)
        if request.kind == K.DECISION_KIND_EXCHANGE:
            cards = rng.sample(sorted(seat.hand), request.exchange_give)
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


def bomber_policy(seat: ScriptedSeat, request: pb.DecisionRequest) -> pb.Action:
    """As first_policy, but the first bomb in every window where it has one."""
    if request.kind == K.DECISION_KIND_BOMB_WINDOW:
        for action in request.legal_actions:
            if action.WhichOneof("kind") == "play":
                return action
    return first_policy(seat, request)


__all__ = [
    "QUIET",
    "Policy",
    "ScriptedSeat",
    "bomber_policy",
    "exchange_lowest",
    "first_policy",
    "random_policy",
]
