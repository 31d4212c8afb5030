"""The replay schema, `tichu-replay/1`: one frozen dataclass per record kind, and its JSON form.

A replay is a header and then records in order, one JSON object per line. The match core makes
these values; the writer turns them into lines with `to_json`, and every reader (verify, show,
html, resume, the tournament) turns lines back into them with `record_from_json`, so no other
module reads a record by string key. `to_json` gives the keys in the order the referee has always
written them, so a replay's line is the same whichever release wrote it; `record_from_json` reads
every replay an earlier release wrote (a field added since takes its default) and raises
RecordError, naming the field, for anything else.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeVar

from referee.match.clock import ClockSettings
from referee.rules import (
    Action,
    CallTichu,
    DecisionKind,
    Event,
    Play,
    RulesConfig,
    RulesError,
    State,
    event_from_json,
    parse_action,
    state_from_json,
    state_to_json,
)

FORMAT = "tichu-replay/1"
CALL_TICHU = CallTichu()
# The wire protocol this referee speaks (Hello.protocol_version, Welcome, the replay header).
PROTOCOL_VERSION = 1

Json = dict[str, Any]
T = TypeVar("T")


class RecordError(ValueError):
    """A JSON object that is not a record of this schema; the message names the field."""


# ----------------------------------------------------------------------------------- reading


def _get(data: Mapping[str, Any], key: str, kind: type[T] | tuple[type, ...], what: str) -> Any:
    if key not in data:
        raise RecordError(f"a {data.get('kind')} record needs {key!r}")
    value = data[key]
    # bool is an int in Python; a flag is never a count and a count never a flag.
    if not isinstance(value, kind) or (isinstance(value, bool) and kind in (int, float, (int, float))):
        raise RecordError(f"{data.get('kind')} record: {key!r} must be {what}, not {value!r}")
    return value


def _int(data: Mapping[str, Any], key: str) -> int:
    value: int = _get(data, key, int, "a whole number")
    return value


def _seat(data: Mapping[str, Any], key: str = "seat") -> int:
    value = _int(data, key)
    if not 0 <= value < 6:
        raise RecordError(f"{data.get('kind')} record: {key!r} must be a seat 0..5, not {value}")
    return value


def _opt_seat(data: Mapping[str, Any], key: str) -> int | None:
    if data.get(key) is None:
        return None
    return _seat(data, key)


def _num(data: Mapping[str, Any], key: str) -> float:
    value: float = _get(data, key, (int, float), "a number")
    return value


def _opt_num(data: Mapping[str, Any], key: str) -> float | None:
    return None if data.get(key) is None else _num(data, key)


def _str(data: Mapping[str, Any], key: str) -> str:
    value: str = _get(data, key, str, "a string")
    return value


def _bool(data: Mapping[str, Any], key: str) -> bool:
    value: bool = _get(data, key, bool, "true or false")
    return value


def _list(data: Mapping[str, Any], key: str) -> list[Any]:
    value: list[Any] = _get(data, key, list, "a list")
    return value


def _object(data: Mapping[str, Any], key: str) -> dict[str, Any]:
    value: dict[str, Any] = _get(data, key, dict, "an object")
    return value


def _t_ms(data: Mapping[str, Any]) -> float:
    # Every record has one; a line hand-written without it reads as at the start.
    return 0.0 if "t_ms" not in data else _num(data, "t_ms")


def _action(data: Mapping[str, Any], key: str) -> Action:
    text = _str(data, key)
    try:
        return parse_action(text)
    except RulesError as error:
        raise RecordError(f"{data.get('kind')} record: {key!r} is not an action ({error})") from None


def _decision_kind(data: Mapping[str, Any]) -> DecisionKind:
    text = _str(data, "decision")
    try:
        return DecisionKind(text)
    except ValueError:
        raise RecordError(f"{data.get('kind')} record: unknown decision kind {text!r}") from None


def _seat_map(data: Mapping[str, Any], key: str) -> list[tuple[int, Any]]:
    """An object keyed by seat numbers ("0".."5"), in the order written."""
    pairs = []
    for seat_key, value in _object(data, key).items():
        if not (isinstance(seat_key, str) and seat_key.isdigit() and int(seat_key) < 6):
            raise RecordError(f"{data.get('kind')} record: {key!r} is keyed by seats, not {seat_key!r}")
        pairs.append((int(seat_key), value))
    return pairs


def _seats(values: Sequence[Any], key: str, kind: str) -> tuple[int, ...]:
    if not all(isinstance(v, int) and not isinstance(v, bool) and 0 <= v < 6 for v in values):
        raise RecordError(f"{kind} record: {key!r} must list seats 0..5, not {list(values)!r}")
    return tuple(values)


# ----------------------------------------------------------------------------------- records


@dataclass(frozen=True, slots=True)
class SeatName:
    """A seat and the name the organiser gave its bot ("" when none)."""

    seat: int
    bot_name: str


@dataclass(frozen=True, slots=True)
class Header:
    """The first line: what the match is (rules, clocks, seats) and how it starts."""

    kind: ClassVar[str] = "header"
    match_id: str
    created_at: str
    config: RulesConfig
    seed: int | str
    clock: ClockSettings
    seats: tuple[SeatName, ...]
    watch_delay_events: int = 0
    initial_state: State | None = None  # a given position instead of a deal
    protocol_version: int = PROTOCOL_VERSION
    format: str = FORMAT
    t_ms: float = 0.0

    def to_json(self) -> Json:
        """The JSON form, keys in the order the referee writes them."""
        return {
            "kind": self.kind,
            "format": self.format,
            "match_id": self.match_id,
            "created_at": self.created_at,
            "config": self.config.to_json(),
            "seed": self.seed,
            "clock": self.clock.to_json(),
            "seats": [{"seat": s.seat, "bot_name": s.bot_name} for s in self.seats],
            "watch_delay_events": self.watch_delay_events,
            "initial_state": None if self.initial_state is None else state_to_json(self.initial_state),
            "protocol_version": self.protocol_version,
            "t_ms": self.t_ms,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Header:
        """The header from its JSON form."""
        if data.get("format") != FORMAT:
            raise RecordError(f"expected a {FORMAT} header, found {data.get('format', data.get('kind'))!r}")
        try:
            config = RulesConfig.from_json(_object(data, "config"))
            state_json = data.get("initial_state")
            initial = None if state_json is None else state_from_json(state_json)
        except RulesError as error:
            raise RecordError(f"header: {error}") from None
        seed = data.get("seed")
        if not isinstance(seed, (int, str)) or isinstance(seed, bool):
            raise RecordError(f"header: 'seed' must be a number or a string, not {seed!r}")
        seats = []
        for entry in _list(data, "seats"):
            if not isinstance(entry, dict):
                raise RecordError("header: each of 'seats' is an object with 'seat' and 'bot_name'")
            seats.append(SeatName(_seat(entry, "seat"), str(entry.get("bot_name") or "")))
        return cls(
            match_id=_str(data, "match_id"),
            created_at=str(data.get("created_at", "")),
            config=config,
            seed=seed,
            clock=ClockSettings.from_json(data.get("clock") or {}),
            seats=tuple(seats),
            watch_delay_events=int(data.get("watch_delay_events") or 0),
            initial_state=initial,
            protocol_version=int(data.get("protocol_version") or PROTOCOL_VERSION),
            t_ms=_t_ms(data),
        )


@dataclass(frozen=True, slots=True)
class Connected:
    """A stream took its seat (a reconnection when the seat had been connected before)."""

    kind: ClassVar[str] = "connection"
    seat: int
    reconnect: bool
    bot_name: str
    bot_version: str
    t_ms: float = 0.0

    def to_json(self) -> Json:
        """The JSON form."""
        return {
            "kind": self.kind,
            "seat": self.seat,
            "connected": True,
            "reconnect": self.reconnect,
            "bot_name": self.bot_name,
            "bot_version": self.bot_version,
            "t_ms": self.t_ms,
        }


@dataclass(frozen=True, slots=True)
class Disconnected:
    """A seat's stream ended: why, and the gRPC status the referee ended it with ("OK" if none)."""

    kind: ClassVar[str] = "connection"
    seat: int
    why: str
    status: str
    t_ms: float = 0.0

    def to_json(self) -> Json:
        """The JSON form."""
        return {
            "kind": self.kind,
            "seat": self.seat,
            "connected": False,
            "why": self.why,
            "status": self.status,
            "t_ms": self.t_ms,
        }


