"""What the match core keeps per seat and per stream: names, banks, event counts, the flood
limiter and the heartbeat."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from referee.match.clock import ClockSettings
from referee.match.messages import NO_OPTIONS, EventMessage, Output, SeatOptions, Send

# Flood protection per stream: a token bucket of RATE_PER_S messages a second with bursts up to
# BURST, on top of one free message for each request or ping the referee sent (the answers it
# asked for). Messages beyond that are rejected (RATE_LIMITED); each rejection is a strike,
# strikes fade at STRIKE_DECAY_PER_S, and BURST strikes close the stream (RESOURCE_EXHAUSTED).
RATE_PER_S = 50.0
BURST = 100.0
STRIKE_DECAY_PER_S = 10.0


class TokenBucket:
    """A token bucket with strikes: 'ok', 'limited' beyond the rate, 'flooding' when it goes on."""

    def __init__(self, now: float, rate_per_s: float = RATE_PER_S, burst: float = BURST) -> None:
        self.rate_per_s = rate_per_s
        self.burst = burst
        self.tokens = burst
        self.credits = 0.0
        self.strikes = 0.0
        self._stamp = now

    def credit(self) -> None:
        """One reply the referee asked for (a request, a ping): it never counts against the rate."""
        self.credits += 1.0

    def take(self, now: float) -> Literal["ok", "limited", "flooding"]:
        """Spend one token for one message arriving at `now`."""
        elapsed = max(0.0, now - self._stamp)
        self._stamp = now
        self.tokens = min(self.burst, self.tokens + elapsed * self.rate_per_s)
        self.strikes = max(0.0, self.strikes - elapsed * STRIKE_DECAY_PER_S)
        if self.credits >= 1.0:
            self.credits -= 1.0
            return "ok"
        if self.tokens >= 1.0:
            self.tokens -= 1.0
            return "ok"
        self.strikes += 1.0
        return "flooding" if self.strikes >= self.burst else "limited"


class StreamState:
    """A stream attached to a seat: its id (the shell's), flood limiter and heartbeat."""

    __slots__ = ("bucket", "id", "next_ping_at", "nonce", "ping_sent_at", "seat", "status")

    def __init__(self, stream: int, seat: int, now: float, clock: ClockSettings) -> None:
        self.id = stream
        self.seat = seat
        self.bucket = TokenBucket(now)
        self.status = ""  # the gRPC status the referee ended the stream with, if it did
        self.next_ping_at = now + clock.heartbeat_interval_ms / 1000
        self.ping_sent_at: float | None = None
        self.nonce = 0


@dataclass(slots=True)
class SeatState:
    """What the match knows of one seat."""

    seat: int
    bot_name: str
    bot_version: str = ""
    stream: StreamState | None = None
    ever_connected: bool = False
    away_since: float | None = None
    abandoned: bool = False
    bank_s: float = 0.0
    seq: int = 0  # the events this seat has been sent (its GameEvent.seq)
    rate_limited: int = 0  # not in the replay: a flood would swamp it
    options: SeatOptions = NO_OPTIONS  # as the current stream's Hello asked
    held: list[EventMessage] = field(default_factory=list)  # events deferred until its next request

    def release(self, out: list[Output] | None) -> None:
        """Send the deferred events to the seat's stream (into `out`), or drop them (None)."""
        if self.held and self.stream is not None and out is not None:
            out.extend(Send(self.stream.id, event) for event in self.held)
        self.held.clear()
