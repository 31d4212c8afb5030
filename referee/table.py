"""One match: the Table owns its rules State, the clocks, the bomb windows and the event log.

Everything here runs on one event loop, and one input at a time: a message from a stream, a
stream that connects or ends, or a deadline. Each input is stamped with its arrival time and
handled at once, in the task that received it, after any deadline that passed before it; an
input that arrives while another is handled waits its turn. So two racing messages are resolved
in one place, the same way every time, and there are no locks. No task of the table's own sits
between a bot's message and the referee's answer: a hop through one costs a loop iteration.

Every rule question goes to `referee.rules`; this module only decides who is asked what, when,
and what happens when nobody answers.
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime
import functools
import json
import math
import time
from collections import deque
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from referee.codec import action_from_proto, action_to_proto, config_to_proto, pb
from referee.log import get_logger
from referee.replay.format import FORMAT, Replay
from referee.replay.rerun import rerun
from referee.replay.tally import Tally
from referee.rules import (
    Action,
    CallTichu,
    Decline,
    DeclineTichu,
    Event,
    Exchange,
    GiftDragon,
    GrandTichu,
    IllegalActionError,
    Pass,
    Phase,
    Play,
    RulesConfig,
    RulesError,
    State,
    answer_window,
    apply,
    can_call_tichu,
    default_action,
    legal_decisions,
    new_game,
    observe,
    state_from_json,
    state_to_json,
    team_of,
    to_act,
)
from referee.rules.events import Played
from referee.rules.legal import exchange_recipients

PROTOCOL_VERSION = 1
# Flood protection per stream: a token bucket of RATE_PER_S messages a second with bursts up to
# BURST, on top of one free message for each request or ping the referee sent (the answers it
# asked for). Messages beyond that are rejected (RATE_LIMITED); each rejection is a strike,
# strikes fade at STRIKE_DECAY_PER_S, and BURST strikes close the stream (RESOURCE_EXHAUSTED).
RATE_PER_S = 50.0
BURST = 100.0
STRIKE_DECAY_PER_S = 10.0
# How many changes a STALE rejection lists before it summarises the rest.
STALE_DETAIL = 4

Record = dict[str, Any]
Kind = pb.DecisionKind
Reason = pb.RejectionReason
KIND_NAMES = {
    pb.DECISION_KIND_GRAND_TICHU: "grand_tichu",
    pb.DECISION_KIND_TICHU_STEP: "tichu_step",
    pb.DECISION_KIND_EXCHANGE: "exchange",
    pb.DECISION_KIND_PLAY: "play",
    pb.DECISION_KIND_BOMB_WINDOW: "bomb_window",
    pb.DECISION_KIND_DRAGON_GIFT: "dragon_gift",
}
# The action types that answer each kind of request (anything else is a malformed answer).
ANSWERS: dict[int, tuple[tuple[type, ...], str]] = {
    pb.DECISION_KIND_GRAND_TICHU: ((GrandTichu,), "grand_tichu or no_grand_tichu"),
    pb.DECISION_KIND_TICHU_STEP: ((CallTichu, DeclineTichu), "tichu or no_tichu"),
    pb.DECISION_KIND_EXCHANGE: ((Exchange,), "an exchange"),
    pb.DECISION_KIND_PLAY: ((Pass, Play), "pass or a play"),
    pb.DECISION_KIND_BOMB_WINDOW: ((Decline, Play), "decline or a bomb"),
    pb.DECISION_KIND_DRAGON_GIFT: ((GiftDragon,), "a gift"),
}
REASON_NAMES = {
    pb.REJECTION_REASON_ILLEGAL: "illegal",
    pb.REJECTION_REASON_INVALID: "invalid",
    pb.REJECTION_REASON_UNKNOWN_REQUEST: "unknown_request",
    pb.REJECTION_REASON_STALE: "stale",
    pb.REJECTION_REASON_LATE: "late",
    pb.REJECTION_REASON_RATE_LIMITED: "rate_limited",
    pb.REJECTION_REASON_OUT_OF_ORDER: "out_of_order",
}


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

    def to_proto(self) -> pb.ClockSettings:
        """The wire form."""
        return pb.ClockSettings(**dataclasses.asdict(self))

    def merged(self, msg: pb.ClockSettings) -> ClockSettings:
        """These settings with every field that `msg` sets taking over (unset = the default)."""
        given = {f.name: getattr(msg, f.name) for f in dataclasses.fields(self) if msg.HasField(f.name)}
        return dataclasses.replace(self, **given)


class SeatUnavailableError(Exception):
    """A Hello that cannot take its seat: the seat is connected, or its reconnect grace expired."""


@dataclass(slots=True)
class Close:
    """The end of a stream: a gRPC status name and details, or code None when the match is over."""

    code: str | None
    details: str = ""


Outgoing = pb.RefereeMessage | Close


class TokenBucket:
    """A token bucket with strikes: 'ok', 'limited' beyond the rate, 'flooding' when it goes on."""

    def __init__(
        self, now: Callable[[], float], rate_per_s: float = RATE_PER_S, burst: float = BURST
    ) -> None:
        self._now = now
        self.rate_per_s = rate_per_s
        self.burst = burst
        self.tokens = burst
        self.credits = 0.0
        self.strikes = 0.0
        self._stamp = now()

    def credit(self) -> None:
        """One reply the referee asked for (a request, a ping): it never counts against the rate."""
        self.credits += 1.0

    def take(self) -> Literal["ok", "limited", "flooding"]:
        """Spend one token for one message."""
        t = self._now()
        elapsed = max(0.0, t - self._stamp)
        self._stamp = t
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


class Connection:
    """One bot stream attached to a seat: the messages queued for it and its flood limiter.

    Messages queue up while the table handles an input; the stream's writer wakes once the input
    is handled (`wake`), and takes them all at once (`take`), to send them in one gRPC message.
    """

    def __init__(
        self,
        seat: int,
        now: Callable[[], float],
        clock: ClockSettings,
        on_queued: Callable[[Connection], None] | None = None,
    ) -> None:
        self.seat = seat
        self.bucket = TokenBucket(now)
        self.closed = False
        self.status = ""  # the gRPC status the referee ended the stream with, if it did
        t = now()
        self.next_ping_at = t + clock.heartbeat_interval_ms / 1000
        self.ping_sent_at: float | None = None
        self.nonce = 0
        self._queued: list[Outgoing] = []
        self._ready = asyncio.Event()
        self._on_queued = on_queued or Connection.wake

    def send(self, msg: pb.RefereeMessage) -> None:
        """Queue a message for the stream (dropped once the stream is closed)."""
        if not self.closed:
            self._queued.append(msg)
            self._on_queued(self)
            # A fast bot answers as fast as it is asked: the answers the referee asks for are free.
            if msg.HasField("request") or msg.HasField("ping"):
                self.bucket.credit()
            elif msg.HasField("snapshot"):
                for _ in msg.snapshot.pending:
                    self.bucket.credit()

    def close(self, code: str | None, details: str = "") -> None:
        """End the stream after what is queued: with an error status, or normally (code None)."""
        if not self.closed:
            self.closed = True
            self.status = code or "OK"
            self._queued.append(Close(code, details))
            self._on_queued(self)

    def wake(self) -> None:
        """Let the stream's writer take what is queued."""
        self._ready.set()

    async def take(self) -> list[Outgoing]:
        """Wait until something is queued and the writer is woken; then everything queued, in order
        (a Close, if any, last)."""
        while not (self._queued and self._ready.is_set()):
            self._ready.clear()
            await self._ready.wait()
        taken, self._queued = self._queued, []
        self._ready.clear()
        return taken


