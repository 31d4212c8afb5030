"""One seat's line of a match summary: the result record's and the MatchResult's statistics."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from referee.match.fields import read_num, read_seat

Json = dict[str, Any]


# The per-seat statistics of a summary, in the order they are written; each is a whole number
# but the think times.
SUMMARY_COUNTS = (
    "decisions",
    "think_ms_p50",
    "think_ms_p99",
    "timeouts",
    "rejections",
    "tichu_calls",
    "tichu_won",
    "grand_tichu_calls",
    "grand_tichu_won",
    "bombs_played",
    "points_won",
    "reconnections",
)


@dataclass(frozen=True, slots=True)
class SeatSummary:
    """One seat's line of a match summary (the MatchResult's summary_json and the result record)."""

    seat: int
    bot_name: str
    bot_version: str
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
    # Kept by the live referee only: not re-derived from the records (a flood would swamp them).
    rate_limited: int | None = None
    bank_left_ms: int | None = None

    def counts(self) -> dict[str, float]:
        """The statistics that the records determine, by name (what verification recounts)."""
        return {name: getattr(self, name) for name in SUMMARY_COUNTS}

    def to_json(self) -> Json:
        """The JSON form."""
        out: Json = {"seat": self.seat, "bot_name": self.bot_name, "bot_version": self.bot_version}
        out.update(self.counts())
        if self.rate_limited is not None:
            out["rate_limited"] = self.rate_limited
        if self.bank_left_ms is not None:
            out["bank_left_ms"] = self.bank_left_ms
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> SeatSummary:
        """A summary line from its JSON form."""
        counts = {name: read_num(data, name) for name in SUMMARY_COUNTS}
        extras = {
            name: int(data[name]) for name in ("rate_limited", "bank_left_ms") if data.get(name) is not None
        }
        return cls(
            seat=read_seat(data),
            bot_name=str(data.get("bot_name") or ""),
            bot_version=str(data.get("bot_version") or ""),
            **counts,  # type: ignore[arg-type]
            **extras,
        )
