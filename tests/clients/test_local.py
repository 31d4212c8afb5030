"""clients.local: in-process matches between the sample bots, what each bot sees, win rates."""

from __future__ import annotations

import itertools

import pytest

from clients.bot import Bot
from clients.heuristic_bot import HeuristicBot
from clients.local import MatchOutcome, play_many, play_match
from clients.random_bot import RandomBot
from clients.showcase_bot import ShowcaseBot
from referee.rules import (
    OFFICIAL,
    Action,
    Card,
    Event,
    Exchange,
    Observation,
    Play,
    RulesConfig,
)
from referee.rules.events import CardsDealt, CardsReceived, ExchangeSubmitted

SAMPLES: tuple[type[Bot], ...] = (RandomBot, HeuristicBot, ShowcaseBot)


def check_outcome(outcome: MatchOutcome) -> None:
    """A finished match: a winner that matches the scores, and no answer replaced."""
    assert outcome.finished
    a, b = outcome.scores
    assert outcome.winner == (None if a == b else int(b > a))
    assert max(a, b) >= 1000
    for seat in outcome.seats:
        assert seat.replaced == seat.errors == 0, seat
        assert seat.decisions > 0


@pytest.mark.parametrize(("team_a", "team_b"), list(itertools.product(SAMPLES, repeat=2)))
def test_every_pairing_of_sample_bots_finishes_a_game(team_a: type[Bot], team_b: type[Bot]) -> None:
    outcome = play_match([team_a(), team_b(), team_a(), team_b()], seed=f"{team_a.name}-{team_b.name}")
    check_outcome(outcome)
    assert [s.bot for s in outcome.seats] == [team_a.name, team_b.name] * 2


@pytest.mark.parametrize("lineup", [SAMPLES * 2, (HeuristicBot,) * 6, (ShowcaseBot, RandomBot) * 3])
def test_six_player_games_finish(lineup: tuple[type[Bot], ...]) -> None:
    check_outcome(play_match([cls() for cls in lineup], seed=6))


def test_a_match_is_reproducible_from_its_seed() -> None:
    first = play_match([RandomBot() for _ in range(4)], seed=12)
    second = play_match([RandomBot() for _ in range(4)], seed=12)
    assert (first.scores, first.rounds) == (second.scores, second.rounds)


def test_max_rounds_stops_a_match_without_a_winner() -> None:
    outcome = play_match([RandomBot() for _ in range(4)], seed=1, max_rounds=2)
    assert (outcome.finished, outcome.winner, outcome.rounds) == (False, None, 2)


def test_the_config_must_fit_the_bots() -> None:
    with pytest.raises(ValueError, match="6 bots for a 4-player game"):
        play_match([RandomBot() for _ in range(6)], OFFICIAL)
    outcome = play_match([RandomBot() for _ in range(6)], RulesConfig(players=6, target_score=300), seed=2)
    assert outcome.finished


class SpyBot(RandomBot):
    """RandomBot that checks that it only ever sees what its own seat may know."""

    def __init__(self, seat: int) -> None:
        self.seat = seat
        self.mine: set[Card] = set()  # every card this seat was dealt or received
        self.observations = 0
        self.heard: list[Event] = []

    def on_event(self, event: Event) -> None:
        """Keep track of this seat's cards from its private events."""
        assert event.visible_to(self.seat), event
        assert event.private_to in (None, self.seat), event
        if isinstance(event, CardsDealt):
            self.mine |= {Card(c) for c in range(56) if event.cards >> c & 1}
        elif isinstance(event, CardsReceived):
            self.mine |= {Card(c) for _, c in event.received}
        elif isinstance(event, ExchangeSubmitted):
            assert event.seat == self.seat
        self.heard.append(event)

    def _check(self, obs: Observation) -> None:
        self.observations += 1
        assert obs.seat == self.seat
        assert set(obs.hand) <= self.mine, "a card in hand that this seat was never given"

    def play(self, obs: Observation) -> Action:
        """Check, then play at random."""
        self._check(obs)
        return super().play(obs)

    def exchange(self, obs: Observation) -> Exchange:
        """Check, then give the default."""
        self._check(obs)
        return super().exchange(obs)

    def bomb(self, obs: Observation) -> Play | None:
        """Check, then decline."""
        self._check(obs)
        return None


def test_bots_see_only_what_their_seat_may_know() -> None:
    spies = [SpyBot(seat) for seat in range(4)]
    outcome = play_match(spies, seed=9, max_rounds=3)
    assert outcome.rounds == 3
    for spy in spies:
        assert spy.observations > 20
        dealt = [e for e in spy.heard if isinstance(e, CardsDealt)]
        assert dealt and all(e.seat == spy.seat for e in dealt)


def test_play_many_swaps_the_teams_on_the_same_deals() -> None:
    seatings: list[list[str]] = []
    summary = play_many(
        [HeuristicBot, RandomBot, HeuristicBot, RandomBot],
        4,
        seed=1,
        max_rounds=1,
        progress=lambda game, outcome: seatings.append([s.bot for s in outcome.seats]),
    )
    assert seatings == [["heuristic", "random"] * 2, ["random", "heuristic"] * 2] * 2
    assert summary.games == 4 and summary.unfinished == 4 and summary.rounds == 4
    assert summary.win_rate(0) == summary.win_rate(1) == 0.0


def test_the_heuristic_bot_beats_the_random_bot() -> None:
    summary = play_many([HeuristicBot, RandomBot, HeuristicBot, RandomBot], 30, seed=2024)
    assert summary.unfinished == 0
    assert summary.win_rate(0) > 0.7
    assert summary.mean_scores[0] > summary.mean_scores[1]
