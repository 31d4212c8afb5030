"""What goes in and out of a Match, as plain values: no protobuf, no streams, no clocks.

A shell (the gRPC table, the local driver, a conformance kit) turns what it receives into these
inputs and hands each one to `Match.handle(input, now)`; the outputs say what to send to which
stream, what to write to the replay, what to log, and when the match is over. `referee.server.codec`
is the one translation of the messages to and from the wire.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from referee.match.clock import ClockSettings
from referee.match.outcome import Outcome, RoundScore
from referee.match.records import Line
from referee.match.summary import SeatSummary
from referee.rules import Action, DecisionKind, Event, Observation, RulesConfig, State, legal_decisions


class RejectionReason(StrEnum):
    """Why a message was refused (nothing changed); the wire's RejectionReason."""

    ILLEGAL = "illegal"  # well formed, but the rules forbid it now (see the rule)
    INVALID = "invalid"  # malformed: unknown card, duplicate, missing field
    UNKNOWN_REQUEST = "unknown_request"  # no open request has that id
    STALE = "stale"  # decided on an older state version
    LATE = "late"  # the request's deadline had passed
    RATE_LIMITED = "rate_limited"  # too many messages
    OUT_OF_ORDER = "out_of_order"  # e.g. a second Hello


# ----------------------------------------------------------------------------- from a seat


@dataclass(frozen=True, slots=True)
class BadAction:
    """An action that could not even be read (an unknown card...): refused with this reason."""

    reason: RejectionReason
    message: str
    rule: str = ""


SentAction = Action | BadAction | None  # None: the message carried no action at all


@dataclass(frozen=True, slots=True)
class Decision:
    """The answer to a request, decided on the request's state version."""

    request_id: int
    state_version: int
    action: SentAction


@dataclass(frozen=True, slots=True)
class OutOfTurn:
    """A bomb or a Tichu call sent at any moment, decided on `state_version`."""

    state_version: int
    action: SentAction


@dataclass(frozen=True, slots=True)
class Ping:
    """Liveness, either way: answered with the same nonce."""

    nonce: int


@dataclass(frozen=True, slots=True)
class Pong:
    """The answer to a Ping."""

    nonce: int


@dataclass(frozen=True, slots=True)
class Hello:
    """A Hello after the first message of a stream (only the first one joins a seat)."""


Message = Decision | OutOfTurn | Ping | Pong | Hello


# ----------------------------------------------------------------------------- inputs


@dataclass(frozen=True, slots=True)
class SeatOptions:
    """What a seat's Hello asked of the referee beyond the protocol's defaults (all off)."""

    referee_declines: bool = False  # Hello.referee_declines: not asked into windows it can only decline
    defer_events: bool = False  # Hello.defer_events: events held until its next request
    referee_passes: bool = False  # Hello.referee_passes: not asked on turns it can only pass


NO_OPTIONS = SeatOptions()  # the protocol as it was: asked every time, events as they happen


@dataclass(frozen=True, slots=True)
class Connect:
    """A stream whose token named `seat` asks to take it; `stream` is the shell's id for it."""

    stream: int
    seat: int
    bot_name: str = ""
    bot_version: str = ""
    options: SeatOptions = NO_OPTIONS


@dataclass(frozen=True, slots=True)
class Disconnect:
    """A stream ended (dropped, cancelled or closed)."""

    stream: int


@dataclass(frozen=True, slots=True)
class Received:
    """A message arrived on a stream."""

    stream: int
    message: Message


@dataclass(frozen=True, slots=True)
class Delivered:
    """A request left for its seat now: its clock starts from here, not from when it was made."""

    stream: int
    request_id: int


@dataclass(frozen=True, slots=True)
class Tick:
    """Nothing but the time: act on the deadlines that have passed."""


@dataclass(frozen=True, slots=True)
class Drop:
    """End a seat's stream as a network failure would (UNAVAILABLE); the seat may reconnect."""

    seat: int
    details: str = "the stream was dropped"


@dataclass(frozen=True, slots=True)
class End:
    """End a stream with a gRPC status: protocol abuse the shell found (an empty envelope...)."""

    stream: int
    code: str
    details: str


@dataclass(frozen=True, slots=True)
class Stop:
    """Stop the match where it stands (the referee is shutting down): every stream ends."""

    reason: str = "the referee is shutting down"


@dataclass(frozen=True, slots=True)
class Withdraw:
    """A seat's player is gone for good (its process ended and will not be started again), as
    its host knows before any clock would: a seat that never connected forfeits at once, one
    that was playing is abandoned at once."""

    seat: int
    reason: str


Input = Connect | Disconnect | Received | Delivered | Tick | Drop | End | Stop | Withdraw


# ----------------------------------------------------------------------------- to a seat


@dataclass(frozen=True, slots=True)
class SeatInfo:
    """A seat's bot name and whether it is connected."""

    seat: int
    bot_name: str
    connected: bool


@dataclass(frozen=True, slots=True)
class Welcome:
    """The first message on an accepted stream: the seat, the rules, the clocks, the table."""

    match_id: str
    seat: int
    team: int
    config: RulesConfig
    clock: ClockSettings
    seats: tuple[SeatInfo, ...]
    protocol_version: int
    seed_commitment: str = ""  # format 2: what the deals will be checked against


