"""Bomb windows over the wire (R-BOMB-5, R-BOMB-9), stale bombs, and Tichu calls out of turn.

End to end only: a real server and real streams, with windows long enough for any machine. The
exact timing of windows (ends, fixed lengths, silent seats) is tested on the match core with
explicit times in tests/match/test_windows.py.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from referee.match import ClockSettings
from referee.match.records import WindowRecord
from referee.rules import Decline, State, state_from_json
from referee.scripted import K
from referee.wire.tichu.v1 import referee_pb2 as pb
from tests.server.support import CALM, Bot, Referee, join, referee, run

# P0 leads; P1 and P2 each hold a four-of-a-kind bomb; P3 holds none. Nobody has played a card.
POSITION: dict[str, Any] = {
    "hands": ["7s 9j 10j", "3j 3s 3p 3t 4j", "5j 5s 5p 5t 6j", "2j 8p Kj"],
    "turn": 0,
    "played": [False, False, False, False],
    "config": {"target_score": 50},
}


def position() -> State:
    """The test position as an engine State."""
    return state_from_json(POSITION)


def windows_of(ref: Referee, match_id: str) -> list[WindowRecord]:
    """The window records the referee has written so far."""
    return [r for r in ref.table(match_id).records if isinstance(r, WindowRecord)]


async def seated(ref: Referee, clock: ClockSettings = CALM) -> tuple[str, list[Bot]]:
    """A match from the test position with four connected (manually driven) bots."""
    table, tokens = ref.create_here(initial_state=position(), clock=clock)
    bots = await join(ref, tokens, [None] * 4)
    return table.match_id, bots


def play(cards: str, tichu: bool = False) -> pb.Action:
    """A play action in structured form (partner -1: proto3 would read an unset partner as seat 0)."""
    return pb.Action(play=pb.PlayCards(cards=cards.split(), tichu=tichu))


DECLINE = pb.Action(decline=pb.Empty())


def events_of(bot: Bot, etype: str) -> list[dict[str, Any]]:
    """The JSON of every event of a type that the bot received."""
    found = []
    for msg in bot.received:
        if msg.WhichOneof("kind") == "event" and msg.event.type == etype:
            found.append(json.loads(msg.event.json))
    return found


async def lead_seven(bots: list[Bot]) -> list[pb.DecisionRequest]:
    """P0 leads 7s; every seat then gets its window request. Returns them in seat order."""
    lead = await bots[0].request(K.DECISION_KIND_PLAY)
    assert [a.text for a in lead.legal_actions] == ["play 7s", "play 9j", "play 10j"]
    await bots[0].decide(lead, play("7s"))
    return [await bot.request(K.DECISION_KIND_BOMB_WINDOW) for bot in bots]


def test_window_is_offered_to_every_seat_at_once_whatever_the_hands() -> None:
    async def scenario() -> None:
        async with referee() as ref:
            match_id, bots = await seated(ref)
            windows = await lead_seven(bots)
            # Same version, same deadline, one request each, bomb or no bomb (R-BOMB-5).
            assert len({w.state_version for w in windows}) == 1
            assert {w.deadline_ms for w in windows} == {CALM.window_ms}
            assert [a.text for a in windows[3].legal_actions] == ["decline"]
            assert [a.text for a in windows[1].legal_actions] == ["decline", "play 3j 3s 3p 3t"]
            # The requests went out in window order, seat 1 first and the actor last: their ids
            # are handed out in the order they are made.
            issued = sorted(range(4), key=lambda seat: windows[seat].request_id)
            assert issued == [1, 2, 3, 0] == list(ref.table(match_id).state.window)

    run(scenario())


def test_two_bombs_in_one_window_the_earlier_in_window_order_wins() -> None:
    async def scenario() -> None:
        async with referee() as ref:
            match_id, bots = await seated(ref)
            windows = await lead_seven(bots)
            # Seat 2 answers first, seat 1 last: arrival order must not matter (R-BOMB-9).
            await bots[2].decide(windows[2], play("5j 5s 5p 5t"))
            await bots[3].decide(windows[3], DECLINE)
            await bots[0].decide(windows[0], DECLINE)
            await bots[1].decide(windows[1], play("3j 3s 3p 3t"))
            # The next window opens after the bomber: seat 2 is asked again and may re-submit.
            again = await bots[2].request(K.DECISION_KIND_BOMB_WINDOW)
            assert "play 5j 5s 5p 5t" in [a.text for a in again.legal_actions]
            plays = events_of(bots[2], "played")
            assert [(p["seat"], p["cards"], p["out_of_turn"]) for p in plays] == [
                (0, "7s", False),
                (1, "3j 3s 3p 3t", True),
            ]
            window = windows_of(ref, match_id)[0]
            assert window.bomb == 1 and window.discarded == (2,)
            assert window.order == (1, 2, 3, 0)
            others = [await bot.request(K.DECISION_KIND_BOMB_WINDOW) for bot in (bots[3], bots[0], bots[1])]
            await bots[2].decide(again, play("5j 5s 5p 5t"))
            for bot, request in zip((bots[3], bots[0], bots[1]), others, strict=True):
                await bot.decide(request, DECLINE)
            await bots[3].until(lambda m: m.WhichOneof("kind") == "event" and m.event.type == "played")
            assert events_of(bots[3], "played")[-1]["seat"] == 2
            assert ref.table(match_id).statistics()["seats"][2]["bombs_played"] == 1

    run(scenario())


def test_a_stale_bomb_is_rejected_with_what_changed() -> None:
    async def scenario() -> None:
        async with referee() as ref:
            _, bots = await seated(ref)
            before = bots[1].version
            windows = await lead_seven(bots)
            await bots[1].send(out_of_turn=pb.OutOfTurn(action=play("3j 3s 3p 3t"), state_version=before))
            rejection = await bots[1].rejection()
            assert rejection.reason == pb.REJECTION_REASON_STALE
            assert f"a play by seat 0 (state {before} -> {before + 1})" in rejection.message
            assert rejection.state_version == windows[1].state_version
            # Nothing changed: the window is still open for seat 1, which may now bomb for real.
            await bots[1].send(
                out_of_turn=pb.OutOfTurn(action=play("3j 3s 3p 3t"), state_version=windows[1].state_version)
            )
            for seat in (0, 2, 3):
                await bots[seat].decide(windows[seat], DECLINE)
            await bots[0].until(lambda m: m.WhichOneof("kind") == "event" and m.event.type == "played")
            assert events_of(bots[0], "played")[-1]["seat"] == 1

    run(scenario())


def test_a_bomb_outside_a_window_is_rejected_by_the_rules() -> None:
    async def scenario() -> None:
        async with referee() as ref:
            _, bots = await seated(ref)
            lead = await bots[0].request(K.DECISION_KIND_PLAY)
            # Before the lead the right to lead cannot be bombed (R-BOMB-2).
            await bots[1].send(
                out_of_turn=pb.OutOfTurn(action=play("3j 3s 3p 3t"), state_version=lead.state_version)
            )
            rejection = await bots[1].rejection()
            assert rejection.reason == pb.REJECTION_REASON_ILLEGAL
            assert rejection.rule == "R-BOMB-2"
            # A pass is not something one sends out of turn.
            await bots[1].send(
                out_of_turn=pb.OutOfTurn(
                    action=pb.Action(pass_turn=pb.Empty()), state_version=lead.state_version
                )
            )
            assert (await bots[1].rejection()).reason == pb.REJECTION_REASON_INVALID
            # The leader's own request is untouched and still answerable.
            await bots[0].decide(lead, play("9j"))
            await bots[0].request(K.DECISION_KIND_BOMB_WINDOW)

    run(scenario())


def test_a_tichu_call_out_of_turn_is_public_and_keeps_requests_open() -> None:
    async def scenario() -> None:
        async with referee() as ref:
            match_id, bots = await seated(ref)
            lead = await bots[0].request(K.DECISION_KIND_PLAY)
            await bots[3].send(
                out_of_turn=pb.OutOfTurn(
                    action=pb.Action(call_tichu=pb.Empty()), state_version=lead.state_version
                )
            )
            for bot in bots:
                called = await bot.until(
                    lambda m: m.WhichOneof("kind") == "event" and m.event.type == "called"
                )
                assert json.loads(called.event.json) == {"type": "called", "seat": 3, "call": "tichu"}
                assert called.event.state_version == lead.state_version + 1
            # A second call is refused by the rules (R-CALL-2); the call did not cancel P0's request.
            await bots[3].send(
                out_of_turn=pb.OutOfTurn(
                    action=pb.Action(call_tichu=pb.Empty()), state_version=lead.state_version + 1
                )
            )
            rejection = await bots[3].rejection()
            assert (rejection.reason, rejection.rule) == (pb.REJECTION_REASON_ILLEGAL, "R-CALL-2")
            assert not any(m.WhichOneof("kind") == "cancelled" for m in bots[0].received)
            await bots[0].decide(lead, play("7s"))  # the request's own version is still the one to echo
            await bots[0].request(K.DECISION_KIND_BOMB_WINDOW)
            stats = ref.table(match_id).statistics()["seats"]
            assert stats[3]["tichu_calls"] == 1

    run(scenario())


def test_a_window_bomb_with_the_tichu_flag_calls_first() -> None:
    async def scenario() -> None:
        async with referee() as ref:
            _, bots = await seated(ref)
            windows = await lead_seven(bots)
            await bots[1].decide(windows[1], play("3j 3s 3p 3t", tichu=True))
            for seat in (0, 2, 3):
                await bots[seat].decide(windows[seat], DECLINE)
            await bots[2].until(
                lambda m: (
                    m.WhichOneof("kind") == "event" and m.event.type == "played" and "3j" in m.event.json
                )
            )
            kinds = [
                json.loads(m.event.json)["type"] for m in bots[2].received if m.WhichOneof("kind") == "event"
            ]
            assert kinds[-2:] == ["called", "played"]  # R-CALL-7: the call, then the play

    run(scenario())


def test_fixed_length_windows_take_their_clock_from_the_match() -> None:
    """The clock settings a match is created with reach its windows: in fixed-length mode the window
    lasts its full length even when every seat answers at once. A lower bound, which a slow machine
    cannot miss; the exact ends are tested on the core."""

    async def scenario(fixed: bool) -> WindowRecord:
        clock = dataclasses.replace(CALM, grace_ms=1_000, window_ms=1_000, fixed_length_windows=True)
        async with referee() as ref:
            match_id, bots = await seated(ref, clock if fixed else CALM)
            windows = await lead_seven(bots)
            for bot, request in zip(bots, windows, strict=True):
                await bot.decide(request, DECLINE)
            await bots[1].request(K.DECISION_KIND_PLAY)
            (window,) = windows_of(ref, match_id)
            return window

    fixed = run(scenario(fixed=True))
    assert fixed.opened_ms is not None
    # The referee's own times, rounded to 0.1 ms each: window_ms + grace_ms at least.
    assert fixed.t_ms - fixed.opened_ms >= 2_000 - 0.2
    assert [answer for _, answer in fixed.answers] == [Decline()] * 4
    free = run(scenario(fixed=False))
    assert free.opened_ms is not None
    # Resolved with the last answer, long before its 20 s end.
    assert free.t_ms - free.opened_ms < CALM.window_ms


def test_a_discarded_bombs_call_is_discarded_with_it() -> None:
    async def scenario() -> None:
        async with referee() as ref:
            match_id, bots = await seated(ref)
            windows = await lead_seven(bots)
            await bots[2].decide(windows[2], play("5j 5s 5p 5t", tichu=True))
            await bots[1].decide(windows[1], play("3j 3s 3p 3t"))
            for seat in (0, 3):
                await bots[seat].decide(windows[seat], DECLINE)
            await bots[3].request(K.DECISION_KIND_BOMB_WINDOW)
            # Seat 1's bomb applied; seat 2's was discarded, and its call with it: a call made
            # then would have told the table that seat 2 had answered with a bomb.
            assert events_of(bots[3], "called") == []
            assert events_of(bots[3], "played")[-1]["seat"] == 1
            window = windows_of(ref, match_id)[0]
            assert (window.bomb, window.discarded) == (1, (2,))

    run(scenario())
