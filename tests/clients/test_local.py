"""clients.local: in-process matches between the sample bots, what each bot sees, win rates."""

from __future__ import annotations

import itertools
import json
import random
import time

import pytest

from clients import local
from clients.bot import Bot
from clients.heuristic_bot import HeuristicBot
from clients.local import MatchOutcome, play_many, play_match
from clients.random_bot import RandomBot
from clients.showcase_bot import ShowcaseBot
from referee.match.records import Line
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


class _LoadedMachine:
    """clients.local's view of time on a machine whose load makes every answer take `step` s
    (random.uniform's range when `jitter`), whatever the bot does."""

    def __init__(self, step: float, *, jitter: bool) -> None:
        self.step, self.jitter, self.now = step, jitter, 0.0
        self.rng = random.Random(7)

    def perf_counter(self) -> float:
        self.now += self.rng.uniform(0, self.step) if self.jitter else self.step
        return self.now

    def time(self) -> float:
        return time.time()


def _lines(seed: int, monkeypatch: pytest.MonkeyPatch, machine: _LoadedMachine | None) -> list[str]:
    if machine is not None:
        monkeypatch.setattr(local, "time", machine)
    lines: list[str] = []

    def keep(record: Line) -> None:
        # Without the wall-clock dates (the header's, the start's), which differ from run to run.
        fields = {k: v for k, v in record.to_json().items() if not k.endswith("_at")}
        lines.append(json.dumps(fields, sort_keys=True))

    play_match([HeuristicBot(), ShowcaseBot(), HeuristicBot(), ShowcaseBot()], seed=seed, max_rounds=3,
               on_record=keep)  # fmt: skip
    monkeypatch.undo()
    return lines


def test_load_on_the_machine_does_not_change_a_match_of_prompt_bots(monkeypatch: pytest.MonkeyPatch) -> None:
    # Answers that took up to 0.2 s (the machine busy) play the same match as instant ones: the
    # exchanges and bomb windows of a round are answered in the same order, at the same times.
    # Instant answers on a clock that stands still: real answer times, on a loaded machine,
    # would order the simultaneous answers differently from run to run.
    quiet = _lines(31, monkeypatch, _LoadedMachine(0.0, jitter=False))
    assert _lines(31, monkeypatch, _LoadedMachine(0.2, jitter=True)) == quiet
    assert len(quiet) > 100


def test_an_answer_slower_than_the_clocks_times_out_as_on_the_referee(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(local, "time", _LoadedMachine(40.0, jitter=False))
    outcome = play_match([RandomBot() for _ in range(4)], seed=3, max_rounds=1)
    # 40 s per answer: past the 10 s decision clock, the 60 s bank soon spent: defaults taken.
    assert sum(seat.timeouts for seat in outcome.seats) > 0


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


class TurnCounter(RandomBot):
    """RandomBot that counts its play() calls, and those where passing was all it could do."""

    def __init__(self, referee_passes: bool) -> None:
        self.referee_passes = referee_passes
        self.turns = self.forced = 0

    def play(self, obs: Observation) -> Action:
        """Count, then play at random."""
        self.turns += 1
        self.forced += [str(a) for a in obs.legal_decisions] == ["pass"] and not obs.can_call_tichu
        return super().play(obs)


def test_a_bot_is_not_asked_to_pass_when_it_lets_the_referee_pass_for_it() -> None:
    asked = [TurnCounter(referee_passes=seat % 2 == 1) for seat in range(4)]
    outcome = play_match(asked, seed=4, max_rounds=3)
    assert outcome.rounds == 3
    # Seats 1 and 3 (Bot.referee_passes) play every turn they could do something on, and no other.
    assert [bot.forced > 0 for bot in asked] == [True, False, True, False]
    assert all(bot.turns > bot.forced for bot in asked)
