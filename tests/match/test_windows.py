"""Bomb windows in the match core (R-BOMB-5, R-BOMB-9, R-CALL-7), with explicit times."""

from __future__ import annotations

import dataclasses
import itertools
from typing import Any

import pytest

from referee.match import ClockSettings, Match, RejectionReason
from referee.match.messages import Note, Output, Request
from referee.match.moves import rerun
from referee.match.records import CallRecord, EventRecord, ViolationRecord, WindowRecord
from referee.rules import DecisionKind, Decline, state_from_json, state_to_json
from tests.match.support import (
    CLOCK,
    answer,
    connect_all,
    events,
    game_records,
    new_match,
    out_of_turn,
    records,
    rejections,
    request_of,
    tick,
)

# P0 leads; P1 and P2 each hold a four-of-a-kind bomb; P3 holds none. Nobody has played a card,
# so everyone may still call Tichu.
POSITION: dict[str, Any] = {
    "hands": ["7s 9j 10j", "3j 3s 3p 3t 4j", "5j 5s 5p 5t 6j", "2j 8p Kj"],
    "turn": 0,
    "played": [False, False, False, False],
    "config": {"target_score": 50},
}
BOMB1 = "play 3j 3s 3p 3t"
BOMB2 = "play 5j 5s 5p 5t"
T0 = 10.0
LEAD_AT = T0 + 1.0
# The window opens with the lead and lasts window_ms + grace_ms.
WINDOW_END = LEAD_AT + 2.0 + 0.5
US = 1e-6


def led(clock: ClockSettings = CLOCK) -> tuple[Match, dict[int, Request], list[Output]]:
    """P0 has led 7s at LEAD_AT: the match, each seat's window request, and everything so far."""
    match = new_match(clock, initial_state=state_from_json(POSITION), t=T0)
    seated = connect_all(match, T0)
    out = answer(match, request_of(seated, 0), "play 7s", LEAD_AT)
    return match, {seat: request_of(out, seat, DecisionKind.BOMB_WINDOW) for seat in range(4)}, seated + out


def played(outputs: list[Output]) -> list[tuple[int, str]]:
    """(seat, cards) of every play event in these outputs."""
    return [(e["seat"], e["cards"]) for e in events(outputs, 3) if e["type"] == "played"]


def test_every_seat_is_asked_at_once_with_the_same_version_and_deadline() -> None:
    """R-BOMB-5: one request per active seat, whatever its hand, alike but for its own options."""
    match, windows, _ = led()
    assert {w.state_version for w in windows.values()} == {match.state_version}
    assert {(w.deadline_ms, w.bank_left_ms) for w in windows.values()} == {(2_000, 0)}
    # Issued in window order: the next seat after the actor first, the actor last.
    assert sorted(windows, key=lambda seat: windows[seat].request_id) == [1, 2, 3, 0]
    assert list(match.state.window) == [1, 2, 3, 0]
    assert [str(a) for a in windows[3].legal()] == ["decline"]
    assert [str(a) for a in windows[1].legal()] == ["decline", BOMB1]
    assert match.next_deadline() == WINDOW_END


@pytest.mark.parametrize("fixed", [False, True])
def test_answers_are_held_until_the_last_one(fixed: bool) -> None:
    """No event, no record, no request until the window resolves; then all at once."""
    match, windows, _ = led(dataclasses.replace(CLOCK, fixed_length_windows=fixed))
    version = match.state_version
    for k, seat in enumerate((3, 0, 2)):
        out = answer(match, windows[seat], BOMB2 if seat == 2 else "decline", LEAD_AT + 0.25 * (k + 1))
        assert [o for o in out if not isinstance(o, Note)] == []
        assert match.state_version == version
    last = answer(match, windows[1], "decline", LEAD_AT + 1.0)
    if fixed:
        # R-BOMB-5 fixed-length mode: nothing before the window's end, so timing tells nothing.
        assert [o for o in last if not isinstance(o, Note)] == []
        assert tick(match, WINDOW_END - US) == []
        last = tick(match, WINDOW_END)
    (window,) = records(last, WindowRecord)
    assert window.t_ms == (WINDOW_END if fixed else LEAD_AT + 1.0) * 1000 - T0 * 1000
    assert (window.bomb, window.opened_ms) == (2, 1_000.0)
    # Each answer's think time, in the order the answers came.
    assert window.times_ms == ((3, 250.0), (0, 500.0), (2, 750.0), (1, 1_000.0))
    assert records(last, ViolationRecord) == []
    assert played(last) == [(2, "5j 5s 5p 5t")]


