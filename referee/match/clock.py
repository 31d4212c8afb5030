"""A match's clocks: the settings (the wire's ClockSettings) and the deadline arithmetic.

Times inside the match core are seconds of a monotonic clock that the caller passes in; the
settings are milliseconds, as on the wire and in replays.
"""

from __future__ import annotations

import dataclasses
import datetime
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class ClockSettings:
    """The table's clocks (the wire's ClockSettings), in milliseconds; 0 violations = never forfeit."""

    decision_ms: int = 10_000
    bank_ms: int = 60_000
    grace_ms: int = 500
    window_ms: int = 2_000
    fixed_length_windows: bool = False
    max_violations: int = 0
    heartbeat_interval_ms: int = 5_000
    heartbeat_timeout_ms: int = 10_000
    reconnect_grace_ms: int = 30_000
    start_timeout_ms: int = 600_000  # 0 = wait for every seat for ever

    def to_json(self) -> dict[str, Any]:
        """Every setting by name, as in a replay header."""
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ClockSettings:
        """Settings from their JSON form; a setting that an older replay lacks takes its default."""
        known = {f.name: f.type for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - set(known))
        if unknown:
            raise ValueError(f"unknown clock setting(s): {', '.join(unknown)}")
        values: dict[str, Any] = {}
        for name, value in data.items():
            wants_bool = known[name] in (bool, "bool")
            if wants_bool and not isinstance(value, bool):
                raise ValueError(f"clock setting {name} must be true or false, not {value!r}")
            if not wants_bool and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
                raise ValueError(f"clock setting {name} must be a whole number of milliseconds >= 0")
            values[name] = value
        return cls(**values)

    @property
    def decision_s(self) -> float:
        """The limit of one regular decision, in seconds."""
        return self.decision_ms / 1000

    @property
    def grace_s(self) -> float:
        """The allowance for network lag added to every deadline, in seconds."""
        return self.grace_ms / 1000

    @property
    def window_s(self) -> float:
        """The time shown for a bomb window, in seconds."""
        return self.window_ms / 1000

    @property
    def window_length_s(self) -> float:
        """How long a bomb window stays open at most: its time and the grace."""
        return (self.window_ms + self.grace_ms) / 1000


def ms(seconds: float) -> int:
    """Seconds as whole milliseconds, never below 0 (for deadlines and banks on the wire)."""
    return max(0, int(seconds * 1000))


def iso_time(wall_s: float) -> str:
    """A calendar time (seconds since the epoch, which the caller gave) as UTC ISO 8601, in ms."""
    stamp = datetime.datetime.fromtimestamp(wall_s, datetime.UTC)
    return stamp.isoformat(timespec="milliseconds").replace("+00:00", "Z")


class Agenda:
    """The next deadline of a match: each part offers its deadlines (the time, what to do then and
    to what); the earliest stays, and of equal ones the first offered."""

    __slots__ = ("at", "handler", "target")

    def __init__(self) -> None:
        self.at = math.inf
        self.handler: Callable[[Any, float], None] | None = None
        self.target: Any = None

    def offer(self, at: float, handler: Callable[[Any, float], None], target: Any) -> None:
        """A deadline at `at`: `handler(target, now)` is to be called then."""
        if at < self.at:
            self.at, self.handler, self.target = at, handler, target
