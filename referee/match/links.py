"""Seats and streams: the half of a match that keeps its players linked to it.

A seat is EMPTY until a stream takes it, SEATED while one is attached, AWAY when its stream ended
(the reconnect grace runs while the game does) and ABANDONED when it did not come back in time.
`Links` connects and refuses streams, greets them (Welcome and Snapshot), forwards their messages
past the flood limiter, pings them and closes those that stall, tells the others when a seat comes
or goes, delivers events (deferred ones held until the seat's next request), sees to the start
timeout and gives up seats whose grace ran out. What the game decides (requests, answers, the
end) is the match core's: it asks the core through the `Seating` protocol the core implements.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol

from referee.match.clock import Agenda, ClockSettings
from referee.match.messages import (
    NO_OPTIONS,
    Accepted,
    Close,
    Connect,
    EventMessage,
    MatchResult,
    Message,
    OutMessage,
    Output,
    Ping,
    Received,
    Refused,
    Rejection,
    RejectionReason,
    Request,
    ResultMessage,
    SeatInfo,
    SeatOptions,
    SeatStatus,
    Send,
    Snapshot,
    Welcome,
)
from referee.match.outbox import Outbox
from referee.match.outcome import Outcome
from referee.match.records import Abandoned, Connected, Disconnected

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


class SeatPhase(enum.Enum):
    """Where a seat stands with its player."""

    EMPTY = enum.auto()  # no stream has taken it yet
    SEATED = enum.auto()  # a stream is attached
    AWAY = enum.auto()  # its stream ended; while the game runs, the reconnect grace runs
    ABANDONED = enum.auto()  # it did not come back within the grace: it never will


# The phases a seat may go to from each phase.
_MOVES = {
    SeatPhase.EMPTY: (SeatPhase.SEATED, SeatPhase.AWAY),  # AWAY: a resumed match's seat
    SeatPhase.SEATED: (SeatPhase.AWAY,),
    SeatPhase.AWAY: (SeatPhase.SEATED, SeatPhase.ABANDONED),
    SeatPhase.ABANDONED: (),
}


@dataclass(slots=True)
class SeatState:
    """What the match knows of one seat: its phase, its stream while SEATED, since when it is
    AWAY, its bot, bank, event count and what its Hello asked."""

    seat: int
    bot_name: str
    bot_version: str = ""
    phase: SeatPhase = SeatPhase.EMPTY
    stream: StreamState | None = None  # set exactly while SEATED
    away_since: float | None = None  # while AWAY (None: away since before a resumption)
    bank_s: float = 0.0
    seq: int = 0  # the events this seat has been sent (its GameEvent.seq)
    rate_limited: int = 0  # not in the replay: a flood would swamp it
    options: SeatOptions = NO_OPTIONS  # as the current stream's Hello asked
    held: list[EventMessage] = field(default_factory=list)  # events deferred until its next request

    def move(self, phase: SeatPhase, stream: StreamState | None = None, at: float | None = None) -> None:
        """Go to `phase` (with its stream when SEATED, the time when AWAY)."""
        assert phase in _MOVES[self.phase], f"seat {self.seat}: {self.phase.name} -> {phase.name}"
        assert (phase is SeatPhase.SEATED) == (stream is not None)
        self.phase = phase
        self.stream = stream
        self.away_since = at if phase is SeatPhase.AWAY else None

    def release(self, out: list[Output] | None) -> None:
        """Send the deferred events to the seat's stream (into `out`), or drop them (None)."""
        if self.held and self.stream is not None and out is not None:
            out.extend(Send(self.stream.id, event) for event in self.held)
        self.held.clear()


class Seating(Protocol):
    """What the links ask of the match core."""

    @property
    def running(self) -> bool:
        """Whether the game is under way (the reconnect grace counts only then)."""
        ...

    @property
    def waiting(self) -> bool:
        """Whether the match waits for its seats (the start timeout counts only then)."""
        ...

    def version_for(self, seat: int) -> int:
        """The state version as `seat` is told it."""
        ...

    def greeting(self, seat: int, now: float) -> tuple[Welcome, Snapshot]:
        """What a stream that took `seat` is sent first."""
        ...

    def seated(self, now: float) -> None:
        """Every seat has a stream."""
        ...

    def message(self, seat: int, message: Message, now: float) -> None:
        """A message from `seat` that passed the flood limiter."""
        ...

    def end(self, now: float, outcome: Outcome, absent: Sequence[int]) -> None:
        """End the match with `outcome`."""
        ...


