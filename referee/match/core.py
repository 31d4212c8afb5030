"""The match core: one match as a pure, synchronous state machine.

`Match.handle(input, now)` takes one input (a stream connects or ends, a message arrives, a
request leaves, the time passes) and returns outputs (what to send to which stream, records to
write, lines to log, the end). Time is an argument: `now` is a monotonic clock in seconds, and
`next_deadline()` says when the match next needs a Tick.

A match has two halves. Its links (links.py) keep the seats linked to their players: streams
connecting and ending, greetings, heartbeats, the flood limiter, the reconnect grace and the start
timeout. This module decides: who is asked what and when (requests and their clocks), what a move
does (committed, published to those who may see it), how the match ends and what it shows; its
rulings (rulings.py) judge what the seats send and what their silence means. All of them write
through one Outbox and offer their deadlines to one Agenda.

Inputs are taken one at a time, in the order given, each after the deadlines that passed before
it arrived: two racing messages are resolved here, the same way every time.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from enum import StrEnum
from typing import Any

from referee.match.clock import Agenda, ms
from referee.match.jsonbytes import ascii_json
from referee.match.links import Links, SeatPhase, SeatState
from referee.match.messages import (
    Cancelled,
    Connect,
    Delivered,
    Disconnect,
    Drop,
    End,
    EventMessage,
    Finished,
    Input,
    LogEntry,
    MatchResult,
    Message,
    Output,
    Received,
    Refused,
    SeatClock,
    SeatInfo,
    Snapshot,
    Stop,
    Welcome,
    Withdraw,
    Write,
)
from referee.match.moves import Rerun, apply_move, initial_state, rerun, sole_action
from referee.match.outbox import Outbox
from referee.match.outcome import Outcome, round_scores
from referee.match.proof import Chain, SeedSecret, Signer, new_header
from referee.match.records import (
    PROTOCOL_VERSION,
    DecisionRecord,
    EventRecord,
    Header,
    Record,
    ResultRecord,
    ResumeRecord,
    SeatStart,
    Start,
)
from referee.match.requests import (
    PASS,
    SIMULTANEOUS,
    OpenRequest,
    Requests,
    RequestState,
    describe_change,
)
from referee.match.rulings import Rulings
from referee.match.summary import SeatSummary
from referee.match.tally import Tally
from referee.rules import (
    Action,
    CallTichu,
    DecisionKind,
    Event,
    Pass,
    Phase,
    State,
    observe,
    owed,
    team_of,
    to_act,
)


class MatchStatus(StrEnum):
    """Where a match is: waiting for its seats, running, or over."""

    WAITING = "waiting"
    RUNNING = "running"
    FINISHED = "finished"


# The statuses a match may go to from each status.
_NEXT_STATUS = {
    MatchStatus.WAITING: (MatchStatus.RUNNING, MatchStatus.FINISHED),
    MatchStatus.RUNNING: (MatchStatus.FINISHED,),
    MatchStatus.FINISHED: (),
}


class Match:
    """One match, driven by `handle(input, now)`; see the module's docstring.

    `header` says what the match is (make it with `Match.header_for`); `now` is the monotonic time
    of its creation and `wall` the calendar time then (seconds since the epoch), from which the
    replay's timestamps are made. A format-2 header needs the `secret` it commits to; `sign`
    signs the chain's head at the end. `Match.resume` continues an unfinished replay instead.
    """

    def __init__(
        self,
        header: Header,
        *,
        now: float,
        wall: float,
        secret: SeedSecret | None = None,
        sign: Signer | None = None,
    ) -> None:
        self._open(header, now=now, wall=wall, secret=secret, sign=sign, head=None)
        first = replace(header, t_ms=self._outbox.rel_ms(now))
        self._outbox.out.append(Write(first, self._outbox.chain.link(first.to_json())))
        self._due_at = self._next_due_at()

    def _open(
        self,
        header: Header,
        *,
        now: float,
        wall: float,
        secret: SeedSecret | None,
        sign: Signer | None,
        head: str | None,
    ) -> None:
        """Set up a match of `header` before its first line (a new match's header, a resumed
        one's resume record)."""
        if header.chained and (secret is None or secret.commitment != header.seed_commitment):
            raise ValueError("a tichu-replay/2 match needs the seed and salt its header commits to")
        self.header = header
        self.secret = secret  # the seed and salt: the referee's alone until the reveal
        self._sign = sign
        self.match_id = header.match_id
        self.clock = header.clock
        state, events = initial_state(header, None if secret is None else secret.seed)
        self.state: State = state
        self.config = state.config
        self.players = self.config.players
        self.state_version = 0
        self.status = MatchStatus.WAITING
        self.result: MatchResult | None = None
        names = [header.seats[s].bot_name if s < len(header.seats) else "" for s in range(self.players)]
        self._outbox = Outbox(Chain(header.chained, head), Tally(self.players, names), now=now, wall=wall)
        self._links = Links(names, self.clock, self._outbox, self, now=now)
        self._seats = self._links.seats
        self._requests = Requests(self.clock, state)
        self._changes = self._requests.changes  # and the version each seat is told
        self._rulings = Rulings(self, self.clock, self._requests, self._outbox, self._links)
        # Every event, and the public ones: a watcher's seq is the position in its log.
        self.public_log: list[LogEntry] = []
        self.full_log: list[LogEntry] = []
        self._initial_events = events
        self._resumed = False

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
        match = cls.__new__(cls)
        match._open(header, now=now, wall=wall, secret=secret, sign=sign, head=head)
        match._restore(run, now)
        match._due_at = match._next_due_at()
        return match

    def _restore(self, run: Rerun, now: float) -> None:
        """Take over an unfinished replay's game: its state, counts, logs, request ids, times."""
        self.state = run.state
        self.state_version = run.version
        if run.version:
            self._changes.add(run.state, run.version, f"{run.moves} moves before the referee restarted")
        self._requests.next_id = run.max_request_id + 1
        outbox = self._outbox
        # Times in the file go on from where they stopped, as if the match had never paused.
        outbox.created_at = now - run.last_t_ms / 1000
        outbox.tally = run.tally  # counted from the same records, as the live match counts them
        for index, (version, event) in enumerate([*run.events, *run.unwritten]):
            data = event.to_json()
            self._log_event(event, version, data)
            if index >= len(run.events):
                # The replay was cut off between a move and its events: the move is in the state,
                # so its events are written now, or the file would never re-run.
                outbox.write(EventRecord.of(version, event, run.last_t_ms, data))
            for slot in self._seats:
                if event.visible_to(slot.seat):
                    slot.seq += 1
        for counted in run.tally.seats:
            slot = self._seats[counted.seat]
            slot.bot_name = slot.bot_name or counted.bot_name
            slot.bot_version = counted.bot_version
            if run.started:
                slot.move(SeatPhase.AWAY)  # each seat had been here: its coming back reconnects it
            if counted.bank_left_ms is not None:
                slot.bank_s = counted.bank_left_ms / 1000
        if run.started:
            self._initial_events = []
            self._resumed = True
        outbox.write(ResumeRecord(version=run.version, resumed_at=outbox.iso(now), t_ms=outbox.rel_ms(now)))

    @property
    def tally(self) -> Tally:
        """The per-seat counts of every record written so far."""
        return self._outbox.tally

    # ---------------------------------------------------------------------------- the interface

    def drain(self) -> list[Output]:
        """The outputs made outside `handle` (the header or resume record at creation)."""
        return self._outbox.drain()

    def next_deadline(self) -> float | None:
        """When the match next needs a Tick (monotonic seconds), or None if it never will."""
        return None if self._due_at == math.inf else self._due_at

    def handle(self, item: Input, now: float) -> list[Output]:
        """Take one input at `now`: the deadlines that passed before it first, then the input,
        then the deadlines due now. The outputs, in the order they were made."""
        if isinstance(item, Connect) and not 0 <= item.seat < self.players:
            self._outbox.out.append(Refused(item.stream, f"there is no seat {item.seat}"))
        elif isinstance(item, Delivered):
            # Only moves a clock forward: nothing falls due because of it.
            stream = self._links.stream_of(item.stream)
            if stream is not None and self._requests.delivered(stream.seat, item.request_id, now):
                self._due_at = self._next_due_at()
        elif self.over:
            if isinstance(item, Connect):
                self._late_connection(item)
        else:
            try:
                if self._due_at < now:
                    self._fire_due(now, strictly_before=True)
                if not self.over:
                    self._dispatch(item, now)
                elif isinstance(item, Connect):
                    self._late_connection(item)  # a deadline before it ended the match
                # The search that finds nothing more due finds the next deadline too: one pass per input.
                self._due_at = self._fire_due(now)
            except Exception as error:
                # A bug here must not leave the bots waiting for ever: end the match, loudly.
                self._outbox.note("error", "match_failed", input=type(item).__name__, error=repr(error))
                if not self.over:
                    self._finish(now, Outcome.referee_error(error))
                self._due_at = self._next_due_at()
        return self._outbox.drain()

    def _dispatch(self, item: Input, now: float) -> None:
        links = self._links
        if isinstance(item, Received):
            links.received(item, now)
        elif isinstance(item, Connect):
            links.connect(item, now)
        elif isinstance(item, Disconnect | End):
            stream = links.stream_of(item.stream)
            if stream is not None and isinstance(item, End):
                links.close(stream, item.code, item.details)
            elif stream is not None:
                links.disconnected(stream, "stream ended", now)
        elif isinstance(item, Drop):
            links.drop(item.seat, item.details)
        elif isinstance(item, Stop):
            self._stop(item.reason)
        elif isinstance(item, Withdraw) and 0 <= item.seat < self.players:
            links.withdraw(item.seat, item.reason, now)
        # A Tick brings only the time.

    @property
    def over(self) -> bool:
        """Whether the match has ended (a property, not a test of the attribute: the handlers
        that end the match change it under a caller's feet)."""
        return self.status is MatchStatus.FINISHED

    def _move(self, status: MatchStatus) -> None:
        assert status in _NEXT_STATUS[self.status], f"match {self.match_id}: {self.status} -> {status}"
        self.status = status

    # ---------------------------------------------------------------------------- what it shows

    def version_for(self, seat: int) -> int:
        """The state version as `seat` is told it (another seat's hidden answer does not move it)."""
        return self._changes.seats[seat]

    def seat_info(self) -> tuple[SeatInfo, ...]:
        """Each seat's bot name and whether it is connected."""
        return self._links.seat_info()

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
        if self.over:
            return log, len(log)
        return log, max(0, len(log) - self.header.watch_delay_events)

    def clocks(self, now: float, full: bool) -> tuple[SeatClock, ...]:
        """The decisions being waited for now and their clocks, in seat order: what a viewer's
        clock shows. A bomb window asks every seat at once and is left out; a delayed public view
        (`watch_delay_events`) gets none, since who is asked now is ahead of what it may show."""
        if not self.running or (not full and self.header.watch_delay_events):
            return ()
        return tuple(
            SeatClock(r.seat, r.kind.value, max(0.0, now - r.sent_at), r.limit_s, r.bank_s)
            for r in sorted(self._requests.open.values(), key=lambda r: r.seat)
            if r.kind is not DecisionKind.BOMB_WINDOW
        )

    # ---------------------------------------------------------------------------- the links' questions

    @property
    def running(self) -> bool:
        """Whether the game is under way."""
        return self.status is MatchStatus.RUNNING

    @property
    def waiting(self) -> bool:
        """Whether the match waits for its seats."""
        return self.status is MatchStatus.WAITING

    def greeting(self, seat: int, now: float) -> tuple[Welcome, Snapshot]:
        """A new stream's Welcome, and the seat's complete view with its open request, its clocks
        brought up to date."""
        request = self._requests.open.get(seat)
        pending = () if request is None else (self._requests.refreshed(request, now),)
        return self._welcome(seat), Snapshot(self._changes.seats[seat], observe(self.state, seat), pending)

    def _welcome(self, seat: int) -> Welcome:
        return Welcome(
            match_id=self.match_id,
            seat=seat,
            team=team_of(seat),
            config=self.config,
            clock=self.clock,
            seats=self._links.seat_info(),
            protocol_version=PROTOCOL_VERSION,
            seed_commitment=self.header.seed_commitment,
        )

    def seated(self, now: float) -> None:
        """Every seat is here: the game starts (or goes on, resumed)."""
        self._move(MatchStatus.RUNNING)
        outbox = self._outbox
        if self._resumed:
            outbox.note("info", "match_resumed", state_version=self.state_version)
        else:
            commitment = self.header.seed_commitment  # not the seed: format 2 keeps it secret
            outbox.note("info", "match_started", players=self.players, seed_commitment=commitment)
            seats = tuple(SeatStart(s.seat, s.bot_name, s.bot_version) for s in self._seats)
            outbox.write(Start(started_at=outbox.iso(now), seats=seats, t_ms=outbox.rel_ms(now)))
            # The deal's events describe state version 0, the state new_game returned.
            self._publish(self._initial_events, now)
            self._initial_events = []
        self._sync_requests(False, now)
        self._check_over(now)

    def message(self, seat: int, message: Message, now: float) -> None:
        """A message from `seat` that its link let through: the rulings' to judge."""
        self._rulings.message(seat, message, now)

    def end(self, now: float, outcome: Outcome, absent: Sequence[int] = ()) -> None:
        """End the match with `outcome`."""
        self._finish(now, outcome, absent)

    def _late_connection(self, item: Connect) -> None:
        """A stream opened after the match ended: the final picture and the result, then the end."""
        final = Snapshot(self.state_version, observe(self.state, item.seat), ())
        self._links.greet_late(item, (self._welcome(item.seat), final), self.result)

    def _stop(self, reason: str) -> None:
        self._links.finish(None, reason)
        self._move(MatchStatus.FINISHED)
        self._outbox.out.append(Finished(None))

    # ---------------------------------------------------------------------------- deadlines

    def _agenda(self) -> Agenda:
        """Every deadline the match has now: its requests' and window's, then the links'."""
        agenda = Agenda()
        if self.status is MatchStatus.RUNNING:
            for request in self._requests.open.values():
                if request.kind is not DecisionKind.BOMB_WINDOW:
                    agenda.offer(request.expires_at, self._rulings.timed_out, request)
            end = self._requests.window_end
            if end is not None:
                agenda.offer(end, self._rulings.window_expired, None)
        self._links.offer(agenda)
        return agenda

    def _next_due_at(self) -> float:
        return math.inf if self.over else self._agenda().at

    def _fire_due(self, limit: float, strictly_before: bool = False) -> float:
        """Act on the deadlines up to `limit` (or only those before it) in time order; the next
        deadline after them (math.inf if none), as `_next_due_at` would find it."""
        while not self.over:
            due = self._agenda()
            if due.handler is None:
                return math.inf
            if due.at > limit or (strictly_before and due.at >= limit):
                return due.at
            # Handled now, however late: what it sends leaves now, and its clocks start now.
            due.handler(due.target, limit)
        return math.inf

    # ---------------------------------------------------------------------------- changes

    def commit(self, state: State, events: list[Event], what: str, action: Action | None, now: float) -> None:
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
        entry = LogEntry(version, data["type"], ascii_json(data))
        self.full_log.append(entry)
        if event.private_to is None:
            self.public_log.append(replace(entry, state_version=min(version, *self._changes.seats)))
        return entry

    def _publish(self, events: Sequence[Event], now: float) -> None:
        version, seen = self.state_version, self._changes.seats  # the record's, and each seat's
        t_ms = self._outbox.rel_ms(now)
        links = self._links
        for event in events:
            data = event.to_json()
            entry = self._log_event(event, version, data)
            self._outbox.write(EventRecord.of(version, event, t_ms, data, entry.json))
            for slot in self._seats:
                if event.visible_to(slot.seat):
                    slot.seq += 1
                    links.deliver(
                        slot.seat, EventMessage(slot.seq, seen[slot.seat], entry.type, entry.json, event)
                    )
            if entry.type == "round_scored":  # the end of a round: nobody's events wait past it
                links.release_all()

    def _sync_requests(self, keep: bool, now: float) -> None:
        """Cancel requests that no longer apply and send one to every seat that owes a decision."""
        requests = self._requests
        owed_now = to_act(self.state) if self.status is MatchStatus.RUNNING else ()
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
                self._links.send(slot, requests.issue(self.state, seat, kind, slot.bank_s, now))
        # Declined for every seat: nobody is waited for (a fixed-length window runs to its end).
        if requests.declined_for_all(self.state.window) and not self.clock.fixed_length_windows:
            self._rulings.resolve_window(now)

    def _pass_for(self, slot: SeatState, now: float) -> None:
        """Pass for a seat that asked for it (Hello.referee_passes) and could only pass: no
        request, no time used; the record says so, and a rerun checks that passing was all it could
        do (R-TRICK-3: the turn moves on as after any pass)."""
        t_ms = self._outbox.rel_ms(now)
        record = DecisionRecord(
            seat=slot.seat,
            request_id=0,
            decision=DecisionKind.PLAY,
            version=self.state_version,
            action=PASS,
            sent_ms=t_ms,
            received_ms=t_ms,
            time_used_ms=0.0,
            bank_left_ms=ms(slot.bank_s),
            t_ms=t_ms,
            by_referee=True,
        )
        state, events = apply_move(self.state, record)
        self._outbox.write(record)
        self.commit(state, events, describe_change(slot.seat, PASS, self.state), PASS, now)

    def _cancel(self, request: OpenRequest, reason: str) -> None:
        self._requests.close(request, RequestState.CANCELLED)
        self._links.send(self._seats[request.seat], Cancelled(request.request_id, reason))

    # ---------------------------------------------------------------------------- the end

    def _check_over(self, now: float) -> None:
        if self.status is MatchStatus.RUNNING and self.state.is_over:
            self._finish(now, Outcome.played_out(self.state.winner, self.state.scores))

    def _finish(self, now: float, outcome: Outcome, absent: Sequence[int] = ()) -> None:
        for request in list(self._requests.open.values()):
            self._cancel(request, "the match is over")
        self._move(MatchStatus.FINISHED)
        summary = self.summary()
        state = self.state
        scores = (state.scores[0], state.scores[1])
        outbox = self._outbox
        outbox.note(
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
            finished_at=outbox.iso(now),
            rounds=state.round + 1,
            summary=summary,
            absent=tuple(absent),
            t_ms=outbox.rel_ms(now),
        )
        chain = outbox.chain
        lines, signature = chain.close(record, self.secret, self._sign)
        for line, h in lines:
            outbox.tally.add(line)
            outbox.out.append(Write(line, h))
        result = MatchResult(
            match_id=self.match_id,
            outcome=outcome,
            scores=scores,
            round_scores=round_scores(state.history, scores),
            state_version=self.state_version,
            summary=summary,
            chain_head=chain.head or "" if chain.chained else "",
            signature=signature,
        )
        self.result = result
        self._links.finish(result)
        outbox.out.append(Finished(result))


__all__ = ["Match", "MatchStatus"]
