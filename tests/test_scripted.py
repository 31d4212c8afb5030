"""referee/scripted.py: the one scripted wire seat, in both of its ways of playing, and its policies."""

from __future__ import annotations

import asyncio

from referee.scripted import K, ScriptedSeat, bomber_policy, first_policy
from referee.wire.tichu.v1 import referee_pb2 as pb
from tests.server.support import referee, run

ONE_DEAL = '{"match_mode": "fixed_rounds:1"}'
DECLINE = pb.Action(decline=pb.Empty(), text="decline")
FOUR_SEVENS = pb.Action(play=pb.PlayCards(cards=["7j", "7s", "7p", "7t"]), text="play 7j 7s 7p 7t")
ROYAL_FLUSH = pb.Action(play=pb.PlayCards(cards=["10j", "Jj", "Qj", "Kj", "Aj"]), text="play 10j Jj Qj Kj Aj")


def window(*legal: pb.Action) -> pb.DecisionRequest:
    return pb.DecisionRequest(request_id=7, kind=K.DECISION_KIND_BOMB_WINDOW, legal_actions=legal)


def test_the_bomber_bombs_with_its_first_bomb_where_the_quiet_seat_declines() -> None:
    seat = ScriptedSeat(lambda: None, "token")
    offered = window(DECLINE, FOUR_SEVENS, ROYAL_FLUSH)
    assert bomber_policy(seat, offered) == FOUR_SEVENS
    assert first_policy(seat, offered) == DECLINE


def test_the_bomber_without_a_bomb_answers_as_the_quiet_seat() -> None:
    seat = ScriptedSeat(lambda: None, "token")
    seat.hand = {"2j", "3s", "Kp", "Aj"}
    assert bomber_policy(seat, window(DECLINE)) == DECLINE
    # Outside windows it is the quiet seat: the lowest cards given, in R-DEF-2 order.
    exchange = pb.DecisionRequest(
        request_id=8, kind=K.DECISION_KIND_EXCHANGE, exchange_to=[1, 2, 3], exchange_give=3
    )
    gifts = bomber_policy(seat, exchange).exchange.gifts
    assert [(g.to, g.card) for g in gifts] == [(1, "2j"), (2, "3s"), (3, "Kp")]
    assert bomber_policy(seat, exchange) == first_policy(seat, exchange)


def test_seats_started_in_the_background_play_the_match_to_its_result() -> None:
    # The check-bot kit's way: start() and carry on; close() ends the stream and the task.
    async def scenario() -> None:
        async with referee() as ref:
            response = await ref.create(rules_json=ONE_DEAL, seed="scripted-background")
            policies = [first_policy, bomber_policy, first_policy, bomber_policy]
            seats = [
                ScriptedSeat(ref.stub.Play, token, policy, f"kit{index}", bot_version="check-bot")
                for index, (token, policy) in enumerate(zip(response.seat_tokens, policies, strict=True))
            ]
            for seat in seats:
                seat.start()
            tasks = [seat.task for seat in seats]
            assert all(task is not None for task in tasks)
            await asyncio.gather(*(task for task in tasks if task is not None))
            assert all(seat.result is not None for seat in seats)
            assert [seat.seat for seat in seats] == [0, 1, 2, 3]
            assert seats[0].received[0].welcome.seat == 0
            for seat in seats:
                await seat.close()

    run(scenario(), timeout_s=120)


def test_closing_a_seat_before_its_background_play_begins_ends_it() -> None:
    # The call is opened by start() itself, so an early close() has one to cancel, and does not
    # wait on a seat still playing.
    async def scenario() -> None:
        async with referee() as ref:
            response = await ref.create(rules_json=ONE_DEAL, seed="scripted-early-close")
            seat = ScriptedSeat(ref.stub.Play, response.seat_tokens[0], first_policy)
            seat.start()
            await seat.close()
            assert seat.task is not None and seat.task.done()
            assert seat.result is None

    run(scenario(), timeout_s=60)
