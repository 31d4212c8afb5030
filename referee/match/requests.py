"""Decision requests: which are open and when they expire, which were closed and how, the bomb
window's held answers, and the checks a Decision or an OutOfTurn passes before the rules see it.

A refusal here is a `Refusal` value (the reason, the words, the request it concerns); the match
core turns it into a Rejection, a replay record and a log line.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from enum import StrEnum

from referee.match.clock import ClockSettings, ms
from referee.match.messages import BadAction, Decision, OutOfTurn, RejectionReason, Request
from referee.match.moves import sole_action
from referee.rules import (
    Action,
    CallTichu,
    DecisionKind,
    Decline,
    DeclineTichu,
    Exchange,
    GiftDragon,
    GrandTichu,
    Pass,
    Phase,
    Play,
    State,
    can_call_tichu,
)
from referee.rules.legal import exchange_recipients

# How many changes a STALE rejection lists before it summarises the rest.
STALE_DETAIL = 4
# The action types that answer each kind of request (anything else is a malformed answer).
ANSWERS: dict[DecisionKind, tuple[tuple[type, ...], str]] = {
    DecisionKind.GRAND_TICHU: ((GrandTichu,), "grand_tichu or no_grand_tichu"),
    DecisionKind.TICHU_STEP: ((CallTichu, DeclineTichu), "tichu or no_tichu"),
    DecisionKind.EXCHANGE: ((Exchange,), "an exchange"),
    DecisionKind.PLAY: ((Pass, Play), "pass or a play"),
    DecisionKind.BOMB_WINDOW: ((Decline, Play), "decline or a bomb"),
    DecisionKind.DRAGON_GIFT: ((GiftDragon,), "a gift"),
}
SIMULTANEOUS = (Phase.GRAND_TICHU, Phase.TICHU_STEP, Phase.EXCHANGE)
DECLINE = Decline()
PASS = Pass()


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why a message is refused: a rejection's reason, words and rule, and its request."""

    reason: RejectionReason
    message: str
    rule: str = ""
    request_id: int = 0


class RequestState(StrEnum):
    """Where a request is: open, or closed one of three ways (never reopened)."""

    OPEN = "open"
    ANSWERED = "answered"
    TIMED_OUT = "timed_out"
    CANCELLED = "cancelled"


@dataclass(slots=True)
class OpenRequest:
    """A decision request and its clock (open until `Requests.close`)."""

    request_id: int
    seat: int
    kind: DecisionKind
    state_version: int
    sent_at: float
    limit_s: float
    bank_s: float  # the bank the seat had when the request was sent
    expires_at: float  # when the default is taken (limit + bank + grace); windows: the window's end
    message: Request
    state: RequestState = RequestState.OPEN


def describe_change(seat: int, action: Action, before: State) -> str:
    """A change in words, for STALE rejections; a hidden simultaneous answer names no seat."""
    if before.phase in SIMULTANEOUS and not (
        isinstance(action, CallTichu) and before.phase is Phase.EXCHANGE
    ):
        # Grand Tichu, pre-step and exchange answers stay secret until revealed together.
        return "a simultaneous answer"
    names = {
        Play: "a play",
        Pass: "a pass",
        CallTichu: "a Tichu call",
        DeclineTichu: "a Tichu answer",
        GrandTichu: "a Grand Tichu answer",
        Exchange: "an exchange",
        GiftDragon: "a Dragon gift",
    }
    return f"{names.get(type(action), 'an answer')} by seat {seat}"


def hidden_answers(state: State) -> tuple[int, ...]:
    """The seats whose answer in the current simultaneous phase is applied but not yet revealed:
    simultaneous Grand Tichu answers (R-GT-1), pre-step answers (R-CALL-6), exchanges (R-EXCH-3)."""
    phase = state.phase
    if phase is Phase.GRAND_TICHU and state.config.gt_decision_mode == "simultaneous":
        return tuple([s for s, answer in enumerate(state.gt) if answer >= 0])
    if phase is Phase.TICHU_STEP:
        return tuple([s for s, answer in enumerate(state.tichu_step) if answer in (0, 1)])
    if phase is Phase.EXCHANGE:
        return tuple([s for s, gifts in enumerate(state.exchange) if gifts is not None])
    return ()


def seat_versions(state: State, version: int, preset: Sequence[int] = ()) -> tuple[int, ...]:
    """The state version as each seat is told it: `version` less the hidden answers (each moved
    the version by one) that the seat was not told of, so that nothing a seat is sent, nor what it
    may send, depends on another seat's secret answer (R-INFO-1). An exchange is told to its giver
    (`exchange_submitted`), a Grand Tichu or pre-step answer to nobody. `preset` are hidden
    answers the game began with, which no version counted."""
    hidden = [s for s in hidden_answers(state) if s not in preset]
    if not hidden:
        return (version,) * state.players
    told = state.phase is Phase.EXCHANGE
    return tuple([version - len(hidden) + (told and s in hidden) for s in range(state.players)])


