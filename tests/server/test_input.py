"""Bad input of every kind gets a typed Rejection and leaves the match intact; floods are cut off."""

from __future__ import annotations

import asyncio
import contextlib

import grpc

from referee.match.records import Disconnected, RejectionRecord
from referee.scripted import K, random_policy
from referee.wire.tichu.v1 import referee_pb2 as pb
from tests.server.support import Bot, join, referee, run
from tests.server.test_windows import play, seated

R = pb.RejectionReason


async def expect(bot: Bot, reason: int, rule: str = "", text: str = "") -> pb.Rejection:
    """The next rejection, checked."""
    rejection = await bot.rejection()
    assert rejection.reason == reason, rejection
    assert rejection.rule == rule, rejection
    assert text in rejection.message, rejection
    return rejection


def test_malformed_and_misdirected_decisions_are_rejected_and_the_game_goes_on() -> None:
    async def scenario() -> None:
        async with referee() as ref:
            response = await ref.create(rules_json='{"match_mode": "fixed_rounds:1"}', seed="42")
            table = ref.table(response.match_id)
            tokens = list(response.seat_tokens)
            early = Bot(ref, tokens[0], random_policy("i/0"))
            await early.open()
            await early.send(decision=pb.Decision(request_id=1, action=pb.Action(text="pass")))
            await expect(early, R.REJECTION_REASON_OUT_OF_ORDER, text="not started")
            others = await join(ref, tokens[1:], [random_policy(f"i/{s}") for s in (1, 2, 3)])
            bots = [early, *others]
            gt = await early.request(K.DECISION_KIND_GRAND_TICHU)
            seat1 = await bots[1].request(K.DECISION_KIND_GRAND_TICHU)
            version = table.state_version

            async def decide(
                action: pb.Action | None, request_id: int = gt.request_id, state: int = -1
            ) -> None:
                decision = pb.Decision(
                    request_id=request_id, state_version=gt.state_version if state < 0 else state
                )
                if action is not None:
                    decision.action.CopyFrom(action)
                await early.send(decision=decision)

            await decide(None)
            await expect(early, R.REJECTION_REASON_INVALID, text="needs an action")
            await decide(pb.Action())
            await expect(early, R.REJECTION_REASON_INVALID, text="empty")
            await decide(pb.Action(text="fly away"))
            await expect(early, R.REJECTION_REASON_INVALID, text="unknown action")
            await decide(pb.Action(text="play 7s"))
            await expect(early, R.REJECTION_REASON_INVALID, text="grand_tichu or no_grand_tichu")
            await decide(pb.Action(call_tichu=pb.Empty()))
            await expect(early, R.REJECTION_REASON_INVALID, text="OutOfTurn")
            await decide(gt.legal_actions[1], request_id=9999)
            rejection = await expect(early, R.REJECTION_REASON_UNKNOWN_REQUEST)
            assert rejection.request_id == 9999
            await decide(gt.legal_actions[1], request_id=seat1.request_id)  # another seat's request
            await expect(early, R.REJECTION_REASON_UNKNOWN_REQUEST, text="no open request")
            await decide(gt.legal_actions[1], state=gt.state_version + 5)
            await expect(early, R.REJECTION_REASON_INVALID, text="is for state")
            await early.send(hello=pb.Hello(token=tokens[0]))
            await expect(early, R.REJECTION_REASON_OUT_OF_ORDER, text="Hello")
            await early.send(out_of_turn=pb.OutOfTurn(state_version=version))
            await expect(early, R.REJECTION_REASON_INVALID, text="needs an action")
            await early.send(
                out_of_turn=pb.OutOfTurn(action=pb.Action(call_tichu=pb.Empty()), state_version=version + 3)
            )
            await expect(early, R.REJECTION_REASON_INVALID, text="does not exist yet")
            await early.send(
                out_of_turn=pb.OutOfTurn(action=pb.Action(call_tichu=pb.Empty()), state_version=version)
            )
            await expect(early, R.REJECTION_REASON_ILLEGAL, rule="R-CALL-1")
            assert table.state_version == version  # nothing changed
            await decide(gt.legal_actions[1])
            await decide(gt.legal_actions[1])  # twice
            await expect(early, R.REJECTION_REASON_UNKNOWN_REQUEST, text="answered")

            # The exchange: answered wrongly in every way first.
            await bots[1].decide(seat1, seat1.legal_actions[1])
            playing = [asyncio.create_task(bot.play()) for bot in bots[1:]]
            step = await early.request(K.DECISION_KIND_TICHU_STEP)
            await early.decide(step, step.legal_actions[1])
            exchange = await early.request(K.DECISION_KIND_EXCHANGE)
            hand = early.sorted_hand()
            missing = next(card for card in ("2j", "2s", "2p", "2t", "3j") if card not in early.hand)

            def gifts(*pairs: tuple[int, str]) -> pb.Action:
                return pb.Action(
                    exchange=pb.ExchangeCards(gifts=[pb.Gift(to=to, card=card) for to, card in pairs])
                )

            wrong = [
                (gifts((1, hand[0]), (2, hand[0]), (3, hand[1])), R.REJECTION_REASON_INVALID, "R-EXCH-1"),
                (gifts((1, hand[0]), (2, hand[1])), R.REJECTION_REASON_INVALID, "R-EXCH-1"),
                (gifts((1, hand[0]), (1, hand[1]), (3, hand[2])), R.REJECTION_REASON_INVALID, "R-EXCH-1"),
                (gifts((1, hand[0]), (2, hand[1]), (3, "Zz")), R.REJECTION_REASON_INVALID, "R-DECK-1"),
                (gifts((1, hand[0]), (2, hand[1]), (3, missing)), R.REJECTION_REASON_ILLEGAL, "R-EXCH-1"),
            ]
            for action, reason, rule in wrong:
                await early.decide(exchange, action)
                rejection = await expect(early, reason, rule=rule)
                assert rejection.request_id == exchange.request_id
            # The request stayed open all along: a right answer is still accepted, and the game ends.
            await early.decide(exchange, gifts((1, hand[0]), (2, hand[1]), (3, hand[2])))
            await asyncio.gather(early.play(), *playing)
            assert all(bot.result is not None and not bot.result.forfeit for bot in bots)
            stats = table.statistics()["seats"]
            assert stats[0]["rejections"] == 19 and stats[0]["timeouts"] == 0
            assert sum(isinstance(r, RejectionRecord) for r in table.records) == 19

    run(scenario())


