"""One match on the event loop: feeds the match core its inputs in arrival order and carries out
its outputs (messages to streams, replay records, log lines, one timer for the next deadline).

Each input is stamped with the clock as it arrives and handled at once, in the task that
received it; an input that arrives while another one's outputs are carried out waits its turn.
No task of the table's own sits between a bot's message and the referee's answer: a hop through
one costs a loop iteration. Everything about the game is the Match's; this module decides only
how inputs reach it and how its outputs leave.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections import deque
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

from referee.log import get_logger
from referee.match import ClockSettings, LogEntry, Match, MatchResult
from referee.match.messages import (
    NO_OPTIONS,
    Accepted,
    Close,
    Connect,
    Delivered,
    Disconnect,
    Drop,
    End,
    Finished,
    Input,
    Message,
    Note,
    OutMessage,
    Output,
    Received,
    Refused,
    SeatClock,
    SeatInfo,
    SeatOptions,
    Send,
    Stop,
    Tick,
    Withdraw,
    Write,
)
from referee.match.records import Line
from referee.rules import RulesConfig, State


class SeatUnavailableError(Exception):
    """A Hello that cannot take its seat: the seat is connected, or its reconnect grace expired."""


@dataclass(frozen=True, slots=True)
class StreamEnd:
    """The end of a stream: a gRPC status name and details, or code None when the match is over."""

    code: str | None
    details: str = ""


Outgoing = OutMessage | StreamEnd


class Connection:
    """One bot stream attached to a seat: the messages queued for it.

    Messages queue up while the table carries out an input's outputs; the stream's writer wakes
    once they are all out (`wake`), and takes them all at once (`take`), to send them in one gRPC
    message.
    """

    def __init__(self, seat: int, stream: int) -> None:
        self.seat = seat
        self.stream = stream
        self.closed = False
        self._queued: list[Outgoing] = []
        self._ready = asyncio.Event()

    def queue(self, message: Outgoing) -> None:
        """Queue a message for the stream (dropped once the stream has ended)."""
        if not self.closed:
            self._queued.append(message)
            if isinstance(message, StreamEnd):
                self.closed = True

    def wake(self) -> None:
        """Let the stream's writer take what is queued."""
        self._ready.set()

    async def take(self) -> list[Outgoing]:
        """Wait until something is queued and the writer is woken; then everything queued, in order
        (a StreamEnd, if any, last)."""
        while not (self._queued and self._ready.is_set()):
            self._ready.clear()
            await self._ready.wait()
        taken, self._queued = self._queued, []
        self._ready.clear()
        return taken


