"""The match core: one match as a pure, synchronous state machine.

`Match.handle(input, now)` takes one input (a stream connects or ends, a message arrives, a
request leaves, the time passes) and returns outputs (what to send to which stream, records to
write, lines to log, the end). Time is an argument: `now` is a monotonic clock in seconds, and
`next_deadline()` says when the match next needs a Tick. The match owns the rules State, the
seats, the clocks (limit, bank, grace, window end), the bomb windows and their arbitration,
stale, late and unknown answers, violations and forfeits, heartbeats, reconnect grace, the start
timeout, flood limits, the spectators' delay, the statistics and the replay's hash chain. It asks
`referee.rules` every rule question: this module decides who is asked what, when, and what
happens when nobody answers.

Inputs are taken one at a time, in the order given, each after the deadlines that passed before
it arrived: two racing messages are resolved here, the same way every time.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any, Literal

from referee.match.clock import iso_time, ms
from referee.match.messages import (
    Accepted,
    Cancelled,
    Close,
    Connect,
    Decision,
    Delivered,
    Disconnect,
    Drop,
    End,
    EventMessage,
    Finished,
    Hello,
    Input,
    LogEntry,
    MatchResult,
    Message,
    Note,
    OutMessage,
    OutOfTurn,
    Output,
    Ping,
    Pong,
    Received,
    Refused,
    Rejection,
    RejectionReason,
    Request,
    ResultMessage,
    SeatInfo,
    SeatStatus,
    Send,
    Snapshot,
    Stop,
    Welcome,
    Withdraw,
    Write,
)
from referee.match.moves import Rerun, apply_move, initial_state, rerun, resolve_window, sole_action
from referee.match.outcome import Outcome, round_scores
from referee.match.proof import Chain, SeedSecret, Signer, new_header
from referee.match.records import (
    PROTOCOL_VERSION,
    Abandoned,
    CallRecord,
    Connected,
    DecisionRecord,
    Disconnected,
    EventRecord,
    Header,
    Record,
    RejectionRecord,
    ResultRecord,
    ResumeRecord,
    SeatStart,
    SeatSummary,
    Start,
    ViolationRecord,
    WindowRecord,
)
from referee.match.requests import (
    DECLINE,
    PASS,
    SIMULTANEOUS,
    OpenRequest,
    Refusal,
    Requests,
    check_answer,
    describe_change,
)
from referee.match.seats import RATE_PER_S, SeatState, StreamState
from referee.match.tally import Tally
from referee.rules import (
    Action,
    CallTichu,
    DecisionKind,
    Decline,
    Event,
    IllegalActionError,
    Pass,
    Phase,
    RulesError,
    State,
    apply,
    default_action,
    observe,
    owed,
    team_of,
    to_act,
)

Status = Literal["waiting", "running", "finished"]


class Match:
    """One match, driven by `handle(input, now)`; see the module's docstring.

    `header` says what the match is (make it with `Match.header_for`); `now` is the monotonic time
    of its creation and `wall` the calendar time then (seconds since the epoch), from which the
    replay's timestamps are made. A format-2 header needs the `secret` it commits to; `sign`
    signs the chain's head at the end; `head` continues a resumed replay's chain.
    """

    def __init__(
        self,
        header: Header,
        *,
        now: float,
        wall: float,
        secret: SeedSecret | None = None,
        sign: Signer | None = None,
        head: str | None = None,
        _resumed: Rerun | None = None,
    ) -> None:
        if header.chained and (secret is None or secret.commitment != header.seed_commitment):
            raise ValueError("a tichu-replay/2 match needs the seed and salt its header commits to")
        self.header = header
        self.secret = secret  # the seed and salt: the referee's alone until the reveal
        self._sign = sign
        self._chain = Chain(header.chained, head)
        self.match_id = header.match_id
        self.clock = header.clock
        self._wall_offset = wall - now
        self._out: list[Output] = []
        state, events = initial_state(header, None if secret is None else secret.seed)
        self.state: State = state
        self.config = state.config
        self.players = self.config.players
        self.state_version = 0
        self.status: Status = "waiting"
        self.result: MatchResult | None = None
        self._created_at = now
        self._waiting_since = now  # the start timeout runs from the creation (or the resumption)
        names = [header.seats[s].bot_name if s < len(header.seats) else "" for s in range(self.players)]
        self._seats = [SeatState(s, names[s], bank_s=self.clock.bank_ms / 1000) for s in range(self.players)]
        self.tally = Tally(self.players, names)
        self._requests = Requests(self.clock, state)
        self._changes = self._requests.changes  # and the version each seat is told
        # Every event, and the public ones: a watcher's seq is the position in its log.
        self.public_log: list[LogEntry] = []
        self.full_log: list[LogEntry] = []
        self._initial_events = events
        self._resumed = False
        if _resumed is None:
            first = replace(header, t_ms=self._rel_ms(now))
            self._out.append(Write(first, self._chain.link(first.to_json())))
        else:
            self._restore(_resumed, now)
        self._due_at = self._next_due_at()

    # ---------------------------------------------------------------------------- making one

    header_for = staticmethod(new_header)

    @classmethod
    def resume(
        cls,
        header: Header,
        records: Sequence[Record],
        *,
        now: float,
        wall: float,
        secret: SeedSecret | None = None,
        sign: Signer | None = None,
        head: str | None = None,
    ) -> Match:
        """The match of an unfinished replay, as it stood after its last record (ReplayMismatchError
        if the replay does not re-run); a format-2 one needs its seed's `secret` and the chain's
        `head` (its last line's h). Its seats reconnect; play goes on once every seat is back,
        with new requests and fresh clocks for the decisions still owed."""
        seed = None if secret is None else secret.seed
        run = rerun(header, records, check_result=False, seed=seed)
        return cls(header, now=now, wall=wall, secret=secret, sign=sign, head=head, _resumed=run)

    def _restore(self, run: Rerun, now: float) -> None:
        """Take over an unfinished replay's game: its state, counts, logs, request ids, times."""
        self.state = run.state
        self.state_version = run.version
        if run.version:
            self._changes.add(run.state, run.version, f"{run.moves} moves before the referee restarted")
        self._requests.next_id = run.max_request_id + 1
        # Times in the file go on from where they stopped, as if the match had never paused.
        self._created_at = now - run.last_t_ms / 1000
        self.tally = run.tally  # counted from the same records, as the live match counts them
        for index, (version, event) in enumerate([*run.events, *run.unwritten]):
            data = event.to_json()
            self._log_event(event, version, data)
            if index >= len(run.events):
                # The replay was cut off between a move and its events: the move is in the state,
                # so its events are written now, or the file would never re-run.
                self._write(EventRecord.of(version, event, run.last_t_ms, data))
            for slot in self._seats:
                if event.visible_to(slot.seat):
                    slot.seq += 1
        for counted in self.tally.seats:
            slot = self._seats[counted.seat]
            slot.bot_name = slot.bot_name or counted.bot_name
            slot.bot_version = counted.bot_version
            slot.ever_connected = run.started
            if counted.bank_left_ms is not None:
                slot.bank_s = counted.bank_left_ms / 1000
        if run.started:
            self._initial_events = []
            self._resumed = True
        self._write(ResumeRecord(run.version, self._iso(now), self._rel_ms(now)))

    # ---------------------------------------------------------------------------- the interface

    def drain(self) -> list[Output]:
        """The outputs made outside `handle` (the header or resume record at creation)."""
        out, self._out = self._out, []
        return out

    def next_deadline(self) -> float | None:
        """When the match next needs a Tick (monotonic seconds), or None if it never will."""
        return None if self._due_at == math.inf else self._due_at

    def handle(self, item: Input, now: float) -> list[Output]:
        """Take one input at `now`: the deadlines that passed before it first, then the input,
        then the deadlines due now. The outputs, in the order they were made."""
        if isinstance(item, Connect) and not 0 <= item.seat < self.players:
            self._out.append(Refused(item.stream, f"there is no seat {item.seat}"))
        elif isinstance(item, Delivered):
            # Only moves a clock forward: nothing falls due because of it.
            stream = self._stream_of(item.stream)
            if stream is not None and self._requests.delivered(stream.seat, item.request_id, now):
                self._due_at = self._next_due_at()
        elif self._is_over():
            if isinstance(item, Connect):
                self._late_connection(item)
        else:
            try:
                if self._due_at < now:
                    self._fire_due(now, strictly_before=True)
                if not self._is_over():
                    self._dispatch(item, now)
                elif isinstance(item, Connect):
                    self._late_connection(item)  # a deadline before it ended the match
                # The search that finds nothing more due finds the next deadline too: one pass per input.
                self._due_at = self._fire_due(now)
            except Exception as error:
                # A bug here must not leave the bots waiting for ever: end the match, loudly.
                self._note("error", "match_failed", input=type(item).__name__, error=repr(error))
                if not self._is_over():
                    self._finish(now, Outcome.referee_error(error))
                self._due_at = self._next_due_at()
        out, self._out = self._out, []
        return out

    def _dispatch(self, item: Input, now: float) -> None:
        if isinstance(item, Received):
            self._received(item, now)
        elif isinstance(item, Connect):
            self._connect(item, now)
        elif isinstance(item, Disconnect | End):
            stream = self._stream_of(item.stream)
            if stream is not None and isinstance(item, End):
                self._close(stream, item.code, item.details)
            elif stream is not None:
                self._disconnected(stream, "stream ended", now)
        elif isinstance(item, Drop):
            slot = self._seats[item.seat] if 0 <= item.seat < self.players else None
            if slot is not None and slot.stream is not None:
                self._close(slot.stream, "UNAVAILABLE", item.details)
        elif isinstance(item, Stop):
            self._stop(item.reason)
        elif isinstance(item, Withdraw) and 0 <= item.seat < self.players:
            self._withdrawn(self._seats[item.seat], item.reason, now)
        # A Tick brings only the time.

    def _is_over(self) -> bool:
        # A method, not a test of the attribute: the handlers that end the match change it.
        return self.status == "finished"

    # ---------------------------------------------------------------------------- what it shows

    def version_for(self, seat: int) -> int:
        """The state version as `seat` is told it (another seat's hidden answer does not move it)."""
        return self._changes.seats[seat]

    def seat_info(self) -> tuple[SeatInfo, ...]:
        """Each seat's bot name and whether it is connected."""
        return tuple(SeatInfo(s.seat, s.bot_name, s.stream is not None) for s in self._seats)

    def summary(self) -> tuple[SeatSummary, ...]:
        """Per-seat statistics: decisions, think times, timeouts, calls, bombs, points, bank."""
        return tuple(
            replace(counted.summary(slot.rate_limited, ms(slot.bank_s)), bot_name=slot.bot_name)
            for counted, slot in zip(self.tally.seats, self._seats, strict=True)
        )

    def statistics(self) -> dict[str, Any]:
        """Per-seat statistics as plain data (the wire's summary_json)."""
        seats = [line.to_json() for line in self.summary()]
        return {"match_id": self.match_id, "state_version": self.state_version, "seats": seats}

    def spectator_log(self, full: bool) -> tuple[Sequence[LogEntry], int]:
        """A spectator's log and how much of it may be shown now: public events
        `watch_delay_events` behind, or every event at once (`full`, and once the match is over)."""
        if full:
            return self.full_log, len(self.full_log)
        log = self.public_log
        if self._is_over():
            return log, len(log)
        return log, max(0, len(log) - self.header.watch_delay_events)

    # ---------------------------------------------------------------------------- outputs

    def _rel_ms(self, t: float) -> float:
        return round((t - self._created_at) * 1000, 1)

    def _iso(self, now: float) -> str:
        return iso_time(now + self._wall_offset)

    def _write(self, record: Record) -> None:
        self.tally.add(record)
        self._out.append(Write(record, self._chain.link(record.to_json())))

    def _note(self, level: str, event: str, **fields: Any) -> None:
        self._out.append(Note(level, event, fields))

    def _send(self, slot: SeatState, message: OutMessage) -> None:
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

    def _close(self, stream: StreamState, code: str | None, details: str = "") -> None:
        stream.status = code or "OK"
        self._out.append(Close(stream.id, code, details))

    # ---------------------------------------------------------------------------- clocks

    def _next_due(self) -> tuple[float, Callable[[Any, float], None], Any] | None:
        """The earliest deadline, what to do then and to what (of equal ones, the first found)."""
        at = math.inf
        handler: Callable[[Any, float], None] | None = None
        target: Any = None
        clock = self.clock
        if self.status == "running":
            for request in self._requests.open.values():
                if request.expires_at < at and request.kind is not DecisionKind.BOMB_WINDOW:
                    at, handler, target = request.expires_at, self._timed_out, request
            end = self._requests.window_end
            if end is not None and end < at:
                at, handler, target = end, self._window_expired, None
        if self.status == "waiting" and clock.start_timeout_ms > 0:
            start_by = self._waiting_since + clock.start_timeout_ms / 1000
            if start_by < at:
                at, handler, target = start_by, self._no_show, None
        for slot in self._seats:
            stream = slot.stream
            if stream is not None:
                if stream.ping_sent_at is not None:
                    stalled_at = stream.ping_sent_at + clock.heartbeat_timeout_ms / 1000
                    if stalled_at < at:
                        at, handler, target = stalled_at, self._stalled, stream
                if clock.heartbeat_interval_ms > 0 and stream.next_ping_at < at:
                    at, handler, target = stream.next_ping_at, self._ping, stream
            elif slot.away_since is not None and not slot.abandoned and self.status == "running":
                # Before the game starts a seat may come and go as it likes.
                grace_end = slot.away_since + clock.reconnect_grace_ms / 1000
                if grace_end < at:
                    at, handler, target = grace_end, self._grace_expired, slot
        return None if handler is None else (at, handler, target)

    def _next_due_at(self) -> float:
        due = None if self._is_over() else self._next_due()
        return math.inf if due is None else due[0]

    def _fire_due(self, limit: float, strictly_before: bool = False) -> float:
        """Act on the deadlines up to `limit` (or only those before it) in time order; the next
        deadline after them (math.inf if none), as `_next_due_at` would find it."""
        while not self._is_over():
            due = self._next_due()
            if due is None:
                return math.inf
            if due[0] > limit or (strictly_before and due[0] >= limit):
                return due[0]
            _, handler, target = due
            # Handled now, however late: what it sends leaves now, and its clocks start now.
            handler(target, limit)
        return math.inf

    def _ping(self, stream: StreamState, now: float) -> None:
        stream.nonce += 1
        self._send(self._seats[stream.seat], Ping(stream.nonce))
        if stream.ping_sent_at is None:
            stream.ping_sent_at = now
        # From now rather than from the last due time, so a clock that jumps sends one ping.
        stream.next_ping_at = now + self.clock.heartbeat_interval_ms / 1000

    def _stalled(self, stream: StreamState, now: float) -> None:
        timeout = self.clock.heartbeat_timeout_ms
        self._note("warning", "stream_stalled", seat=stream.seat, timeout_ms=timeout)
        self._close(stream, "UNAVAILABLE", f"no Pong (or any message) within {timeout} ms")
        self._disconnected(stream, "stalled", now)

    def _no_show(self, _: object, now: float) -> None:
        """The start timeout passed with seats still absent: their team forfeits (both absent:
        no winner)."""
        absent = [slot.seat for slot in self._seats if slot.stream is None]
        self._note("warning", "start_timed_out", absent=absent, start_timeout_ms=self.clock.start_timeout_ms)
        self._finish(now, Outcome.no_show(absent, self.clock.start_timeout_ms), absent=absent)

    def _withdrawn(self, slot: SeatState, why: str, now: float) -> None:
        if slot.stream is not None or slot.abandoned:
            return  # it is here after all (a new process connected), or already given up
        self._note("warning", "seat_withdrawn", seat=slot.seat, reason=why)
        if self.status == "waiting":
            self._finish(now, Outcome.withdrawn(slot.seat, why), absent=[slot.seat])
        elif slot.away_since is not None:
            self._grace_expired(slot, now)

    def _grace_expired(self, slot: SeatState, now: float) -> None:
        slot.abandoned = True
        self._note("warning", "reconnect_grace_expired", seat=slot.seat)
        self._write(Abandoned(slot.seat, self._rel_ms(now)))

    def _timed_out(self, request: OpenRequest, now: float) -> None:
        """A regular decision's time is up: the engine's default (R-DEF-1) and a violation."""
        seat = request.seat
        self._requests.close(request, "timed_out")
        self._seats[seat].bank_s = 0.0
        action = default_action(self.state, seat)
        record = self._violation(request, action, now)
        if self._is_over():
            return  # one timeout too many: the team forfeits, and the default is not taken
        state, events = apply_move(self.state, record)
        what = f"{describe_change(seat, action, self.state)} (a default after a timeout)"
        self._commit(state, events, what, action, now)

    def _window_expired(self, _: object, now: float) -> None:
        """The bomb window's time is up: the silent seats decline (R-DEF-1); then it resolves."""
        for seat in self.state.window:
            request = self._requests.open.get(seat)
            if request is None or request.kind is not DecisionKind.BOMB_WINDOW:
                continue
            self._requests.close(request, "timed_out")
            self._requests.window_answers[seat] = DECLINE
            self._violation(request, DECLINE, now)
            if self._is_over():
                return
        self._resolve_window(now)

    def _violation(self, request: OpenRequest, action: Action, now: float) -> ViolationRecord:
        """Record a timeout; the default `action` is then taken (a window's decline: held)."""
        seat = request.seat
        count = self.tally.seats[seat].timeouts + 1
        self._note(
            "warning",
            "decision_timed_out",
            seat=seat,
            request_id=request.request_id,
            kind=request.kind.value,
            default=str(action),
            violations=count,
        )
        rid, sent_ms, t_ms = request.request_id, self._rel_ms(request.sent_at), self._rel_ms(now)
        record = ViolationRecord(seat, rid, request.kind, self.state_version, sent_ms, action, count, t_ms)
        self._write(record)
        limit = self.clock.max_violations
        if limit and count > limit:
            self._finish(now, Outcome.out_of_time(seat, count, limit))
        return record

    # ---------------------------------------------------------------------------- seats

    def _stream_of(self, stream_id: int) -> StreamState | None:
        for slot in self._seats:
            if slot.stream is not None and slot.stream.id == stream_id:
                return slot.stream
        return None

    def _connect(self, item: Connect, now: float) -> None:
        slot = self._seats[item.seat]
        if slot.stream is not None:
            self._out.append(Refused(item.stream, f"seat {item.seat} is already connected"))
            return
        if slot.abandoned:
            self._out.append(
                Refused(item.stream, f"seat {item.seat} did not reconnect within the grace period")
            )
            return
        reconnect = slot.ever_connected
        slot.stream = StreamState(item.stream, item.seat, now, self.clock)
        slot.ever_connected = True
        slot.away_since = None
        if not slot.bot_name:
            slot.bot_name = item.bot_name
        slot.bot_version = item.bot_version
        slot.options = item.options
        self._out.append(Accepted(item.stream))
        self._send(slot, self._welcome(item.seat))
        self._send(slot, self._snapshot(item.seat, now))
        self._broadcast_status(item.seat, True)
        self._note("info", "seat_connected", seat=item.seat, bot_name=item.bot_name, reconnect=reconnect)
        self._write(Connected(item.seat, reconnect, item.bot_name, item.bot_version, self._rel_ms(now)))
        if self.status == "waiting" and all(s.stream is not None for s in self._seats):
            self._start_game(now)

    def _late_connection(self, item: Connect) -> None:
        """A stream opened after the match ended: the final picture and the result, then the end."""
        self._out.append(Accepted(item.stream))
        self._out.append(Send(item.stream, self._welcome(item.seat)))
        self._out.append(Send(item.stream, Snapshot(self.state_version, observe(self.state, item.seat), ())))
        if self.result is not None:
            self._out.append(Send(item.stream, ResultMessage(self.result)))
        self._out.append(Close(item.stream, None))

    def _disconnected(self, stream: StreamState, why: str, now: float) -> None:
        slot = self._seats[stream.seat]
        if slot.stream is not stream:
            return
        slot.stream = None
        slot.away_since = now
        slot.held.clear()  # a new stream starts from a Snapshot
        self._broadcast_status(stream.seat, False)
        self._note("info", "seat_disconnected", seat=stream.seat, why=why, status=stream.status)
        self._write(Disconnected(stream.seat, why, stream.status, self._rel_ms(now)))

    def _broadcast_status(self, seat: int, connected: bool) -> None:
        message = SeatStatus(seat, connected)
        for other in self._seats:
            if other.seat != seat:
                self._send(other, message)

    def _welcome(self, seat: int) -> Welcome:
        info = self.seat_info()
        team, commitment = team_of(seat), self.header.seed_commitment
        return Welcome(self.match_id, seat, team, self.config, self.clock, info, PROTOCOL_VERSION, commitment)

    def _snapshot(self, seat: int, now: float) -> Snapshot:
        """The seat's complete view and its open request, its clocks brought up to date."""
        request = self._requests.open.get(seat)
        pending = () if request is None else (self._requests.refreshed(request, now),)
        return Snapshot(self._changes.seats[seat], observe(self.state, seat), pending)

    def _start_game(self, now: float) -> None:
        self.status = "running"
        if self._resumed:
            self._note("info", "match_resumed", state_version=self.state_version)
        else:
            commitment = self.header.seed_commitment  # not the seed: format 2 keeps it secret
            self._note("info", "match_started", players=self.players, seed_commitment=commitment)
            seats = tuple(SeatStart(s.seat, s.bot_name, s.bot_version) for s in self._seats)
            self._write(Start(self._iso(now), seats, self._rel_ms(now)))
            # The deal's events describe state version 0, the state new_game returned.
            self._publish(self._initial_events, now)
            self._initial_events = []
        self._sync_requests(False, now)
        self._check_over(now)

    def _stop(self, reason: str) -> None:
        for slot in self._seats:
            if slot.stream is not None:
                self._close(slot.stream, "UNAVAILABLE", reason)
        self.status = "finished"
        self._out.append(Finished(None))

    # ---------------------------------------------------------------------------- messages

    def _received(self, item: Received, now: float) -> None:
        stream = self._stream_of(item.stream)
        if stream is None:
            return
        slot = self._seats[stream.seat]
        verdict = stream.bucket.take(now)
        if verdict != "ok":
            slot.rate_limited += 1
            if verdict == "flooding":
                self._note("warning", "stream_flooded", seat=stream.seat)
                self._close(stream, "RESOURCE_EXHAUSTED", f"too many messages (more than {RATE_PER_S:g}/s)")
                self._disconnected(stream, "flooded", now)
                return
            if slot.rate_limited == 1 or slot.rate_limited % 50 == 0:
                self._note("info", "message_rate_limited", seat=stream.seat, count=slot.rate_limited)
            # Not recorded in the replay: a flood would swamp it.
            dropped = f"more than {RATE_PER_S:g} messages a second; this one was dropped"
            version = self._changes.seats[slot.seat]
            self._send(slot, Rejection(RejectionReason.RATE_LIMITED, "", dropped, 0, version))
            return
        stream.ping_sent_at = None  # any message proves the stream is alive
        self._message(slot, item.message, now)

    def _message(self, slot: SeatState, message: Message, now: float) -> None:
        seat = slot.seat
        if isinstance(message, Ping):
            self._send(slot, Pong(message.nonce))
        elif isinstance(message, Pong):
            pass
        elif isinstance(message, Hello):
            self._refuse(
                seat,
                Refusal(RejectionReason.OUT_OF_ORDER, "a Hello is only the first message of a stream"),
                now,
            )
        elif self.status != "running":
            waiting = "the game has not started: waiting for every seat"
            self._refuse(seat, Refusal(RejectionReason.OUT_OF_ORDER, waiting), now)
        elif isinstance(message, Decision):
            checked = self._requests.check_decision(seat, message)
            if isinstance(checked, Refusal):
                self._refuse(seat, checked, now)
            else:
                self._answer(seat, *checked, now)
        elif isinstance(message, OutOfTurn):
            self._out_of_turn(seat, message, now)

    def _refuse(self, seat: int, refusal: Refusal, now: float) -> None:
        reason, message, rule, request_id = refusal.reason, refusal.message, refusal.rule, refusal.request_id
        self._note(
            "info",
            "decision_rejected",
            seat=seat,
            reason=reason.value,
            rule=rule or None,
            detail=message,
            request_id=request_id,
        )
        self._write(RejectionRecord(seat, reason.value, rule, message, request_id, self._rel_ms(now)))
        self._send(self._seats[seat], Rejection(reason, rule, message, request_id, self._changes.seats[seat]))

    def _refuse_error(self, seat: int, error: RulesError, now: float, request_id: int = 0) -> None:
        reason = RejectionReason.ILLEGAL if isinstance(error, IllegalActionError) else RejectionReason.INVALID
        self._refuse(seat, Refusal(reason, error.detail, error.rule or "", request_id), now)

    def _answer(self, seat: int, request: OpenRequest, action: Action, now: float) -> None:
        """An answer to the seat's open request: check it with the engine, then apply or hold it."""
        rid = request.request_id
        if request.kind is DecisionKind.BOMB_WINDOW:
            # A decline from a seat that owes the window is always legal (its request lists it first);
            # a bomb, its Tichu flag included (R-CALL-7), is checked on a copy that is dropped.
            if not isinstance(action, Decline):
                try:
                    apply(self.state, seat, action)
                except RulesError as error:
                    self._refuse_error(seat, error, now, rid)
                    return
            self._note("debug", "decision_accepted", seat=seat, request_id=rid, action=str(action))
            self._requests.hold(request, action, now)
            window = self.state.window
            answered = self._requests.window_answers
            if not self.clock.fixed_length_windows and all(s in answered for s in window):
                self._resolve_window(now)
            return
        slot = self._seats[seat]
        used = max(0.0, now - request.sent_at)
        # The grace absorbs network lag: only time beyond the limit and the grace costs bank.
        over = max(0.0, used - self.clock.grace_s - request.limit_s)
        bank_s = max(0.0, slot.bank_s - over)
        sent_ms, t_ms, used_ms = self._rel_ms(request.sent_at), self._rel_ms(now), round(used * 1000, 1)
        times = (sent_ms, t_ms, used_ms, ms(bank_s), t_ms)
        record = DecisionRecord(seat, rid, request.kind, self.state_version, action, *times)
        try:
            state, events = apply_move(self.state, record)
        except RulesError as error:
            self._refuse_error(seat, error, now, rid)
            return
        self._requests.close(request, "answered")
        slot.bank_s = bank_s
        self._note("debug", "decision_accepted", seat=seat, request_id=rid, action=str(action))
        self._write(record)
        self._commit(state, events, describe_change(seat, action, self.state), action, now)

    def _resolve_window(self, now: float) -> None:
        """Every window seat has answered (or the window ended): apply the answers together (R-BOMB-9)."""
        if self.status != "running" or not self.state.window:
            return
        order = self.state.window
        answers: dict[int, Action] = {s: self._requests.window_answers.get(s, DECLINE) for s in order}
        try:
            outcome = resolve_window(self.state, answers)
        except RulesError as error:
            # Each answer was checked when it came, and the engine allows for a call made since;
            # should it fail all the same, decline instead.
            shown = {s: str(a) for s, a in answers.items()}
            self._note("error", "window_answers_invalid", answers=shown, error=str(error))
            answers = dict.fromkeys(order, DECLINE)
            outcome = resolve_window(self.state, answers)
        opened_at = self._requests.window_opened_at
        opened_ms = None if opened_at is None else self._rel_ms(opened_at)
        times = self._requests.window_times
        record = WindowRecord.of(
            self.state_version,
            order,
            answers,
            opened_ms,
            times,
            outcome.call,
            outcome.bomb,
            self._rel_ms(now),
            self._requests.referee_declined,
        )
        self._write(record)
        if record.discarded:
            self._note(
                "info", "window_bombs_discarded", bomber=outcome.bomb, discarded=list(record.discarded)
            )
        what = "the bomb window closing" if outcome.bomb is None else f"a bomb by seat {outcome.bomb}"
        self._commit(outcome.state, outcome.events, what, None, now)

    def _out_of_turn(self, seat: int, message: OutOfTurn, now: float) -> None:
        """A bomb or a Tichu call sent at any moment: accepted only while the rules allow it."""
        checked = self._requests.check_out_of_turn(seat, message)
        if isinstance(checked, Refusal):
            self._refuse(seat, checked, now)
            return
        action = checked
        if isinstance(action, CallTichu):
            record = CallRecord(seat, self.state_version, self._rel_ms(now), action, self._rel_ms(now))
            try:
                state, events = apply_move(self.state, record)
            except RulesError as error:
                self._refuse_error(seat, error, now)
                return
            self._note("info", "tichu_called", seat=seat)
            self._write(record)
            self._commit(state, events, describe_change(seat, action, self.state), action, now)
            return
        request = self._requests.open.get(seat)
        if request is not None and request.kind in (DecisionKind.BOMB_WINDOW, DecisionKind.PLAY):
            # In an open window the bomb is this seat's answer; on its own turn, its play.
            answer = check_answer(request, action)
            if isinstance(answer, Refusal):
                self._refuse(seat, answer, now)
            else:
                self._answer(seat, request, answer, now)
            return
        if seat in self._requests.window_answers:
            answered = Refusal(
                RejectionReason.ILLEGAL, "you have already answered this bomb window", "R-BOMB-9"
            )
            self._refuse(seat, answered, now)
            return
        try:
            apply(self.state, seat, action)
        except RulesError as error:
            self._refuse_error(seat, error, now)
            return
        # Unreachable while every seat that may act has a request; refuse rather than guess.
        self._refuse(
            seat, Refusal(RejectionReason.ILLEGAL, "no decision of yours is open now", "R-BOMB-9"), now
        )

    # ---------------------------------------------------------------------------- changes

    def _commit(
        self, state: State, events: list[Event], what: str, action: Action | None, now: float
    ) -> None:
        """Make `state` current: a new version, the events out to those who may see them, requests."""
        old = self.state
        self.state = state
        self.state_version += 1
        self._changes.add(state, self.state_version, what)
        self._publish(events, now)
        # A Tichu call changes nobody's decision, and in the simultaneous phases one seat's answer
        # leaves the others' questions as they were: those requests stay open, with their clocks.
        call_only = isinstance(action, CallTichu) and old.phase in (Phase.PLAY, Phase.EXCHANGE)
        same_phase = old.round == state.round and old.phase is state.phase
        self._sync_requests(same_phase and (call_only or state.phase in SIMULTANEOUS), now)
        self._check_over(now)

    def _log_event(self, event: Event, version: int, data: dict[str, Any]) -> LogEntry:
        """Add an event to the spectators' logs: the public one is told no hidden answer either,
        so its version is the lowest any seat is told."""
        entry = LogEntry(version, data["type"], json.dumps(data, separators=(",", ":")))
        self.full_log.append(entry)
        if event.private_to is None:
            self.public_log.append(replace(entry, state_version=min(version, *self._changes.seats)))
        return entry

    def _publish(self, events: Sequence[Event], now: float) -> None:
        version, seen = self.state_version, self._changes.seats  # the record's, and each seat's
        t_ms = self._rel_ms(now)
        out = self._out
        for event in events:
            data = event.to_json()
            entry = self._log_event(event, version, data)
            self._write(EventRecord.of(version, event, t_ms, data, entry.json))
            for slot in self._seats:
                if event.visible_to(slot.seat):
                    slot.seq += 1
                    if slot.stream is not None:
                        message = EventMessage(slot.seq, seen[slot.seat], entry.type, entry.json)
                        if slot.options.defer_events:
                            slot.held.append(message)
                        else:
                            out.append(Send(slot.stream.id, message))
            if entry.type == "round_scored":  # the end of a round: nobody's events wait past it
                for slot in self._seats:
                    slot.release(out)

    def _sync_requests(self, keep: bool, now: float) -> None:
        """Cancel requests that no longer apply and send one to every seat that owes a decision."""
        requests = self._requests
        owed_now = to_act(self.state) if self.status == "running" else ()
        for seat, request in list(requests.open.items()):
            if not keep or seat not in owed_now:
                self._cancel(request, "answered" if keep else "the game moved on")
        if not keep:
            requests.clear_window()
        # Window requests go out together, in window order, whatever the hands hold (R-BOMB-5),
        # stamped with one clock reading so that they are alike but for the seat's own options.
        for seat in owed_now:
            if seat not in requests.open and seat not in requests.window_answers:
                kind = owed(self.state, seat)
                assert kind is not None, f"seat {seat} owes no decision"
                slot = self._seats[seat]
                declined = slot.options.referee_declines and kind is DecisionKind.BOMB_WINDOW
                if declined and requests.decline_for(self.state, seat, now):
                    continue
                passes = slot.options.referee_passes and kind is DecisionKind.PLAY
                if passes and isinstance(sole_action(self.state, seat), Pass):
                    # The pass moves the game on, and syncs the requests of the state it makes.
                    self._pass_for(slot, now)
                    return
                self._send(slot, requests.issue(self.state, seat, kind, slot.bank_s, now))
        # Declined for every seat: nobody is waited for (a fixed-length window runs to its end).
        if requests.declined_for_all(self.state.window) and not self.clock.fixed_length_windows:
            self._resolve_window(now)

    def _pass_for(self, slot: SeatState, now: float) -> None:
        """Pass for a seat that asked for it (Hello.referee_passes) and could only pass: no
        request, no time used; the record says so, and a rerun checks that passing was all it could
        do (R-TRICK-3: the turn moves on as after any pass)."""
        t_ms, seat = self._rel_ms(now), slot.seat
        times = (t_ms, t_ms, 0.0, ms(slot.bank_s), t_ms)
        record = DecisionRecord(seat, 0, DecisionKind.PLAY, self.state_version, PASS, *times, by_referee=True)
        state, events = apply_move(self.state, record)
        self._write(record)
        self._commit(state, events, describe_change(seat, PASS, self.state), PASS, now)

    def _cancel(self, request: OpenRequest, reason: str) -> None:
        self._requests.close(request, "cancelled")
        self._send(self._seats[request.seat], Cancelled(request.request_id, reason))

    # ---------------------------------------------------------------------------- the end

    def _check_over(self, now: float) -> None:
        if self.status == "running" and self.state.is_over:
            self._finish(now, Outcome.played_out(self.state.winner, self.state.scores))

    def _finish(self, now: float, outcome: Outcome, absent: Sequence[int] = ()) -> None:
        for request in list(self._requests.open.values()):
            self._cancel(request, "the match is over")
        self.status = "finished"
        summary = self.summary()
        state = self.state
        scores = (state.scores[0], state.scores[1])
        self._note(
            "info",
            "match_finished",
            winner=outcome.winner,
            scores=list(scores),
            forfeit=outcome.forfeit,
            termination=outcome.termination.value,
            reason=outcome.reason,
        )
        record = ResultRecord.of(
            outcome,
            scores=scores,
            finished_at=self._iso(now),
            rounds=state.round + 1,
            summary=summary,
            absent=tuple(absent),
            t_ms=self._rel_ms(now),
        )
        lines, signature = self._chain.close(record, self.secret, self._sign)
        for line, h in lines:
            self.tally.add(line)
            self._out.append(Write(line, h))
        result = MatchResult(
            match_id=self.match_id,
            outcome=outcome,
            scores=scores,
            round_scores=round_scores(state.history, scores),
            state_version=self.state_version,
            summary=summary,
            chain_head=self._chain.head or "" if self._chain.chained else "",
            signature=signature,
        )
        self.result = result
        for slot in self._seats:
            if slot.stream is not None:
                self._send(slot, ResultMessage(result))
                self._close(slot.stream, None)
                slot.stream = None
        self._out.append(Finished(result))


__all__ = ["LogEntry", "Match"]
