"""The replay schema: one frozen dataclass per record kind, its JSON form, and the hash chain's
fields (its primitives are in referee.match.digests).

A replay is a header and then records in order, one JSON object per line. The match core makes
these values; the writer turns them into lines with `to_json`, and every reader (verify, show,
html, resume, the tournament) turns lines back into them with `record_from_json`, so no other
module reads a record by string key. `to_json` gives the keys in the order the referee has always
written them, so a replay's line is the same whichever release wrote it; `record_from_json` reads
every replay an earlier release wrote (a field added since takes its default) and raises
RecordError, naming the field, for anything else.

Format 2 (`tichu-replay/2`, what the referee writes now) adds a proof: the header commits to the
seed instead of showing it (`seed_commitment = SHA-256(JSON of the seed || salt)`), a `reveal`
record gives seed and salt at the end, and every line carries `h`, a SHA-256 chain over the
canonical JSON of the lines (`line_hash`): the header's starts it, the result's is the head, which
the referee may sign. Format 1 has no chain and shows the seed; it reads and verifies as before.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, ClassVar

from referee.match.clock import ClockSettings
from referee.match.digests import DIGEST
from referee.match.fields import (
    RecordError,
    read_action,
    read_bool,
    read_decision_kind,
    read_int,
    read_list,
    read_num,
    read_object,
    read_opt_num,
    read_opt_seat,
    read_seat,
    read_seat_map,
    read_seats,
    read_str,
    read_t_ms,
)
from referee.match.outcome import Outcome, Termination
from referee.match.summary import SeatSummary
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

FORMAT_1 = "tichu-replay/1"  # no chain, the seed in the header
FORMAT = "tichu-replay/2"
FORMATS = (FORMAT_1, FORMAT)
CALL_TICHU = CallTichu()
# The wire protocol this referee speaks (Hello.protocol_version, Welcome, the replay header).
PROTOCOL_VERSION = 1

Json = dict[str, Any]


def _hex_digest(data: Mapping[str, Any], key: str, kind: str) -> str:
    value = read_str(data, key)
    if len(value) != 64 or any(c not in "0123456789abcdef" for c in value):
        raise RecordError(f"{kind}: {key!r} must be 64 lowercase hex digits")
    return value


def _line_digest(data: Mapping[str, Any], kind: str) -> str:
    value = read_str(data, "h")
    if not DIGEST.fullmatch(value):
        raise RecordError(f"{kind}: 'h' must be a SHA-256 digest in unpadded base64url (43 characters)")
    return value


# ----------------------------------------------------------------------------------- records


@dataclass(frozen=True, slots=True)
class SeatName:
    """A seat and the name the organiser gave its bot ("" when none); `person` when a person
    plays it (from a browser): such a game is casual, never rated."""

    seat: int
    bot_name: str
    person: bool = False

    def to_json(self) -> Json:
        """The seat's entry in the header; "person" only when set, so that every header written
        before person seats existed reads and hashes as it did."""
        out: Json = {"seat": self.seat, "bot_name": self.bot_name}
        if self.person:
            out["person"] = True
        return out


@dataclass(frozen=True, slots=True)
class Header:
    """The first line: what the match is (rules, clocks, seats) and how it starts.

    Format 2 shows `seed_commitment` and `sealed_seed` (the seed and salt, encrypted for the
    referee that wrote it, which needs them to resume the match) and no seed; format 1 shows
    the seed.
    """

    kind: ClassVar[str] = "header"
    match_id: str
    created_at: str
    config: RulesConfig
    seed: int | str | None  # None in format 2: the reveal record holds it
    clock: ClockSettings
    seats: tuple[SeatName, ...]
    watch_delay_events: int = 0
    initial_state: State | None = None  # a given position instead of a deal
    protocol_version: int = PROTOCOL_VERSION
    format: str = FORMAT
    seed_commitment: str = ""
    sealed_seed: str = ""
    t_ms: float = 0.0

    @property
    def has_person(self) -> bool:
        """Whether a person played a seat: the game is casual, never rated."""
        return any(s.person for s in self.seats)

    @property
    def chained(self) -> bool:
        """Whether this replay's lines carry the hash chain (format 2)."""
        return self.format != FORMAT_1

    def to_json(self) -> Json:
        """The JSON form, keys in the order the referee writes them."""
        out: Json = {
            "kind": self.kind,
            "format": self.format,
            "match_id": self.match_id,
            "created_at": self.created_at,
            "config": self.config.to_json(),
        }
        if self.chained:
            out["seed_commitment"] = self.seed_commitment
            out["sealed_seed"] = self.sealed_seed
        else:
            out["seed"] = self.seed
        out.update(
            {
                "clock": self.clock.to_json(),
                "seats": [s.to_json() for s in self.seats],
                "watch_delay_events": self.watch_delay_events,
                "initial_state": None if self.initial_state is None else state_to_json(self.initial_state),
                "protocol_version": self.protocol_version,
                "t_ms": self.t_ms,
            }
        )
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Header:
        """The header from its JSON form (either format)."""
        form = data.get("format")
        if form not in FORMATS:
            raise RecordError(f"expected a {FORMAT} or {FORMAT_1} header, found {form or data.get('kind')!r}")
        try:
            config = RulesConfig.from_json(read_object(data, "config"))
            state_json = data.get("initial_state")
            initial = None if state_json is None else state_from_json(state_json)
        except RulesError as error:
            raise RecordError(f"header: {error}") from None
        seed = data.get("seed")
        commitment = sealed = ""
        if form == FORMAT_1:
            if not isinstance(seed, (int, str)) or isinstance(seed, bool):
                raise RecordError(f"header: 'seed' must be a number or a string, not {seed!r}")
        else:
            if "seed" in data:
                raise RecordError("header: a tichu-replay/2 header commits to its seed and does not show it")
            commitment = _hex_digest(data, "seed_commitment", "header")
            sealed = str(data.get("sealed_seed") or "")
        seats = []
        for entry in read_list(data, "seats"):
            if not isinstance(entry, dict):
                raise RecordError("header: each of 'seats' is an object with 'seat' and 'bot_name'")
            person = entry.get("person", False)
            if not isinstance(person, bool):
                raise RecordError("header: a seat's 'person' is true or false")
            seats.append(SeatName(read_seat(entry, "seat"), str(entry.get("bot_name") or ""), person))
        return cls(
            match_id=read_str(data, "match_id"),
            created_at=str(data.get("created_at", "")),
            config=config,
            seed=seed,
            clock=ClockSettings.from_json(data.get("clock") or {}),
            seats=tuple(seats),
            watch_delay_events=int(data.get("watch_delay_events") or 0),
            initial_state=initial,
            protocol_version=int(data.get("protocol_version") or PROTOCOL_VERSION),
            format=str(form),
            seed_commitment=commitment,
            sealed_seed=sealed,
            t_ms=read_t_ms(data),
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
    seat = read_seat(data)
    if read_bool(data, "connected"):
        return Connected(
            seat,
            bool(data.get("reconnect", False)),
            str(data.get("bot_name", "")),
            str(data.get("bot_version", "")),
            read_t_ms(data),
        )
    if data.get("abandoned"):
        return Abandoned(seat, read_t_ms(data))
    return Disconnected(seat, str(data.get("why", "")), str(data.get("status", "")), read_t_ms(data))


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
        for entry in read_list(data, "seats"):
            if not isinstance(entry, dict):
                raise RecordError("start: each of 'seats' is an object")
            seats.append(
                SeatStart(
                    read_seat(entry, "seat"),
                    str(entry.get("bot_name", "")),
                    str(entry.get("bot_version", "")),
                )
            )
        return cls(str(data.get("started_at", "")), tuple(seats), read_t_ms(data))


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
    # `data` as compact JSON text when the match core made it for the wire ("" otherwise): the
    # replay writer puts it in the line as it is instead of encoding the event again.
    text: str = field(default="", compare=False, repr=False)

    @classmethod
    def of(
        cls, version: int, event: Event, t_ms: float, data: Json | None = None, text: str = ""
    ) -> EventRecord:
        """The record of `event` (its JSON form computed here unless given)."""
        return cls(version, event.private_to, event, event.to_json() if data is None else data, t_ms, text)

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
        event_json = read_object(data, "event")
        try:
            event = event_from_json(event_json)
        except (RulesError, KeyError, TypeError, ValueError) as error:
            raise RecordError(f"event record: unreadable event {event_json!r} ({error})") from None
        return cls(
            read_int(data, "version"), read_opt_seat(data, "private_to"), event, event_json, read_t_ms(data)
        )


@dataclass(frozen=True, slots=True)
class DecisionRecord:
    """An accepted answer to a regular request, with its timing and the bank it left; or a pass
    the referee made for a seat that could only pass (`by_referee`, request 0, no time used)."""

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
    by_referee: bool = False  # Hello.referee_passes: the seat was not asked

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
            # Only when set: the lines of seats that are asked stay as they were.
            **({"by_referee": True} if self.by_referee else {}),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> DecisionRecord:
        """The record from its JSON form."""
        return cls(
            read_seat(data),
            read_int(data, "request_id"),
            read_decision_kind(data),
            read_int(data, "version"),
            read_action(data, "action"),
            read_num(data, "sent_ms"),
            read_num(data, "received_ms"),
            read_num(data, "time_used_ms"),
            read_int(data, "bank_left_ms"),
            read_t_ms(data),
            "by_referee" in data and read_bool(data, "by_referee"),
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
    referee_declined: tuple[int, ...] = ()  # seats the referee declined for (Hello.referee_declines)

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
        referee_declined: Sequence[int] = (),
    ) -> WindowRecord:
        """The record of a window resolved from `answers` (as given, flags and all)."""
        kept = tuple((s, a if s == call else _without_call(a)) for s, a in answers.items())
        discarded = tuple(s for s, a in answers.items() if isinstance(a, Play) and s != bomb)
        return cls(
            version,
            tuple(order),
            kept,
            opened_ms,
            tuple(times_ms.items()),
            call,
            bomb,
            discarded,
            t_ms,
            tuple(referee_declined),
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
            **({"referee_declined": list(self.referee_declined)} if self.referee_declined else {}),
            "t_ms": self.t_ms,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> WindowRecord:
        """The record from its JSON form."""
        call = read_opt_seat(data, "call")
        answers = []
        for seat, text in read_seat_map(data, "answers"):
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
        for seat, used in read_seat_map(data, "time_ms"):
            if not isinstance(used, (int, float)) or isinstance(used, bool):
                raise RecordError(f"window record: the think time of seat {seat} must be a number")
            times.append((seat, used))
        return cls(
            read_int(data, "version"),
            read_seats(read_list(data, "order"), "order", "window"),
            tuple(answers),
            read_opt_num(data, "opened_ms"),
            tuple(times),
            call,
            read_opt_seat(data, "bomb"),
            read_seats(data.get("discarded") or [], "discarded", "window"),
            read_t_ms(data),
            read_seats(data.get("referee_declined") or [], "referee_declined", "window"),
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
        action = read_action(data, "action") if "action" in data else CallTichu()
        return cls(
            read_seat(data), read_int(data, "version"), read_num(data, "received_ms"), action, read_t_ms(data)
        )


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
            read_seat(data),
            read_int(data, "request_id"),
            read_decision_kind(data),
            read_int(data, "version"),
            read_num(data, "sent_ms"),
            read_action(data, "default"),
            read_int(data, "count"),
            read_t_ms(data),
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
            read_seat(data),
            read_str(data, "reason"),
            str(data.get("rule") or ""),
            str(data.get("message", "")),
            int(data.get("request_id") or 0),
            read_t_ms(data),
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
        return cls(read_int(data, "version"), str(data.get("resumed_at", "")), read_t_ms(data))


@dataclass(frozen=True, slots=True)
class RevealRecord:
    """The seed and salt the header committed to (format 2), written just before the result: a
    view published while other tables still play the same deal can withhold it."""

    kind: ClassVar[str] = "reveal"
    seed: int | str
    salt: str  # hex
    t_ms: float = 0.0

    def to_json(self) -> Json:
        """The JSON form."""
        return {"kind": self.kind, "seed": self.seed, "salt": self.salt, "t_ms": self.t_ms}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RevealRecord:
        """The record from its JSON form."""
        seed = data.get("seed")
        if not isinstance(seed, (int, str)) or isinstance(seed, bool):
            raise RecordError(f"reveal record: 'seed' must be a number or a string, not {seed!r}")
        salt = read_str(data, "salt")
        try:
            bytes.fromhex(salt)
        except ValueError:
            raise RecordError("reveal record: 'salt' must be hex") from None
        return cls(seed, salt, read_t_ms(data))


@dataclass(frozen=True, slots=True)
class RedactedRecord:
    """A line of a redacted view: a record the view withholds, of which only its h is shown."""

    kind: ClassVar[str] = "redacted"
    h: str
    t_ms: float = 0.0

    def to_json(self) -> Json:
        """The JSON form (its h is the line's own, so the writer adds no other)."""
        return {"kind": self.kind, "h": self.h}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RedactedRecord:
        """The record from its JSON form."""
        return cls(_line_digest(data, "redacted record"))


@dataclass(frozen=True, slots=True)
class ResultRecord:
    """The end: how the match ended (its Outcome: termination, winner, forfeiting team, reason), the
    scores, the rounds begun and the summary. In the JSON form "no winner" and "no forfeit" are -1;
    `termination` is None only in a result written before terminations were recorded."""

    kind: ClassVar[str] = "result"
    winner: int | None
    scores: tuple[int, int]
    forfeiting_team: int | None
    reason: str
    finished_at: str
    rounds: int
    summary: tuple[SeatSummary, ...]
    absent: tuple[int, ...] = ()  # a start timeout's seats that never came
    t_ms: float = 0.0
    # Format 2: the referee's Ed25519 signature (hex) of head_message(this line's h), if it signs.
    signature: str = ""
    termination: Termination | None = None

    @classmethod
    def of(
        cls,
        outcome: Outcome,
        *,
        scores: tuple[int, int],
        finished_at: str,
        rounds: int,
        summary: tuple[SeatSummary, ...],
        absent: tuple[int, ...],
        t_ms: float,
    ) -> ResultRecord:
        """The record of a match that ended with `outcome`."""
        return cls(
            winner=outcome.winner,
            scores=scores,
            forfeiting_team=outcome.forfeiting_team,
            reason=outcome.reason,
            finished_at=finished_at,
            rounds=rounds,
            summary=summary,
            absent=absent,
            t_ms=t_ms,
            termination=outcome.termination,
        )

    @property
    def outcome(self) -> Outcome:
        """How the match ended (read back from its other fields in a result that has no termination)."""
        if self.termination is None:
            return Outcome.of_legacy(self.winner, self.forfeiting_team, self.reason, self.absent)
        return Outcome(self.termination, self.winner, self.forfeiting_team, self.reason)

    @property
    def ends_unfinished_game(self) -> bool:
        """Whether this result ends a game that the rules had not ended (forfeit, no-show, error)."""
        return self.outcome.termination.ends_unfinished_game

    def to_json(self) -> Json:
        """The JSON form."""
        out: Json = {
            "kind": self.kind,
            "winner": -1 if self.winner is None else self.winner,
            "scores": list(self.scores),
            "forfeiting_team": -1 if self.forfeiting_team is None else self.forfeiting_team,
            "reason": self.reason,
        }
        if self.termination is not None:
            out["termination"] = self.termination.value
        out.update(
            {
                "finished_at": self.finished_at,
                "rounds": self.rounds,
                "summary": [line.to_json() for line in self.summary],
            }
        )
        if self.absent:
            out["absent"] = list(self.absent)
        out["t_ms"] = self.t_ms
        if self.signature:
            out["signature"] = self.signature
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ResultRecord:
        """The record from its JSON form."""
        scores = read_list(data, "scores")
        if len(scores) != 2 or not all(isinstance(s, int) and not isinstance(s, bool) for s in scores):
            raise RecordError(f"result record: 'scores' must be two whole numbers, not {scores!r}")
        summary = []
        for line in data.get("summary") or []:
            if not isinstance(line, dict):
                raise RecordError("result record: each summary line is an object")
            summary.append(SeatSummary.from_json(line))
        termination = data.get("termination")
        if termination is not None and termination not in Termination.__members__.values():
            raise RecordError(
                f"result record: 'termination' {termination!r} is not one of {list(Termination)}"
            )
        winner = read_int(data, "winner")
        forfeiting = int(data.get("forfeiting_team", -1))
        return cls(
            None if winner < 0 else winner,
            (scores[0], scores[1]),
            None if forfeiting < 0 else forfeiting,
            str(data.get("reason", "")),
            str(data.get("finished_at", "")),
            int(data.get("rounds") or 0),
            tuple(summary),
            read_seats(data.get("absent") or [], "absent", "result"),
            read_t_ms(data),
            str(data.get("signature") or ""),
            None if termination is None else Termination(termination),
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
    | RevealRecord
    | ResultRecord
    | RedactedRecord
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
    "reveal": RevealRecord.from_json,
    "redacted": RedactedRecord.from_json,
    "result": ResultRecord.from_json,
}
RECORD_KINDS = frozenset({"header", *_READERS})


def header_from_json(data: object) -> Header:
    """The header a replay's first line holds; RecordError unless it is a header this code reads."""
    if not isinstance(data, dict) or not isinstance(data.get("kind"), str):
        raise RecordError("a record is a JSON object with a 'kind'")
    if data["kind"] != "header" or data.get("format") not in FORMATS:
        found = data.get("format", data["kind"])
        raise RecordError(f"expected a {FORMAT} or {FORMAT_1} header, found {found!r}")
    with _malformed_is_a_record_error("header"):
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
    with _malformed_is_a_record_error(f"{kind} record"):
        record: Record = reader(data)
    return record


@contextmanager
def _malformed_is_a_record_error(what: str) -> Iterator[None]:
    """Whatever a reader trips on is a RecordError: the typed readers (referee.match.fields) name
    the field; a value of the wrong shape deeper in (a list where a number goes, a number too big
    for an int) is named by its record kind and what was wrong with it."""
    try:
        yield
    except RecordError:
        raise
    except (TypeError, ValueError, KeyError, IndexError, AttributeError, OverflowError, RulesError) as error:
        detail = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise RecordError(f"{what}: a field is malformed ({detail[:200]})") from None


def is_move(record: Record) -> bool:
    """Whether `record` changes the game (a decision, a call, a window, a regular default)."""
    if isinstance(record, ViolationRecord):
        return record.is_move
    return isinstance(record, (DecisionRecord, CallRecord, WindowRecord))


__all__ = [
    "FORMAT",
    "FORMATS",
    "FORMAT_1",
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
    "RedactedRecord",
    "RejectionRecord",
    "ResultRecord",
    "ResumeRecord",
    "RevealRecord",
    "SeatName",
    "SeatStart",
    "Start",
    "ViolationRecord",
    "WindowRecord",
    "header_from_json",
    "is_move",
    "record_from_json",
]
