"""owed(state, seat): the kind of the decision a seat owes, told by the engine in one place.

The kind must agree with to_act and with what legal_decisions lists for the seat, in every
phase of random games (4 and 6 players, every way of calling around the exchange).
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from referee.rules import (
    Action,
    CallTichu,
    DecisionKind,
    Decline,
    DeclineTichu,
    GiftDragon,
    GrandTichu,
    Pass,
    Phase,
    Play,
    RulesConfig,
    State,
    legal_decisions,
    owed,
    to_act,
)
from referee.rules.legal import ExchangeChoices
from tests.rules.random_games import random_moves

CONFIGS = {
    "official": RulesConfig(),
    "six": RulesConfig(players=6),
    "open_sequential": RulesConfig(tichu_call_exchange_mode="open", gt_decision_mode="sequential"),
    "no_grand_tichu": RulesConfig(grand_tichu_enabled=False, tichu_call_exchange_mode="after_exchange_only"),
    "turn_only": RulesConfig(bomb_timing="turn_only", dragon_gift_recipients="active_opponents_only"),
}


def fits(kind: DecisionKind, legal: Sequence[Action], state: State) -> bool:
    """Whether the listed answers are answers to a decision of this kind."""
    if kind is DecisionKind.GRAND_TICHU:
        return all(isinstance(a, GrandTichu) for a in legal)
    if kind is DecisionKind.TICHU_STEP:
        return list(legal) == [CallTichu(), DeclineTichu()]
    if kind is DecisionKind.EXCHANGE:
        return isinstance(legal, ExchangeChoices)
    if kind is DecisionKind.DRAGON_GIFT:
        return all(isinstance(a, GiftDragon) for a in legal)
    if kind is DecisionKind.BOMB_WINDOW:
        rest = list(legal)[1:]
        return legal[0] == Decline() and all(
            isinstance(a, Play) and a._combo and a._combo.is_bomb for a in rest
        )
    return state.phase is Phase.PLAY and all(isinstance(a, Pass | Play) for a in legal)


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_owed_agrees_with_to_act_and_the_legal_decisions(name: str) -> None:
    seen: set[DecisionKind] = set()
    for seed in range(3):
        for move in random_moves(CONFIGS[name], seed, rounds=2):
            state = move.state
            pending = to_act(state)
            for seat in range(state.players):
                kind = owed(state, seat)
                legal = legal_decisions(state, seat)
                if seat not in pending:
                    assert kind is None and not legal
                    continue
                assert kind is not None and legal, (state, seat)
                assert fits(kind, legal, state), (kind, [str(a) for a in legal[:5]])
                seen.add(kind)
    expected = set(DecisionKind)
    if not CONFIGS[name].grand_tichu_enabled:
        expected.discard(DecisionKind.GRAND_TICHU)
    if CONFIGS[name].tichu_call_exchange_mode != "pre_step":
        expected.discard(DecisionKind.TICHU_STEP)
    if CONFIGS[name].bomb_timing == "turn_only":
        expected.discard(DecisionKind.BOMB_WINDOW)
    if CONFIGS[name].dragon_gift_recipients == "active_opponents_only" and CONFIGS[name].players == 4:
        expected.discard(DecisionKind.DRAGON_GIFT)  # one active opponent is given the trick unasked
    assert expected <= seen


def test_the_kinds_keep_their_names_and_values() -> None:
    """The wire, the replays and bots name the kinds by these strings."""
    assert {k.name: k.value for k in DecisionKind} == {
        "GRAND_TICHU": "grand_tichu",
        "TICHU_STEP": "tichu_step",
        "EXCHANGE": "exchange",
        "PLAY": "play",
        "BOMB_WINDOW": "bomb_window",
        "DRAGON_GIFT": "dragon_gift",
    }
