"""Play bots against each other in-process: the same Bot API as over gRPC, and no network.

play_match drives the engine as the referee does: every seat that owes a decision is asked (all
the seats of a bomb window before answer_window resolves it), each bot sees only
observe(state, its seat) and the events visible to its seat, and a Harness checks every answer.
play_many plays many matches, the teams changing seats on the same deal every other game.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace

from clients.bot import Bot, DecisionKind, Harness
from referee.replay.tally import Tally
from referee.rules import (
    OFFICIAL,
    Action,
    CallTichu,
    Decline,
    Event,
    Observation,
    Phase,
    RulesConfig,
    State,
    answer_window,
    apply,
    can_call_tichu,
    new_game,
    observe,
    to_act,
)

DECLINE = Decline()

__all__ = ["MatchOutcome", "MatchSummary", "SeatStats", "play_many", "play_match"]


@dataclass(frozen=True, slots=True)
class SeatStats:
    """One seat's match: its bot, how the SDK answered for it, and what it achieved."""

    seat: int
    bot: str
    decisions: int  # decisions answered for this seat
    auto_declines: int  # bomb windows the SDK declined without asking the bot
    replaced: int  # illegal or malformed answers the SDK replaced
    errors: int  # exceptions the bot raised
    think_s: float  # time spent in the bot's methods
    tichu_calls: int
    tichu_made: int
    grand_tichu_calls: int
    grand_tichu_made: int
    first_out: int  # rounds this seat went out first
    bombs: int  # bombs played, in or out of turn


@dataclass(frozen=True, slots=True)
class MatchOutcome:
    """The result of one match: team scores (A = even seats, B = odd), winner, rounds, seats."""

    scores: tuple[int, int]
    winner: int | None  # 0 = team A, 1 = team B, None = a draw or an unfinished match
    rounds: int
    seats: tuple[SeatStats, ...]
    finished: bool  # False when max_rounds stopped the match first
    seconds: float


class _Match:
    """One in-process match: the state, the seats' harnesses and the event delivery."""

    def __init__(self, bots: Sequence[Bot], config: RulesConfig, seed: int | str) -> None:
        self.harnesses = [Harness(bot, seat) for seat, bot in enumerate(bots)]
        for seat, bot in enumerate(bots):
            bot.rng.seed(f"tichu-bot/{seed}/{seat}")
        self.tally = Tally(len(bots))
        self.state, events = new_game(config, seed)
        self.deliver(events)

    def deliver(self, events: Iterable[Event]) -> None:
        """Give every event to the tally and to each seat that may see it (R-INFO-1)."""
        for event in events:
            self.tally.add_event(event)
            for seat, harness in enumerate(self.harnesses):
                if event.visible_to(seat):
                    harness.event(event)

    def observation(self, seat: int) -> Observation:
        """The seat's observation, after letting its bot call Tichu out of turn if it wants to."""
        obs = observe(self.state, seat)
        if self.harnesses[seat].wants_tichu_call(obs):
            self.state, events = apply(self.state, seat, CallTichu())
            self.deliver(events)
            obs = observe(self.state, seat)
        return obs

    def step(self) -> None:
        """Answer the decisions owed now: a whole bomb window at once, else one seat's."""
        state = self.state
        seats = to_act(state)
        if state.phase is Phase.PLAY and state.gift < 0 and state.window:
            answers: dict[int, Action] = {}
            for seat in seats:
                harness = self.harnesses[seat]
                if harness.declines_unseen(state.hands[seat], can_call_tichu(state, seat)):
                    answers[seat] = DECLINE
                else:
                    answers[seat] = harness.decide(self.observation(seat), DecisionKind.BOMB_WINDOW)
            self.state, events = answer_window(self.state, answers)
        else:
            seat = seats[0]
            action = self.harnesses[seat].decide(self.observation(seat))
            self.state, events = apply(self.state, seat, action)
        self.deliver(events)

    def outcome(self, finished: bool, seconds: float) -> MatchOutcome:
        """The match's outcome and per-seat statistics."""
        st: State = self.state
        counts = self.tally.seats
        seats = tuple(
            SeatStats(
                seat=seat,
                bot=h.bot.name,
                decisions=h.stats.decisions,
                auto_declines=h.stats.auto_declines,
                replaced=h.stats.replaced,
                errors=h.stats.errors,
                think_s=h.stats.think_s,
                tichu_calls=counts[seat].tichu_calls,
                tichu_made=counts[seat].tichu_won,
                grand_tichu_calls=counts[seat].grand_tichu_calls,
                grand_tichu_made=counts[seat].grand_tichu_won,
                first_out=counts[seat].first_out,
                bombs=counts[seat].bombs,
            )
            for seat, h in enumerate(self.harnesses)
        )
        winner = st.winner if finished else None
        return MatchOutcome(st.scores, winner, len(st.history), seats, finished, seconds)