def test_silent_seats_decline_at_the_windows_end_with_a_violation_each() -> None:
    """R-DEF-1: the window's default is decline; it comes at window_ms + grace_ms, not before."""
    match, windows, _ = led()
    answer(match, windows[2], "decline", LEAD_AT + 0.5)
    assert tick(match, WINDOW_END - US) == []
    out = tick(match, WINDOW_END)
    violations = records(out, ViolationRecord)
    assert [(v.seat, v.decision, str(v.default), v.request_id) for v in violations] == [
        (seat, DecisionKind.BOMB_WINDOW, "decline", windows[seat].request_id) for seat in (1, 3, 0)
    ]
    (window,) = records(out, WindowRecord)
    assert window.answers == tuple((seat, Decline()) for seat in (1, 2, 3, 0))
    assert window.bomb is None and window.times_ms == ((2, 500.0),)
    # The window closed and seat 1 owes its regular turn.
    assert [e["type"] for e in events(out, 1)] == ["window_closed"]
    assert request_of(out, 1).kind is DecisionKind.PLAY
    # A late window answer is refused as late.
    (late,) = rejections(answer(match, windows[3], "decline", WINDOW_END + 0.25), 3)
    assert late.reason is RejectionReason.LATE


@pytest.mark.parametrize("arrival", list(itertools.permutations(range(4))))
def test_the_first_bomb_in_window_order_wins_whatever_the_arrival_order(arrival: tuple[int, ...]) -> None:
    """R-BOMB-6, R-BOMB-9: seat 1 comes before seat 2 in the window, so its bomb applies and seat
    2's is discarded, however the answers race."""
    match, windows, _ = led()
    chosen = {0: "decline", 1: BOMB1, 2: BOMB2, 3: "decline"}
    out: list[Output] = []
    for k, seat in enumerate(arrival):
        out = answer(match, windows[seat], chosen[seat], LEAD_AT + 0.125 * (k + 1))
    (window,) = records(out, WindowRecord)
    assert (window.bomb, window.discarded, window.call) == (1, (2,), None)
    assert played(out) == [(1, "3j 3s 3p 3t")]
    # A new window opens after the bomber; seat 2 may submit its bomb again.
    again = {seat: request_of(out, seat, DecisionKind.BOMB_WINDOW) for seat in range(4)}
    assert list(match.state.window) == [2, 3, 0, 1]
    assert BOMB2 in [str(a) for a in again[2].legal()]


def test_a_later_bomb_applies_once_everyone_before_it_declined() -> None:
    """T-BOMB-4: seat 2 bombs, seat 1 declines; seat 1's turn is skipped and seat 3 plays next."""
    match, windows, _ = led()
    for seat in (2, 1, 3, 0):
        out = answer(match, windows[seat], BOMB2 if seat == 2 else "decline", LEAD_AT + 0.5)
    assert played(out) == [(2, "5j 5s 5p 5t")]
    again = {seat: request_of(out, seat, DecisionKind.BOMB_WINDOW) for seat in (3, 0, 1, 2)}
    for seat in (3, 0, 1, 2):
        out = answer(match, again[seat], "decline", LEAD_AT + 1.0)
    assert match.state.turn == 3 and request_of(out, 3).kind is DecisionKind.PLAY


@pytest.mark.parametrize(
    ("answers", "bomb", "call", "calls"),
    [
        # R-CALL-7: the flagged bomb applies, so its call is made first.
        ({1: BOMB1 + " tichu", 2: "decline"}, 1, 1, (0, 1, 0, 0)),
        # The flagged bomb is discarded: its call goes with it, else the call would tell the table
        # that seat 2 had answered with a bomb (R-BOMB-5).
        ({1: BOMB1, 2: BOMB2 + " tichu"}, 1, None, (0, 0, 0, 0)),
        ({1: "decline", 2: BOMB2 + " tichu"}, 2, 2, (0, 0, 1, 0)),
    ],
)
def test_a_bombs_tichu_flag_calls_only_if_that_bomb_applies(
    answers: dict[int, str], bomb: int, call: int | None, calls: tuple[int, ...]
) -> None:
    match, windows, _ = led()
    chosen = {0: "decline", 3: "decline", **answers}
    for seat in (2, 1, 3, 0):
        out = answer(match, windows[seat], chosen[seat], LEAD_AT + 0.5)
    (window,) = records(out, WindowRecord)
    assert (window.bomb, window.call) == (bomb, call)
    assert match.state.calls == calls
    kinds = [e["type"] for e in events(out, 0)]
    # The call, then the play; or the play alone.
    assert kinds[: 2 if call is not None else 1] == (["called", "played"] if call is not None else ["played"])
    assert kinds.count("called") == (call is not None)


