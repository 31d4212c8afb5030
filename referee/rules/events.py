"""What happened: the engine's events, each public or private to one seat (R-INFO-1).

Every event has a JSON form `{"type": <snake_case past tense>, ...}` that the wire protocol and
the replay format share; `event_from_json(event.to_json()) == event`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar, Final

from referee.rules.cards import CARD_NAMES, format_cards, parse_card, parse_mask, parse_rank, rank_name
from referee.rules.combos import KIND_BY_LABEL, Combo, ComboKind
from referee.rules.errors import InvalidActionError

# The values each string field of an event may take (the JSON Schema under proto/ lists them).
STRING_FIELD_VALUES: Final[dict[str, tuple[str, ...]]] = {
    "stage": ("first", "rest", "all"),  # CardsDealt: before Grand Tichu, after it, or no Grand Tichu
    "call": ("tichu", "grand_tichu"),  # Called, CallDeclined
    "reason": ("normal", "double_victory", "triple_victory"),  # RoundEnded
}


@dataclass(frozen=True, slots=True)
class Event:
    """Base of all events; `private_to` is the only seat that may see it, None if public."""

    type: ClassVar[str] = "event"

    @property
    def private_to(self) -> int | None:
        """The seat this event is private to, or None for a public event."""
        return None

    def visible_to(self, seat: int) -> bool:
        """Whether `seat` may see this event (R-INFO-1)."""
        owner = self.private_to
        return owner is None or owner == seat

    def to_json(self) -> dict[str, Any]:
        """The JSON form: `type` plus the fields."""
        out: dict[str, Any] = {"type": self.type}
        for field in dataclasses.fields(self):
            out[field.name] = _encode(field.name, getattr(self, field.name))
        return out


def _encode(name: str, value: Any) -> Any:
    if name in ("cards", "rest"):
        return format_cards(value)
    if name == "combo":
        return None if value is None else value.to_json()
    if name in ("wish", "rank") and isinstance(value, int):
        return rank_name(value) if value else None
    if name in ("gifts", "received"):
        return [[seat, CARD_NAMES[card]] for seat, card in value]
    if name == "partner":
        return None if value < 0 else value
    if isinstance(value, tuple):
        return list(value)
    return value


def combo_from_json(data: dict[str, Any]) -> Combo:
    """A Combo from its JSON form (Combo.to_json())."""
    label = data["bomb"] if data["kind"] == "bomb" else data["kind"]
    kind = KIND_BY_LABEL[label]
    phoenix = parse_rank(data["phoenix"]) if data.get("phoenix") else 0
    return Combo(ComboKind(kind), int(data["length"]), round(float(data["rank"]) * 2), phoenix)


@dataclass(frozen=True, slots=True)
class RoundStarted(Event):
    """A round began: its number (0-based) and dealer (R-FLOW-2)."""

    type: ClassVar[str] = "round_started"
    round: int
    dealer: int


@dataclass(frozen=True, slots=True)
class CardsDealt(Event):
    """Cards a seat was dealt: `first` (before Grand Tichu), `rest`, or `all` (no Grand Tichu)."""

    type: ClassVar[str] = "cards_dealt"
    seat: int
    cards: int
    stage: str

    @property
    def private_to(self) -> int | None:
        """Only the seat itself."""
        return self.seat


@dataclass(frozen=True, slots=True)
class Called(Event):
    """A Tichu or Grand Tichu call was accepted (R-CALL-4: public at once)."""

    type: ClassVar[str] = "called"
    seat: int
    call: str  # "tichu" or "grand_tichu"


@dataclass(frozen=True, slots=True)
class CallDeclined(Event):
    """A seat answered no to the Grand Tichu question or the pre-exchange Tichu step."""

    type: ClassVar[str] = "call_declined"
    seat: int
    call: str


@dataclass(frozen=True, slots=True)
class ExchangeSubmitted(Event):
    """The seat's own exchange, as accepted; private (R-EXCH-3)."""

    type: ClassVar[str] = "exchange_submitted"
    seat: int
    gifts: tuple[tuple[int, int], ...]

    @property
    def private_to(self) -> int | None:
        """Only the giver."""
        return self.seat


@dataclass(frozen=True, slots=True)
class CardsReceived(Event):
    """The cards a seat received in the exchange, with their givers; private (R-EXCH-3)."""

    type: ClassVar[str] = "cards_received"
    seat: int
    received: tuple[tuple[int, int], ...]

    @property
    def private_to(self) -> int | None:
        """Only the receiver."""
        return self.seat


@dataclass(frozen=True, slots=True)
class ExchangeCompleted(Event):
    """All exchange cards were delivered at once (R-EXCH-2)."""

    type: ClassVar[str] = "exchange_completed"