# ------------------------------------------------------------------------------------------ inputs


@dataclass(slots=True)
class _Connect:
    seat: int
    bot_name: str
    bot_version: str
    reply: asyncio.Future[Connection]
    at: float


@dataclass(slots=True)
class _Disconnect:
    conn: Connection
    at: float


@dataclass(slots=True)
class _Incoming:
    conn: Connection
    msg: pb.BotMessage
    at: float


@dataclass(slots=True)
class _Limited:
    conn: Connection
    flooding: bool
    at: float


@dataclass(slots=True)
class _Tick:
    at: float


_Item = _Connect | _Disconnect | _Incoming | _Limited | _Tick


@dataclass(slots=True)
class _Request:
    """An open decision request."""

    request_id: int
    seat: int
    kind: Kind
    state_version: int
    sent_at: float
    limit_s: float
    bank_s: float  # the bank the seat had when the request was sent
    expires_at: float  # when the default is taken (limit + bank + grace); windows: the window's end
    msg: pb.DecisionRequest


@dataclass(slots=True)
class _Seat:
    """What the table knows of one seat."""

    seat: int
    bot_name: str
    bot_version: str = ""
    conn: Connection | None = None
    ever_connected: bool = False
    away_since: float | None = None
    abandoned: bool = False
    bank_s: float = 0.0
    seq: int = 0
    rate_limited: int = 0  # not in the replay: a flood would swamp it


def _describe(seat: int, action: Action, before: State) -> str:
    """A change in words, for STALE rejections; a hidden simultaneous answer names no seat."""
    if before.phase in (Phase.GRAND_TICHU, Phase.TICHU_STEP, Phase.EXCHANGE) and not (
        isinstance(action, CallTichu) and before.phase is Phase.EXCHANGE
    ):
        # Grand Tichu, pre-step and exchange answers stay secret until revealed together.
        return "a simultaneous answer"
    if isinstance(action, Play):
        return f"a play by seat {seat}"
    if isinstance(action, Pass):
        return f"a pass by seat {seat}"
    if isinstance(action, CallTichu):
        return f"a Tichu call by seat {seat}"
    if isinstance(action, DeclineTichu):
        return f"a Tichu answer by seat {seat}"
    if isinstance(action, GrandTichu):
        return f"a Grand Tichu answer by seat {seat}"
    if isinstance(action, Exchange):
        return f"an exchange by seat {seat}"
    if isinstance(action, GiftDragon):
        return f"a Dragon gift by seat {seat}"
    return f"an answer by seat {seat}"


# The same actions are offered again and again (declines, passes, the same plays from one hand);
# extend() copies each message into the request, so a shared cached one is never changed. Plays
# are cached by their fields: hashing the fields is cheaper than hashing the Play.
_wire_other = functools.lru_cache(maxsize=256)(action_to_proto)


@functools.lru_cache(maxsize=16_384)
def _wire_play(cards_mask: int, phoenix: int, wish: int, partner: int, tichu: bool) -> pb.Action:
    return action_to_proto(Play(cards_mask, phoenix, wish, partner, tichu))


def _wire_actions(actions: Sequence[Action]) -> list[pb.Action]:
    """The wire form of each action, from the caches."""
    return [
        _wire_play(a.cards_mask, a.phoenix, a.wish, a.partner, a.tichu) if type(a) is Play else _wire_other(a)
        for a in actions
    ]


def _kind_of(state: State) -> Kind:
    """The kind of decision the seats in to_act(state) owe."""
    phase = state.phase
    if phase is Phase.GRAND_TICHU:
        return pb.DECISION_KIND_GRAND_TICHU
    if phase is Phase.TICHU_STEP:
        return pb.DECISION_KIND_TICHU_STEP
    if phase is Phase.EXCHANGE:
        return pb.DECISION_KIND_EXCHANGE
    if state.gift >= 0:
        return pb.DECISION_KIND_DRAGON_GIFT
    if state.window:
        return pb.DECISION_KIND_BOMB_WINDOW
    return pb.DECISION_KIND_PLAY


def _ms(seconds: float) -> int:
    return max(0, int(seconds * 1000))


