"""Seeded random games through the public API, move by move, for tests that check every state.

A move is what a referee applies at once: one seat's action (a decision or a spontaneous Tichu
call), or a bomb window's answers together (answer_window). Bombs sometimes carry the call flag
(R-CALL-7), and a seat sometimes calls on its own while its window answer is held, as a
referee that holds a window's answers until it resolves allows.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass

from referee.rules import (
    Action,
    CallTichu,
    Event,
    Play,
    RulesConfig,
    State,
    answer_window,
    apply,
    can_call_tichu,
    legal_decisions,
    new_game,
    to_act,
)

CALL_TICHU = CallTichu()


@dataclass(frozen=True, slots=True)
class Move:
    """One move: each seat's actions as it gave them, the events, and the state after."""

    actions: tuple[tuple[int, Action], ...]
    events: tuple[Event, ...]
    state: State
    window: bool = False  # a bomb window's answers, given to answer_window together


def reapply(state: State, move: Move) -> tuple[State, list[Event]]:
    """Apply `move` again, to `state`, as random_moves applied it."""
    if not move.window:
        ((seat, action),) = move.actions
        return apply(state, seat, action)
    events: list[Event] = []
    for seat, action in move.actions:
        if isinstance(action, CallTichu):
            state, more = apply(state, seat, action)
            events += more
    answers = {seat: a for seat, a in move.actions if not isinstance(a, CallTichu)}
    state, more = answer_window(state, answers)
    return state, events + more


def _flagged(action: Action, state: State, seat: int, rng: random.Random) -> Action:
    """Now and then the play with the call flag, when the seat may call (R-CALL-7)."""
    if isinstance(action, Play) and rng.random() < 0.3 and can_call_tichu(state, seat):
        return Play(action.cards_mask, action.phoenix, action.wish, action.partner, True)
    return action


def random_moves(config: RulesConfig, seed: int, rounds: int, call_rate: float = 0.05) -> Iterator[Move]:
    """The deal, then random legal moves until `rounds` rounds are scored or the game is over."""
    rng = random.Random(seed)
    state, events = new_game(config, seed)
    yield Move((), tuple(events), state)
    while not state.is_over and len(state.history) < rounds:
        callers = [s for s in range(state.players) if can_call_tichu(state, s)]
        if callers and rng.random() < call_rate:
            seat = rng.choice(callers)
            state, events = apply(state, seat, CALL_TICHU)
            yield Move(((seat, CALL_TICHU),), tuple(events), state)
            continue
        seats = to_act(state)
        if state.window and state.gift < 0:
            answers: dict[int, Action] = {}
            given: list[tuple[int, Action]] = []
            for seat in seats:
                options = legal_decisions(state, seat)
                # A bombless hand declines (as the SDK does); a bomb is chosen half the time.
                pick = options[0] if len(options) == 1 or rng.random() < 0.5 else rng.choice(options[1:])
                answers[seat] = _flagged(pick, state, seat, rng)
                given.append((seat, answers[seat]))
            flagged = [s for s, a in answers.items() if isinstance(a, Play) and a.tichu]
            called: list[Event] = []
            if flagged and rng.random() < 0.3:
                # The seat calls on its own before the window resolves: its flag becomes moot.
                seat = rng.choice(flagged)
                state, called = apply(state, seat, CALL_TICHU)
                given.append((seat, CALL_TICHU))
            state, events = answer_window(state, answers)
            yield Move(tuple(given), tuple(called + events), state, window=True)
            continue
        seat = seats[0] if len(seats) == 1 else rng.choice(seats)
        options = legal_decisions(state, seat)
        action = _flagged(options[rng.randrange(len(options))], state, seat, rng)
        state, events = apply(state, seat, action)
        yield Move(((seat, action),), tuple(events), state)
