"""Positions to start a person's match from (state_from_json), so that each situation a person
meets is certain to come: a lead with the Mah Jong, a trick won with the Dragon, a bomb in a
window, a pass that was not forced."""

from __future__ import annotations

import dataclasses
from typing import Any

from referee.rules import OFFICIAL, State, new_game, state_from_json, state_to_json

# One round: a position's match ends with its deal (a match from a position plays the position's
# rules, not a rules_json given beside it).
ONE_DEAL = dataclasses.replace(OFFICIAL, match_mode="fixed_rounds:1")


def play_position(hands: list[str], turn: int, *, dealer: int = 0, round_: int = 0) -> State:
    """A round in its play phase: the exchange done, nobody has played, `turn` leads."""
    state, _ = new_game(ONE_DEAL, seed=1)
    data: dict[str, Any] = state_to_json(state)
    data.update(
        {
            "phase": "play",
            "round": round_,
            "dealer": dealer,
            "hands": hands,
            "unseen": ["", "", "", ""],
            "grand_tichu": [False] * 4,
            "tichu_step": [False] * 4,
            "exchange": [None] * 4,
            "received": [{}, {}, {}, {}],
            "turn": turn,
        }
    )
    return state_from_json(data)


# The person (seat 0) leads the Mah Jong (a wish), and later the Dragon, which nobody can beat:
# the Dragon's trick is the person's to give away. Nobody holds a nine: a wish for one stays open
# (R-WISH-3) for the page to show.
WISH_AND_DRAGON = [
    "MJ 3j 4s DRG",
    "2s 5j 6s 8t Jp",
    "2j 5s 6p 8j Js",
    "2p 5p 6t 8p Jt",
]
# Seat 3 leads a single or a pair; the person (whose turn comes next) holds a bomb of nines, and
# an ace and a pair of aces that beat any lead of seat 3's: the window after the lead asks the
# person, who lets it go; on the turn that follows there are plays to choose from, and the person
# passes; in the window after that pass (seat 1's turn is next) the person bombs, out of turn.
BOMB_AND_PASS = [
    "9j 9s 9p 9t Aj Ap",
    "2s 3j 4t 6s 10p Qj",
    "2j 3s 4p 6p 10j Qs",
    "5j 5s 7p 7t Jj Jt",
]
# The person leads and holds the Phoenix with 5 6 7 8: the five cards make a straight to 8 (the
# Phoenix as 4) or to 9 (the Phoenix as 9), and the page asks which.
PHOENIX_READINGS = [
    "PHX 5j 6s 7p 8t Kj",
    "2s 3j 4t 10s Qp Qj",
    "2j 3s 4p 10j Qs Ks",
    "2p 3p 4s 10p Jt Kt",
]
