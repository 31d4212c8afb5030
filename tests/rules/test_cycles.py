"""The engine leaves no reference cycles: every state, list of answers and Play it makes is freed
as soon as it is dropped, not by a pass of the garbage collector (which pauses the referee)."""

from __future__ import annotations

import gc
import random

import pytest

from referee.rules import (
    OFFICIAL,
    Decline,
    Play,
    RulesError,
    answer_window,
    apply,
    legal_decisions,
    new_game,
    to_act,
)


def test_playing_through_the_public_api_makes_no_reference_cycles() -> None:
    rng = random.Random(7)
    gc.collect()
    gc.disable()
    try:
        state, _ = new_game(OFFICIAL, 7)
        for _ in range(600):
            owed = to_act(state)
            if not owed:
                break
            if state.window:
                state, _ = answer_window(state, {seat: Decline() for seat in state.window})
                continue
            seat = owed[0]
            answers = legal_decisions(state, seat)
            # Read every listed Play, as a bot does, then apply one of them (the known-Play path).
            listed = list(answers)
            state, _ = apply(state, seat, listed[rng.randrange(len(listed))])
        unreachable = gc.collect()
    finally:
        gc.enable()
    assert state.round >= 1
    assert unreachable == 0


def test_a_play_listed_for_one_state_is_validated_again_on_another() -> None:
    # apply trusts a listed Play only on the very state it was listed for: its stamp, not an
    # equal state, nor the same state after an in-place change.
    state, _ = new_game(OFFICIAL, 3)
    while state.phase.name != "PLAY" or state.window:
        seat = to_act(state)[0]
        if state.window:
            state, _ = answer_window(state, {s: Decline() for s in state.window})
        else:
            state, _ = apply(state, seat, legal_decisions(state, seat)[-1])
    seat = to_act(state)[0]
    listed = legal_decisions(state, seat)[-1]
    assert isinstance(listed, Play)
    twin = state.copy()
    assert twin._stamp is None and state._stamp is not None
    assert listed._origin is state._stamp
    after, _ = apply(twin, seat, listed)  # validated from scratch on the copy, and legal there too
    assert after.hands[seat] != state.hands[seat]
    # On a later state the same Play is checked, and refused: its cards are gone, the turn moved.
    with pytest.raises(RulesError):
        apply(after, seat, listed)
