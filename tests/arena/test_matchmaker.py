"""The matchmaker: who meets whom, checked over many random arenas."""

from __future__ import annotations

import dataclasses
import random
from collections import Counter

from hypothesis import given
from hypothesis import strategies as st

from referee.arena.matchmaker import Candidate, choose


def candidate_lists(slots: st.SearchStrategy[int]) -> st.SearchStrategy[list[Candidate]]:
    """Ready bots of random ratings, histories, kinds and states, each with `slots` free."""
    return st.lists(
        st.builds(
            Candidate,
            name=st.sampled_from([f"b{i}" for i in range(12)]),
            leaderboard=st.sampled_from(["hosted", "remote"]),
            mu=st.floats(0, 50),
            pairs=st.integers(0, 50),
            validating=st.booleans(),
            house=st.booleans(),
            slots=slots,
        ),
        unique_by=lambda c: c.name,
        max_size=12,
    )


candidates = candidate_lists(st.just(1))


@given(candidates, st.integers(1, 8), st.integers(0, 2**32))
def test_no_bot_meets_itself_or_plays_two_pairs_at_once(ready: list[Candidate], most: int, seed: int) -> None:
    matches = choose(ready, {}, random.Random(seed), most)
    assert len(matches) <= most
    seated = [name for m in matches for name in (m.a, m.b)]
    assert len(seated) == len(set(seated))
    board = {c.name: c for c in ready}
    for match in matches:
        assert match.a != match.b
        if match.validation:
            assert board[match.a].validating and not board[match.b].validating
        else:
            assert not board[match.a].validating and not board[match.b].validating
            assert board[match.a].leaderboard == board[match.b].leaderboard == match.leaderboard


@given(st.integers(3, 10), st.integers(0, 2**32))
def test_the_pair_just_played_is_not_played_again_when_another_can_be(count: int, seed: int) -> None:
    rng = random.Random(seed)
    ready = [Candidate(f"b{i}", "hosted", rng.uniform(20, 30), rng.randint(0, 5)) for i in range(count)]
    last: dict[str, str] = {}
    for _ in range(20):
        one = rng.sample(ready, 3)  # three bots free at a time: each has another to meet
        [match] = choose(one, last, rng, 1)
        assert not (last.get(match.a) == match.b and last.get(match.b) == match.a)
        last[match.a], last[match.b] = match.b, match.a


def test_a_newcomer_meets_a_house_bot_first_and_the_least_played_choose_first() -> None:
    ready = [
        Candidate("new", "hosted", 25, 0, validating=True),
        Candidate("house", "hosted", 25, 40, house=True),
        Candidate("veteran", "hosted", 30, 90),
        Candidate("rookie", "hosted", 10, 1),
        Candidate("close", "hosted", 11, 50),
    ]
    matches = choose(ready, {}, random.Random(1), 5)
    assert matches[0].validation and (matches[0].a, matches[0].b) == ("new", "house")
    # The rookie (fewest pairs) chooses next: the closest rating is "close".
    assert (matches[1].a, matches[1].b) == ("rookie", "close")
    assert len(matches) == 2  # the veteran is left with nobody


def test_between_rounds_bots_that_just_met_wait_rather_than_meet_again() -> None:
    last = {"a": "b", "b": "a", "c": "d", "d": "c"}
    just_ended = [Candidate("a", "hosted", 25, 3), Candidate("b", "hosted", 25, 3)]
    # At a round they meet again (nobody else is there); between rounds they wait.
    assert [(m.a, m.b) for m in choose(just_ended, last, random.Random(1), 4)] in ([("a", "b")], [("b", "a")])
    assert choose(just_ended, last, random.Random(1), 4, rematch=False) == []
    # Once another pair has ended, each meets someone new.
    four = [*just_ended, Candidate("c", "hosted", 25, 3), Candidate("d", "hosted", 25, 3)]
    matches = choose(four, last, random.Random(1), 4, rematch=False)
    assert len(matches) == 2 and all(last[m.a] != m.b for m in matches)
    # Someone who met one of them last (and not the other way round) is not met between rounds either.
    one_sided = [Candidate("a", "hosted", 25, 3), Candidate("e", "hosted", 25, 3)]
    assert choose(one_sided, {"e": "a"}, random.Random(1), 4, rematch=False) == []


@given(candidate_lists(st.integers(1, 4)), st.integers(1, 12), st.integers(0, 2**32))
def test_a_bot_gets_as_many_pairs_as_it_has_slots_each_against_another(
    ready: list[Candidate], most: int, seed: int
) -> None:
    matches = choose(ready, {}, random.Random(seed), most)
    assert len(matches) <= most
    board = {c.name: c for c in ready}
    given_pairs = Counter(name for m in matches for name in (m.a, m.b))
    for name, count in given_pairs.items():
        assert count <= (1 if board[name].validating else board[name].slots)
    assert len({frozenset((m.a, m.b)) for m in matches}) == len(matches)  # never twice the same two
    assert all(m.a != m.b for m in matches)


def test_a_bot_with_three_slots_meets_three_opponents_and_each_once() -> None:
    # Each single-slot bot is closest to "many" (or as close as to another, and "many" has
    # played fewer pairs), so each chooses it; "many" meets each of them once.
    ready = [Candidate("many", "remote", 25.0, 0, slots=3)] + [
        Candidate(f"at{mu}", "remote", float(mu), 5) for mu in (15, 25, 35)
    ]
    for seed in range(20):
        matches = choose(ready, {}, random.Random(seed), 10)
        assert sorted(m.b if m.a == "many" else m.a for m in matches) == ["at15", "at25", "at35"]
        # The round's bound holds: with room for one pair, the least played chooses it.
        [only] = choose(ready, {}, random.Random(seed), 1)
        assert only.a == "many"
    # One slot: one pair, as before.
    one = [dataclasses.replace(ready[0], slots=1), *ready[1:]]
    assert sum("many" in (m.a, m.b) for m in choose(one, {}, random.Random(1), 10)) == 1


def test_a_validating_bot_plays_its_one_validation_pair_whatever_its_slots() -> None:
    # A newcomer that offers many games, house bots to meet, and a ladder bot with room for two.
    ready = [
        Candidate("new", "remote", 25.0, 0, validating=True, slots=4),
        Candidate("house1", "hosted", 25.0, 10, house=True),
        Candidate("house2", "hosted", 25.0, 10, house=True),
        Candidate("wide", "remote", 25.0, 3, slots=2),
        Candidate("narrow", "remote", 24.0, 3),
    ]
    for seed in range(20):
        matches = choose(ready, {}, random.Random(seed), 10)
        with_new = [m for m in matches if "new" in (m.a, m.b)]
        assert len(with_new) == 1 and with_new[0].validation and with_new[0].a == "new"
        assert with_new[0].b in ("house1", "house2")
        # The ladder goes on beside it: "wide" meets "narrow" once (never twice in one call).
        assert [(m.a, m.b) for m in matches if not m.validation] in (
            [("wide", "narrow")],
            [("narrow", "wide")],
        )
