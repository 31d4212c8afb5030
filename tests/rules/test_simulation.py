"""rules.Simulation against the public API: the same indices give the same states and events.

A reference loop answers every decision through to_act, legal_decisions, apply and answer_window,
and a Simulation answers it with the same index into the same listing; after every step both must
hold equal states (every public field) and have produced the same events, and the Simulation must
list exactly legal_decisions() (count and each decision). Configs are drawn from every flag value,
4 and 6 players; Tichu calls are made at random where they are legal.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from referee.rules import (
    Action,
    Decline,
    IllegalActionError,
    InvalidActionError,
    RulesConfig,
    Simulation,
    State,
    answer_window,
    apply,
    can_call_tichu,
    legal_decisions,
    new_game,
    state_to_json,
    to_act,
)
from referee.rules.actions import CallTichu
from referee.rules.combos import has_bomb
from referee.rules.events import Event
from referee.rules.legal import _owes_window
from tests.rules.test_properties import SEEDS, configs


def forced_window(state: State) -> bool:
    """An open window in which no seat still owed holds a bomb: declining is all it allows."""
    owed = [seat for seat in state.window if _owes_window(state, seat)]
    return bool(state.window) and not any(has_bomb(state.hands[seat]) for seat in owed)


def play_both(state: State, rng: random.Random, steps: int, take_forced: bool) -> None:
    """Play `steps` decisions both ways and compare after each one."""
    sim = Simulation(state, record_events=True, take_forced_declines=take_forced)
    events: list[Event] = []
    if take_forced and forced_window(state):
        state, more = answer_window(state, dict.fromkeys(to_act(state), Decline()))
        events += more
    for _ in range(steps):
        if state.is_over:
            break
        seats = to_act(state)
        assert sim.to_act() == seats
        for seat in range(state.players):
            listed = legal_decisions(state, seat)
            assert sim.count(seat) == len(listed)
            if listed:
                probe = rng.randrange(len(listed))
                assert sim.decision(seat, probe) == listed[probe]
        caller = rng.choice(range(state.players))
        if rng.random() < 0.05 and can_call_tichu(state, caller):
            state, more = apply(state, caller, CallTichu())
            sim.call_tichu(caller)
        elif state.window:
            picks = {seat: rng.randrange(len(legal_decisions(state, seat))) for seat in seats}
            if rng.random() < 0.5:
                chosen = {s: legal_decisions(state, s)[i] for s, i in picks.items()}
                state, more = answer_window(state, chosen)
                sim.answer_window(picks)
            else:
                seat = rng.choice(seats)  # one answer at a time, as a referee receives them
                state, more = apply(state, seat, legal_decisions(state, seat)[picks[seat]])
                sim.choose(seat, picks[seat])
        else:
            seat = rng.choice(seats)
            pick = rng.randrange(len(legal_decisions(state, seat)))
            state, more = apply(state, seat, legal_decisions(state, seat)[pick])
            sim.choose(seat, pick)
        events += more
        while take_forced and forced_window(state):
            state, more = answer_window(state, dict.fromkeys(to_act(state), Decline()))
            events += more
        assert state_to_json(sim.state) == state_to_json(state)
        assert sim.events == events


simulation_settings = settings(
    max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True
)


@simulation_settings
@given(config=configs(4), seed=SEEDS, choices=st.integers(0, 2**32 - 1), take_forced=st.booleans())
def test_a_simulation_follows_the_public_api_4p(
    config: RulesConfig, seed: int | str, choices: int, take_forced: bool
) -> None:
    state, _ = new_game(config, seed)
    play_both(state, random.Random(choices), 400, take_forced)


@simulation_settings
@given(config=configs(6), seed=SEEDS, choices=st.integers(0, 2**32 - 1), take_forced=st.booleans())
def test_a_simulation_follows_the_public_api_6p(
    config: RulesConfig, seed: int | str, choices: int, take_forced: bool
) -> None:
    state, _ = new_game(config, seed)
    play_both(state, random.Random(choices), 400, take_forced)


def test_a_simulation_leaves_its_state_alone_and_refuses_what_is_not_listed() -> None:
    state, _ = new_game(seed="simulation")
    before = state_to_json(state)
    sim = Simulation(state)
    seat = sim.to_act()[0]
    count = sim.count(seat)
    idle = next(s for s in range(4) if not legal_decisions(state, s)) if len(sim.to_act()) < 4 else None
    for index in (-1, count):
        with pytest.raises(InvalidActionError, match=f"has {count} legal answers"):
            sim.choose(seat, index)
    for wrong in ("0", 1.0):
        # The compiled build checks the argument's type at the call, as a TypeError.
        with pytest.raises((InvalidActionError, TypeError)):
            sim.choose(seat, wrong)  # type: ignore[arg-type]
    if idle is not None:
        with pytest.raises(IllegalActionError, match="owes no decision"):
            sim.choose(idle, 0)
    assert state_to_json(sim.state) == before
    sim.choose(seat, 0)
    answered: Action = legal_decisions(state, seat)[0]
    assert state_to_json(sim.state) == state_to_json(apply(state, seat, answered)[0])
    assert state_to_json(state) == before
    assert sim.events is None
