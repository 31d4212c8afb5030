"""Decision clocks with explicit times: limit, bank, grace, timeouts and their defaults (R-DEF-1)."""

from __future__ import annotations

import dataclasses

import pytest

from referee.match import ClockSettings, Match, RejectionReason
from referee.match.messages import Delivered, Output, Request
from referee.match.records import DecisionRecord, EventRecord, ViolationRecord
from referee.rules import DecisionKind, Phase, cards_of, default_action, state_from_json, to_act
from tests.match.support import (
    CLOCK,
    answer,
    new_match,
    records,
    rejections,
    request_of,
    requests_by_seat,
    seat_all,
    stream,
    tick,
)

# Limit 1 s, bank 4 s, grace 0.5 s: a regular request is due 5.5 s after it leaves.
T0 = 10.0
DUE = T0 + 1.0 + 4.0 + 0.5
# A microsecond: what "not a moment before" means here.
US = 1e-6


def grand_tichu_table() -> tuple[Match, dict[int, Request]]:
    """A new game seated at T0: every seat's Grand Tichu request."""
    match = new_match(t=T0)
    return match, requests_by_seat(seat_all(match, T0))


def test_a_regular_request_shows_its_limit_and_bank() -> None:
    match, reqs = grand_tichu_table()
    assert sorted(reqs) == [0, 1, 2, 3]
    for request in reqs.values():
        assert request.kind is DecisionKind.GRAND_TICHU
        # deadline_ms is the whole time left (limit + bank); the grace is the referee's secret margin.
        assert (request.deadline_ms, request.bank_left_ms) == (5_000, 4_000)
    assert match.next_deadline() == DUE


@pytest.mark.parametrize(
    ("think_s", "bank_left_ms"),
    [
        (0.0, 4_000),
        (1.0, 4_000),  # at the limit
        (1.5, 4_000),  # limit + grace: the grace absorbs lag and costs nothing
        (2.75, 2_750),  # 1.25 s past limit + grace comes out of the bank
        (5.5, 0),  # the last moment: limit + bank + grace, the whole bank spent
    ],
)
def test_only_time_past_limit_and_grace_costs_bank(think_s: float, bank_left_ms: int) -> None:
    match, reqs = grand_tichu_table()
    for seat in (1, 2, 3):
        answer(match, reqs[seat], "no_grand_tichu", T0)
    out = answer(match, reqs[0], "no_grand_tichu", T0 + think_s)
    (record,) = records(out, DecisionRecord)
    assert (record.time_used_ms, record.bank_left_ms) == (think_s * 1000, bank_left_ms)
    assert records(out, ViolationRecord) == []
    # The next request shows the bank that is left, and is due when limit and that bank are up.
    step = request_of(out, 0, DecisionKind.TICHU_STEP)
    assert (step.deadline_ms, step.bank_left_ms) == (1_000 + bank_left_ms, bank_left_ms)
    assert match.summary()[0].bank_left_ms == bank_left_ms
    assert match.next_deadline() == T0 + think_s + 1.0 + bank_left_ms / 1000 + 0.5


def test_a_timeout_comes_at_limit_bank_and_grace_exactly_and_takes_the_default() -> None:
    """R-DEF-1: the engine's default, a violation naming it, an empty bank, and LATE afterwards."""
    match, reqs = grand_tichu_table()
    for seat in (0, 1):
        answer(match, reqs[seat], "no_grand_tichu", T0 + 0.5)
    before = match.state
    assert tick(match, DUE - US) == []
    assert match.state_version == 2
    out = tick(match, DUE)
    violations = records(out, ViolationRecord)
    assert [(v.seat, v.request_id, v.decision, v.count) for v in violations] == [
        (2, reqs[2].request_id, DecisionKind.GRAND_TICHU, 1),
        (3, reqs[3].request_id, DecisionKind.GRAND_TICHU, 1),
    ]
    assert [str(v.default) for v in violations] == ["no_grand_tichu", "no_grand_tichu"]
    assert violations[0].default == default_action(before, 2)
    assert (violations[0].sent_ms, violations[0].t_ms) == (0.0, 5_500.0)
    # The defaults were taken: the Grand Tichu step is over and the pre-step asks again.
    assert match.state.phase is Phase.TICHU_STEP
    banks = {seat: request_of(out, seat, DecisionKind.TICHU_STEP).bank_left_ms for seat in range(4)}
    assert banks == {0: 4_000, 1: 4_000, 2: 0, 3: 0}
    assert [s.timeouts for s in match.summary()] == [0, 0, 1, 1]
    # The answer that comes after the deadline is refused as late, and changes nothing.
    version = match.state_version
    late = answer(match, reqs[2], "grand_tichu", DUE + 0.25)
    (rejection,) = rejections(late, 2)
    assert (rejection.reason, rejection.request_id) == (RejectionReason.LATE, reqs[2].request_id)
    assert match.state_version == version and match.state.calls[2] == 0


