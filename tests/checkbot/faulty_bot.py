"""Bots with one fault each, for the kit's tests (the kit has never seen them): a raw wire client.

`python -m tests.checkbot.faulty_bot MODE SERVER TOKEN`. Apart from its fault each plays the
first legal action (the lowest exchange), so that the kit's other checks pass.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys

import grpc

from referee.match import PROTOCOL_VERSION
from referee.rules import parse_cards
from referee.server.codec import unbundle
from referee.wire.tichu.v1 import referee_pb2 as pb
from referee.wire.tichu.v1 import referee_pb2_grpc

K = pb.DecisionKind
MODES = (
    "ignores_wish",
    "bad_windows",
    "never_reconnects",
    "crashes_on_duplicate",
    "answers_twice",
    "silent_exchange",
    "resends_stale",
    "plain",  # no fault: SERVER and TOKEN may be "env" (read TICHU_SERVER, TICHU_TOKEN), a SEAT is checked
)
# resends_stale: answers every copy of a request, and sends an answer again when it is refused.
RESENDS = 5


class FaultyBot:
    def __init__(self, mode: str, token: str) -> None:
        self.mode = mode
        self.token = token
        self.hand: list[str] = []
        self.seen: set[int] = set()
        self.done = False
        self.seat = -1
        self.last_seq = 0
        self.sent: dict[int, pb.Decision] = {}
        self.resent = 0
        self.snapshot_version = -1

    def action(self, request: pb.DecisionRequest) -> pb.Action | None:
        legal = list(request.legal_actions)
        if request.kind == K.DECISION_KIND_EXCHANGE:
            if self.mode == "silent_exchange":
                return None
            cards = [str(c) for c in parse_cards(self.hand)][: request.exchange_give]
            gifts = [pb.Gift(to=to, card=card) for to, card in zip(request.exchange_to, cards, strict=False)]
            return pb.Action(exchange=pb.ExchangeCards(gifts=gifts))
        if request.kind == K.DECISION_KIND_BOMB_WINDOW and self.mode == "bad_windows" and self.hand:
            # Its lowest single, as if the window were a turn.
            return pb.Action(play=pb.PlayCards(cards=[str(parse_cards(self.hand)[0])]))
        if request.kind == K.DECISION_KIND_PLAY and self.mode == "ignores_wish" and self.hand:
            # The highest card, whatever the legal list says.
            return pb.Action(play=pb.PlayCards(cards=[str(parse_cards(self.hand)[-1])]))
        for quiet in ("no_grand_tichu", "no_tichu", "decline", "pass"):
            for action in legal:
                if action.text == quiet:
                    return action
        return legal[0]

    async def session(self, stub: referee_pb2_grpc.RefereeStub) -> None:
        call = stub.Play()
        hello = pb.Hello(
            token=self.token, bot_name=self.mode, bot_version="0", protocol_version=PROTOCOL_VERSION
        )
        await call.write(pb.BotMessage(hello=hello))
        while (envelope := await call.read()) is not grpc.aio.EOF:
            for message in unbundle(envelope):
                kind = message.WhichOneof("kind")
                if kind == "result":
                    self.done = True
                    return
                if kind == "welcome":
                    self.seat = message.welcome.seat
                if kind == "rejection" and self.mode == "resends_stale":
                    sent = self.sent.get(message.rejection.request_id)
                    if sent is not None and self.resent < RESENDS:
                        self.resent += 1
                        await call.write(pb.BotMessage(decision=sent))
                if kind == "ping":
                    await call.write(pb.BotMessage(pong=pb.Pong(nonce=message.ping.nonce)))
                requests: list[pb.DecisionRequest] = []
                if kind == "snapshot":
                    self.hand = json.loads(message.snapshot.observation_json)["hand"].split()
                    self.snapshot_version = message.snapshot.state_version
                    requests = list(message.snapshot.pending)
                elif kind == "event":
                    self.follow(message.event)
                elif kind == "request":
                    requests = [message.request]
                for request in requests:
                    if request.request_id in self.seen and self.mode == "crashes_on_duplicate":
                        raise RuntimeError(f"request {request.request_id} again?")
                    if request.request_id in self.seen and self.mode not in (
                        "answers_twice",
                        "resends_stale",
                    ):
                        continue
                    self.seen.add(request.request_id)
                    action = self.action(request)
                    if action is not None:
                        decision = pb.Decision(
                            request_id=request.request_id, action=action, state_version=request.state_version
                        )
                        self.sent[request.request_id] = decision
                        await call.write(pb.BotMessage(decision=decision))

    def follow(self, event: pb.GameEvent) -> None:
        if event.seq <= self.last_seq or event.state_version <= self.snapshot_version:
            return  # heard already, or in the Snapshot
        self.last_seq = event.seq
        data = json.loads(event.json)
        if data.get("seat") != self.seat:
            return
        if event.type == "cards_dealt":
            self.hand += data["cards"].split()
        elif event.type == "played":
            self.hand = [c for c in self.hand if c not in data["cards"].split()]
        elif event.type == "exchange_submitted":
            self.hand = [c for c in self.hand if c not in {card for _, card in data["gifts"]}]
        elif event.type == "cards_received":
            self.hand += [card for _, card in data["received"]]


async def main(mode: str, server: str, token: str) -> int:
    bot = FaultyBot(mode, token)
    async with grpc.aio.insecure_channel(server) as channel:
        stub = referee_pb2_grpc.RefereeStub(channel)  # type: ignore[no-untyped-call]
        while not bot.done:
            try:
                await bot.session(stub)
            except grpc.aio.AioRpcError:
                if mode == "never_reconnects":
                    return 1
                await asyncio.sleep(0.3)
    return 0


if __name__ == "__main__":
    mode, server, token, *seat = sys.argv[1:]
    assert mode in MODES, mode
    if seat:
        assert seat == [os.environ["TICHU_SEAT"]], (seat, os.environ["TICHU_SEAT"])
    server = os.environ["TICHU_SERVER"] if server == "env" else server
    token = os.environ["TICHU_TOKEN"] if token == "env" else token
    sys.exit(asyncio.run(main(mode, server, token)))