def test_a_call_out_of_turn_after_a_flagged_bomb_leaves_the_bomb_to_apply() -> None:
    """The seat's own call makes the flag moot (R-CALL-2): the bomb applies with no second call."""
    match, windows, _ = led()
    answer(match, windows[1], BOMB1 + " tichu", LEAD_AT + 0.25)
    called = out_of_turn(match, 1, "tichu", LEAD_AT + 0.5)
    assert [e["type"] for e in events(called, 2)] == ["called"]
    assert records(called, CallRecord)[0].seat == 1
    for seat in (2, 3, 0):
        out = answer(match, windows[seat], "decline", LEAD_AT + 0.75)
    assert not [o for o in out if isinstance(o, Note) and o.level == "error"]
    (window,) = records(out, WindowRecord)
    assert (window.bomb, window.call, window.discarded) == (1, None, ())
    assert [e["type"] for e in events(out, 3)][:1] == ["played"]
    assert match.state.calls[1] == 1 and played(out) == [(1, "3j 3s 3p 3t")]


def test_an_out_of_turn_bomb_from_a_seat_in_the_window_is_its_answer() -> None:
    match, windows, _ = led()
    out = out_of_turn(match, 2, BOMB2, LEAD_AT + 0.25)
    assert rejections(out, 2) == []
    # Its request is answered: a Decision for it now is refused, and so is another bomb.
    (again,) = rejections(answer(match, windows[2], "decline", LEAD_AT + 0.5), 2)
    assert again.reason is RejectionReason.UNKNOWN_REQUEST and "answered" in again.message
    (twice,) = rejections(out_of_turn(match, 2, BOMB2, LEAD_AT + 0.5), 2)
    assert (twice.reason, twice.rule) == (RejectionReason.ILLEGAL, "R-BOMB-9")
    for seat in (1, 3, 0):
        out = answer(match, windows[seat], "decline", LEAD_AT + 0.75)
    (window,) = records(out, WindowRecord)
    assert window.bomb == 2 and window.times_ms[0] == (2, 250.0)


def test_a_second_answer_to_the_same_window_is_refused() -> None:
    match, windows, _ = led()
    answer(match, windows[1], "decline", LEAD_AT + 0.25)
    version = match.state_version
    (decision,) = rejections(answer(match, windows[1], BOMB1, LEAD_AT + 0.5), 1)
    assert decision.reason is RejectionReason.UNKNOWN_REQUEST
    (bomb,) = rejections(out_of_turn(match, 1, BOMB1, LEAD_AT + 0.5), 1)
    assert (bomb.reason, bomb.rule) == (RejectionReason.ILLEGAL, "R-BOMB-9")
    assert bomb.message == "you have already answered this bomb window"
    assert match.state_version == version
    # The window still resolves from the first answer: seat 1 declined, so seat 2's bomb applies.
    for seat in (2, 3, 0):
        out = answer(match, windows[seat], BOMB2 if seat == 2 else "decline", LEAD_AT + 0.75)
    assert played(out) == [(2, "5j 5s 5p 5t")]


def test_a_bomb_that_does_not_beat_or_is_not_held_is_refused_and_the_window_stays_open() -> None:
    match, windows, _ = led()
    (wrong,) = rejections(answer(match, windows[3], "play 2j", LEAD_AT + 0.25), 3)
    assert (wrong.reason, wrong.rule) == (RejectionReason.ILLEGAL, "R-BOMB-9")
    (missing,) = rejections(answer(match, windows[3], BOMB1, LEAD_AT + 0.25), 3)
    assert missing.reason is RejectionReason.ILLEGAL
    # The request is still open and may be answered.
    assert rejections(answer(match, windows[3], "decline", LEAD_AT + 0.5), 3) == []


def test_a_window_with_calls_and_bombs_re_runs() -> None:
    """Every window record re-runs through the engine (R-BOMB-9 outcome, R-CALL-7 call)."""
    match, windows, out = led()
    out += answer(match, windows[2], BOMB2 + " tichu", LEAD_AT + 0.25)
    for seat in (1, 3, 0):
        out += answer(match, windows[seat], "decline", LEAD_AT + 0.5)
    assert [r.event.type for r in records(out, EventRecord)][-2:] == ["called", "played"]
    out += tick(match, LEAD_AT + 10.0)  # and the next window times out
    assert len(records(out, WindowRecord)) == 2
    run = rerun(match.header, game_records(out), check_result=False)
    assert run.version == match.state_version
    assert state_to_json(run.state) == state_to_json(match.state)