@dataclass(frozen=True, slots=True)
class Request:
    """A decision the seat owes; its legal answers are those of `state` for `seat`.

    They are listed only when the request is encoded (a lead can list hundreds of plays): the
    state is never changed in place, so the list is the one of the state the request was made for.
    A request read off the wire has no state: `listed` holds the answers the wire listed.
    """

    request_id: int
    kind: DecisionKind
    state_version: int
    deadline_ms: int
    bank_left_ms: int
    can_call_tichu: bool
    exchange_to: tuple[int, ...]  # EXCHANGE: the recipients, in seat order
    seat: int = -1  # -1: read off the wire, where the stream names the seat
    state: State | None = field(default=None, compare=False, repr=False)
    listed: Sequence[Action] | None = field(default=None, compare=False, repr=False)

    def legal(self) -> Sequence[Action]:
        """The request's legal answers (an exchange's are described by exchange_to, not listed)."""
        if self.listed is not None:
            return self.listed
        assert self.state is not None, "a request has either its state or its listed answers"
        return legal_decisions(self.state, self.seat)


@dataclass(frozen=True, slots=True)
class Snapshot:
    """The seat's complete view at `state_version`, and the requests it owes."""

    state_version: int
    observation: Observation = field(repr=False)
    pending: tuple[Request, ...]


@dataclass(frozen=True, slots=True)
class EventMessage:
    """An event this seat may see: its place in the seat's stream, version, type and JSON."""

    seq: int
    state_version: int
    type: str
    json: str
    # The event itself where the match core made it (in one process, nothing to parse); None
    # when the message was read off the wire.
    event: Event | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class Cancelled:
    """A request that no longer needs an answer."""

    request_id: int
    reason: str


@dataclass(frozen=True, slots=True)
class Rejection:
    """A message that was not accepted; nothing changed."""

    reason: RejectionReason
    rule: str
    message: str
    request_id: int
    state_version: int


@dataclass(frozen=True, slots=True)
class SeatClock:
    """A decision a seat is being waited for, and its clock: what a viewer's clock shows."""

    seat: int
    kind: str  # a DecisionKind's value
    used_s: float  # since the request was sent
    limit_s: float  # the decision's own time
    bank_s: float  # the seat's bank when it was asked, spent once the limit is

    @property
    def left_s(self) -> float:
        """Time left before the referee answers for the seat (decision time, then the bank)."""
        return max(0.0, self.limit_s + self.bank_s - self.used_s)


@dataclass(frozen=True, slots=True)
class SeatStatus:
    """Another seat went away or came back."""

    seat: int
    connected: bool


@dataclass(frozen=True, slots=True)
class MatchResult:
    """The end of a match: how it ended, the scores, each scored round and the per-seat statistics.

    One value from the core to the store: the wire's MatchResult (codec), the replay's result
    record and the tournament's store are each made from it and read back into it."""

    match_id: str
    outcome: Outcome
    scores: tuple[int, int]
    round_scores: tuple[RoundScore, ...]  # each round played to the end and scored
    state_version: int
    summary: tuple[SeatSummary, ...]
    chain_head: str = ""  # format 2: the replay's last h, which the signature signs
    signature: str = ""  # the referee's Ed25519 signature of it (hex), if it signs

    @property
    def winner(self) -> int | None:
        """The winning team (0 = A, 1 = B), or None (a draw, no contest, an error)."""
        return self.outcome.winner

    @property
    def forfeiting_team(self) -> int | None:
        """The team that forfeited, or None."""
        return self.outcome.forfeiting_team

    @property
    def forfeit(self) -> bool:
        """Whether a team forfeited."""
        return self.outcome.forfeit

    @property
    def reason(self) -> str:
        """How it ended, in words."""
        return self.outcome.reason

    @property
    def hands(self) -> int:
        """The rounds played to the end and scored."""
        return len(self.round_scores)

    def statistics(self) -> dict[str, Any]:
        """The per-seat statistics as plain data (the wire's summary_json)."""
        return {
            "match_id": self.match_id,
            "state_version": self.state_version,
            "seats": [line.to_json() for line in self.summary],
        }


@dataclass(frozen=True, slots=True)
class LogEntry:
    """One event in the spectators' logs: its state version, type and JSON."""

    state_version: int
    type: str
    json: str


@dataclass(frozen=True, slots=True)
class ResultMessage:
    """The match is over; the stream ends after this."""

    result: MatchResult


OutMessage = (
    Welcome
    | Snapshot
    | EventMessage
    | Request
    | Cancelled
    | Rejection
    | SeatStatus
    | Ping
    | Pong
    | ResultMessage
)


# ----------------------------------------------------------------------------- outputs


@dataclass(frozen=True, slots=True)
class Accepted:
    """A Connect took its seat (the Welcome and the Snapshot follow)."""

    stream: int


@dataclass(frozen=True, slots=True)
class Refused:
    """A Connect could not take its seat: it is connected, or its reconnect grace expired."""

    stream: int
    reason: str


@dataclass(frozen=True, slots=True)
class Send:
    """Send `message` on `stream`."""

    stream: int
    message: OutMessage


@dataclass(frozen=True, slots=True)
class Close:
    """End `stream` after what was sent: with a gRPC status name, or normally (code None)."""

    stream: int
    code: str | None
    details: str = ""


@dataclass(frozen=True, slots=True)
class Write:
    """Append a line to the replay (the header, then records), with its h (format 2; else "")."""

    record: Line
    h: str = ""


@dataclass(frozen=True, slots=True)
class Note:
    """Something for the referee's log: a snake_case past-tense event name and its fields."""

    level: str  # debug, info, warning, error
    event: str
    fields: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Finished:
    """The match is over (`result` None when it was stopped without one)."""

    result: MatchResult | None


Output = Accepted | Refused | Send | Close | Write | Note | Finished