class Changes:
    """Every change of state version, what it was and the version each seat was told before and
    after it: the versions the seats see (`seats`, see `seat_versions`) and STALE rejections."""

    def __init__(self, state: State) -> None:
        self.entries: list[tuple[tuple[int, ...], tuple[int, ...], str]] = []  # (before, after, what)
        self.seats: tuple[int, ...] = seat_versions(state, 0, hidden_answers(state))
        # Answers a given position holds count for no version while its phase lasts.
        self._preset = (state.round, state.phase, hidden_answers(state))

    def add(self, state: State, version: int, what: str) -> None:
        """One change, which made `state` at `version`."""
        before = self.seats
        round_no, phase, preset = self._preset
        kept = preset if (state.round, state.phase) == (round_no, phase) else ()
        self.seats = seat_versions(state, version, kept)
        self.entries.append((before, self.seats, what))

    def since(self, seat: int, version: int) -> str:
        """What `seat` has been able to see change after its `version`, in words and its versions."""
        changes = [(b[seat], a[seat], what) for b, a, what in self.entries if a[seat] > max(b[seat], version)]
        parts = [f"{what} (state {before} -> {after})" for before, after, what in changes[:STALE_DETAIL]]
        more = f", and {len(changes) - STALE_DETAIL} more changes" if len(changes) > STALE_DETAIL else ""
        return ", then ".join(parts) + more if parts else "nothing"


