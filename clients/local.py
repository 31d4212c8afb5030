"""Play bots against each other in-process: the same Bot API as over gRPC, and no network.

play_match drives the referee's own match core (referee.match.Match) with virtual time. Each
seat's bot sits behind the same seat driver as over gRPC (clients.driver): it is handed the very
messages the referee would send the seat (its Welcome, Snapshot, events and requests, every seat
of a bomb window whatever its hand), folds them into the seat's observation, and answers as it
would over the wire, so the same bots leave the same moves in the replay here and there. A bot's
answer arrives as long after its request as the bot took to decide (its own seat's requests one
after another, the seats in parallel), so a slow bot times out and gets the defaults exactly as
on the referee; bomb windows, bombs and Tichu calls out of turn work as there too. An answer well
within the clocks (under steady_think_s) counts as one THINK_STEP_S, however long it took on this
machine, so that such bots play the same match, record for record, every time, on a busy machine
too; a slower answer counts as long as it took (in whole steps), so that it runs down the clocks
as on the referee. play_many plays many matches, the teams changing seats on the same deal every
other game.
"""

from __future__ import annotations

import heapq
import itertools
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from clients.bot import Bot
from clients.driver import SeatDriver
from referee.match import ClockSettings, Match
from referee.match.messages import Connect, Input, OutMessage, Output, Received, Send, Tick, Write
from referee.match.records import Line
from referee.rules import OFFICIAL, RulesConfig

__all__ = ["LOCAL_CLOCK", "MatchOutcome", "MatchSummary", "SeatStats", "play_many", "play_match"]

# The referee's default clocks, without heartbeats: in one process no stream can stall.
LOCAL_CLOCK = ClockSettings(heartbeat_interval_ms=0)
# Think times count in whole steps of this length: bots that answer well within the clocks then
# answer in the same order, at the same virtual times, every time, and play the same match.
THINK_STEP_S = 0.01
# An answer faster than this (or a quarter of the shortest clock, if less) counts as one step: on
# the referee it would cost nothing but its place in the order, and measured times this short
# swing with the machine's load (a 10 ms step alone is crossed on a busy machine).
STEADY_THINK_S = 0.25
# A round takes a few hundred decisions; this many inputs in one match means a loop.
MAX_INPUTS = 2_000_000


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
    timeouts: int = 0  # requests the referee's clocks ran out on (the default was taken)


@dataclass(frozen=True, slots=True)
class MatchOutcome:
    """The result of one match: team scores (A = even seats, B = odd), winner, rounds, seats."""

    scores: tuple[int, int]
    winner: int | None  # 0 = team A, 1 = team B, None = a draw or an unfinished match
    rounds: int
    seats: tuple[SeatStats, ...]
    finished: bool  # False when max_rounds stopped the match first
    seconds: float