@dataclass(frozen=True, slots=True)
class Played(Event):
    """A play: cards, the reading (Phoenix included), the wish, the Dog's partner; bombs too."""

    type: ClassVar[str] = "played"
    seat: int
    cards: int
    combo: Combo
    wish: int = 0
    partner: int = -1
    out_of_turn: bool = False


@dataclass(frozen=True, slots=True)
class Passed(Event):
    """A seat passed on its regular turn."""

    type: ClassVar[str] = "passed"
    seat: int


@dataclass(frozen=True, slots=True)
class WindowClosed(Event):
    """A bomb window ended with every seat declining (a bomb shows as a Played event)."""

    type: ClassVar[str] = "window_closed"


@dataclass(frozen=True, slots=True)
class WishFulfilled(Event):
    """The Mah Jong wish was fulfilled by this seat's play (R-WISH-8)."""

    type: ClassVar[str] = "wish_fulfilled"
    seat: int
    rank: int


@dataclass(frozen=True, slots=True)
class LeadPassed(Event):
    """The Dog passed the lead (R-DOG-2/3, R-V6-5)."""

    type: ClassVar[str] = "lead_passed"
    seat: int
    to: int


@dataclass(frozen=True, slots=True)
class TrickWon(Event):
    """A trick was collected by `seat`; `points` are its card points."""

    type: ClassVar[str] = "trick_won"
    seat: int
    cards: int
    points: int


@dataclass(frozen=True, slots=True)
class DragonGiftPending(Event):
    """The Dragon won the trick; `seat` must now give it to an opponent (R-DRG-2)."""

    type: ClassVar[str] = "dragon_gift_pending"
    seat: int


@dataclass(frozen=True, slots=True)
class DragonGiven(Event):
    """The Dragon trick went to an opponent (R-DRG-2)."""

    type: ClassVar[str] = "dragon_given"
    seat: int
    to: int
    cards: int
    points: int


@dataclass(frozen=True, slots=True)
class WentOut(Event):
    """A seat played its last card; `place` is 1 for the first out (R-END-1)."""

    type: ClassVar[str] = "went_out"
    seat: int
    place: int


@dataclass(frozen=True, slots=True)
class RoundEnded(Event):
    """The round ended: `double_victory`, `triple_victory` or `normal`; `out` is the order out."""

    type: ClassVar[str] = "round_ended"
    reason: str
    out: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class RoundScored(Event):
    """A round's score per team (A, B): card points, call results, total, and the game totals."""

    type: ClassVar[str] = "round_scored"
    round: int
    card_points: tuple[int, ...]
    call_points: tuple[int, ...]
    bonus_points: tuple[int, ...]
    round_points: tuple[int, ...]
    totals: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class GameOver(Event):
    """The game ended (§15): the winning team (0 = A, 1 = B) or None for a draw."""

    type: ClassVar[str] = "game_over"
    winner: int | None
    totals: tuple[int, ...]


EVENT_TYPES: Final[dict[str, type[Event]]] = {
    cls.type: cls
    for cls in (
        RoundStarted,
        CardsDealt,
        Called,
        CallDeclined,
        ExchangeSubmitted,
        CardsReceived,
        ExchangeCompleted,
        Played,
        Passed,
        WindowClosed,
        WishFulfilled,
        LeadPassed,
        TrickWon,
        DragonGiftPending,
        DragonGiven,
        WentOut,
        RoundEnded,
        RoundScored,
        GameOver,
    )
}


def _rank_or_none(value: Any) -> int:
    return parse_rank(value) if value else 0


def _seat_cards(value: Any) -> tuple[tuple[int, int], ...]:
    return tuple((int(seat), int(parse_card(card))) for seat, card in value)


def _partner(value: Any) -> Any:
    return -1 if value is None else value


def _as_read(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value


# How each field is read back, by name; the others as they are, lists as tuples.
_FIELD_READERS: Final[dict[str, Callable[[Any], Any]]] = {
    "cards": parse_mask,
    "rest": parse_mask,
    "combo": combo_from_json,
    "wish": _rank_or_none,
    "rank": _rank_or_none,
    "gifts": _seat_cards,
    "received": _seat_cards,
    "partner": _partner,
}


# Each event type's fields with their readers, found once: a bot reads about 160 events a hand,
# and dataclasses.fields() and the name tests were half the cost of each.
_READERS: Final[dict[type[Event], tuple[tuple[str, Callable[[Any], Any]], ...]]] = {
    cls: tuple((f.name, _FIELD_READERS.get(f.name, _as_read)) for f in dataclasses.fields(cls))
    for cls in EVENT_TYPES.values()
}


def event_from_json(data: dict[str, Any]) -> Event:
    """Rebuild an event from its JSON form."""
    cls = EVENT_TYPES.get(str(data.get("type")))
    if cls is None:
        raise InvalidActionError(f"unknown event type {data.get('type')!r}")
    return cls(**{name: read(data[name]) for name, read in _READERS[cls]})
