"""Rulings: what a match makes of what its seats send, and of their silence.

An answer to a request is checked (its kind here, its legality by `referee.rules`) and applied,
or held while its bomb window is open; a window resolves when every seat has answered or its time
is up (R-BOMB-9); a Tichu call or a bomb may come out of turn; anything refused is a Rejection, a
replay record and a log line. A request whose time runs out takes the engine's default (R-DEF-1)
and counts a violation, and one violation too many ends the match. The match core (core.py) owns
the state and the requests; it hands each message here and takes back the moves to commit.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from referee.match.clock import ClockSettings, ms
from referee.match.links import Links
from referee.match.messages import (
    Decision,
    Hello,
    Message,
    OutOfTurn,
    Ping,
    Pong,
    Rejection,
    RejectionReason,
)
from referee.match.moves import apply_move, resolve_window
from referee.match.outbox import Outbox
from referee.match.outcome import Outcome
from referee.match.records import CallRecord, DecisionRecord, RejectionRecord, ViolationRecord, WindowRecord
from referee.match.requests import (
    DECLINE,
    OpenRequest,
    Refusal,
    Requests,
    RequestState,
    check_answer,
    describe_change,
)
from referee.rules import (
    Action,
    CallTichu,
    DecisionKind,
    Decline,
    Event,
    IllegalActionError,
    RulesError,
    State,
    apply,
    default_action,
)


class Game(Protocol):
    """What the rulings ask of the match core: its state, and to make a move or end the match."""

    state: State
    state_version: int

    @property
    def running(self) -> bool:
        """Whether the game is under way."""
        ...

    @property
    def over(self) -> bool:
        """Whether the match has ended."""
        ...

    def commit(self, state: State, events: list[Event], what: str, action: Action | None, now: float) -> None:
        """Make `state`, which `events` led to, the current one."""
        ...

    def end(self, now: float, outcome: Outcome, absent: Sequence[int] = ()) -> None:
        """End the match with `outcome`."""
        ...


class Rulings:
    """The answers, windows, out-of-turn moves, refusals and timeouts of one match."""

    def __init__(
        self, game: Game, clock: ClockSettings, requests: Requests, outbox: Outbox, links: Links
    ) -> None:
        self._game = game
        self._clock = clock
        self._requests = requests
        self._outbox = outbox
        self._links = links

    def timed_out(self, request: OpenRequest, now: float) -> None:
        """A regular decision's time is up: the engine's default (R-DEF-1) and a violation."""
        seat = request.seat
        self._requests.close(request, RequestState.TIMED_OUT)
        self._links.seats[seat].bank_s = 0.0
        action = default_action(self._game.state, seat)
        record = self._violation(request, action, now)
        if self._game.over:
            return  # one timeout too many: the team forfeits, and the default is not taken
        state, events = apply_move(self._game.state, record)
        what = f"{describe_change(seat, action, self._game.state)} (a default after a timeout)"
        self._game.commit(state, events, what, action, now)

    def window_expired(self, _: object, now: float) -> None:
        """The bomb window's time is up: the silent seats decline (R-DEF-1); then it resolves."""
        for seat in self._game.state.window:
            request = self._requests.open.get(seat)
            if request is None or request.kind is not DecisionKind.BOMB_WINDOW:
                continue
            self._requests.close(request, RequestState.TIMED_OUT)
            self._requests.window_answers[seat] = DECLINE
            self._violation(request, DECLINE, now)
            if self._game.over:
                return
        self.resolve_window(now)

    def _violation(self, request: OpenRequest, action: Action, now: float) -> ViolationRecord:
        """Record a timeout; the default `action` is then taken (a window's decline: held)."""
        seat = request.seat
        count = self._outbox.tally.seats[seat].timeouts + 1
        self._outbox.note(
            "warning",
            "decision_timed_out",
            seat=seat,
            request_id=request.request_id,
            kind=request.kind.value,
            default=str(action),
            violations=count,
        )
        record = ViolationRecord(
            seat=seat,
            request_id=request.request_id,
            decision=request.kind,
            version=self._game.state_version,
            sent_ms=self._outbox.rel_ms(request.sent_at),
            default=action,
            count=count,
            t_ms=self._outbox.rel_ms(now),
        )
        self._outbox.write(record)
        limit = self._clock.max_violations
        if limit and count > limit:
            self._game.end(now, Outcome.out_of_time(seat, count, limit))
        return record

    def message(self, seat: int, message: Message, now: float) -> None:
        """A message from `seat` that its link let through."""
        slot = self._links.seats[seat]
        if isinstance(message, Ping):
            self._links.send(slot, Pong(message.nonce))
        elif isinstance(message, Pong):
            pass
        elif isinstance(message, Hello):
            self._refuse(
                seat,
                Refusal(RejectionReason.OUT_OF_ORDER, "a Hello is only the first message of a stream"),
                now,
            )
        elif not self._game.running:
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
        self._outbox.note(
            "info",
            "decision_rejected",
            seat=seat,
            reason=reason.value,
            rule=rule or None,
            detail=message,
            request_id=request_id,
        )
        record = RejectionRecord(
            seat=seat,
            reason=reason.value,
            rule=rule,
            message=message,
            request_id=request_id,
            t_ms=self._outbox.rel_ms(now),
        )
        self._outbox.write(record)
        rejection = Rejection(reason, rule, message, request_id, self._requests.changes.seats[seat])
        self._links.send(self._links.seats[seat], rejection)

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
                    apply(self._game.state, seat, action)
                except RulesError as error:
                    self._refuse_error(seat, error, now, rid)
                    return
            self._outbox.note("debug", "decision_accepted", seat=seat, request_id=rid, action=str(action))
            self._requests.hold(request, action, now)
            window = self._game.state.window
            answered = self._requests.window_answers
            if not self._clock.fixed_length_windows and all(s in answered for s in window):
                self.resolve_window(now)
            return
        slot = self._links.seats[seat]
        used = max(0.0, now - request.sent_at)
        # The grace absorbs network lag: only time beyond the limit and the grace costs bank.
        over = max(0.0, used - self._clock.grace_s - request.limit_s)
        bank_s = max(0.0, slot.bank_s - over)
        t_ms = self._outbox.rel_ms(now)
        record = DecisionRecord(
            seat=seat,
            request_id=rid,
            decision=request.kind,
            version=self._game.state_version,
            action=action,
            sent_ms=self._outbox.rel_ms(request.sent_at),
            received_ms=t_ms,
            time_used_ms=round(used * 1000, 1),
            bank_left_ms=ms(bank_s),
            t_ms=t_ms,
        )
        try:
            state, events = apply_move(self._game.state, record)
        except RulesError as error:
            self._refuse_error(seat, error, now, rid)
            return
        self._requests.close(request, RequestState.ANSWERED)
        slot.bank_s = bank_s
        self._outbox.note("debug", "decision_accepted", seat=seat, request_id=rid, action=str(action))
        self._outbox.write(record)
        self._game.commit(state, events, describe_change(seat, action, self._game.state), action, now)

    def resolve_window(self, now: float) -> None:
        """Every window seat has answered (or the window ended): apply the answers together (R-BOMB-9)."""
        if not self._game.running or not self._game.state.window:
            return
        requests = self._requests
        order = self._game.state.window
        answers: dict[int, Action] = {s: requests.window_answers.get(s, DECLINE) for s in order}
        try:
            outcome = resolve_window(self._game.state, answers)
        except RulesError as error:
            # Each answer was checked when it came, and the engine allows for a call made since;
            # should it fail all the same, decline instead.
            shown = {s: str(a) for s, a in answers.items()}
            self._outbox.note("error", "window_answers_invalid", answers=shown, error=str(error))
            answers = dict.fromkeys(order, DECLINE)
            outcome = resolve_window(self._game.state, answers)
        opened_at = requests.window_opened_at
        record = WindowRecord.of(
            version=self._game.state_version,
            order=order,
            answers=answers,
            opened_ms=None if opened_at is None else self._outbox.rel_ms(opened_at),
            times_ms=requests.window_times,
            call=outcome.call,
            bomb=outcome.bomb,
            t_ms=self._outbox.rel_ms(now),
            referee_declined=requests.referee_declined,
        )
        self._outbox.write(record)
        if record.discarded:
            discarded = list(record.discarded)
            self._outbox.note("info", "window_bombs_discarded", bomber=outcome.bomb, discarded=discarded)
        what = "the bomb window closing" if outcome.bomb is None else f"a bomb by seat {outcome.bomb}"
        self._game.commit(outcome.state, outcome.events, what, None, now)

    def _out_of_turn(self, seat: int, message: OutOfTurn, now: float) -> None:
        """A bomb or a Tichu call sent at any moment: accepted only while the rules allow it."""
        checked = self._requests.check_out_of_turn(seat, message)
        if isinstance(checked, Refusal):
            self._refuse(seat, checked, now)
            return
        action = checked
        if isinstance(action, CallTichu):
            t_ms = self._outbox.rel_ms(now)
            record = CallRecord(
                seat=seat, version=self._game.state_version, received_ms=t_ms, action=action, t_ms=t_ms
            )
            try:
                state, events = apply_move(self._game.state, record)
            except RulesError as error:
                self._refuse_error(seat, error, now)
                return
            self._outbox.note("info", "tichu_called", seat=seat)
            self._outbox.write(record)
            self._game.commit(state, events, describe_change(seat, action, self._game.state), action, now)
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
            apply(self._game.state, seat, action)
        except RulesError as error:
            self._refuse_error(seat, error, now)
            return
        # Unreachable while every seat that may act has a request; refuse rather than guess.
        unasked = Refusal(RejectionReason.ILLEGAL, "no decision of yours is open now", "R-BOMB-9")
        self._refuse(seat, unasked, now)


__all__ = ["Game", "Rulings"]
