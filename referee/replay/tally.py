"""Per-seat statistics, counted from replay records: one definition for the live table, a
resumed table and `tichu replay verify`, so the summary in a replay can always be re-derived."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from referee.rules.events import (
    Called,
    DragonGiven,
    Event,
    Played,
    RoundEnded,
    RoundStarted,
    TrickWon,
    event_from_json,
)

Record = dict[str, Any]


def percentile(values: Sequence[float], fraction: float) -> float:
    """The nearest-rank percentile; 0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[max(1, math.ceil(len(ordered) * fraction)) - 1]


@dataclass(slots=True)
class SeatTally:
    """One seat's counts."""

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

    def summary(self) -> dict[str, Any]:
        """The seat's line of the match summary."""
        return {
            "seat": self.seat,
            "bot_name": self.bot_name,
            "bot_version": self.bot_version,
            "decisions": self.decisions,
            "think_ms_p50": round(percentile(self.think_ms, 0.50), 1),
            "think_ms_p99": round(percentile(self.think_ms, 0.99), 1),
            "timeouts": self.timeouts,
            "rejections": self.rejections,
            "tichu_calls": self.tichu_calls,
            "tichu_won": self.tichu_won,
            "grand_tichu_calls": self.grand_tichu_calls,
            "grand_tichu_won": self.grand_tichu_won,
            "bombs_played": self.bombs,
            "points_won": self.points,
            "reconnections": self.reconnections,
        }


class Tally:
    """Counts what every seat did, record by record (decisions, think times, calls, points...)."""

    def __init__(self, players: int, bot_names: Sequence[str] = ()) -> None:
        self.seats = [SeatTally(s, bot_names[s] if s < len(bot_names) else "") for s in range(players)]
        self._callers: dict[int, str] = {}  # this round's callers and their calls

    def add(self, record: Record, event: Event | None = None) -> None:
        """Count one record; an event record's Event may be passed to save decoding it."""
        kind = record["kind"]
        if kind == "event":
            self.add_event(event if event is not None else event_from_json(record["event"]))
        elif kind == "decision":
            seat = self.seats[record["seat"]]
            seat.decisions += 1
            seat.think_ms.append(float(record["time_used_ms"]))
            seat.bank_left_ms = int(record["bank_left_ms"])
        elif kind == "window":
            for seat_key, used in record.get("time_ms", {}).items():
                seat = self.seats[int(seat_key)]
                seat.decisions += 1
                seat.think_ms.append(float(used))
        elif kind == "violation":
            seat = self.seats[record["seat"]]
            seat.timeouts += 1
            if record.get("decision") != "bomb_window":
                seat.bank_left_ms = 0
        elif kind == "rejection":
            self.seats[record["seat"]].rejections += 1
        elif kind == "connection":
            seat = self.seats[record["seat"]]
            if record.get("connected"):
                if record.get("reconnect"):
                    seat.reconnections += 1
                seat.bot_name = seat.bot_name or str(record.get("bot_name", ""))
                seat.bot_version = str(record.get("bot_version", ""))

    def add_event(self, event: Event) -> None:
        """Count what an event tells: calls and whether they were won, bombs, card points."""
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

    def summary(self) -> list[dict[str, Any]]:
        """Every seat's summary line, in seat order."""
        return [seat.summary() for seat in self.seats]


def summary_table(seats: Sequence[dict[str, Any]]) -> list[str]:
    """The per-seat summary as aligned text lines (a heading, then one line per seat)."""
    lines = [
        f"{'seat':<5}{'bot':<16}{'decisions':>10}{'p50 ms':>8}{'p99 ms':>8}{'timeouts':>9}{'rejected':>9}"
        f"{'T calls/won':>12}{'GT calls/won':>13}{'bombs':>6}{'points':>7}"
    ]
    for seat in seats:
        name = str(seat.get("bot_name") or "-")[:15]
        lines.append(
            f"{seat['seat']:<5}{name:<16}{seat['decisions']:>10}{seat['think_ms_p50']:>8.1f}"
            f"{seat['think_ms_p99']:>8.1f}{seat['timeouts']:>9}{seat['rejections']:>9}"
            f"{seat['tichu_calls']:>8}/{seat['tichu_won']:<3}{seat['grand_tichu_calls']:>9}/"
            f"{seat['grand_tichu_won']:<3}{seat['bombs_played']:>6}{seat['points_won']:>7}"
        )
    return lines
