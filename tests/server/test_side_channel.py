"""No side channel over the wire: others' exchanges do not move a seat's state version (R-INFO-1)."""

from __future__ import annotations

import json
from collections.abc import Sequence

from referee.scripted import K
from referee.wire.tichu.v1 import referee_pb2 as pb
from tests.server.support import join, referee, run

OPEN_EXCHANGE = json.dumps({"tichu_call_exchange_mode": "open"})  # Tichu calls during the exchange


def test_a_call_on_the_latest_version_seen_is_accepted_while_others_exchange() -> None:
    async def scenario() -> None:
        async with referee() as ref:
            response = await ref.create(rules_json=OPEN_EXCHANGE, seed="16")
            bots = await join(ref, list(response.seat_tokens), [None] * 4)
            for bot in bots:
                grand = await bot.request(K.DECISION_KIND_GRAND_TICHU)
                no = next(a for a in grand.legal_actions if a.text == "no_grand_tichu")
                await bot.decide(grand, no)
            exchanges = [await bot.request(K.DECISION_KIND_EXCHANGE) for bot in bots]
            assert {r.state_version for r in exchanges} == {4}
            watcher = bots[0]
            for bot, request in zip(bots[1:3], exchanges[1:3], strict=True):
                gifts = sorted(bot.hand)[: len(request.exchange_to)]
                await bot.decide(request, _exchange(request.exchange_to, gifts))
                own = await bot.until(lambda m: m.WhichOneof("kind") == "event")
                assert (own.event.type, own.event.state_version) == ("exchange_submitted", 5)
            # The watcher has seen version 4 and nothing since; two exchanges are in.
            await watcher.send(out_of_turn=_call(watcher.version))
            called = await watcher.until(lambda m: m.WhichOneof("kind") in ("event", "rejection"))
            assert called.WhichOneof("kind") == "event", called
            assert (called.event.type, called.event.state_version) == ("called", 5)
            # A Rejection tells the version the watcher knows, not the match's (7).
            await watcher.send(out_of_turn=_call(5))
            refused = await watcher.rejection()
            assert (refused.rule, refused.state_version) == ("R-CALL-2", 5)
            assert ref.table(response.match_id).state_version == 7
            for bot in bots:
                await bot.close()

    run(scenario())


def _exchange(recipients: Sequence[int], cards: list[str]) -> pb.Action:
    gifts = [pb.Gift(to=to, card=card) for to, card in zip(recipients, cards, strict=True)]
    return pb.Action(exchange=pb.ExchangeCards(gifts=gifts))


def _call(version: int) -> pb.OutOfTurn:
    return pb.OutOfTurn(action=pb.Action(text="tichu"), state_version=version)
