"""rules.playout against the public API: the same random draws give the same game.

playout is the engine's own simulation loop and skips the public objects for speed, so it is
checked here against a reference loop built only from to_act, legal_decisions, apply and
answer_window that answers every decision from the same random numbers, drawn in the order
playout draws them:

- a regular turn: one draw over its legal answers, none when there is one;
- a bomb window: seat by seat in window order, one draw over 'decline' and its bombs for each
  seat whose hand holds a bomb (whether or not one beats the top), none for the others;
- any other decision: one draw for the seat when several owe one, then one over its answers.

Both must reach equal states (every public field) after the same number of decisions, and
playout must leave its input alone. Configs are drawn from every flag value, 4 and 6 players.
Its shortcuts are also checked directly against the listings they stand for.
"""

from __future__ import annotations

import random

from hypothesis import HealthCheck, given, settings
from hypothesis import Phase as Stage
from hypothesis import strategies as st

from referee.rules import (
    Action,
    Combo,
    ComboKind,
    Phase,
    RulesConfig,
    State,
    answer_window,
    apply,
    legal_decisions,
    new_game,
    state_to_json,
    to_act,
)
from referee.rules.combos import COMBOS, count_single_follows, has_bomb, nth_single_follow, plays
from referee.rules.playout import playout
from referee.rules.round import _shuffled_deck
from tests.rules.test_properties import SEEDS, configs


def reference_playout(
    state: State, rng: random.Random, rounds: int, steps: int | None = None
) -> tuple[State, int]:
    """playout's contract through the public API; stops early after `steps` steps if given."""
    target = state.round + rounds
    decisions = 0
    st_ = state
    taken = 0
    while steps is None or taken < steps:
        taken += 1
        if st_.phase is Phase.PLAY and st_.gift < 0:
            if st_.window:
                answers: dict[int, Action] = {}
                for seat in st_.window:
                    options = legal_decisions(st_, seat)
                    pick = int(rng.random() * len(options)) if has_bomb(st_.hands[seat]) else 0
                    answers[seat] = options[pick]
                decisions += len(st_.window)
                st_, _ = answer_window(st_, answers)
                continue
            seat = st_.turn
            options = legal_decisions(st_, seat)
            pick = int(rng.random() * len(options)) if len(options) > 1 else 0
            decisions += 1
            st_, _ = apply(st_, seat, options[pick])
            continue
        if st_.round >= target or st_.phase is Phase.GAME_OVER:
            break
        seats = to_act(st_)
        seat = seats[0] if len(seats) == 1 else seats[int(rng.random() * len(seats))]
        options = legal_decisions(st_, seat)
        decisions += 1
        st_, _ = apply(st_, seat, options[int(rng.random() * len(options))])
    return st_, decisions


def check_same_game(start: State, seed: int, rounds: int) -> None:
    before = state_to_json(start)
    fast, fast_decisions = playout(start, random.Random(seed), rounds)
    slow, slow_decisions = reference_playout(start, random.Random(seed), rounds)
    assert state_to_json(start) == before
    assert fast == slow
    assert state_to_json(fast) == state_to_json(slow)
    assert fast_decisions == slow_decisions


PLAYOUT_SETTINGS = settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    database=None,
    phases=(Stage.explicit, Stage.generate),
    suppress_health_check=[HealthCheck.too_slow],
)


@PLAYOUT_SETTINGS
@given(
    config=st.one_of(configs(4), configs(6)),
    seed=SEEDS,
    choices=st.integers(0, 2**32 - 1),
    rounds=st.integers(1, 3),
)
def test_playout_from_a_new_game_equals_the_public_api(
    config: RulesConfig, seed: int | str, choices: int, rounds: int
) -> None:
    start, _ = new_game(config, seed)
    check_same_game(start, choices, rounds)


@PLAYOUT_SETTINGS
@given(
    config=st.one_of(configs(4), configs(6)),
    seed=SEEDS,
    choices=st.integers(0, 2**32 - 1),
    steps=st.integers(0, 300),
)
def test_playout_from_any_point_of_a_round_equals_the_public_api(
    config: RulesConfig, seed: int | str, choices: int, steps: int
) -> None:
    """Mid-round starts: a trick in progress, a wish open, seats out, the leads memo warm."""
    start, _ = new_game(config, seed)
    middle, _ = reference_playout(start, random.Random(choices), 2, steps)
    check_same_game(middle, choices + 1, 1)


def test_playout_bench_games_equal_the_public_api() -> None:
    """The benchmark's own games (the official rules), several rounds on."""
    state, _ = new_game(seed="bench/1")
    rng = random.Random(1)
    for _ in range(30):
        check_same_game(state, rng.randrange(2**32), 1)
        state, _ = playout(state, rng, 1)
        if state.is_over:
            state, _ = new_game(seed=f"bench/{rng.random()}")


@settings(max_examples=400, deadline=None, derandomize=True, database=None)
@given(
    cards=st.lists(st.integers(0, 55), min_size=0, max_size=14, unique=True),
    key=st.integers(2, 30),
)
def test_single_follows_decode_as_plays_lists_them(cards: list[int], key: int) -> None:
    """count_single_follows / nth_single_follow are plays() on a single, bombs aside, in order."""
    hand = sum(1 << c for c in cards) & ~1  # no Dog: it is never played on a single
    top = Combo(ComboKind.SINGLE, 1, key)
    listed = [p for p in plays(hand, top) if not COMBOS[p[1]].is_bomb]
    count = count_single_follows(hand, key)
    assert [nth_single_follow(hand, key, i) for i in range(count)] == listed


def test_the_inlined_shuffle_deals_as_random_shuffle() -> None:
    """The deal (R-DEAL-1) is random.shuffle's order for the round's seed, draw for draw."""
    for seed in [*range(300), "bench/1/0", "tichu-deal/x/3"]:
        expected = list(range(56))
        random.Random(seed).shuffle(expected)
        assert _shuffled_deck(random.Random(seed)) == expected