def test_an_answer_at_the_deadline_itself_is_in_time() -> None:
    """An input at time t is handled before the deadlines that fall due at t (they are not before it)."""
    match, reqs = grand_tichu_table()
    out = answer(match, reqs[0], "grand_tichu", DUE)
    (record,) = records(out, DecisionRecord)
    assert record.bank_left_ms == 0
    assert [v.seat for v in records(out, ViolationRecord)] == [1, 2, 3]


def test_a_request_that_leaves_late_has_its_deadline_moved_by_the_lag() -> None:
    """Time a request waits in the shell before it leaves is the referee's, not the bot's."""
    match, reqs = grand_tichu_table()
    lag = 0.75
    assert match.handle(Delivered(stream(0), reqs[0].request_id), T0 + lag) == []
    assert match.next_deadline() == DUE  # the others' clocks still run from T0
    out = tick(match, DUE)
    assert [v.seat for v in records(out, ViolationRecord)] == [1, 2, 3]
    assert tick(match, DUE + lag - US) == []
    (late,) = records(tick(match, DUE + lag), ViolationRecord)
    assert (late.seat, late.sent_ms) == (0, lag * 1000)


def test_think_time_counts_from_delivery() -> None:
    match, reqs = grand_tichu_table()
    match.handle(Delivered(stream(0), reqs[0].request_id), T0 + 0.75)
    # Delivered a second time, or for another seat's request, or for an unknown one: no effect.
    match.handle(Delivered(stream(0), reqs[0].request_id), T0 + 0.5)
    match.handle(Delivered(stream(0), reqs[1].request_id), T0 + 1.0)
    match.handle(Delivered(stream(0), 999), T0 + 1.0)
    (record,) = records(answer(match, reqs[0], "no_grand_tichu", T0 + 0.75 + 2.0), DecisionRecord)
    assert (record.sent_ms, record.time_used_ms, record.bank_left_ms) == (750.0, 2_000.0, 3_500)


def lead_position() -> Match:
    """Seat 0 leads 7s at T0 + 1; every seat then has its window request (sent at T0 + 1)."""
    state = state_from_json({"hands": ["7s 9j 10j", "8s Kt", "2j 3s", "3p 4s"], "turn": 0})
    match = new_match(initial_state=state, t=T0)
    answer(match, requests_by_seat(seat_all(match, T0))[0], "play 7s", T0 + 1.0)
    return match


def test_a_window_request_keeps_its_end_when_delivered_late() -> None:
    """R-BOMB-5: one end for every seat of the window; a late delivery does not move it."""
    state = state_from_json({"hands": ["7s 9j", "8s Kt", "2j 3s", "3p 4s"], "turn": 0})
    match = new_match(initial_state=state, t=T0)
    out = answer(match, requests_by_seat(seat_all(match, T0))[0], "play 7s", T0 + 1.0)
    windows = {seat: request_of(out, seat, DecisionKind.BOMB_WINDOW) for seat in range(4)}
    end = T0 + 1.0 + 2.0 + 0.5
    assert match.next_deadline() == end
    assert match.handle(Delivered(stream(1), windows[1].request_id), T0 + 2.0) == []
    assert match.next_deadline() == end
    assert records(tick(match, end - US), ViolationRecord) == []
    assert sorted(v.seat for v in records(tick(match, end), ViolationRecord)) == [0, 1, 2, 3]


def timed_out(match: Match, seat: int, t: float) -> tuple[ViolationRecord, list[Output]]:
    """Tick at `t`, when seat `seat`'s request is due: its violation and the outputs."""
    out = tick(match, t)
    (violation,) = [v for v in records(out, ViolationRecord) if v.seat == seat]
    return violation, out


