"""answer_window and R-CALL-7: a bomb's call flag, for the held answers of a bomb window.

A referee holds a window's answers until it resolves and passes them to answer_window together;
meanwhile a seat may call Tichu on its own. The result must be the one of applying each answer
with apply() when it was given (R-BOMB-9), the call flag included (R-CALL-7).
"""

from __future__ import annotations

from typing import Any

import pytest

from referee.rules import (
    Action,
    CallTichu,
    Event,
    IllegalActionError,
    State,
    answer_window,
    apply,
    parse_action,
    state_from_json,
)
from referee.rules.events import Called, Played, WindowClosed

BOMB_1 = "play 4j 4s 4p 4t"
BOMB_2 = "play 5j 5s 5p 5t"
FLAGGED_2 = BOMB_2 + " tichu"
FLAGGED_1 = BOMB_1 + " tichu"


def window(**changes: Any) -> State:
    """Seat 0 has played the 7j; the window runs 1, 2, 3, 0; seats 1 and 2 each hold a bomb."""
    fields: dict[str, Any] = {
        "hands": ["2j 3j", "4j 4s 4p 4t 9j", "5j 5s 5p 5t 9s", "6j 8s"],
        "trick": [{"seat": 0, "cards": "7j"}],
        "turn": 1,
        "played": [True, False, False, True],
        "window": {"order": [1, 2, 3, 0]},
    }
    fields.update(changes)
    return state_from_json(fields)


Given = list[tuple[int, str]]  # (seat, action) in the order given: window answers and calls


def one_by_one(state: State, given: Given) -> tuple[State, list[Event]]:
    """Each answer (and call) applied with apply() when it was given; answers given after the
    window resolved are discarded (R-BOMB-9), not applied to the next window."""
    events: list[Event] = []
    resolved = False
    for seat, text in given:
        action = parse_action(text)
        if resolved and not isinstance(action, CallTichu):
            continue
        state, more = apply(state, seat, action)
        events += more
        resolved = resolved or any(isinstance(e, Played | WindowClosed) for e in more)
    return state, events


def held(state: State, given: Given) -> tuple[State, list[Event]]:
    """As a referee does: calls applied at once, window answers held, then answer_window."""
    events: list[Event] = []
    answers: dict[int, Action] = {}
    for seat, text in given:
        action = parse_action(text)
        if isinstance(action, CallTichu):
            state, more = apply(state, seat, action)
            events += more
        else:
            answers[seat] = action
    state, more = answer_window(state, answers)
    return state, events + more


def calls_and_plays(events: list[Event]) -> list[tuple[str, int]]:
    return [(type(e).__name__, e.seat) for e in events if isinstance(e, Called | Played)]


CASES = {
    "the flag is applied with the bomb that applies": (
        [(1, "decline"), (2, FLAGGED_2), (3, "decline"), (0, "decline")],
        [("Called", 2), ("Played", 2)],
        (0, 0, 1, 0),
    ),
    "a discarded bomb's flag is discarded with it": (
        [(2, FLAGGED_2), (1, BOMB_1), (3, "decline"), (0, "decline")],
        [("Played", 1)],
        (0, 0, 0, 0),
    ),
    "the first bomb's flag applies, a later one's is discarded": (
        [(1, FLAGGED_1), (2, FLAGGED_2), (3, "decline"), (0, "decline")],
        [("Called", 1), ("Played", 1)],
        (0, 1, 0, 0),
    ),
    "the flag is moot after the seat's own call": (
        [(2, FLAGGED_2), (2, "tichu"), (1, "decline"), (3, "decline"), (0, "decline")],
        [("Called", 2), ("Played", 2)],
        (0, 0, 1, 0),
    ),
    "a moot flag on a discarded bomb changes nothing": (
        [(2, FLAGGED_2), (2, "tichu"), (1, BOMB_1), (3, "decline"), (0, "decline")],
        [("Called", 2), ("Played", 1)],
        (0, 0, 1, 0),
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_held_answers_give_what_each_answer_applied_when_given_gives(name: str) -> None:
    given, shown, calls = CASES[name]
    start = window()
    expected_state, expected_events = one_by_one(start, given)
    state, events = held(start, given)
    assert state == expected_state
    assert [e.to_json() for e in events] == [e.to_json() for e in expected_events]
    assert calls_and_plays(events) == shown
    assert state.calls == calls
    assert state.window != start.window  # the window resolved


REJECTED: dict[str, tuple[dict[str, Any], int, str]] = {
    # (state changes, seat, rule): the seat may not call, for a reason that held when it answered.
    "a seat that has played a card": ({"played": [True, False, True, True]}, 2, "R-CALL-1"),
    # Not moot: its call came before its first card, not after its answer. The reason given is
    # apply()'s, the first it finds.
    "a seat that called and then played a card": (
        {"played": [True, False, True, True], "calls": ["none", "none", "tichu", "none"]},
        2,
        "R-CALL-2",
    ),
    "a Grand Tichu caller": ({"calls": ["none", "none", "grand_tichu", "none"]}, 2, "R-CALL-2"),
    "with another seat out (allow_hopeless_calls = false)": (
        {
            "config": {"allow_hopeless_calls": False},
            "hands": ["", "4j 4s 4p 4t 9j", "5j 5s 5p 5t 9s", "6j 8s"],
            "out": [0],
            "window": {"order": [1, 2, 3]},
        },
        2,
        "R-CALL-5",
    ),
}


@pytest.mark.parametrize("name", sorted(REJECTED))
def test_a_flag_from_a_seat_that_may_not_call_is_still_rejected(name: str) -> None:
    changes, seat, rule = REJECTED[name]
    state = window(**changes)
    others = {s: parse_action("decline") for s in state.window if s != seat}
    before = state.copy()
    with pytest.raises(IllegalActionError) as info:
        answer_window(state, {**others, seat: parse_action(FLAGGED_2)})
    assert info.value.rule == rule
    assert state == before
    with pytest.raises(IllegalActionError) as info:
        apply(state, seat, parse_action(FLAGGED_2))
    assert info.value.rule == rule


def test_apply_stays_strict_about_a_flag_after_the_seats_own_call() -> None:
    state, _ = apply(window(), 2, CallTichu())
    with pytest.raises(IllegalActionError) as info:
        apply(state, 2, parse_action(FLAGGED_2))
    assert info.value.rule == "R-CALL-2"
    after, events = answer_window(state, {1: parse_action("decline"), 2: parse_action(FLAGGED_2)})
    assert calls_and_plays(events) == [("Played", 2)]
    assert after.calls[2] == 1