def play_match(
    bots: Sequence[Bot],
    config: RulesConfig | None = None,
    seed: int | str = 0,
    max_rounds: int | None = None,
) -> MatchOutcome:
    """Play one match between 4 or 6 bots (seat i = bots[i]) and return its outcome.

    `config` defaults to the official rules for len(bots) players. Each bot's `rng` is seeded
    from `seed`, so a match of bots that draw only from it is reproducible. `max_rounds` stops
    a match early (its outcome then has finished=False and no winner).
    """
    if config is None:
        config = replace(OFFICIAL, players=len(bots))
    if config.players != len(bots):
        raise ValueError(f"{len(bots)} bots for a {config.players}-player game")
    start = time.perf_counter()
    match = _Match(bots, config, seed)
    while not match.state.is_over:
        if max_rounds is not None and len(match.state.history) >= max_rounds:
            return match.outcome(False, time.perf_counter() - start)
        match.step()
    return match.outcome(True, time.perf_counter() - start)


@dataclass(frozen=True, slots=True)
class MatchSummary:
    """Many matches between two teams of bot factories: team 0 = even indices, team 1 = odd."""

    games: int
    wins: tuple[int, int]
    draws: int
    unfinished: int
    mean_scores: tuple[float, float]
    rounds: int
    tichu_calls: tuple[int, int]
    tichu_made: tuple[int, int]
    replaced: tuple[int, int]
    seconds: float

    def win_rate(self, team: int = 0) -> float:
        """The share of games `team` won (draws and unfinished games count as not won)."""
        return self.wins[team] / self.games if self.games else 0.0


def play_many(
    bot_factories: Sequence[Callable[[], Bot]],
    games: int,
    seed: int | str = 0,
    config: RulesConfig | None = None,
    max_rounds: int | None = None,
    progress: Callable[[int, MatchOutcome], None] | None = None,
) -> MatchSummary:
    """Play `games` matches of fresh bots; factory i belongs to team i % 2.

    Games come in pairs on the same deals: in the second the factories move one seat on, so each
    team plays each deal from both sides, which cancels much of the luck of the cards.
    `progress(game, outcome)` is called after each game.
    """
    n = len(bot_factories)
    wins = [0, 0]
    totals = [0, 0]
    calls = [0, 0]
    made = [0, 0]
    replaced = [0, 0]
    draws = unfinished = rounds = 0
    start = time.perf_counter()
    for game in range(games):
        shift = game % 2
        # Seat s holds factory (s + shift) % n, whose team is (s + shift) % 2.
        bots = [bot_factories[(s + shift) % n]() for s in range(n)]
        outcome = play_match(bots, config, f"{seed}/{game // 2}", max_rounds)
        rounds += outcome.rounds
        for seat_team in (0, 1):
            team = (seat_team + shift) % 2
            totals[team] += outcome.scores[seat_team]
        for stats in outcome.seats:
            team = (stats.seat + shift) % 2
            calls[team] += stats.tichu_calls + stats.grand_tichu_calls
            made[team] += stats.tichu_made + stats.grand_tichu_made
            replaced[team] += stats.replaced
        if not outcome.finished:
            unfinished += 1
        elif outcome.winner is None:
            draws += 1
        else:
            wins[(outcome.winner + shift) % 2] += 1
        if progress is not None:
            progress(game, outcome)
    played = max(games, 1)
    return MatchSummary(
        games=games,
        wins=(wins[0], wins[1]),
        draws=draws,
        unfinished=unfinished,
        mean_scores=(totals[0] / played, totals[1] / played),
        rounds=rounds,
        tichu_calls=(calls[0], calls[1]),
        tichu_made=(made[0], made[1]),
        replaced=(replaced[0], replaced[1]),
        seconds=time.perf_counter() - start,
    )