class Links:
    """The seats of a match and the streams attached to them."""

    def __init__(
        self, names: Sequence[str], clock: ClockSettings, outbox: Outbox, seating: Seating, *, now: float
    ) -> None:
        self.clock = clock
        self.seats = [SeatState(s, name, bank_s=clock.bank_ms / 1000) for s, name in enumerate(names)]
        self._outbox = outbox
        self._out = outbox.out
        self._seating = seating
        self.waiting_since = now  # the start timeout runs from the creation (or the resumption)

    # ---------------------------------------------------------------------------- what it shows

    def stream_of(self, stream_id: int) -> StreamState | None:
        """The attached stream with this id, if there is one."""
        for slot in self.seats:
            if slot.stream is not None and slot.stream.id == stream_id:
                return slot.stream
        return None

    def seat_info(self) -> tuple[SeatInfo, ...]:
        """Each seat's bot name and whether it is connected."""
        return tuple(SeatInfo(s.seat, s.bot_name, s.stream is not None) for s in self.seats)

    def all_seated(self) -> bool:
        """Whether every seat has a stream."""
        return all(slot.stream is not None for slot in self.seats)

    # ---------------------------------------------------------------------------- sending

    def send(self, slot: SeatState, message: OutMessage) -> None:
        """Send `message` to the seat's stream, if it has one."""
        stream = slot.stream
        if stream is None:
            return
        if slot.held and isinstance(message, Request | ResultMessage | Snapshot):
            # Deferred events go out just before what they lead to (a Snapshot holds them already).
            slot.release(None if isinstance(message, Snapshot) else self._out)
        self._out.append(Send(stream.id, message))
        # A fast bot answers as fast as it is asked: the answers the referee asks for are free.
        if isinstance(message, Request | Ping):
            stream.bucket.credit()
        elif isinstance(message, Snapshot):
            for _ in message.pending:
                stream.bucket.credit()

    def deliver(self, seat: int, message: EventMessage) -> None:
        """An event for `seat` (its seq counted already): sent now, or held if the seat defers them."""
        slot = self.seats[seat]
        if slot.stream is None:
            return
        if slot.options.defer_events:
            slot.held.append(message)
        else:
            self._out.append(Send(slot.stream.id, message))

    def release_all(self) -> None:
        """Send every seat's deferred events (a round ended: nobody's events wait past it)."""
        for slot in self.seats:
            slot.release(self._out)

    def close(self, stream: StreamState, code: str | None, details: str = "") -> None:
        """End `stream` with a gRPC status name (None: normally)."""
        stream.status = code or "OK"
        self._out.append(Close(stream.id, code, details))

    def finish(self, result: MatchResult | None, reason: str = "") -> None:
        """The match is over: each attached stream is told the result and closed (UNAVAILABLE
        with `reason` when there is none: the match was stopped)."""
        for slot in self.seats:
            stream = slot.stream
            if stream is None:
                continue
            if result is None:
                self.close(stream, "UNAVAILABLE", reason)
                continue
            self.send(slot, ResultMessage(result))
            self.close(stream, None)
            slot.move(SeatPhase.AWAY)

    # ---------------------------------------------------------------------------- streams

    def connect(self, item: Connect, now: float) -> None:
        """A stream asks for a seat: accepted and greeted, or refused."""
        slot = self.seats[item.seat]
        if slot.stream is not None:
            self._out.append(Refused(item.stream, f"seat {item.seat} is already connected"))
            return
        if slot.phase is SeatPhase.ABANDONED:
            self._out.append(
                Refused(item.stream, f"seat {item.seat} did not reconnect within the grace period")
            )
            return
        reconnect = slot.phase is not SeatPhase.EMPTY
        slot.move(SeatPhase.SEATED, StreamState(item.stream, item.seat, now, self.clock))
        if not slot.bot_name:
            slot.bot_name = item.bot_name
        slot.bot_version = item.bot_version
        slot.options = item.options
        self._out.append(Accepted(item.stream))
        welcome, snapshot = self._seating.greeting(item.seat, now)
        self.send(slot, welcome)
        self.send(slot, snapshot)
        self._broadcast_status(item.seat, True)
        self._outbox.note(
            "info", "seat_connected", seat=item.seat, bot_name=item.bot_name, reconnect=reconnect
        )
        t_ms = self._outbox.rel_ms(now)
        record = Connected(
            seat=item.seat,
            reconnect=reconnect,
            bot_name=item.bot_name,
            bot_version=item.bot_version,
            t_ms=t_ms,
        )
        self._outbox.write(record)
        if self._seating.waiting and self.all_seated():
            self._seating.seated(now)

    def greet_late(
        self, item: Connect, greeting: tuple[Welcome, Snapshot], result: MatchResult | None
    ) -> None:
        """A stream opened after the match ended: the final picture and the result, then the end."""
        out = self._out
        out.append(Accepted(item.stream))
        out.extend(Send(item.stream, message) for message in greeting)
        if result is not None:
            out.append(Send(item.stream, ResultMessage(result)))
        out.append(Close(item.stream, None))

    def disconnected(self, stream: StreamState, why: str, now: float) -> None:
        """A seat's stream ended (it may come back)."""
        slot = self.seats[stream.seat]
        if slot.stream is not stream:
            return
        slot.move(SeatPhase.AWAY, at=now)
        slot.held.clear()  # a new stream starts from a Snapshot
        self._broadcast_status(stream.seat, False)
        self._outbox.note("info", "seat_disconnected", seat=stream.seat, why=why, status=stream.status)
        self._outbox.write(
            Disconnected(seat=stream.seat, why=why, status=stream.status, t_ms=self._outbox.rel_ms(now))
        )

    def drop(self, seat: int, details: str) -> None:
        """End a seat's stream as a network failure would (the seat may reconnect)."""
        slot = self.seats[seat] if 0 <= seat < len(self.seats) else None
        if slot is not None and slot.stream is not None:
            self.close(slot.stream, "UNAVAILABLE", details)

    def received(self, item: Received, now: float) -> None:
        """A message on a stream: past the flood limiter to the core, or rejected."""
        stream = self.stream_of(item.stream)
        if stream is None:
            return
        slot = self.seats[stream.seat]
        verdict = stream.bucket.take(now)
        if verdict == "ok":
            stream.ping_sent_at = None  # any message proves the stream is alive
            self._seating.message(slot.seat, item.message, now)
            return
        slot.rate_limited += 1
        if verdict == "flooding":
            self._outbox.note("warning", "stream_flooded", seat=stream.seat)
            self.close(stream, "RESOURCE_EXHAUSTED", f"too many messages (more than {RATE_PER_S:g}/s)")
            self.disconnected(stream, "flooded", now)
            return
        if slot.rate_limited == 1 or slot.rate_limited % 50 == 0:
            self._outbox.note("info", "message_rate_limited", seat=stream.seat, count=slot.rate_limited)
        # Not recorded in the replay: a flood would swamp it.
        dropped = f"more than {RATE_PER_S:g} messages a second; this one was dropped"
        version = self._seating.version_for(slot.seat)
        self.send(slot, Rejection(RejectionReason.RATE_LIMITED, "", dropped, 0, version))

    def withdraw(self, seat: int, why: str, now: float) -> None:
        """A seat's player is gone for good: before the game its team forfeits, during it the
        seat is abandoned at once."""
        slot = self.seats[seat]
        if slot.stream is not None or slot.phase is SeatPhase.ABANDONED:
            return  # it is here after all (a new process connected), or already given up
        self._outbox.note("warning", "seat_withdrawn", seat=seat, reason=why)
        if self._seating.waiting:
            self._seating.end(now, Outcome.withdrawn(seat, why), [seat])
        elif slot.phase is SeatPhase.AWAY:
            self._grace_expired(slot, now)

    def _broadcast_status(self, seat: int, connected: bool) -> None:
        message = SeatStatus(seat, connected)
        for other in self.seats:
            if other.seat != seat:
                self.send(other, message)

    # ---------------------------------------------------------------------------- deadlines

    def offer(self, agenda: Agenda) -> None:
        """This half's deadlines: the start timeout, each stream's ping and stall, each absent
        seat's grace."""
        clock = self.clock
        seating = self._seating
        if seating.waiting and clock.start_timeout_ms > 0:
            agenda.offer(self.waiting_since + clock.start_timeout_ms / 1000, self._no_show, None)
        running = seating.running
        for slot in self.seats:
            stream = slot.stream
            if stream is not None:
                if stream.ping_sent_at is not None:
                    agenda.offer(
                        stream.ping_sent_at + clock.heartbeat_timeout_ms / 1000, self._stalled, stream
                    )
                if clock.heartbeat_interval_ms > 0:
                    agenda.offer(stream.next_ping_at, self._ping, stream)
            elif running and slot.phase is SeatPhase.AWAY and slot.away_since is not None:
                # Before the game starts a seat may come and go as it likes.
                agenda.offer(slot.away_since + clock.reconnect_grace_ms / 1000, self._grace_expired, slot)

    def _ping(self, stream: StreamState, now: float) -> None:
        stream.nonce += 1
        self.send(self.seats[stream.seat], Ping(stream.nonce))
        if stream.ping_sent_at is None:
            stream.ping_sent_at = now
        # From now rather than from the last due time, so a clock that jumps sends one ping.
        stream.next_ping_at = now + self.clock.heartbeat_interval_ms / 1000

    def _stalled(self, stream: StreamState, now: float) -> None:
        timeout = self.clock.heartbeat_timeout_ms
        self._outbox.note("warning", "stream_stalled", seat=stream.seat, timeout_ms=timeout)
        self.close(stream, "UNAVAILABLE", f"no Pong (or any message) within {timeout} ms")
        self.disconnected(stream, "stalled", now)

    def _no_show(self, _: object, now: float) -> None:
        """The start timeout passed with seats still absent: their team forfeits (both absent:
        no winner)."""
        absent = [slot.seat for slot in self.seats if slot.stream is None]
        timeout = self.clock.start_timeout_ms
        self._outbox.note("warning", "start_timed_out", absent=absent, start_timeout_ms=timeout)
        self._seating.end(now, Outcome.no_show(absent, timeout), absent)

    def _grace_expired(self, slot: SeatState, now: float) -> None:
        slot.move(SeatPhase.ABANDONED)
        self._outbox.note("warning", "reconnect_grace_expired", seat=slot.seat)
        self._outbox.write(Abandoned(seat=slot.seat, t_ms=self._outbox.rel_ms(now)))


__all__ = [
    "BURST",
    "RATE_PER_S",
    "STRIKE_DECAY_PER_S",
    "Links",
    "SeatPhase",
    "SeatState",
    "Seating",
    "StreamState",
    "TokenBucket",
]