def test_bad_plays_are_rejected_with_the_rule_broken() -> None:
    async def scenario() -> None:
        async with referee() as ref:
            _, bots = await seated(ref)
            lead = await bots[0].request(K.DECISION_KIND_PLAY)
            invalid, illegal = R.REJECTION_REASON_INVALID, R.REJECTION_REASON_ILLEGAL
            cases = [
                (pb.Action(play=pb.PlayCards(cards=["Xz"])), invalid, "R-DECK-1"),
                (pb.Action(play=pb.PlayCards(cards=["7s", "7s"])), invalid, "R-DECK-1"),
                (pb.Action(play=pb.PlayCards(partner=-1)), invalid, ""),
                (play("Kp"), illegal, "R-INFO-2"),
                (play("7s 9j"), illegal, "R-COMB-1"),
                (pb.Action(pass_turn=pb.Empty()), illegal, "R-TRICK-2"),
                (pb.Action(text="play 7s wish=7"), invalid, "R-WISH-1"),
                (pb.Action(text="play 7s phoenix=7"), invalid, "R-PHX-5"),
                (pb.Action(decline=pb.Empty()), invalid, ""),
            ]
            for action, reason, rule in cases:
                await bots[0].decide(lead, action)
                await expect(bots[0], reason, rule=rule)
            # Another seat cannot play on P0's turn.
            await bots[2].send(out_of_turn=pb.OutOfTurn(action=play("6j"), state_version=lead.state_version))
            await expect(bots[2], R.REJECTION_REASON_ILLEGAL, rule="R-TRICK-3")
            await bots[0].decide(lead, play("10j"))
            window = await bots[0].request(K.DECISION_KIND_BOMB_WINDOW)
            await bots[0].decide(window, play("9j"))  # not a bomb
            await expect(bots[0], R.REJECTION_REASON_ILLEGAL, rule="R-BOMB-9")

    run(scenario())


def test_a_flood_is_rate_limited_then_cut_off_and_the_match_survives() -> None:
    async def scenario() -> None:
        async with referee() as ref:
            response = await ref.create(rules_json='{"match_mode": "fixed_rounds:1"}', seed="77")
            tokens = list(response.seat_tokens)
            bots = await join(ref, tokens, [random_policy(f"fl/{s}") for s in range(4)])
            # A burst a little over the limit: rejections, but the stream stays.
            for nonce in range(150):
                await bots[0].send(ping=pb.Ping(nonce=nonce))
            limited = 0
            pongs = 0
            while pongs + limited < 150:
                msg = await bots[0].until(lambda m: m.HasField("pong") or m.HasField("rejection"))
                if msg.HasField("pong"):
                    pongs += 1
                else:
                    assert msg.rejection.reason == R.REJECTION_REASON_RATE_LIMITED
                    limited += 1
            assert pongs >= 100 and limited >= 1
            playing = [asyncio.create_task(bot.play()) for bot in (bots[0], bots[2], bots[3])]
            # A flood that goes on: the stream is closed with RESOURCE_EXHAUSTED.
            with contextlib.suppress(grpc.aio.AioRpcError):
                for nonce in range(1000):
                    await bots[1].send(ping=pb.Ping(nonce=nonce))
            while await bots[1].read() is not None:
                pass
            # A write that races the close makes the client library report INTERNAL instead of
            # the status the referee sent, so the referee's own record is checked as well.
            assert bots[1].error is not None
            assert bots[1].error.code() in (grpc.StatusCode.RESOURCE_EXHAUSTED, grpc.StatusCode.INTERNAL)
            table = ref.table(response.match_id)
            dropped = [r for r in table.records if isinstance(r, Disconnected)]
            assert [(r.seat, r.why, r.status) for r in dropped] == [(1, "flooded", "RESOURCE_EXHAUSTED")]
            # The seat comes back with its token and the match is played to the end.
            back = Bot(ref, tokens[1], random_policy("fl/1b"))
            await back.open()
            await asyncio.gather(back.play(), *playing)
            assert back.result is not None and back.result == bots[0].result and not back.result.forfeit
            stats = ref.table(response.match_id).statistics()["seats"]
            # Under load a later answer of seat 0 may also hit the limit: at least the burst is counted.
            assert stats[0]["rate_limited"] >= limited and stats[1]["rate_limited"] >= 100

    run(scenario())
