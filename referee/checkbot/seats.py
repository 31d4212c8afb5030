"""The kit's own seats: the other players of each check, scripted so that its situation happens.

Each is a plain wire client of the referee (no SDK): it answers its requests at once with its
policy, which sees the request and the seat's hand and returns an Action (None: stay silent).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Callable
from typing import Any

import grpc

from referee.match import PROTOCOL_VERSION
from referee.rules import parse_cards
from referee.server.codec import unbundle
from referee.wire.tichu.v1 import referee_pb2 as pb

K = pb.DecisionKind
# The answers of a seat that never calls and never bombs, in the order it prefers them.
# As clients.scripted.QUIET, which the referee may not import (tests/test_layers.py).
QUIET = ("no_grand_tichu", "no_tichu", "decline", "pass")


class KitSeat:
    """One scripted seat on its own Play stream."""

    def __init__(self, stub: Any, token: str, seat: int, policy: Policy | None = None) -> None:
        self.stub = stub
        self.token = token
        self.seat = seat
        self.policy: Policy = policy or quiet
        self.hand: set[str] = set()
        self.call: Any = None
        self.task: asyncio.Task[None] | None = None
        self.welcomed = asyncio.Event()

    def start(self) -> None:
        """Open the stream and play in the background."""
        self.call = self.stub.Play()
        self.task = asyncio.create_task(self._play())

    async def _play(self) -> None:
        hello = pb.Hello(
            token=self.token,
            bot_name=f"kit{self.seat}",
            bot_version="check-bot",
            protocol_version=PROTOCOL_VERSION,
        )
        with contextlib.suppress(grpc.aio.AioRpcError, asyncio.InvalidStateError):
            await self.call.write(pb.BotMessage(hello=hello))
            while (envelope := await self.call.read()) is not grpc.aio.EOF:
                for message in unbundle(envelope):
                    await self._take(message)

    async def _take(self, message: pb.RefereeMessage) -> None:
        kind = message.WhichOneof("kind")
        if kind == "welcome":
            self.welcomed.set()
        elif kind == "ping":
            await self.call.write(pb.BotMessage(pong=pb.Pong(nonce=message.ping.nonce)))
        elif kind == "snapshot":
            self.hand = set(json.loads(message.snapshot.observation_json)["hand"].split())
            for request in message.snapshot.pending:
                await self._answer(request)
        elif kind == "event":
            self._follow(message.event)
        elif kind == "request":
            await self._answer(message.request)

    def _follow(self, event: pb.GameEvent) -> None:
        if event.type not in ("cards_dealt", "exchange_submitted", "cards_received", "played"):
            return
        data = json.loads(event.json)
        if data.get("seat") != self.seat:
            return
        if event.type == "cards_dealt":
            self.hand |= set(data["cards"].split())
        elif event.type == "exchange_submitted":
            self.hand -= {card for _, card in data["gifts"]}
        elif event.type == "cards_received":
            self.hand |= {card for _, card in data["received"]}
        else:
            self.hand -= set(data["cards"].split())

    async def _answer(self, request: pb.DecisionRequest) -> None:
        action = self.policy(self, request)
        if action is not None:
            decision = pb.Decision(
                request_id=request.request_id, action=action, state_version=request.state_version
            )
            await self.call.write(pb.BotMessage(decision=decision))

    def lowest(self, count: int) -> list[str]:
        """The seat's `count` lowest cards (R-DEF-2 order)."""
        return [str(c) for c in parse_cards(sorted(self.hand))][:count]

    async def stop(self) -> None:
        """End the stream."""
        if self.call is not None:
            self.call.cancel()
        if self.task is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await self.task


Policy = Callable[[KitSeat, pb.DecisionRequest], pb.Action | None]


def quiet(seat: KitSeat, request: pb.DecisionRequest) -> pb.Action:
    """No calls, no bombs: the lowest exchange, else decline or pass, else the first legal action."""
    if request.kind == K.DECISION_KIND_EXCHANGE:
        gifts = [
            pb.Gift(to=to, card=card)
            for to, card in zip(request.exchange_to, seat.lowest(request.exchange_give), strict=False)
        ]
        return pb.Action(exchange=pb.ExchangeCards(gifts=gifts))
    legal = list(request.legal_actions)
    for preferred in QUIET:
        for action in legal:
            if action.text == preferred:
                return action
    return legal[0]


def bomber(seat: KitSeat, request: pb.DecisionRequest) -> pb.Action:
    """As quiet, but a bomb in every window where it has one."""
    if request.kind == K.DECISION_KIND_BOMB_WINDOW:
        bombs = [a for a in request.legal_actions if a.WhichOneof("kind") == "play"]
        if bombs:
            return bombs[0]
    return quiet(seat, request)