class Requests:
    """The requests of a match: at most one open per seat, the closed ones by id, the window's."""

    def __init__(self, clock: ClockSettings, state: State) -> None:
        self.clock = clock
        self.changes = Changes(state)  # the versions each seat is told, and what changed them
        self.open: dict[int, OpenRequest] = {}  # by seat
        self.closed: dict[int, tuple[int, RequestState]] = {}  # id -> (seat, how it closed)
        self.next_id = 1
        self.window_answers: dict[int, Action] = {}  # held, applied together when complete
        self.window_times: dict[int, float] = {}  # each answer's think time, in ms, as they came
        self.window_opened_at: float | None = None
        self.referee_declined: list[int] = []  # seats declined for, never asked (Hello.referee_declines)

    @property
    def window_end(self) -> float | None:
        """When the open bomb window ends (its time and the grace), if one is open."""
        opened = self.window_opened_at
        return None if opened is None else opened + self.clock.window_length_s

    def issue(self, state: State, seat: int, kind: DecisionKind, bank_s: float, now: float) -> Request:
        """Open the request for the decision `seat` owes in `state`, at the version the seat is told;
        its message."""
        clock = self.clock
        version = self.changes.seats[seat]
        rid = self.next_id
        self.next_id += 1
        if kind is DecisionKind.BOMB_WINDOW:
            # Window requests go out together with one end for every seat (R-BOMB-5).
            if self.window_opened_at is None:
                self.window_opened_at = now
            limit_s = clock.window_s
            bank_s = 0.0  # a window has its own fixed length; the bank is for regular decisions
            expires_at = self.window_opened_at + clock.window_length_s
            deadline_ms, bank_left_ms = ms(self.window_opened_at + limit_s - now), 0
        else:
            limit_s = clock.decision_s
            expires_at = now + limit_s + bank_s + clock.grace_s
            deadline_ms, bank_left_ms = ms(limit_s + bank_s), ms(bank_s)
        recipients = exchange_recipients(state, seat) if kind is DecisionKind.EXCHANGE else ()
        can_call = can_call_tichu(state, seat)
        message = Request(rid, kind, version, deadline_ms, bank_left_ms, can_call, recipients, seat, state)
        self.open[seat] = OpenRequest(rid, seat, kind, version, now, limit_s, bank_s, expires_at, message)
        return message

    def decline_for(self, state: State, seat: int, now: float) -> bool:
        """Decline the open window for `seat` without asking it, if declining is all it could do
        (the engine lists no bomb and no Tichu call for it); whether it did."""
        if not isinstance(sole_action(state, seat), Decline):
            return False
        if self.window_opened_at is None:
            self.window_opened_at = now  # the window's end is the same as if it had been asked
        self.window_answers[seat] = DECLINE
        self.referee_declined.append(seat)
        return True

    def declined_for_all(self, window: Sequence[int]) -> bool:
        """Whether the referee declined for every seat of the open `window` that had not answered."""
        answers = self.window_answers
        return bool(self.referee_declined) and bool(window) and all(seat in answers for seat in window)

    def close(self, request: OpenRequest, how: RequestState) -> None:
        """The open request is answered, timed out or cancelled."""
        assert request.state is RequestState.OPEN and how is not RequestState.OPEN, (
            f"request {request.request_id}: {request.state} -> {how}"
        )
        request.state = how
        if self.open.get(request.seat) is request:
            del self.open[request.seat]
        self.closed[request.request_id] = (request.seat, how)

    def clear_window(self) -> None:
        """The window is over: forget its answers."""
        self.window_answers.clear()
        self.window_times.clear()
        self.window_opened_at = None
        self.referee_declined.clear()

    def hold(self, request: OpenRequest, action: Action, now: float) -> None:
        """Keep a window answer (checked already) until the window resolves."""
        self.close(request, RequestState.ANSWERED)
        self.window_times[request.seat] = round(max(0.0, now - request.sent_at) * 1000, 1)
        self.window_answers[request.seat] = action

    def refreshed(self, request: OpenRequest, now: float) -> Request:
        """The request's message with its clocks brought up to `now` (for a Snapshot)."""
        grace_s = self.clock.grace_s
        if request.kind is DecisionKind.BOMB_WINDOW:
            end = self.window_end
            assert end is not None
            return replace(request.message, deadline_ms=ms(end - now - grace_s))
        left = request.expires_at - now - grace_s
        return replace(request.message, deadline_ms=ms(left), bank_left_ms=ms(min(request.bank_s, left)))

    def delivered(self, seat: int, request_id: int, now: float) -> bool:
        """A request leaves now: its clock starts now (a window's end stays as it is); whether
        its deadline moved."""
        request = self.open.get(seat)
        if request is None or request.request_id != request_id or request.kind is DecisionKind.BOMB_WINDOW:
            return False
        lag = now - request.sent_at
        if lag <= 0:
            return False
        request.sent_at = now
        request.expires_at += lag
        return True

    # ---------------------------------------------------------------------------- checks

    def check_decision(self, seat: int, decision: Decision) -> tuple[OpenRequest, Action] | Refusal:
        """The open request a Decision answers and its action, or why it is refused."""
        rid = decision.request_id
        request = self.open.get(seat)
        if request is None or request.request_id != rid:
            owner, how = self.closed.get(rid, (-1, RequestState.OPEN))
            if owner == seat and how is RequestState.TIMED_OUT:
                return Refusal(
                    RejectionReason.LATE, f"request {rid} timed out; the default was taken", "", rid
                )
            if owner == seat:
                return Refusal(RejectionReason.UNKNOWN_REQUEST, f"request {rid} is {how}", "", rid)
            return Refusal(RejectionReason.UNKNOWN_REQUEST, f"you have no open request {rid}", "", rid)
        if decision.state_version < request.state_version:
            stale = (
                f"request {rid} is for state {request.state_version}; since state "
                f"{decision.state_version}: {self.changes.since(seat, decision.state_version)}"
            )
            return Refusal(RejectionReason.STALE, stale, "", rid)
        if decision.state_version > request.state_version:
            wrong = f"request {rid} is for state {request.state_version}, not {decision.state_version}"
            return Refusal(RejectionReason.INVALID, wrong, "", rid)
        if decision.action is None:
            return Refusal(RejectionReason.INVALID, "a Decision needs an action", "", rid)
        answer = check_answer(request, decision.action)
        return answer if isinstance(answer, Refusal) else (request, answer)

    def check_out_of_turn(self, seat: int, message: OutOfTurn) -> Action | Refusal:
        """The action an OutOfTurn of `seat` carries, or why it is refused (before the rules are
        asked): it must be decided on the latest version the seat has been told."""
        version = self.changes.seats[seat]
        if message.action is None:
            return Refusal(RejectionReason.INVALID, "an OutOfTurn message needs an action")
        if message.state_version > version:
            ahead = f"state {message.state_version} does not exist yet (the current state is {version})"
            return Refusal(RejectionReason.INVALID, ahead)
        if message.state_version < version:
            since = self.changes.since(seat, message.state_version)
            stale = f"decided on state {message.state_version}; since then: {since}"
            return Refusal(RejectionReason.STALE, stale)
        if isinstance(message.action, BadAction):
            return Refusal(message.action.reason, message.action.message, message.action.rule)
        if not isinstance(message.action, CallTichu | Play):
            wrong = (
                f"OutOfTurn carries a bomb or a Tichu call, not {message.action}; "
                "answer requests with a Decision"
            )
            return Refusal(RejectionReason.INVALID, wrong)
        return message.action


def check_answer(request: OpenRequest, sent: Action | BadAction) -> Action | Refusal:
    """The action that answers `request`, or why it cannot (unreadable, or of the wrong kind)."""
    rid = request.request_id
    if isinstance(sent, BadAction):
        return Refusal(sent.reason, sent.message, sent.rule, rid)
    allowed, names = ANSWERS[request.kind]
    if not isinstance(sent, allowed):
        hint = "; a Tichu call is sent as OutOfTurn" if isinstance(sent, CallTichu) else ""
        wrong = f"a {request.kind.value} request is answered with {names}, not {sent}{hint}"
        return Refusal(RejectionReason.INVALID, wrong, "", rid)
    return sent
