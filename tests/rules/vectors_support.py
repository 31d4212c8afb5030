"""Helpers for the RULES.md test vectors (tests/rules/test_vectors*.py).

Positions are written by hand in the `tichu-state/1` JSON form and rebuilt with state_from_json.
Card points are computed here from R-DECK-4 directly, not with the engine's own tables, so that a
wrong table in the engine makes a scoring test fail instead of agreeing with itself.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, TypeVar

import pytest

from referee.rules import (
    Action,
    Decline,
    Event,
    IllegalActionError,
    InvalidActionError,
    RulesError,
    State,
    answer_window,
    apply,
    parse_action,
    state_from_json,
    state_to_json,
    to_act,
)

E = TypeVar("E", bound=Event)

SUITS = "jspt"
RANKS = ("2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A")
SPECIALS = ("MJ", "DOG", "PHX", "DRG")
DECK: tuple[str, ...] = tuple(r + s for r in RANKS for s in SUITS) + SPECIALS
DECLINE = Decline()


def points_of(cards: str | Iterable[str]) -> int:
    """Card points of R-DECK-4: K and 10 are 10, 5 is 5, Dragon +25, Phoenix -25."""
    names = cards.split() if isinstance(cards, str) else list(cards)
    total = 0
    for name in names:
        upper = name.upper()
        if upper == "DRG":
            total += 25
        elif upper == "PHX":
            total -= 25
        elif upper in ("MJ", "DOG"):
            continue
        else:
            rank = upper[:-1]
            total += {"K": 10, "10": 10, "5": 5}.get(rank, 0)
    return total


def split(cards: str) -> list[str]:
    """The card names of a space-separated string."""
    return cards.split()


def position(**fields: Any) -> State:
    """A state from JSON fields (state_from_json with its defaults)."""
    return state_from_json(dict(fields))


def full_position(spare_pile: int, **fields: Any) -> State:
    """A state whose cards add up to the whole deck: the unplaced cards go to piles[spare_pile].

    Zones read: `hands`, `piles`, `unseen` (per seat) and the cards of `trick`.
    """
    n = len(fields["hands"])
    placed: list[str] = []
    for key in ("hands", "piles", "unseen"):
        for zone in fields.get(key) or []:
            placed.extend(split(zone))
    for entry in fields.get("trick") or []:
        placed.extend(split(entry["cards"]))
    lowered = {c.lower() for c in placed}
    assert len(lowered) == len(placed), f"a card is placed twice: {sorted(placed)}"
    unknown = lowered - {c.lower() for c in DECK}
    assert not unknown, f"unknown cards {unknown}"
    rest = [c for c in DECK if c.lower() not in lowered]
    piles = list(fields.get("piles") or [""] * n)
    piles[spare_pile] = " ".join([*split(piles[spare_pile]), *rest])
    fields["piles"] = piles
    return position(**fields)


def as_action(action: Action | str) -> Action:
    """An action, parsed from its canonical string if need be."""
    return parse_action(action) if isinstance(action, str) else action


def act(state: State, seat: int, action: Action | str) -> tuple[State, list[Event]]:
    """apply() with an action given as a string or an Action."""
    return apply(state, seat, as_action(action))


def reject(
    state: State,
    seat: int,
    action: Action | str,
    rules: str | Iterable[str] | None = None,
) -> RulesError:
    """Assert that `action` is rejected with a rules error, that the input state is unchanged, and
    (if given) that the error names one of `rules`."""
    before = state.copy()
    before_json = state_to_json(state)
    with pytest.raises((IllegalActionError, InvalidActionError)) as info:
        apply(state, seat, as_action(action))
    assert state == before, "a rejected action changed the state"
    assert state_to_json(state) == before_json, "a rejected action changed the state"
    if rules is not None:
        wanted = {rules} if isinstance(rules, str) else set(rules)
        assert info.value.rule in wanted, f"rule {info.value.rule!r}, expected one of {sorted(wanted)}"
    return info.value


def decline_window(state: State) -> tuple[State, list[Event]]:
    """Every seat owing an answer to the open bomb window declines (R-BOMB-9)."""
    assert state.window, "no bomb window is open"
    return answer_window(state, dict.fromkeys(to_act(state), DECLINE))


def turn(state: State, seat: int, action: Action | str) -> tuple[State, list[Event]]:
    """A regular-turn action followed by an empty bomb window (if one opens)."""
    assert state.turn == seat and not state.window, f"not seat {seat}'s regular turn: {state!r}"
    st, events = act(state, seat, action)
    if st.window:
        st, more = decline_window(st)
        events = events + more
    return st, events


def turns(state: State, moves: Iterable[tuple[int, str]]) -> tuple[State, list[Event]]:
    """Several regular-turn actions, each followed by an empty window."""
    events: list[Event] = []
    for seat, action in moves:
        state, more = turn(state, seat, action)
        events.extend(more)
    return state, events


def of_type(events: Iterable[Event], cls: type[E]) -> list[E]:
    """The events of one type, in order."""
    return [e for e in events if isinstance(e, cls)]


def names(actions: Iterable[Action]) -> set[str]:
    """Actions as their canonical strings."""
    return {str(a) for a in actions}


def answers(state: State, mapping: Mapping[int, Action | str]) -> tuple[State, list[Event]]:
    """answer_window() with answers given as strings or Actions."""
    return answer_window(state, {seat: as_action(a) for seat, a in mapping.items()})