class Table:
    """One match on the event loop: a Match, its streams, its replay hook and its timer.

    `now` is the monotonic clock in seconds (injectable for tests); `on_record` is called with
    each replay record as it is made, the header first; `keep_records` keeps them in `records`
    too (for tests: a long match's thousands of records would lengthen every full collection).
    """

    def __init__(
        self,
        match: Match,
        *,
        now: Callable[[], float] = time.monotonic,
        on_record: Callable[[Line, str], None] | None = None,
        keep_records: bool = False,
    ) -> None:
        self.match = match
        self._now = now
        self._on_record = on_record
        self.keep_records = keep_records
        self.records: list[Line] = []
        self.hashes: list[str] = []  # each record's h (format 2), beside `records`
        self._log = get_logger(match_id=match.match_id)
        self._connections: dict[int, Connection] = {}
        self._next_stream = 1
        self._busy = False  # outputs are being carried out: new inputs wait in the backlog
        self._backlog: deque[tuple[Input, Connection | None]] = deque()
        self._woken: dict[Connection, None] = {}  # streams with output to wake after the input
        self._answers: dict[int, Accepted | Refused] = {}  # connect results, by stream
        self._timer: asyncio.TimerHandle | None = None
        self._timer_at = math.inf
        self._started = False
        self._changed = asyncio.Event()
        self.finished = asyncio.Event()
        self.finished_callbacks: list[Callable[[], None]] = []  # run once, when the match ends
        self._carry_out(match.drain(), None)

    # ---------------------------------------------------------------------------- what it shows

    @property
    def match_id(self) -> str:
        """The match's id."""
        return self.match.match_id

    @property
    def state(self) -> State:
        """The rules state now."""
        return self.match.state

    @property
    def state_version(self) -> int:
        """The state version now."""
        return self.match.state_version

    @property
    def status(self) -> str:
        """waiting, running or finished."""
        return self.match.status

    @property
    def result(self) -> MatchResult | None:
        """The result, once the match is over (None if it was stopped without one)."""
        return self.match.result

    @property
    def config(self) -> RulesConfig:
        """The rules."""
        return self.match.config

    @property
    def clock(self) -> ClockSettings:
        """The clocks."""
        return self.match.clock

    @property
    def players(self) -> int:
        """The number of seats."""
        return self.match.players

    def clocks(self, full: bool) -> tuple[SeatClock, ...]:
        """The decisions being waited for now and their clocks (Match.clocks)."""
        return self.match.clocks(self.now(), full)

    def seat_info(self) -> tuple[SeatInfo, ...]:
        """Each seat's bot name and whether it is connected."""
        return self.match.seat_info()

    def statistics(self) -> dict[str, Any]:
        """Per-seat statistics as plain data (decisions, think times, timeouts, calls, bombs, points)."""
        return self.match.statistics()

    def now(self) -> float:
        """The table's clock (monotonic seconds; injectable for tests)."""
        return self._now()

    async def wait(self) -> MatchResult | None:
        """Until the match ends; its result (None if it was stopped without one)."""
        await self.finished.wait()
        return self.result

    # ---------------------------------------------------------------------------- inputs

    def start(self) -> None:
        """Arm the clocks' timer (once the event loop runs); inputs are handled either way."""
        self._started = True
        self._arm_timer()

    def connect(
        self,
        seat: int,
        bot_name: str = "",
        bot_version: str = "",
        options: SeatOptions = NO_OPTIONS,
    ) -> Connection:
        """Attach a new stream to `seat` (after its token was checked); raises SeatUnavailableError."""
        stream = self._next_stream
        self._next_stream += 1
        conn = Connection(seat, stream)
        self._connections[stream] = conn
        self._feed(Connect(stream, seat, bot_name, bot_version, options), conn)
        answer = self._answers.pop(stream, None)
        if not isinstance(answer, Accepted):
            del self._connections[stream]
            raise SeatUnavailableError(
                answer.reason if answer is not None else f"seat {seat} is not available"
            )
        return conn

    def receive(self, conn: Connection, message: Message) -> None:
        """Handle a message from a stream's reader (decoded by the codec)."""
        if not conn.closed:
            self._feed(Received(conn.stream, message), conn)

    def disconnect(self, conn: Connection) -> None:
        """A stream ended (dropped, cancelled or closed)."""
        conn.closed = True
        if self._connections.pop(conn.stream, None) is not None:
            self._feed(Disconnect(conn.stream), None)

    def delivered(self, conn: Connection, request_id: int) -> None:
        """A request is leaving on `conn` now (its legal actions have just been listed)."""
        item = Delivered(conn.stream, request_id)
        if self._busy:
            self._feed(item, None)
            return
        # Once per request sent, so it skips the rest of _feed: a Delivered only moves a clock
        # later, so there is no output to carry out and the timer may stay as it is (set for an
        # earlier deadline, it finds nothing due and is set again).
        outputs = self.match.handle(item, self._now())
        if outputs:  # none today; carried out in full should that change
            self._carry_out(outputs, None)
            self._arm_timer()

    def end(self, conn: Connection, code: str, details: str) -> None:
        """End a stream with a gRPC status (protocol abuse on it)."""
        self._feed(End(conn.stream, code, details), None)

    def withdraw(self, seat: int, reason: str) -> None:
        """The seat's player is gone for good (its process will not come back): a seat that never
        connected forfeits now, one that was playing is abandoned now."""
        self._feed(Withdraw(seat, reason), None)

    def drop(self, seat: int, details: str = "the stream was dropped") -> None:
        """End a seat's stream as a network failure would (UNAVAILABLE); the seat may reconnect."""
        self._feed(Drop(seat, details), None)

    def tick(self) -> None:
        """Check the clocks now (for tests that drive an injected clock)."""
        self._feed(Tick(), None)

    async def stop(self, reason: str = "the referee is shutting down") -> None:
        """Stop the match where it stands and close every stream."""
        self._feed(Stop(reason), None)
        self._cancel_timer()

    async def watch(self, full: bool) -> AsyncIterator[LogEntry | MatchResult]:
        """A spectator's view: public events `watch_delay_events` behind, or every event at once;
        then the result, if the match has one."""
        async for batch in self.watch_batches(full):
            for item in batch:
                yield item

    async def watch_batches(self, full: bool) -> AsyncIterator[list[LogEntry | MatchResult]]:
        """`watch`, in batches: each time the match changes, everything the view has gained since
        (a late spectator's first batch is the match so far), so that a stream can send it in
        one write."""
        sent = 0
        while True:
            waiter = self._changed
            done = self.match.status == "finished"
            log, upto = self.match.spectator_log(full)
            batch: list[LogEntry | MatchResult] = list(log[sent:upto])
            sent = max(sent, upto)
            if done and self.match.result is not None:
                batch.append(self.match.result)
            if batch:
                yield batch
            if done:
                return
            await waiter.wait()

    # ---------------------------------------------------------------------------- carrying out

    def _feed(self, item: Input, sender: Connection | None) -> None:
        """Hand `item` to the match now, or after the outputs being carried out; then wake the
        streams with output, and set the timer for the next deadline."""
        if self._busy:
            self._backlog.append((item, sender))
            return
        self._busy = True
        try:
            self._carry_out(self.match.handle(item, self._now()), sender)
            while self._backlog:
                item, sender = self._backlog.popleft()
                self._carry_out(self.match.handle(item, self._now()), sender)
        finally:
            self._busy = False
            self._arm_timer()

    def _carry_out(self, outputs: list[Output], sender: Connection | None) -> None:
        events = False
        for out in outputs:
            if isinstance(out, Send):
                conn = self._connections.get(out.stream)
                if conn is not None:
                    conn.queue(out.message)
                    self._woken[conn] = None
                events = True
            elif isinstance(out, Write):
                if self.keep_records:
                    self.records.append(out.record)
                    self.hashes.append(out.h)
                if self._on_record is not None:
                    self._on_record(out.record, out.h)
            elif isinstance(out, Note):
                getattr(self._log, out.level)(out.event, **out.fields)
            elif isinstance(out, Close):
                conn = self._connections.get(out.stream)
                if conn is not None:
                    conn.queue(StreamEnd(out.code, out.details))
                    self._woken[conn] = None
            elif isinstance(out, Accepted | Refused):
                self._answers[out.stream] = out
            elif isinstance(out, Finished):
                events = True
                self._cancel_timer()
                self.finished.set()
                callbacks, self.finished_callbacks = self.finished_callbacks, []
                for callback in callbacks:
                    callback()
        self._wake_streams(sender)
        if events:
            self._changed.set()
            self._changed = asyncio.Event()

    def _wake_streams(self, sender: Connection | None) -> None:
        """Wake the writers of the streams with output: the sender's first, then in play order.

        Every seat's output of one input goes out in the same loop iteration; the order only
        spares the bot that is waiting for an answer the others' writes, and decides nothing.
        """
        if not self._woken:
            return
        woken, self._woken = list(self._woken), {}
        first = sender.seat if sender is not None else 0
        players = self.match.players
        woken.sort(key=lambda conn: (conn.seat - first) % players)
        for conn in woken:
            conn.wake()

    # ---------------------------------------------------------------------------- the timer

    def _arm_timer(self) -> None:
        """Be called back at the match's next deadline. A timer already set for an earlier time
        is kept: it finds nothing due, and sets the timer again."""
        due = self.match.next_deadline()
        if due is None or not self._started:
            self._cancel_timer()
            return
        if self._timer is not None and self._timer_at <= due:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return  # not on a loop (yet): start() or the next input on one arms it
        if self._timer is not None:
            self._timer.cancel()
        self._timer_at = due
        self._timer = loop.call_later(max(0.0, due - self._now()), self._timer_fired)

    def _cancel_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer = None
        self._timer_at = math.inf

    def _timer_fired(self) -> None:
        self._timer = None
        self._timer_at = math.inf
        self._feed(Tick(), None)


__all__ = ["Connection", "Outgoing", "SeatUnavailableError", "StreamEnd", "Table"]
