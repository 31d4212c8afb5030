"""Per-seat statistics, counted from replay records: one definition for the live match, a resumed
match and `tichu replay verify`, so the summary in a replay can always be re-derived."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from referee.match.records import (
    Connected,
    DecisionRecord,
    EventRecord,
    Record,
    RejectionRecord,
    ViolationRecord,
    WindowRecord,
)
from referee.match.summary import SeatSummary
from referee.match.visitor import RecordVisitor, visit
from referee.rules import DecisionKind
from referee.rules.events import Called, DragonGiven, Played, RoundEnded, RoundStarted, TrickWon


def percentile(values: Sequence[float], fraction: float) -> float:
    """The nearest-rank percentile; 0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[max(1, math.ceil(len(ordered) * fraction)) - 1]


@dataclass(slots=True)
class _Counts:
    """One seat's running counts, as the records come: what its SeatSummary is made of (the one
    per-seat statistics type; this is only the counter behind it)."""

    seat: int
    bot_name: str = ""
    bot_version: str = ""
    decisions: int = 0
    think_ms: list[float] = field(default_factory=list)
    timeouts: int = 0
    rejections: int = 0
    tichu_calls: int = 0
    tichu_won: int = 0
    grand_tichu_calls: int = 0
    grand_tichu_won: int = 0
    bombs: int = 0
    first_out: int = 0  # rounds this seat went out first (not in the replay's summary)
    points: int = 0
    reconnections: int = 0
    bank_left_ms: int | None = None  # None until a record says

    def summary(self, rate_limited: int | None = None, bank_left_ms: int | None = None) -> SeatSummary:
        """The seat's line of the match summary (with the live-only counts when given)."""
        return SeatSummary(
            seat=self.seat,
            bot_name=self.bot_name,
            bot_version=self.bot_version,
            decisions=self.decisions,
            think_ms_p50=round(percentile(self.think_ms, 0.50), 1),
            think_ms_p99=round(percentile(self.think_ms, 0.99), 1),
            timeouts=self.timeouts,
            rejections=self.rejections,
            tichu_calls=self.tichu_calls,
            tichu_won=self.tichu_won,
            grand_tichu_calls=self.grand_tichu_calls,
            grand_tichu_won=self.grand_tichu_won,
            bombs_played=self.bombs,
            points_won=self.points,
            reconnections=self.reconnections,
            rate_limited=rate_limited,
            bank_left_ms=bank_left_ms,
        )


class Tally(RecordVisitor):
    """Counts what every seat did, record by record (decisions, think times, calls, points...)."""

    def __init__(self, players: int, bot_names: Sequence[str] = ()) -> None:
        self.seats = [_Counts(s, bot_names[s] if s < len(bot_names) else "") for s in range(players)]
        self._callers: dict[int, str] = {}  # this round's callers and their calls

    def add(self, record: Record) -> None:
        """Count one record."""
        visit(self, record)

    def visit_decision(self, record: DecisionRecord) -> None:
        seat = self.seats[record.seat]
        seat.bank_left_ms = record.bank_left_ms
        if not record.by_referee:  # the referee's pass is neither the bot's decision nor its time
            seat.decisions += 1
            seat.think_ms.append(float(record.time_used_ms))

    def visit_window(self, record: WindowRecord) -> None:
        for seat_number, used in record.times_ms:
            seat = self.seats[seat_number]
            seat.decisions += 1
            seat.think_ms.append(float(used))

    def visit_violation(self, record: ViolationRecord) -> None:
        seat = self.seats[record.seat]
        seat.timeouts += 1
        if record.decision is not DecisionKind.BOMB_WINDOW:
            seat.bank_left_ms = 0

    def visit_rejection(self, record: RejectionRecord) -> None:
        self.seats[record.seat].rejections += 1

    def visit_connected(self, record: Connected) -> None:
        seat = self.seats[record.seat]
        if record.reconnect:
            seat.reconnections += 1
        seat.bot_name = seat.bot_name or record.bot_name
        seat.bot_version = record.bot_version

    def visit_event(self, record: EventRecord) -> None:
        """Count what an event tells: calls and whether they were won, bombs, card points."""
        event = record.event
        if isinstance(event, RoundStarted):
            self._callers.clear()
        elif isinstance(event, Called):
            seat = self.seats[event.seat]
            if event.call == "grand_tichu":
                seat.grand_tichu_calls += 1
            else:
                seat.tichu_calls += 1
            self._callers[event.seat] = event.call
        elif isinstance(event, RoundEnded):
            if event.out:
                self.seats[event.out[0]].first_out += 1
            if event.out and event.out[0] in self._callers:
                first = self.seats[event.out[0]]
                if self._callers[event.out[0]] == "grand_tichu":
                    first.grand_tichu_won += 1
                else:
                    first.tichu_won += 1
        elif isinstance(event, Played):
            if event.combo.is_bomb:
                self.seats[event.seat].bombs += 1
        elif isinstance(event, TrickWon):
            self.seats[event.seat].points += event.points
        elif isinstance(event, DragonGiven):
            self.seats[event.to].points += event.points

    def summary(self) -> tuple[SeatSummary, ...]:
        """Every seat's summary line, in seat order (without the live-only counts)."""
        return tuple(seat.summary() for seat in self.seats)