class Table:
    """One match: seats, the rules State, clocks, bomb windows, replay records and statistics.

    `initial_state` starts from a given position (its own config then rules, not `config`);
    `now` is the monotonic clock in seconds and `wall` the calendar clock (both injectable for
    tests); `on_record` is called with each replay record as it is made, the header first.
    """

    def __init__(
        self,
        match_id: str,
        config: RulesConfig,
        *,
        clock: ClockSettings | None = None,
        seed: int | str = 0,
        bot_names: Sequence[str] = (),
        watch_delay_events: int = 0,
        initial_state: State | None = None,
        now: Callable[[], float] = time.monotonic,
        wall: Callable[[], float] = time.time,
        on_record: Callable[[Record], None] | None = None,
        keep_records: bool = False,
        _resume: Replay | None = None,
    ) -> None:
        self.match_id = match_id
        self.clock = clock or ClockSettings()
        self.seed = seed
        self.watch_delay_events = watch_delay_events
        self._now = now
        self._wall = wall
        self._on_record = on_record
        self._log = get_logger(match_id=match_id)
        if initial_state is None:
            state, events = new_game(config, seed)
        else:
            state, events = initial_state, []
        self.state: State = state
        self.config = state.config
        self.players = self.config.players
        self.state_version = 0
        self.status = "waiting"  # then "running", then "finished" (MatchInfo.status)
        self.result: pb.MatchResult | None = None
        # Every record made, in memory, for tests and tools that look inside a live table; empty
        # unless asked for. The referee needs none of them once made (the replay file has them),
        # and a long match's thousands of records would lengthen every full garbage collection.
        self.keep_records = keep_records
        self.records: list[Record] = []
        self._created_at = now()
        self._seats = [
            _Seat(s, bot_names[s] if s < len(bot_names) else "", bank_s=self.clock.bank_ms / 1000)
            for s in range(self.players)
        ]
        self.tally = Tally(self.players, [s.bot_name for s in self._seats])
        self._busy = False  # an input is being handled: others wait in the backlog
        self._backlog: deque[_Item] = deque()
        self._woken: dict[Connection, None] = {}  # streams with output to wake after the input
        self._timer: asyncio.TimerHandle | None = None
        self._timer_at = math.inf
        self._started = False
        self._started_at = 0.0  # when start() was called: the start timeout runs from then
        self._pending: dict[int, _Request] = {}  # by seat: at most one open request each
        # request id -> (state, seat, request) of the requests whose legal actions are not listed yet
        self._unlisted: dict[int, tuple[State, int, pb.DecisionRequest]] = {}
        # request id -> (seat, "answered" / "timed_out" / "cancelled"), to tell late from unknown
        self._closed_requests: dict[int, tuple[int, str]] = {}
        self._next_request_id = 1
        self._changes: list[tuple[int, int, str]] = []  # (version before, after, what changed)
        self._window_answers: dict[int, Action] = {}  # collected, applied together when complete
        self._window_times: dict[int, float] = {}  # each answer's think time, in ms
        self._window_calls: set[int] = set()  # seats whose window bomb carried a Tichu call
        self._window_opened_at: float | None = None
        self._round_callers: set[int] = set()
        # (state version, type, json) of every event, and of the public ones: a watcher's seq
        # is the position in its log. Built into messages only for watchers.
        self._public_log: list[tuple[int, str, str]] = []
        self._full_log: list[tuple[int, str, str]] = []
        self._changed = asyncio.Event()
        self._initial_events = events
        self.finished = asyncio.Event()
        self.finished_callbacks: list[Callable[[], None]] = []  # run once, when the match ends
        self._resumed = False
        if _resume is None:
            self._record(
                {
                    "kind": "header",
                    "format": FORMAT,
                    "match_id": match_id,
                    "created_at": self._iso_now(),
                    "config": self.config.to_json(),
                    "seed": seed,
                    "clock": dataclasses.asdict(self.clock),
                    "seats": [{"seat": s.seat, "bot_name": s.bot_name} for s in self._seats],
                    "watch_delay_events": watch_delay_events,
                    "initial_state": None if initial_state is None else state_to_json(initial_state),
                    "protocol_version": PROTOCOL_VERSION,
                }
            )
        else:
            self._restore(_resume)

    @classmethod
    def resume(
        cls,
        replay: Replay,
        *,
        now: Callable[[], float] = time.monotonic,
        wall: Callable[[], float] = time.time,
        on_record: Callable[[Record], None] | None = None,
        keep_records: bool = False,
    ) -> Table:
        """The table of an unfinished replay, as it stood after its last record (ReplayMismatch
        if the replay does not re-run). Its seats reconnect with their tokens; play goes on once
        every seat is back, with new requests and fresh clocks for the decisions still owed."""
        header = replay.header
        state_json = header.get("initial_state")
        clock = ClockSettings(**header.get("clock", {}))
        return cls(
            replay.match_id,
            RulesConfig.from_json(header["config"]),
            clock=clock,
            seed=header["seed"],
            bot_names=[s.get("bot_name", "") for s in header["seats"]],
            watch_delay_events=int(header.get("watch_delay_events", 0)),
            initial_state=None if state_json is None else state_from_json(state_json),
            now=now,
            wall=wall,
            on_record=on_record,
            keep_records=keep_records,
            _resume=replay,
        )

    def _restore(self, replay: Replay) -> None:
        """Take over an unfinished replay's game: its state, counts, logs, request ids, times."""
        run = rerun(replay, check_result=False)
        if self.keep_records:
            self.records = [replay.header, *replay.records]
        self.state = run.state
        self.state_version = run.version
        self._next_request_id = run.max_request_id + 1
        # Times in the file go on from where they stopped, as if the match had never paused.
        self._created_at = self._now() - run.last_t_ms / 1000
        self.tally = run.tally  # counted from the same records, as the live table counts them
        for version, event in run.events:
            self._log_event(event, version)
            for slot in self._seats:
                if event.visible_to(slot.seat):
                    slot.seq += 1
        for seat in self.tally.seats:
            slot = self._seats[seat.seat]
            slot.bot_name = slot.bot_name or seat.bot_name
            slot.bot_version = seat.bot_version
            slot.ever_connected = run.started
            if seat.bank_left_ms is not None:
                slot.bank_s = seat.bank_left_ms / 1000
        if run.version:
            self._changes.append((0, run.version, f"{run.moves} moves before the referee restarted"))
        if run.started:
            self._initial_events = []
            self._resumed = True
        self._record({"kind": "resume", "version": run.version, "resumed_at": self._iso_now()})

    # -------------------------------------------------------------------------------- public API

    def start(self) -> None:
        """Start the match's clocks (once); messages are handled whether or not it has started."""
        if not self._started:
            self._started = True
            self._started_at = self._now()
            self._arm_timer(self._next_due())

    async def stop(self, reason: str = "the referee is shutting down") -> None:
        """Stop the match where it stands and close every stream."""
        self._cancel_timer()
        for slot in self._seats:
            if slot.conn is not None:
                slot.conn.close("UNAVAILABLE", reason)
        if self.status != "finished":
            self.status = "finished"
            self._notify()
            self._set_finished()

    async def connect(self, seat: int, bot_name: str = "", bot_version: str = "") -> Connection:
        """Attach a new stream to `seat` (after its token was checked); raises SeatUnavailableError."""
        reply: asyncio.Future[Connection] = asyncio.get_running_loop().create_future()
        self._submit(_Connect(seat, bot_name, bot_version, reply, self._now()))
        return await reply

    def receive(self, conn: Connection, msg: pb.BotMessage) -> None:
        """Handle a message from a stream's reader; floods are cut off first."""
        if conn.closed:
            return
        verdict = conn.bucket.take()
        if verdict == "ok":
            self._submit(_Incoming(conn, msg, self._now()), conn)
        else:
            self._submit(_Limited(conn, verdict == "flooding", self._now()), conn)

    def disconnect(self, conn: Connection) -> None:
        """A stream ended (dropped, cancelled or closed)."""
        conn.closed = True
        self._submit(_Disconnect(conn, self._now()))

    def drop(self, seat: int, details: str = "the stream was dropped") -> None:
        """End a seat's stream as a network failure would (UNAVAILABLE); the seat may reconnect."""
        conn = self._seats[seat].conn
        if conn is not None:
            conn.close("UNAVAILABLE", details)

    def tick(self) -> None:
        """Check the clocks now (for tests that drive an injected clock)."""
        self._submit(_Tick(self._now()))

    def seat_info(self) -> list[pb.SeatInfo]:
        """Each seat's bot name and whether it is connected."""
        return [
            pb.SeatInfo(seat=s.seat, bot_name=s.bot_name, connected=s.conn is not None) for s in self._seats
        ]

    def now(self) -> float:
        """The table's clock (monotonic seconds; injectable for tests)."""
        return self._now()

    def delivered(self, seat: int, request_id: int, at: float | None = None) -> None:
        """A request is leaving for gRPC: its legal actions are listed now (see _issue), and its
        clock starts then (`at`, by default once they are listed), not when it was made.

        Time a request waits behind the referee's own queue is the referee's delay, never the
        bot's: without this, a busy referee timed out bots that had not yet been asked. Bomb
        windows keep one shared end for every seat (R-BOMB-5), so they are left as they are.
        """
        self._list_actions(request_id)
        if at is None:
            at = self._now()  # listing the legal actions is the referee's time, not the bot's
        request = self._pending.get(seat)
        if (
            request is None
            or request.request_id != request_id
            or request.kind == pb.DECISION_KIND_BOMB_WINDOW
        ):
            return
        lag = at - request.sent_at
        if lag > 0:
            request.sent_at = at
            request.expires_at += lag

    def _list_actions(self, request_id: int) -> None:
        """Fill in a request's legal actions, if they are not yet (see _issue)."""
        unlisted = self._unlisted.pop(request_id, None)
        if unlisted is not None:
            state, seat, msg = unlisted
            msg.legal_actions.extend(_wire_actions(legal_decisions(state, seat)))

    def statistics(self) -> dict[str, Any]:
        """Per-seat statistics as plain data (decisions, think times, timeouts, calls, bombs, points)."""
        seats = self.tally.summary()
        for line, slot in zip(seats, self._seats, strict=True):
            line["bot_name"] = slot.bot_name
            line["rate_limited"] = slot.rate_limited
            line["bank_left_ms"] = _ms(slot.bank_s)
        return {"match_id": self.match_id, "state_version": self.state_version, "seats": seats}

    async def watch(self, full: bool) -> AsyncIterator[pb.WatchMessage]:
        """A spectator's stream: public events `watch_delay_events` behind, or every event at once."""
        sent = 0
        while True:
            waiter = self._changed
            log = self._full_log if full else self._public_log
            done = self.status == "finished"
            upto = len(log) if full or done else max(0, len(log) - self.watch_delay_events)
            while sent < upto:
                version, kind, data = log[sent]
                sent += 1
                yield pb.WatchMessage(
                    event=pb.GameEvent(seq=sent, state_version=version, type=kind, json=data)
                )
            if done:
                if self.result is not None:
                    yield pb.WatchMessage(result=self.result)
                return
            await waiter.wait()

    # -------------------------------------------------------------------------------- inputs

    def _submit(self, item: _Item, sender: Connection | None = None) -> None:
        """Handle `item` now, or after the input being handled; then wake the streams with output."""
        if self._busy:
            self._backlog.append(item)
            return
        self._busy = True
        try:
            self._step(item)
            while self._backlog:
                self._step(self._backlog.popleft())
        finally:
            self._busy = False
            self._wake_streams(sender)
            if self.status == "finished":
                self._cancel_timer()

    def _step(self, item: _Item) -> None:
        """One input: the deadlines that passed before it arrived, the input, the deadlines now."""
        if self.status == "finished":
            if isinstance(item, _Connect) and not item.reply.done():
                item.reply.set_result(self._late_connection(item.seat))
            return
        try:
            # A deadline that passed before this item arrived is handled first: the outcome
            # depends on when things happened, not on when the loop got to them. The timer is
            # never set later than the first deadline: if it is not due, nothing is.
            if not self._started or self._timer_at < item.at:
                self._fire_due(item.at, strictly_before=True)
            if self.status != "finished":
                self._handle(item)
            self._fire_due(self._now())
        except Exception as error:
            # A bug here must not leave four bots waiting forever: end the match, loudly.
            self._log.exception("table_failed", item=type(item).__name__)
            if self.status != "finished":
                self._finish(winner=-1, forfeiting_team=-1, reason=f"referee error: {error!r}")
        if isinstance(item, _Connect) and not item.reply.done():
            item.reply.set_result(self._late_connection(item.seat))

    def _queued(self, conn: Connection) -> None:
        """A message was queued for `conn`: wake its writer now, or once the input is handled."""
        if self._busy:
            self._woken[conn] = None
        else:
            conn.wake()

    def _wake_streams(self, sender: Connection | None) -> None:
        """Wake the writers of the streams with output: the sender's first, then in play order.

        Every seat's output of one input goes out in the same loop iteration; the order only
        spares the bot that is waiting for an answer the others' writes, and decides nothing.
        """
        if not self._woken:
            return
        woken, self._woken = list(self._woken), {}
        first = sender.seat if sender is not None else 0
        woken.sort(key=lambda conn: (conn.seat - first) % self.players)
        for conn in woken:
            conn.wake()

    def _late_connection(self, seat: int) -> Connection:
        """A stream opened after the match ended: the final picture and the result, then the end."""
        conn = Connection(seat, self._now, self.clock)
        conn.send(pb.RefereeMessage(welcome=self._welcome(seat)))
        conn.send(pb.RefereeMessage(snapshot=self._snapshot(seat)))
        if self.result is not None:
            conn.send(pb.RefereeMessage(result=self.result))
        conn.close(None)
        return conn

    def _handle(self, item: _Item) -> None:
        if isinstance(item, _Connect):
            self._connect(item)
        elif isinstance(item, _Disconnect):
            self._disconnected(item.conn, "stream ended")
        elif isinstance(item, _Incoming):
            if self._seats[item.conn.seat].conn is item.conn:
                item.conn.ping_sent_at = None  # any message proves the stream is alive
                self._message(item.conn, item.msg, item.at)
        elif isinstance(item, _Limited):
            self._limited(item)

    # -------------------------------------------------------------------------------- clocks

    def _next_due(self) -> tuple[float, Callable[[], None]] | None:
        """The earliest deadline and what to do then, or None (of equal ones, the first found)."""
        # Runs after every input: it keeps the earliest (time, handler, argument) and builds
        # nothing for the deadlines that lose.
        at = math.inf
        handler: Callable[[Any], None] | None = None
        target: Any = None
        if self.status == "running":
            for request in self._pending.values():
                if request.expires_at < at and request.kind != pb.DECISION_KIND_BOMB_WINDOW:
                    at, handler, target = request.expires_at, self._timed_out, request
            if self._window_opened_at is not None:
                end = self._window_end()
                if end < at:
                    at, handler, target = end, None, None
        clock = self.clock
        if self.status == "waiting" and self._started and clock.start_timeout_ms > 0:
            start_by = self._started_at + clock.start_timeout_ms / 1000
            if start_by < at:
                at, handler, target = start_by, self._no_show, None
        for slot in self._seats:
            conn = slot.conn
            if conn is not None:
                if conn.ping_sent_at is not None:
                    stalled_at = conn.ping_sent_at + clock.heartbeat_timeout_ms / 1000
                    if stalled_at < at:
                        at, handler, target = stalled_at, self._stalled, conn
                if clock.heartbeat_interval_ms > 0 and conn.next_ping_at < at:
                    at, handler, target = conn.next_ping_at, self._ping, conn
            elif slot.away_since is not None and not slot.abandoned and self.status == "running":
                # Before the game starts a seat may come and go as it likes.
                grace_end = slot.away_since + clock.reconnect_grace_ms / 1000
                if grace_end < at:
                    at, handler, target = grace_end, self._grace_expired, slot
        if at == math.inf:
            return None
        if handler is None:
            return at, self._window_expired
        return at, functools.partial(handler, target)

    def _arm_timer(self, due: tuple[float, Callable[[], None]] | None) -> None:
        """Be called back at the deadline `due` (the next one). A timer already set for an earlier
        time is kept: it finds nothing due, and sets the timer again."""
        if due is None or not self._started or self.status == "finished":
            self._cancel_timer()
            return
        if self._timer is not None and self._timer_at <= due[0]:
            return
        if self._timer is not None:
            self._timer.cancel()
        self._timer_at = due[0]
        delay = max(0.0, due[0] - self._now())
        self._timer = asyncio.get_running_loop().call_later(delay, self._timer_fired)

    def _cancel_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer = None
        self._timer_at = math.inf

    def _timer_fired(self) -> None:
        # _timer_at stays as it was, at or before every deadline, until the tick sets it again.
        self._timer = None
        self._submit(_Tick(self._now()))

    def _fire_due(self, limit: float, strictly_before: bool = False) -> None:
        """Act on the deadlines up to `limit` in time order; after the last input's deadlines
        (`strictly_before` False), set the timer for the next one."""
        while self.status != "finished":
            due = self._next_due()
            if due is None or due[0] > limit or (strictly_before and due[0] >= limit):
                if not strictly_before:
                    self._arm_timer(due)
                return
            due[1]()

    def _window_end(self) -> float:
        assert self._window_opened_at is not None
        return self._window_opened_at + (self.clock.window_ms + self.clock.grace_ms) / 1000

    def _ping(self, conn: Connection) -> None:
        conn.nonce += 1
        conn.send(pb.RefereeMessage(ping=pb.Ping(nonce=conn.nonce)))
        if conn.ping_sent_at is None:
            conn.ping_sent_at = self._now()
        # From now rather than from the last due time, so a clock that jumps sends one ping.
        conn.next_ping_at = self._now() + self.clock.heartbeat_interval_ms / 1000

    def _stalled(self, conn: Connection) -> None:
        seat = conn.seat
        self._log.warning("stream_stalled", seat=seat, timeout_ms=self.clock.heartbeat_timeout_ms)
        conn.close("UNAVAILABLE", f"no Pong (or any message) within {self.clock.heartbeat_timeout_ms} ms")
        self._disconnected(conn, "stalled")

    def _no_show(self, _: object) -> None:
        """The start timeout passed with seats still absent: their team forfeits (both absent:
        no winner)."""
        absent = [slot.seat for slot in self._seats if slot.conn is None]
        teams = sorted({team_of(seat) for seat in absent})
        waited = f"{self.clock.start_timeout_ms / 1000:g} s"
        seats = ", ".join(str(seat) for seat in absent)
        self._log.warning("start_timed_out", absent=absent, start_timeout_ms=self.clock.start_timeout_ms)
        if len(teams) == 1:
            team = teams[0]
            reason = f"seat {seats} did not connect within {waited}: team {'AB'[team]} forfeits"
            self._finish(winner=1 - team, forfeiting_team=team, reason=reason, absent=absent)
        else:
            reason = f"no contest: seats {seats} did not connect within {waited}"
            self._finish(winner=-1, forfeiting_team=-1, reason=reason, absent=absent)

    def _grace_expired(self, slot: _Seat) -> None:
        slot.abandoned = True
        self._log.warning("reconnect_grace_expired", seat=slot.seat)
        self._record({"kind": "connection", "seat": slot.seat, "connected": False, "abandoned": True})

    def _timed_out(self, request: _Request) -> None:
        """A regular decision's time is up: the engine's default (R-DEF-1) and a violation."""
        seat = request.seat
        self._close_request(request, "timed_out")
        slot = self._seats[seat]
        slot.bank_s = 0.0
        action = default_action(self.state, seat)
        self._violation(request, action)
        if self.status == "finished":
            return
        state, events = apply(self.state, seat, action)
        self._commit(
            state, events, f"{_describe(seat, action, self.state)} (a default after a timeout)", action, seat
        )

    def _window_expired(self) -> None:
        """The bomb window's time is up: the silent seats decline (R-DEF-1); then it resolves."""
        for seat in self.state.window:
            request = self._pending.get(seat)
            if request is None or request.kind != pb.DECISION_KIND_BOMB_WINDOW:
                continue
            self._close_request(request, "timed_out")
            self._window_answers[seat] = Decline()
            self._violation(request, Decline())
            if self.status == "finished":
                return
        self._resolve_window()

    def _violation(self, request: _Request, action: Action) -> None:
        """Record a timeout; the default `action` is then taken (a window's decline: collected)."""
        count = self.tally.seats[request.seat].timeouts + 1
        self._log.warning(
            "decision_timed_out",
            seat=request.seat,
            request_id=request.request_id,
            kind=KIND_NAMES.get(request.kind, "?"),
            default=str(action),
            violations=count,
        )
        self._record(
            {
                "kind": "violation",
                "seat": request.seat,
                "request_id": request.request_id,
                "decision": KIND_NAMES[request.kind],
                "version": self.state_version,
                "sent_ms": self._rel_ms(request.sent_at),
                "default": str(action),
                "count": count,
            }
        )
        limit = self.clock.max_violations
        if limit and count > limit:
            team = team_of(request.seat)
            self._finish(
                winner=1 - team,
                forfeiting_team=team,
                reason=f"seat {request.seat} ran out of time {count} times "
                f"(at most {limit} allowed): team {'AB'[team]} forfeits",
            )

    # -------------------------------------------------------------------------------- seats

    def _connect(self, item: _Connect) -> None:
        if item.reply.done():
            # The Play call was cancelled before its Hello was handled: there is no one to
            # attach, and the seat stays as it was.
            return
        slot = self._seats[item.seat]
        if slot.conn is not None:
            item.reply.set_exception(SeatUnavailableError(f"seat {item.seat} is already connected"))
            return
        if slot.abandoned:
            item.reply.set_exception(
                SeatUnavailableError(f"seat {item.seat} did not reconnect within the grace period")
            )
            return
        conn = Connection(item.seat, self._now, self.clock, self._queued)
        reconnect = slot.ever_connected
        slot.conn = conn
        slot.ever_connected = True
        slot.away_since = None
        if not slot.bot_name:
            slot.bot_name = item.bot_name
        slot.bot_version = item.bot_version
        item.reply.set_result(conn)
        conn.send(pb.RefereeMessage(welcome=self._welcome(item.seat)))
        conn.send(pb.RefereeMessage(snapshot=self._snapshot(item.seat)))
        self._broadcast_status(item.seat, True)
        self._log.info("seat_connected", seat=item.seat, bot_name=item.bot_name, reconnect=reconnect)
        self._record(
            {
                "kind": "connection",
                "seat": item.seat,
                "connected": True,
                "reconnect": reconnect,
                "bot_name": item.bot_name,
                "bot_version": item.bot_version,
            }
        )
        if self.status == "waiting" and all(s.conn is not None for s in self._seats):
            self._start_game()

    def _disconnected(self, conn: Connection, why: str) -> None:
        slot = self._seats[conn.seat]
        if slot.conn is not conn:
            return
        # Its queued requests will not leave: list them now, for the snapshot on reconnection.
        for rid in [rid for rid, (_, seat, _) in self._unlisted.items() if seat == conn.seat]:
            self._list_actions(rid)
        slot.conn = None
        slot.away_since = self._now()
        self._broadcast_status(conn.seat, False)
        self._log.info("seat_disconnected", seat=conn.seat, why=why, status=conn.status)
        self._record(
            {"kind": "connection", "seat": conn.seat, "connected": False, "why": why, "status": conn.status}
        )

    def _broadcast_status(self, seat: int, connected: bool) -> None:
        msg = pb.RefereeMessage(seat_status=pb.SeatStatus(seat=seat, connected=connected))
        for other in self._seats:
            if other.seat != seat and other.conn is not None:
                other.conn.send(msg)

    def _welcome(self, seat: int) -> pb.Welcome:
        return pb.Welcome(
            match_id=self.match_id,
            seat=seat,
            team=team_of(seat),
            rules=config_to_proto(self.config),
            clock=self.clock.to_proto(),
            seats=self.seat_info(),
            protocol_version=PROTOCOL_VERSION,
        )

    def _snapshot(self, seat: int) -> pb.Snapshot:
        """The seat's complete view and its open requests, their clocks brought up to date."""
        obs = observe(self.state, seat).to_json()
        pending = []
        request = self._pending.get(seat)
        if request is not None:
            self._list_actions(request.request_id)
            msg = pb.DecisionRequest()
            msg.CopyFrom(request.msg)
            now = self._now()
            if request.kind == pb.DECISION_KIND_BOMB_WINDOW:
                msg.deadline_ms = _ms(self._window_end() - now - self.clock.grace_ms / 1000)
            else:
                left = request.expires_at - now - self.clock.grace_ms / 1000
                msg.deadline_ms = _ms(left)
                msg.bank_left_ms = _ms(min(request.bank_s, left))
            pending.append(msg)
        return pb.Snapshot(
            state_version=self.state_version,
            observation_json=json.dumps(obs, separators=(",", ":")),
            pending=pending,
        )

    def _start_game(self) -> None:
        self.status = "running"
        if self._resumed:
            self._log.info("match_resumed", state_version=self.state_version)
            self._sync_requests(keep=False)
            self._check_over()
            return
        self._log.info("match_started", seed=str(self.seed), players=self.players)
        self._record(
            {
                "kind": "start",
                "started_at": self._iso_now(),
                "seats": [
                    {"seat": s.seat, "bot_name": s.bot_name, "bot_version": s.bot_version}
                    for s in self._seats
                ],
            }
        )
        # The deal's events describe state version 0, the state new_game returned.
        self._publish(self._initial_events)
        self._initial_events = []
        self._sync_requests(keep=False)
        self._check_over()

    # -------------------------------------------------------------------------------- messages

    def _message(self, conn: Connection, msg: pb.BotMessage, at: float) -> None:
        kind = msg.WhichOneof("kind")
        seat = conn.seat
        if kind == "ping":
            conn.send(pb.RefereeMessage(pong=pb.Pong(nonce=msg.ping.nonce)))
        elif kind == "pong":
            pass
        elif kind == "hello":
            self._reject(
                seat, pb.REJECTION_REASON_OUT_OF_ORDER, "a Hello is only the first message of a stream"
            )
        elif self.status != "running":
            self._reject(
                seat, pb.REJECTION_REASON_OUT_OF_ORDER, "the game has not started: waiting for every seat"
            )
        elif kind == "decision":
            self._decision(seat, msg.decision, at)
        elif kind == "out_of_turn":
            self._out_of_turn(seat, msg.out_of_turn, at)

    def _limited(self, item: _Limited) -> None:
        conn = item.conn
        slot = self._seats[conn.seat]
        if slot.conn is not conn:
            return
        slot.rate_limited += 1
        if item.flooding:
            self._log.warning("stream_flooded", seat=conn.seat)
            conn.close("RESOURCE_EXHAUSTED", f"too many messages (more than {RATE_PER_S:g}/s)")
            self._disconnected(conn, "flooded")
            return
        if slot.rate_limited == 1 or slot.rate_limited % 50 == 0:
            self._log.info("message_rate_limited", seat=conn.seat, count=slot.rate_limited)
        conn.send(
            pb.RefereeMessage(
                rejection=pb.Rejection(
                    reason=pb.REJECTION_REASON_RATE_LIMITED,
                    message=f"more than {RATE_PER_S:g} messages a second; this one was dropped",
                    state_version=self.state_version,
                )
            )
        )

    def _reject(
        self,
        seat: int,
        reason: Reason,
        message: str,
        rule: str | None = None,
        request_id: int = 0,
    ) -> None:
        slot = self._seats[seat]
        self._log.info(
            "decision_rejected",
            seat=seat,
            reason=REASON_NAMES.get(reason, "?"),
            rule=rule,
            detail=message,
            request_id=request_id,
        )
        self._record(
            {
                "kind": "rejection",
                "seat": seat,
                "reason": REASON_NAMES.get(reason, "?"),
                "rule": rule or "",
                "message": message,
                "request_id": request_id,
            }
        )
        if slot.conn is not None:
            slot.conn.send(
                pb.RefereeMessage(
                    rejection=pb.Rejection(
                        reason=reason,
                        rule=rule or "",
                        message=message,
                        request_id=request_id,
                        state_version=self.state_version,
                    )
                )
            )

    def _reject_error(self, seat: int, error: RulesError, request_id: int = 0) -> None:
        reason = (
            pb.REJECTION_REASON_ILLEGAL
            if isinstance(error, IllegalActionError)
            else pb.REJECTION_REASON_INVALID
        )
        self._reject(seat, reason, error.detail, error.rule, request_id)

    def _changes_since(self, version: int) -> str:
        changes = [c for c in self._changes if c[1] > version]
        parts = [f"{what} (state {before} -> {after})" for before, after, what in changes[:STALE_DETAIL]]
        if len(changes) > STALE_DETAIL:
            parts.append(f"and {len(changes) - STALE_DETAIL} more changes")
        return ", then ".join(parts) if parts else "nothing"

    def _decision(self, seat: int, decision: pb.Decision, at: float) -> None:
        rid = decision.request_id
        request = self._pending.get(seat)
        if request is None or request.request_id != rid:
            owner, how = self._closed_requests.get(rid, (-1, ""))
            if owner == seat and how == "timed_out":
                self._reject(
                    seat,
                    pb.REJECTION_REASON_LATE,
                    f"request {rid} timed out; the default was taken",
                    None,
                    rid,
                )
            elif owner == seat:
                self._reject(seat, pb.REJECTION_REASON_UNKNOWN_REQUEST, f"request {rid} is {how}", None, rid)
            else:
                self._reject(
                    seat, pb.REJECTION_REASON_UNKNOWN_REQUEST, f"you have no open request {rid}", None, rid
                )
            return
        if decision.state_version != request.state_version:
            if decision.state_version < request.state_version:
                self._reject(
                    seat,
                    pb.REJECTION_REASON_STALE,
                    f"request {rid} is for state {request.state_version}; since state "
                    f"{decision.state_version}: {self._changes_since(decision.state_version)}",
                    None,
                    rid,
                )
            else:
                self._reject(
                    seat,
                    pb.REJECTION_REASON_INVALID,
                    f"request {rid} is for state {request.state_version}, not {decision.state_version}",
                    None,
                    rid,
                )
            return
        if not decision.HasField("action"):
            self._reject(seat, pb.REJECTION_REASON_INVALID, "a Decision needs an action", None, rid)
            return
        self._answer(seat, request, decision.action, at)

    def _parse(self, seat: int, msg: pb.Action, request_id: int) -> Action | None:
        try:
            return action_from_proto(msg)
        except RulesError as error:
            self._reject_error(seat, error, request_id)
        except ValueError as error:  # e.g. a number where the codec expected a card
            self._reject(seat, pb.REJECTION_REASON_INVALID, str(error), None, request_id)
        return None

    def _answer(self, seat: int, request: _Request, msg: pb.Action, at: float) -> None:
        """An answer to the seat's open request: check it with the engine, then apply or collect it."""
        rid = request.request_id
        action = self._parse(seat, msg, rid)
        if action is None:
            return
        allowed, names = ANSWERS[request.kind]
        if not isinstance(action, allowed):
            hint = "; a Tichu call is sent as OutOfTurn" if isinstance(action, CallTichu) else ""
            self._reject(
                seat,
                pb.REJECTION_REASON_INVALID,
                f"a {KIND_NAMES[request.kind]} request is answered with {names}, not {action}{hint}",
                None,
                rid,
            )
            return
        if request.kind == pb.DECISION_KIND_BOMB_WINDOW:
            self._window_answer(seat, request, action, at)
            return
        try:
            state, events = apply(self.state, seat, action)
        except RulesError as error:
            self._reject_error(seat, error, rid)
            return
        self._accepted(request, action, at)
        self._commit(state, events, _describe(seat, action, self.state), action, seat)

    def _accepted(self, request: _Request, action: Action, at: float) -> None:
        """Close an answered request: its think time, the bank it spent, its record."""
        slot = self._seats[request.seat]
        used = max(0.0, at - request.sent_at)
        # The grace absorbs network lag: only time beyond the limit and the grace costs bank.
        over = max(0.0, used - self.clock.grace_ms / 1000 - request.limit_s)
        self._close_request(request, "answered")
        self._log.debug(
            "decision_accepted", seat=request.seat, request_id=request.request_id, action=str(action)
        )
        if request.kind == pb.DECISION_KIND_BOMB_WINDOW:
            # A window's answers are recorded together when it resolves, in its own record.
            self._window_times[request.seat] = round(used * 1000, 1)
            return
        slot.bank_s = max(0.0, slot.bank_s - over)
        self._record(
            {
                "kind": "decision",
                "seat": request.seat,
                "request_id": request.request_id,
                "decision": KIND_NAMES[request.kind],
                "version": self.state_version,
                "action": str(action),
                "sent_ms": self._rel_ms(request.sent_at),
                "received_ms": self._rel_ms(at),
                "time_used_ms": round(used * 1000, 1),
                "bank_left_ms": _ms(slot.bank_s),
            }
        )

    def _window_answer(self, seat: int, request: _Request, action: Action, at: float) -> None:
        """Check a window answer against the engine and hold it back until the window resolves."""
        call_first = False
        if isinstance(action, Play) and action.tichu:
            # R-CALL-7: the call goes first. answer_window takes no flag, so the call is checked
            # now and applied, just before the bomb, when the window resolves.
            try:
                apply(self.state, seat, CallTichu())
            except RulesError as error:
                self._reject_error(seat, error, request.request_id)
                return
            action = Play(action.cards_mask, action.phoenix, action.wish, action.partner)
            call_first = True
        # A decline from a seat that owes the window is always legal (its request lists it first);
        # a bomb is checked by the engine, on a copy whose result is dropped.
        if not isinstance(action, Decline):
            try:
                answer_window(self.state, {seat: action})
            except RulesError as error:
                self._reject_error(seat, error, request.request_id)
                return
        self._accepted(request, action, at)
        self._window_answers[seat] = action
        if call_first:
            self._window_calls.add(seat)
        if not self.clock.fixed_length_windows and all(s in self._window_answers for s in self.state.window):
            self._resolve_window()

    def _resolve_window(self) -> None:
        """Every window seat has answered: apply the answers together (R-BOMB-9)."""
        if self.status != "running" or not self.state.window:
            return
        order = self.state.window
        answers: dict[int, Action] = {s: self._window_answers.get(s, Decline()) for s in order}
        try:
            state, events = answer_window(self.state, answers)
        except RulesError:
            # Only a Tichu call can have changed the state since the answers were checked, and
            # calls do not change which bombs are legal; should that ever fail, decline instead.
            self._log.exception("window_answers_invalid", answers={s: str(a) for s, a in answers.items()})
            answers = {s: Decline() for s in order}
            state, events = answer_window(self.state, answers)
        bomber = next((e.seat for e in events if isinstance(e, Played) and e.out_of_turn), None)
        caller = None
        if bomber is not None and bomber in self._window_calls and can_call_tichu(self.state, bomber):
            # R-CALL-7: the bomb carried a call, which goes first. Only the bomb that applies
            # brings its call; a discarded bomb's call is discarded with it, else the call would
            # tell everyone that this seat had submitted a bomb.
            called, call_events = apply(self.state, bomber, CallTichu())
            state, events = answer_window(called, answers)
            events = call_events + events
            caller = bomber
        discarded = [s for s, a in answers.items() if isinstance(a, Play) and s != bomber]
        self._record(
            {
                "kind": "window",
                "version": self.state_version,
                "order": list(order),
                "answers": {str(s): str(a) for s, a in answers.items()},
                "opened_ms": None if self._window_opened_at is None else self._rel_ms(self._window_opened_at),
                "time_ms": {str(s): t for s, t in self._window_times.items()},
                "call": caller,
                "bomb": bomber,
                "discarded": discarded,
            }
        )
        if discarded:
            self._log.info("window_bombs_discarded", bomber=bomber, discarded=discarded)
        what = "the bomb window closing" if bomber is None else f"a bomb by seat {bomber}"
        self._commit(state, events, what, None, -1)

    def _out_of_turn(self, seat: int, oot: pb.OutOfTurn, at: float) -> None:
        """A bomb or a Tichu call sent at any moment: accepted only while the rules allow it."""
        if not oot.HasField("action"):
            self._reject(seat, pb.REJECTION_REASON_INVALID, "an OutOfTurn message needs an action")
            return
        if oot.state_version > self.state_version:
            self._reject(
                seat,
                pb.REJECTION_REASON_INVALID,
                f"state {oot.state_version} does not exist yet (the current state is {self.state_version})",
            )
            return
        if oot.state_version < self.state_version:
            self._reject(
                seat,
                pb.REJECTION_REASON_STALE,
                f"decided on state {oot.state_version}; since then: {self._changes_since(oot.state_version)}",
            )
            return
        action = self._parse(seat, oot.action, 0)
        if action is None:
            return
        if isinstance(action, CallTichu):
            try:
                state, events = apply(self.state, seat, action)
            except RulesError as error:
                self._reject_error(seat, error)
                return
            self._log.info("tichu_called", seat=seat)
            self._record(
                {
                    "kind": "call",
                    "seat": seat,
                    "version": self.state_version,
                    "action": str(action),
                    "received_ms": self._rel_ms(at),
                }
            )
            self._commit(state, events, _describe(seat, action, self.state), action, seat)
            return
        if not isinstance(action, Play):
            self._reject(
                seat,
                pb.REJECTION_REASON_INVALID,
                f"OutOfTurn carries a bomb or a Tichu call, not {action}; answer requests with a Decision",
            )
            return
        request = self._pending.get(seat)
        if request is not None and request.kind in (pb.DECISION_KIND_BOMB_WINDOW, pb.DECISION_KIND_PLAY):
            # In an open window the bomb is this seat's answer; on its own turn, its play.
            self._answer(seat, request, oot.action, at)
            return
        if seat in self._window_answers:
            self._reject(
                seat, pb.REJECTION_REASON_ILLEGAL, "you have already answered this bomb window", "R-BOMB-9"
            )
            return
        try:
            apply(self.state, seat, action)
        except RulesError as error:
            self._reject_error(seat, error)
            return
        # Unreachable while every seat that may act has a request; refuse rather than guess.
        self._reject(seat, pb.REJECTION_REASON_ILLEGAL, "no decision of yours is open now", "R-BOMB-9")

    # -------------------------------------------------------------------------------- changes

    def _commit(self, state: State, events: list[Event], what: str, action: Action | None, seat: int) -> None:
        """Make `state` current: a new version, the events out to those who may see them, requests."""
        old = self.state
        self.state = state
        before = self.state_version
        self.state_version += 1
        self._changes.append((before, self.state_version, what))
        self._publish(events)
        # A Tichu call changes nobody's decision, and in the simultaneous phases one seat's answer
        # leaves the others' questions as they were: those requests stay open, with their clocks.
        call_only = isinstance(action, CallTichu) and old.phase in (Phase.PLAY, Phase.EXCHANGE)
        keep = (
            old.round == state.round
            and old.phase is state.phase
            and (call_only or state.phase in (Phase.GRAND_TICHU, Phase.TICHU_STEP, Phase.EXCHANGE))
        )
        self._sync_requests(keep)
        self._check_over()

    def _log_event(
        self, event: Event, version: int, data: dict[str, Any] | None = None
    ) -> tuple[int, str, str]:
        """Add an event to the spectators' logs; returns its (state version, type, json)."""
        if data is None:
            data = event.to_json()
        entry = (version, data["type"], json.dumps(data, separators=(",", ":")))
        self._full_log.append(entry)
        if event.private_to is None:
            self._public_log.append(entry)
        return entry

    def _publish(self, events: Sequence[Event]) -> None:
        for event in events:
            data = event.to_json()
            version, kind, text = self._log_event(event, self.state_version, data)
            self._record(
                {"kind": "event", "version": version, "private_to": event.private_to, "event": data}, event
            )
            for slot in self._seats:
                if event.visible_to(slot.seat):
                    slot.seq += 1
                    if slot.conn is not None:
                        msg = pb.RefereeMessage()
                        wire = msg.event  # filled in place: cheaper than building and copying one
                        wire.seq = slot.seq
                        wire.state_version = version
                        wire.type = kind
                        wire.json = text
                        slot.conn.send(msg)
        if events:
            self._notify()

    def _notify(self) -> None:
        self._changed.set()
        self._changed = asyncio.Event()

    def _sync_requests(self, keep: bool) -> None:
        """Cancel requests that no longer apply and send one to every seat that owes a decision."""
        owed = to_act(self.state) if self.status == "running" else ()
        for seat, request in list(self._pending.items()):
            if not keep or seat not in owed:
                self._cancel(request, "answered" if keep else "the game moved on")
        if not keep:
            self._window_answers.clear()
            self._window_times.clear()
            self._window_calls.clear()
            self._window_opened_at = None
        # Window requests go out together, in window order, whatever the hands hold (R-BOMB-5),
        # stamped with one clock reading so that they are alike but for the seat's own options.
        now = self._now()
        for seat in owed:
            if seat not in self._pending and seat not in self._window_answers:
                self._issue(seat, now)

    def _issue(self, seat: int, now: float) -> None:
        state = self.state
        kind = _kind_of(state)
        slot = self._seats[seat]
        rid = self._next_request_id
        self._next_request_id += 1
        # Filled in place inside the message that is sent: a request can list hundreds of
        # actions, and building it apart would copy them all once more.
        wire = pb.RefereeMessage()
        msg = wire.request
        msg.request_id = rid
        msg.kind = kind
        msg.state_version = self.state_version
        msg.can_call_tichu = can_call_tichu(state, seat)
        if kind == pb.DECISION_KIND_BOMB_WINDOW:
            if self._window_opened_at is None:
                self._window_opened_at = now
            limit_s = self.clock.window_ms / 1000
            bank_s = 0.0  # a window has its own fixed length; the bank is for regular decisions
            expires_at = self._window_end()
            msg.deadline_ms = _ms(self._window_opened_at + limit_s - now)
        else:
            limit_s = self.clock.decision_ms / 1000
            bank_s = slot.bank_s
            expires_at = now + limit_s + bank_s + self.clock.grace_ms / 1000
            msg.deadline_ms = _ms(limit_s + bank_s)
            msg.bank_left_ms = _ms(bank_s)
        if kind == pb.DECISION_KIND_EXCHANGE:
            recipients = exchange_recipients(state, seat)
            msg.exchange_give = len(recipients)
            msg.exchange_to.extend(recipients)
        else:
            # Listed when the request leaves (delivered), by the writer of its stream: a lead
            # can list hundreds of plays, and building them here would hold back every other
            # seat's messages of this input. The State is never changed in place, so the list is
            # the one of the state the request was made for.
            self._unlisted[rid] = (state, seat, msg)
            if slot.conn is None:
                self._list_actions(rid)
        request = _Request(rid, seat, kind, self.state_version, now, limit_s, bank_s, expires_at, msg)
        self._pending[seat] = request
        if slot.conn is not None:
            slot.conn.send(wire)

    def _close_request(self, request: _Request, how: str) -> None:
        if self._pending.get(request.seat) is request:
            del self._pending[request.seat]
        self._closed_requests[request.request_id] = (request.seat, how)

    def _cancel(self, request: _Request, reason: str) -> None:
        self._close_request(request, "cancelled")
        conn = self._seats[request.seat].conn
        if conn is not None:
            conn.send(
                pb.RefereeMessage(cancelled=pb.RequestCancelled(request_id=request.request_id, reason=reason))
            )

    # -------------------------------------------------------------------------------- the end

    def _check_over(self) -> None:
        if self.status == "running" and self.state.is_over:
            winner = self.state.winner
            totals = self.state.scores
            self._finish(
                winner=-1 if winner is None else winner,
                forfeiting_team=-1,
                reason="draw"
                if winner is None
                else f"team {'AB'[winner]} won {totals[winner]} to {totals[1 - winner]}",
            )

    def _finish(self, winner: int, forfeiting_team: int, reason: str, absent: Sequence[int] = ()) -> None:
        for request in list(self._pending.values()):
            self._cancel(request, "the match is over")
        self.status = "finished"
        statistics = self.statistics()
        self.result = pb.MatchResult(
            match_id=self.match_id,
            winner=winner,
            scores=list(self.state.scores),
            forfeit=forfeiting_team >= 0,
            forfeiting_team=forfeiting_team,
            reason=reason,
            summary_json=json.dumps(statistics, separators=(",", ":")),
        )
        self._log.info(
            "match_finished",
            winner=winner,
            scores=list(self.state.scores),
            forfeit=forfeiting_team >= 0,
            reason=reason,
        )
        self._record(
            {
                "kind": "result",
                "winner": winner,
                "scores": list(self.state.scores),
                "forfeiting_team": forfeiting_team,
                "reason": reason,
                "finished_at": self._iso_now(),
                "rounds": self.state.round + 1,
                "summary": statistics["seats"],
                # Only for a start timeout: the seats that never came (the game may not be over).
                **({"absent": list(absent)} if absent else {}),
            }
        )
        for slot in self._seats:
            if slot.conn is not None:
                slot.conn.send(pb.RefereeMessage(result=self.result))
                slot.conn.close(None)
                slot.conn = None
        self._notify()
        self._set_finished()

    def _set_finished(self) -> None:
        self.finished.set()
        callbacks, self.finished_callbacks = self.finished_callbacks, []
        for callback in callbacks:
            callback()

    # -------------------------------------------------------------------------------- records

    def _rel_ms(self, t: float) -> float:
        return round((t - self._created_at) * 1000, 1)

    def _iso_now(self) -> str:
        stamp = datetime.datetime.fromtimestamp(self._wall(), datetime.UTC)
        return stamp.isoformat(timespec="milliseconds").replace("+00:00", "Z")

    def _record(self, record: Record, event: Event | None = None) -> None:
        record.setdefault("t_ms", self._rel_ms(self._now()))
        if self.keep_records:
            self.records.append(record)
        self.tally.add(record, event)
        if self._on_record is not None:
            self._on_record(record)