@pytest.mark.parametrize(
    ("hands", "expected"),
    [
        (["7s 9j 10j", "8s Kt", "2j 3s", "3p 4s"], "play 7s"),  # the lowest single leads
        (["DOG 3p 3s", "8s Kt", "2j 3j", "4p 4s"], "play 3s"),  # the Dog is not a single (R-DEF-2)
        (["9t 9p 9s 9j", "8s", "2j", "4p"], "play 9j"),  # a single before any bomb (R-DEF-3)
        (["MJ 5s", "8s Kt", "2j 3j", "4p 4s"], "play MJ"),  # a Mah Jong played by default wishes nothing
        (["PHX 5s", "8s Kt", "2j 3j", "4p 4s"], "play 5s"),  # the Phoenix ranks above the Ace
    ],
)
def test_the_default_lead_is_the_lowest_single(hands: list[str], expected: str) -> None:
    """R-DEF-1, R-DEF-2: a leader cannot pass, so the default is the lowest legal single."""
    state = state_from_json({"hands": hands, "turn": 0})
    match = new_match(initial_state=state, t=T0)
    seat_all(match, T0)
    violation, _ = timed_out(match, 0, DUE)
    assert str(violation.default) == expected
    assert violation.default == default_action(state, 0)
    assert violation.decision is DecisionKind.PLAY


def test_the_default_on_a_trick_is_a_pass() -> None:
    match = lead_position()
    # Every seat declines the window at its end (R-DEF-1); seat 1 then owes a regular turn.
    out = tick(match, T0 + 1.0 + 2.5)
    turn = request_of(out, 1, DecisionKind.PLAY)
    state = match.state
    violation, out = timed_out(match, 1, T0 + 3.5 + 5.5)
    assert str(violation.default) == "pass" == str(default_action(state, 1))
    assert [r.event.type for r in records(out, EventRecord)][:1] == ["passed"]
    assert turn.request_id == violation.request_id


def test_the_default_dragon_gift_goes_to_the_first_opponent_after_the_dragon() -> None:
    """R-DEF-1, R-DRG-2: seat 2's Dragon won the trick; seat 3 comes first after it."""
    state = state_from_json(
        {
            "hands": ["7s", "8s", "2j 3j", "3s 4s"],
            "trick": [{"seat": 2, "cards": "DRG"}],
            "gift": 2,
            "turn": None,
        }
    )
    assert to_act(state) == (2,)
    match = new_match(initial_state=state, t=T0)
    gift = requests_by_seat(seat_all(match, T0))[2]
    assert gift.kind is DecisionKind.DRAGON_GIFT
    violation, _ = timed_out(match, 2, DUE)
    assert str(violation.default) == "gift 3" == str(default_action(state, 2))


def test_the_default_exchange_gives_the_three_lowest_cards_in_turn_order() -> None:
    """R-DEF-1, R-DEF-2: the lowest card to next(p), the next to the seat after, and so on."""
    clock = dataclasses.replace(CLOCK, bank_ms=0)
    match = new_match(clock, t=T0)
    seat_all(match, T0)
    # Grand Tichu, then the pre-step: nobody answers, so each is the default (no call).
    for due, no_call in ((T0 + 1.5, "no_grand_tichu"), (T0 + 3.0, "no_tichu")):
        before = match.state
        out = tick(match, due)
        timeouts = records(out, ViolationRecord)
        assert [str(v.default) for v in timeouts] == [no_call] * 4
        # A simultaneous answer leaves the others' questions as they were (R-GT-1, R-CALL-6).
        assert all(v.default == default_action(before, v.seat) for v in timeouts)
    state = match.state
    assert state.phase is Phase.EXCHANGE
    exchanges = {seat: request_of(out, seat, DecisionKind.EXCHANGE) for seat in range(4)}
    assert [r.exchange_to for r in exchanges.values()] == [(1, 2, 3), (0, 2, 3), (0, 1, 3), (0, 1, 2)]
    out = tick(match, T0 + 4.5)
    violations = {v.seat: v for v in records(out, ViolationRecord)}
    for seat in range(4):
        lowest = [str(c) for c in cards_of(state.hands[seat])][:3]
        recipients = [(seat + k) % 4 for k in (1, 2, 3)]
        expected = sorted(f"{to}:{card}" for to, card in zip(recipients, lowest, strict=True))
        assert str(violations[seat].default) == "exchange " + " ".join(expected)
        assert violations[seat].default == default_action(state, seat)
    assert match.state.phase is Phase.PLAY


def test_clock_settings_read_back_and_refuse_nonsense() -> None:
    assert ClockSettings.from_json(CLOCK.to_json()) == CLOCK
    assert ClockSettings.from_json({}) == ClockSettings()
    for bad in ({"decision_ms": -1}, {"decision_ms": True}, {"fixed_length_windows": 1}, {"nope": 1}):
        with pytest.raises(ValueError):
            ClockSettings.from_json(bad)