@dataclass(frozen=True, slots=True)
class Abandoned:
    """A seat that dropped out of a running game did not come back within its reconnect grace."""

    kind: ClassVar[str] = "connection"
    seat: int
    t_ms: float = 0.0

    def to_json(self) -> Json:
        """The JSON form."""
        return {
            "kind": self.kind,
            "seat": self.seat,
            "connected": False,
            "abandoned": True,
            "t_ms": self.t_ms,
        }


def _connection_from_json(data: Mapping[str, Any]) -> Connected | Disconnected | Abandoned:
    seat = _seat(data)
    if _bool(data, "connected"):
        return Connected(
            seat,
            bool(data.get("reconnect", False)),
            str(data.get("bot_name", "")),
            str(data.get("bot_version", "")),
            _t_ms(data),
        )
    if data.get("abandoned"):
        return Abandoned(seat, _t_ms(data))
    return Disconnected(seat, str(data.get("why", "")), str(data.get("status", "")), _t_ms(data))


@dataclass(frozen=True, slots=True)
class SeatStart:
    """A seat as the game started: its name and the version its bot announced."""

    seat: int
    bot_name: str
    bot_version: str


@dataclass(frozen=True, slots=True)
class Start:
    """Every seat connected and the game began (the deal's events follow)."""

    kind: ClassVar[str] = "start"
    started_at: str
    seats: tuple[SeatStart, ...]
    t_ms: float = 0.0

    def to_json(self) -> Json:
        """The JSON form."""
        return {
            "kind": self.kind,
            "started_at": self.started_at,
            "seats": [
                {"seat": s.seat, "bot_name": s.bot_name, "bot_version": s.bot_version} for s in self.seats
            ],
            "t_ms": self.t_ms,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Start:
        """The record from its JSON form."""
        seats = []
        for entry in _list(data, "seats"):
            if not isinstance(entry, dict):
                raise RecordError("start: each of 'seats' is an object")
            seats.append(
                SeatStart(
                    _seat(entry, "seat"), str(entry.get("bot_name", "")), str(entry.get("bot_version", ""))
                )
            )
        return cls(str(data.get("started_at", "")), tuple(seats), _t_ms(data))


@dataclass(frozen=True, slots=True)
class EventRecord:
    """An engine event at the state version after the move that made it, and its audience."""

    kind: ClassVar[str] = "event"
    version: int
    private_to: int | None
    event: Event
    # The event's JSON form, made once: the wire, the spectators' logs and the file share it.
    data: Json = field(compare=False, repr=False)
    t_ms: float = 0.0

    @classmethod
    def of(cls, version: int, event: Event, t_ms: float, data: Json | None = None) -> EventRecord:
        """The record of `event` (its JSON form computed here unless given)."""
        return cls(version, event.private_to, event, event.to_json() if data is None else data, t_ms)

    def to_json(self) -> Json:
        """The JSON form."""
        return {
            "kind": self.kind,
            "version": self.version,
            "private_to": self.private_to,
            "event": self.data,
            "t_ms": self.t_ms,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> EventRecord:
        """The record from its JSON form."""
        event_json = _object(data, "event")
        try:
            event = event_from_json(event_json)
        except (RulesError, KeyError, TypeError, ValueError) as error:
            raise RecordError(f"event record: unreadable event {event_json!r} ({error})") from None
        return cls(_int(data, "version"), _opt_seat(data, "private_to"), event, event_json, _t_ms(data))


@dataclass(frozen=True, slots=True)
class DecisionRecord:
    """An accepted answer to a regular request, with its timing and the bank it left."""

    kind: ClassVar[str] = "decision"
    seat: int
    request_id: int
    decision: DecisionKind
    version: int
    action: Action
    sent_ms: float
    received_ms: float
    time_used_ms: float
    bank_left_ms: int
    t_ms: float = 0.0

    def to_json(self) -> Json:
        """The JSON form."""
        return {
            "kind": self.kind,
            "seat": self.seat,
            "request_id": self.request_id,
            "decision": self.decision.value,
            "version": self.version,
            "action": str(self.action),
            "sent_ms": self.sent_ms,
            "received_ms": self.received_ms,
            "time_used_ms": self.time_used_ms,
            "bank_left_ms": self.bank_left_ms,
            "t_ms": self.t_ms,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> DecisionRecord:
        """The record from its JSON form."""
        return cls(
            _seat(data),
            _int(data, "request_id"),
            _decision_kind(data),
            _int(data, "version"),
            _action(data, "action"),
            _num(data, "sent_ms"),
            _num(data, "received_ms"),
            _num(data, "time_used_ms"),
            _int(data, "bank_left_ms"),
            _t_ms(data),
        )


def _without_call(action: Action) -> Action:
    if isinstance(action, Play) and action.tichu:
        return Play(action.cards_mask, action.phoenix, action.wish, action.partner)
    return action


@dataclass(frozen=True, slots=True)
class WindowRecord:
    """A bomb window's resolution: every seat's answer, each one's think time, and the outcome.

    `answers` are in window order; a bomb that carried a Tichu call (R-CALL-7) keeps its flag
    only when its call was made (`call`), which is how the file says it: the answers without
    flags and the caller apart. `times_ms` are in the order the answers arrived.
    """

    kind: ClassVar[str] = "window"
    version: int
    order: tuple[int, ...]
    answers: tuple[tuple[int, Action], ...]
    opened_ms: float | None
    times_ms: tuple[tuple[int, float], ...]
    call: int | None  # the bomber whose Tichu call went first
    bomb: int | None  # the seat whose bomb applied
    discarded: tuple[int, ...]  # seats whose bombs came after it in window order (R-BOMB-9)
    t_ms: float = 0.0

    @classmethod
    def of(
        cls,
        version: int,
        order: Sequence[int],
        answers: Mapping[int, Action],
        opened_ms: float | None,
        times_ms: Mapping[int, float],
        call: int | None,
        bomb: int | None,
        t_ms: float,
    ) -> WindowRecord:
        """The record of a window resolved from `answers` (as given, flags and all)."""
        kept = tuple((s, a if s == call else _without_call(a)) for s, a in answers.items())
        discarded = tuple(s for s, a in answers.items() if isinstance(a, Play) and s != bomb)
        return cls(
            version, tuple(order), kept, opened_ms, tuple(times_ms.items()), call, bomb, discarded, t_ms
        )

    def to_json(self) -> Json:
        """The JSON form."""
        return {
            "kind": self.kind,
            "version": self.version,
            "order": list(self.order),
            "answers": {str(s): str(_without_call(a)) for s, a in self.answers},
            "opened_ms": self.opened_ms,
            "time_ms": {str(s): t for s, t in self.times_ms},
            "call": self.call,
            "bomb": self.bomb,
            "discarded": list(self.discarded),
            "t_ms": self.t_ms,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> WindowRecord:
        """The record from its JSON form."""
        call = _opt_seat(data, "call")
        answers = []
        for seat, text in _seat_map(data, "answers"):
            if not isinstance(text, str):
                raise RecordError(f"window record: the answer of seat {seat} must be an action string")
            try:
                action = parse_action(text)
            except RulesError as error:
                raise RecordError(
                    f"window record: the answer of seat {seat} is not an action ({error})"
                ) from None
            if seat == call and isinstance(action, Play):
                action = Play(action.cards_mask, action.phoenix, action.wish, action.partner, True)
            answers.append((seat, action))
        times = []
        for seat, used in _seat_map(data, "time_ms"):
            if not isinstance(used, (int, float)) or isinstance(used, bool):
                raise RecordError(f"window record: the think time of seat {seat} must be a number")
            times.append((seat, used))
        return cls(
            _int(data, "version"),
            _seats(_list(data, "order"), "order", "window"),
            tuple(answers),
            _opt_num(data, "opened_ms"),
            tuple(times),
            call,
            _opt_seat(data, "bomb"),
            _seats(data.get("discarded") or [], "discarded", "window"),
            _t_ms(data),
        )


@dataclass(frozen=True, slots=True)
class CallRecord:
    """A Tichu call sent out of turn, applied at once (R-CALL-4)."""

    kind: ClassVar[str] = "call"
    seat: int
    version: int
    received_ms: float
    action: Action = CALL_TICHU
    t_ms: float = 0.0

    def to_json(self) -> Json:
        """The JSON form."""
        return {
            "kind": self.kind,
            "seat": self.seat,
            "version": self.version,
            "action": str(self.action),
            "received_ms": self.received_ms,
            "t_ms": self.t_ms,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> CallRecord:
        """The record from its JSON form."""
        action = _action(data, "action") if "action" in data else CallTichu()
        return cls(_seat(data), _int(data, "version"), _num(data, "received_ms"), action, _t_ms(data))


@dataclass(frozen=True, slots=True)
class ViolationRecord:
    """A request whose time ran out, and the default taken for it (R-DEF-1); `count` is the seat's
    timeouts so far. A bomb window's default is one of its window's answers, not a move."""

    kind: ClassVar[str] = "violation"
    seat: int
    request_id: int
    decision: DecisionKind
    version: int
    sent_ms: float
    default: Action
    count: int
    t_ms: float = 0.0

    @property
    def is_move(self) -> bool:
        """Whether this default changed the game by itself (not a window's decline)."""
        return self.decision is not DecisionKind.BOMB_WINDOW

    def to_json(self) -> Json:
        """The JSON form."""
        return {
            "kind": self.kind,
            "seat": self.seat,
            "request_id": self.request_id,
            "decision": self.decision.value,
            "version": self.version,
            "sent_ms": self.sent_ms,
            "default": str(self.default),
            "count": self.count,
            "t_ms": self.t_ms,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ViolationRecord:
        """The record from its JSON form."""
        return cls(
            _seat(data),
            _int(data, "request_id"),
            _decision_kind(data),
            _int(data, "version"),
            _num(data, "sent_ms"),
            _action(data, "default"),
            _int(data, "count"),
            _t_ms(data),
        )


@dataclass(frozen=True, slots=True)
class RejectionRecord:
    """A message from a seat that was refused; nothing changed."""

    kind: ClassVar[str] = "rejection"
    seat: int
    reason: str  # a RejectionReason value: illegal, invalid, unknown_request, stale, late, ...
    rule: str
    message: str
    request_id: int
    t_ms: float = 0.0

    def to_json(self) -> Json:
        """The JSON form."""
        return {
            "kind": self.kind,
            "seat": self.seat,
            "reason": self.reason,
            "rule": self.rule,
            "message": self.message,
            "request_id": self.request_id,
            "t_ms": self.t_ms,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RejectionRecord:
        """The record from its JSON form."""
        return cls(
            _seat(data),
            _str(data, "reason"),
            str(data.get("rule") or ""),
            str(data.get("message", "")),
            int(data.get("request_id") or 0),
            _t_ms(data),
        )


@dataclass(frozen=True, slots=True)
class ResumeRecord:
    """The referee restarted and took the match up again at this state version."""

    kind: ClassVar[str] = "resume"
    version: int
    resumed_at: str
    t_ms: float = 0.0

    def to_json(self) -> Json:
        """The JSON form."""
        return {"kind": self.kind, "version": self.version, "resumed_at": self.resumed_at, "t_ms": self.t_ms}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ResumeRecord:
        """The record from its JSON form."""
        return cls(_int(data, "version"), str(data.get("resumed_at", "")), _t_ms(data))


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
        counts = {name: _num(data, name) for name in SUMMARY_COUNTS}
        extras = {
            name: int(data[name]) for name in ("rate_limited", "bank_left_ms") if data.get(name) is not None
        }
        return cls(
            seat=_seat(data),
            bot_name=str(data.get("bot_name") or ""),
            bot_version=str(data.get("bot_version") or ""),
            **counts,  # type: ignore[arg-type]
            **extras,
        )


@dataclass(frozen=True, slots=True)
class ResultRecord:
    """The end: winner (0, 1, -1 for none), scores, a forfeit's team (-1 if none), the summary."""

    kind: ClassVar[str] = "result"
    winner: int
    scores: tuple[int, int]
    forfeiting_team: int
    reason: str
    finished_at: str
    rounds: int
    summary: tuple[SeatSummary, ...]
    absent: tuple[int, ...] = ()  # a start timeout's seats that never came
    t_ms: float = 0.0

    @property
    def ends_unfinished_game(self) -> bool:
        """Whether this result ends a game that the rules had not ended (forfeit, no-show, error)."""
        return self.forfeiting_team >= 0 or bool(self.absent) or self.reason.startswith("referee error")

    def to_json(self) -> Json:
        """The JSON form."""
        out: Json = {
            "kind": self.kind,
            "winner": self.winner,
            "scores": list(self.scores),
            "forfeiting_team": self.forfeiting_team,
            "reason": self.reason,
            "finished_at": self.finished_at,
            "rounds": self.rounds,
            "summary": [line.to_json() for line in self.summary],
        }
        if self.absent:
            out["absent"] = list(self.absent)
        out["t_ms"] = self.t_ms
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ResultRecord:
        """The record from its JSON form."""
        scores = _list(data, "scores")
        if len(scores) != 2 or not all(isinstance(s, int) and not isinstance(s, bool) for s in scores):
            raise RecordError(f"result record: 'scores' must be two whole numbers, not {scores!r}")
        summary = []
        for line in data.get("summary") or []:
            if not isinstance(line, dict):
                raise RecordError("result record: each summary line is an object")
            summary.append(SeatSummary.from_json(line))
        return cls(
            _int(data, "winner"),
            (scores[0], scores[1]),
            int(data.get("forfeiting_team", -1)),
            str(data.get("reason", "")),
            str(data.get("finished_at", "")),
            int(data.get("rounds") or 0),
            tuple(summary),
            _seats(data.get("absent") or [], "absent", "result"),
            _t_ms(data),
        )


Record = (
    Connected
    | Disconnected
    | Abandoned
    | Start
    | EventRecord
    | DecisionRecord
    | WindowRecord
    | CallRecord
    | ViolationRecord
    | RejectionRecord
    | ResumeRecord
    | ResultRecord
)
# Any line of a replay: the header, then records.
Line = Header | Record
# The records that change the game, each followed by the events it caused.
Move = DecisionRecord | CallRecord | WindowRecord | ViolationRecord

_READERS: dict[str, Any] = {
    "connection": _connection_from_json,
    "start": Start.from_json,
    "event": EventRecord.from_json,
    "decision": DecisionRecord.from_json,
    "window": WindowRecord.from_json,
    "call": CallRecord.from_json,
    "violation": ViolationRecord.from_json,
    "rejection": RejectionRecord.from_json,
    "resume": ResumeRecord.from_json,
    "result": ResultRecord.from_json,
}
RECORD_KINDS = frozenset({"header", *_READERS})


def header_from_json(data: object) -> Header:
    """The header a replay's first line holds; RecordError unless it is a header this code reads."""
    if not isinstance(data, dict) or not isinstance(data.get("kind"), str):
        raise RecordError("a record is a JSON object with a 'kind'")
    if data["kind"] != "header" or data.get("format") != FORMAT:
        raise RecordError(f"expected a {FORMAT} header, found {data.get('format', data['kind'])!r}")
    return Header.from_json(data)


def record_from_json(data: object) -> Record:
    """The record a line after the header holds; RecordError names what is wrong."""
    if not isinstance(data, dict) or not isinstance(data.get("kind"), str):
        raise RecordError("a record is a JSON object with a 'kind'")
    kind = data.get("kind")
    reader = _READERS.get(kind) if isinstance(kind, str) else None
    if reader is None:
        if kind == "header":
            raise RecordError("a second header")
        raise RecordError(f"unknown record kind {kind!r}")
    record: Record = reader(data)
    return record


def is_move(record: Record) -> bool:
    """Whether `record` changes the game (a decision, a call, a window, a regular default)."""
    if isinstance(record, ViolationRecord):
        return record.is_move
    return isinstance(record, (DecisionRecord, CallRecord, WindowRecord))


__all__ = [
    "FORMAT",
    "PROTOCOL_VERSION",
    "RECORD_KINDS",
    "Abandoned",
    "CallRecord",
    "Connected",
    "DecisionRecord",
    "Disconnected",
    "EventRecord",
    "Header",
    "Line",
    "Move",
    "Record",
    "RecordError",
    "RejectionRecord",
    "ResultRecord",
    "ResumeRecord",
    "SeatName",
    "SeatStart",
    "SeatSummary",
    "Start",
    "ViolationRecord",
    "WindowRecord",
    "header_from_json",
    "is_move",
    "record_from_json",
]
