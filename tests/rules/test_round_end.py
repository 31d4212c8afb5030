"""without_next_deal: the table as a round ended, before the next deal, without faking a config.

The engine scores a round and deals the next one in the same move. Replayed from
without_next_deal(state), the move that ends a round stops at ROUND_END with the ended round's
hands, piles and out order, nothing owed and nothing accepted, and the events apply() gives up
to the deal; a move that ends the game gives what apply() gives.
"""

from __future__ import annotations

import dataclasses
import random

import pytest

from referee.rules import (
    CallTichu,
    Decline,
    Event,
    GiftDragon,
    IllegalActionError,
    InvalidActionError,
    Pass,
    Phase,
    RulesConfig,
    State,
    advance,
    apply,
    legal_actions,
    observe,
    owed,
    state_from_json,
    to_act,
    without_next_deal,
)
from referee.rules.events import RoundEnded, RoundScored, RoundStarted
from referee.rules.observation import REFEREE_ONLY, idle
from referee.rules.playout import playout
from referee.rules.state import PUBLIC_FIELDS, state_to_json
from tests.rules.random_games import Move, random_moves, reapply

CONFIGS = {
    "official": RulesConfig(),
    "six": RulesConfig(players=6),
    "dog_aside_final_dragon_kept": RulesConfig(
        dog_card_pile="next_trick_winner", dragon_gift_on_final_trick=False
    ),
    "to_400": RulesConfig(target_score=400),
}
PUBLIC = list(PUBLIC_FIELDS)


def one_round_game(state: State) -> State:
    """The same table in a game that ends with this round: an independent way to stop the deal."""
    ended = state.copy()
    ended.config = dataclasses.replace(state.config, match_mode=f"fixed_rounds:{len(state.history) + 1}")
    return ended


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_a_round_ending_move_stops_before_the_deal(name: str) -> None:
    config = CONFIGS[name]
    ends = game_ends = 0
    for seed in range(3):
        moves = random_moves(config, seed, rounds=12)
        before = next(moves).state
        for move in moves:
            if any(isinstance(e, RoundScored) for e in move.events):
                snapshot = state_to_json(before)
                held, events = reapply(without_next_deal(before), move)
                assert state_to_json(before) == snapshot  # its input is left alone
                dealt = [i for i, e in enumerate(move.events) if isinstance(e, RoundStarted)]
                if not dealt:
                    game_ends += 1
                    assert held == move.state and events == list(move.events)
                else:
                    ends += 1
                    assert events == list(move.events[: dealt[0]])
                    check_round_end(before, move, held, events)
            before = move.state
    assert ends > 0
    if config.target_score <= 400:
        assert game_ends > 0


def check_round_end(before: State, move: Move, held: State, events: list[Event]) -> None:
    """`held` is the table as the round ended: what a one-round game ends with, but in ROUND_END."""
    after = move.state
    (ended,) = [e for e in events if isinstance(e, RoundEnded)]
    assert held.phase is Phase.ROUND_END and held.round == before.round == after.round - 1
    assert held.out == ended.out and held.scores == after.scores and held.history == after.history
    reference, _ = reapply(one_round_game(before), move)
    for name in PUBLIC:
        if name not in ("phase", "winner", "config"):
            assert getattr(held, name) == getattr(reference, name), name
    assert to_act(held) == ()
    for seat in range(held.players):
        assert owed(held, seat) is None and not legal_actions(held, seat)
        for action in (Pass(), Decline(), CallTichu(), GiftDragon((seat + 1) % held.players)):
            with pytest.raises(IllegalActionError):
                apply(held, seat, action)
        # What each seat folds from the events it saw is the table as the round ended.
        folded = idle(observe(before, seat))
        for event in events:
            folded = advance(folded, event)
        truth = observe(held, seat)
        for field in dataclasses.fields(truth):
            if field.name not in REFEREE_ONLY:
                assert getattr(folded, field.name) == getattr(truth, field.name), field.name
    assert playout(held, random.Random(1), rounds=1)[0] == held  # nothing to play on


@pytest.mark.parametrize(
    ("position", "rule", "words"),
    [
        # A round already decided 1-2 by seats 0 and 2 cannot play on (it would score as a normal one).
        ({"hands": ["", "Ks", "", "5s"], "out": [0, 2], "turn": 1}, "R-END-3", "partners, went out first"),
        ({"hands": ["", "", "Ks", ""], "out": [0, 1, 3], "turn": 2}, "R-END-4", "three seats are out"),
        # A seat to act that is out has no legal decision.
        ({"hands": ["", "Ks", "3s", "5s"], "out": [0], "turn": 0}, "R-END-2", "seat 0 is to act but"),
    ],
)
def test_a_position_that_cannot_occur_is_refused_with_the_reason(
    position: dict[str, object], rule: str, words: str
) -> None:
    with pytest.raises(InvalidActionError, match=words) as refused:
        state_from_json({**position, "played": [True] * 4})
    assert refused.value.rule == rule


def test_an_out_seat_with_a_dragon_gift_to_make_is_a_position_that_occurs() -> None:
    state = state_from_json(
        {"hands": ["", "Ks", "3s", "5s"], "out": [0], "turn": 1, "gift": 0, "played": [True] * 4,
         "trick": [{"seat": 0, "cards": "DRG"}], "passed": [1, 2, 3]}
    )  # fmt: skip
    assert state.gift == 0
