"""apply_all: the same as successive apply() calls, built on one copy, and all or nothing."""

from __future__ import annotations

import random

import pytest

from referee.rules import IllegalActionError, Pass, apply, apply_all, legal_decisions, new_game, to_act


def test_apply_all_equals_successive_applies_and_leaves_its_input_alone() -> None:
    state, _ = new_game(seed="apply-all")
    rng = random.Random(5)
    for _ in range(40):
        before = state.copy()
        moves = []
        stepped = state
        events = []
        for _ in range(3):
            seats = to_act(stepped)
            if not seats:
                break
            seat = seats[0]
            action = rng.choice(list(legal_decisions(stepped, seat)))
            moves.append((seat, action))
            stepped, more = apply(stepped, seat, action)
            events += more
        batched, batched_events = apply_all(state, moves)
        assert batched == stepped
        assert [e.to_json() for e in batched_events] == [e.to_json() for e in events]
        assert state == before
        state = batched


def test_apply_all_is_all_or_nothing() -> None:
    state, _ = new_game(seed="apply-all-fail")
    before = state.copy()
    seat = to_act(state)[0]
    first = legal_decisions(state, seat)[0]
    # The second move is illegal (a pass while the Grand Tichu question is open).
    with pytest.raises(IllegalActionError):
        apply_all(state, [(seat, first), (seat, Pass())])
    assert state == before
