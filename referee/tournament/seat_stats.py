"""One seat's statistics in one attempt of a tournament game, as the store keeps them.

They come from the match summary's seat lines (referee/match/summary.py: SeatSummary.to_json, the
`seats` of the MatchResult's summary_json), with the entrant the schedule put at the seat and why
the seat's bot process ended early, if it did.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import astuple, dataclass, fields
from typing import Any

from referee.match.summary import SeatSummary


@dataclass(frozen=True, slots=True)
class SeatStats:
    """One seat of one attempt of a game: who played it and how."""

    game_id: str
    attempt: int
    seat: int
    entrant: str
    bot_name: str
    bot_version: str  # what the bot reported for itself in its Hello
    decisions: int
    think_ms_p50: float
    think_ms_p99: float
    timeouts: int
    rejections: int
    tichu_calls: int
    tichu_won: int
    grand_tichu_calls: int
    grand_tichu_won: int
    bombs_played: int
    points_won: int
    reconnections: int
    exit_reason: str = ""  # why the seat's bot process ended early ("" when it did not)

    @classmethod
    def from_summary(
        cls, game_id: str, attempt: int, entrant: str, seat_json: Mapping[str, Any], exit_reason: str = ""
    ) -> SeatStats:
        """The statistics of one seat line of a match summary (raises ValueError on a malformed one)."""
        line = SeatSummary.from_json(seat_json)
        return cls(
            game_id=game_id,
            attempt=attempt,
            seat=line.seat,
            entrant=entrant,
            bot_name=line.bot_name,
            bot_version=line.bot_version,
            decisions=int(line.decisions),
            think_ms_p50=float(line.think_ms_p50),
            think_ms_p99=float(line.think_ms_p99),
            timeouts=int(line.timeouts),
            rejections=int(line.rejections),
            tichu_calls=int(line.tichu_calls),
            tichu_won=int(line.tichu_won),
            grand_tichu_calls=int(line.grand_tichu_calls),
            grand_tichu_won=int(line.grand_tichu_won),
            bombs_played=int(line.bombs_played),
            points_won=int(line.points_won),
            reconnections=int(line.reconnections),
            exit_reason=exit_reason,
        )

    def row(self) -> tuple[object, ...]:
        """Its values in the seat_stats table's column order."""
        return astuple(self)


# The seat_stats table's columns are the dataclass's fields, in order.
SEAT_STATS_COLUMNS = tuple(f.name for f in fields(SeatStats))
INSERT_SEAT_STATS = (
    f"INSERT INTO seat_stats ({', '.join(SEAT_STATS_COLUMNS)})"
    f" VALUES ({', '.join('?' * len(SEAT_STATS_COLUMNS))})"
)


def seat_stats_from_summary(
    game_id: str,
    attempt: int,
    players: Sequence[str],
    summary_json: str,
    exit_reasons: Mapping[int, str] | None = None,
) -> list[SeatStats]:
    """Every seat's statistics of a match summary ({"seats": [...]}), the entrant at each seat from
    `players`; raises ValueError when the summary is not one."""
    try:
        summary = json.loads(summary_json)
    except json.JSONDecodeError as error:
        raise ValueError(f"the summary of game {game_id} is not JSON: {error}") from None
    seats = summary.get("seats") if isinstance(summary, dict) else None
    if not isinstance(seats, list) or not all(isinstance(s, dict) for s in seats):
        raise ValueError(f"the summary of game {game_id} has no list of seats")
    reasons = exit_reasons or {}
    stats = []
    for seat_json in seats:
        seat = seat_json.get("seat")
        entrant = players[seat] if isinstance(seat, int) and 0 <= seat < len(players) else ""
        stats.append(SeatStats.from_summary(game_id, attempt, entrant, seat_json, reasons.get(seat, "")))
    return stats