class _LocalMatch:
    """One in-process match: the Match, each seat's driver, and the answers on their way."""

    def __init__(
        self,
        bots: Sequence[Bot],
        config: RulesConfig,
        seed: int | str,
        clock: ClockSettings,
        on_record: Callable[[Line], None] | None,
    ) -> None:
        self.drivers = [SeatDriver(bot, seat=seat) for seat, bot in enumerate(bots)]
        for seat, bot in enumerate(bots):
            bot.rng.seed(f"tichu-bot/{seed}/{seat}")
        self.on_record = on_record
        self.now = 0.0
        header = Match.header_for(
            "local", config, clock=clock, seed=seed, bot_names=[b.name for b in bots], wall=time.time()
        )
        self.match = Match(header, now=self.now, wall=time.time())
        # Inputs on their way to the match: (arrival time, order made, input); a seat's stream id
        # is its number.
        self._arriving: list[tuple[float, int, Input]] = []
        self._order = itertools.count()
        self._free_at = [0.0] * len(bots)  # when each seat's bot is done with what it was asked
        self.steady_think_s = min(STEADY_THINK_S, clock.decision_ms / 4000, clock.window_ms / 4000)
        self._carry_out(self.match.drain())
        for seat, (bot, driver) in enumerate(zip(bots, self.drivers, strict=True)):
            # The Hello the SDK sends over gRPC (clients.connect) asks the same of the referee.
            self._feed(Connect(seat, seat, bot.name, bot.version, driver.options))

    def _feed(self, item: Input) -> None:
        self._carry_out(self.match.handle(item, self.now))

    def _carry_out(self, outputs: list[Output]) -> None:
        for out in outputs:
            if isinstance(out, Send):
                self._deliver(out.stream, out.message)
            elif isinstance(out, Write) and self.on_record is not None:
                self.on_record(out.record)

    def _deliver(self, seat: int, message: OutMessage) -> None:
        """Hand a message to the seat's driver; what it answers arrives once the bot has taken its
        time (a request's answer), or at once (anything else)."""
        started = time.perf_counter()
        answers = self.drivers[seat].handle(message)
        if not answers:
            return
        took = time.perf_counter() - started
        think_s = (
            THINK_STEP_S if took < self.steady_think_s else math.ceil(took / THINK_STEP_S) * THINK_STEP_S
        )
        arrives = max(self.now, self._free_at[seat]) + think_s
        self._free_at[seat] = arrives
        for answer in answers:
            heapq.heappush(self._arriving, (arrives, next(self._order), Received(seat, answer)))

    def run(self, max_rounds: int | None) -> bool:
        """Play until the match ends (True) or `max_rounds` rounds have been scored (False)."""
        match = self.match
        for _ in range(MAX_INPUTS):
            if match.status == "finished":
                return True
            if max_rounds is not None and len(match.state.history) >= max_rounds:
                return False
            due = match.next_deadline()
            if self._arriving and (due is None or self._arriving[0][0] <= due):
                arrives, _, item = heapq.heappop(self._arriving)
                self.now = max(self.now, arrives)
                self._feed(item)
            elif due is not None:
                self.now = max(self.now, due)
                self._feed(Tick())
            else:
                raise RuntimeError("the local match is stuck: nothing to answer and no deadline")
        raise RuntimeError(f"the local match took more than {MAX_INPUTS} inputs")

    def outcome(self, finished: bool, seconds: float) -> MatchOutcome:
        """The match's outcome and per-seat statistics."""
        state = self.match.state
        counts = self.match.tally.seats
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
                timeouts=counts[seat].timeouts,
            )
            for seat, h in enumerate(d.harness for d in self.drivers)
        )
        winner = state.winner if finished else None
        return MatchOutcome(state.scores, winner, len(state.history), seats, finished, seconds)


def play_match(
    bots: Sequence[Bot],
    config: RulesConfig | None = None,
    seed: int | str = 0,
    max_rounds: int | None = None,
    *,
    clock: ClockSettings = LOCAL_CLOCK,
    on_record: Callable[[Line], None] | None = None,
) -> MatchOutcome:
    """Play one match between 4 or 6 bots (seat i = bots[i]) and return its outcome.

    `config` defaults to the official rules for len(bots) players. Each bot's `rng` is seeded
    from `seed`, so a match of bots that draw only from it, and answer within the clocks, is
    reproducible. `max_rounds` stops a match early (its outcome then has finished=False and no
    winner). `clock` is the referee's clocks in virtual time; `on_record` receives the match's
    replay lines as they are made (the header first), e.g. to write or print them.
    """
    if config is None:
        config = replace(OFFICIAL, players=len(bots))
    if config.players != len(bots):
        raise ValueError(f"{len(bots)} bots for a {config.players}-player game")
    start = time.perf_counter()
    match = _LocalMatch(bots, config, seed, clock, on_record)
    finished = match.run(max_rounds)
    return match.outcome(finished, time.perf_counter() - start)


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
