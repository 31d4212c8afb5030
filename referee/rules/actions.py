"""What a seat can do: every action has one canonical string (`parse_action(str(a)) == a`) and JSON.

Canonical strings:
    pass | decline | grand_tichu | no_grand_tichu | tichu | no_tichu
    play <cards> [phoenix=<rank>] [wish=<rank>] [partner=<seat>] [tichu]
    exchange <seat>:<card> <seat>:<card> ...        (recipients in seat order)
    gift <seat>                                        (the Dragon trick goes to that seat)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from referee.rules.cards import (
    CARD_NAMES,
    cards_of,
    format_cards,
    parse_card,
    parse_mask,
    parse_rank,
    rank_name,
)
from referee.rules.combos import Combo
from referee.rules.errors import InvalidActionError
from referee.rules.values import field_values


@dataclass(frozen=True, slots=True)
class Pass:
    """Pass on a regular turn (R-TRICK-3)."""

    def __reduce__(self) -> tuple[type[Pass], tuple[Any, ...]]:
        return (Pass, field_values(self))

    def __str__(self) -> str:
        return "pass"


@dataclass(frozen=True, slots=True)
class Decline:
    """Decline a bomb window (R-BOMB-9): not a pass, it costs nothing."""

    def __reduce__(self) -> tuple[type[Decline], tuple[Any, ...]]:
        return (Decline, field_values(self))

    def __str__(self) -> str:
        return "decline"


@dataclass(frozen=True, slots=True)
class GrandTichu:
    """Answer the Grand Tichu question (R-GT-1): call or not."""

    call: bool

    def __reduce__(self) -> tuple[type[GrandTichu], tuple[Any, ...]]:
        return (GrandTichu, field_values(self))

    def __str__(self) -> str:
        return "grand_tichu" if self.call else "no_grand_tichu"


@dataclass(frozen=True, slots=True)
class CallTichu:
    """Call Tichu (R-CALL-1), or answer yes in the pre-exchange step (R-CALL-6)."""

    def __reduce__(self) -> tuple[type[CallTichu], tuple[Any, ...]]:
        return (CallTichu, field_values(self))

    def __str__(self) -> str:
        return "tichu"


@dataclass(frozen=True, slots=True)
class DeclineTichu:
    """Answer no in the pre-exchange Tichu step (R-CALL-6)."""

    def __reduce__(self) -> tuple[type[DeclineTichu], tuple[Any, ...]]:
        return (DeclineTichu, field_values(self))

    def __str__(self) -> str:
        return "no_tichu"


@dataclass(frozen=True, slots=True)
class Exchange:
    """The exchange submission (R-EXCH-1): one card for each recipient, as (seat, card) pairs."""

    gifts: tuple[tuple[int, int], ...]

    def __reduce__(self) -> tuple[type[Exchange], tuple[Any, ...]]:
        return (Exchange, field_values(self))

    def __str__(self) -> str:
        return "exchange " + " ".join(f"{seat}:{CARD_NAMES[card]}" for seat, card in self.gifts)

    @property
    def mask(self) -> int:
        """The given cards as a card set."""
        out = 0
        for _, card in self.gifts:
            out |= 1 << card
        return out


@dataclass(frozen=True, slots=True)
class GiftDragon:
    """Give the Dragon trick to an opponent (R-DRG-2)."""

    to: int

    def __reduce__(self) -> tuple[type[GiftDragon], tuple[Any, ...]]:
        return (GiftDragon, field_values(self))

    def __str__(self) -> str:
        return f"gift {self.to}"


class Play:
    """Play cards: a lead, a follow, a bomb in or out of turn, or the Dog.

    `phoenix` names the rank the Phoenix stands for (0: let the referee choose, R-PHX-5), `wish`
    the Mah Jong wish (0: none), `partner` the seat the Dog passes the lead to in §16 (-1: none),
    and `tichu` calls Tichu before the play (R-CALL-7). Plays are values: equal and hashable by
    these fields, and never changed after construction (a plain slotted class rather than a frozen
    dataclass because legal_actions builds thousands per second and a frozen init costs 4x).
    """

    __slots__ = ("_combo", "_origin", "_seat", "cards_mask", "partner", "phoenix", "tichu", "wish")

    def __init__(
        self,
        cards_mask: int,
        phoenix: int = 0,
        wish: int = 0,
        partner: int = -1,
        tichu: bool = False,
        _combo: Combo | None = None,
        _origin: object = None,
        _seat: int = -1,
    ) -> None:
        self.cards_mask = cards_mask
        self.phoenix = phoenix
        self.wish = wish
        self.partner = partner
        self.tichu = tichu
        # Given only by legal_actions: the reading, and the stamp of the state and the seat it
        # is legal for, so that apply need not validate again an action it has just listed.
        self._combo = _combo
        self._origin = _origin
        self._seat = _seat

    @classmethod
    def of(
        cls, cards: str, phoenix: str | int = 0, wish: str | int = 0, partner: int = -1, tichu: bool = False
    ) -> Play:
        """A play from cards in notation, e.g. `Play.of("MJ 2s 3j 4p 5s", wish="7")`."""
        return cls(
            parse_mask(cards),
            parse_rank(phoenix) if phoenix else 0,
            parse_rank(wish) if wish else 0,
            partner,
            tichu,
        )

    @property
    def cards(self) -> tuple[Any, ...]:
        """The cards played, in R-DEF-2 order."""
        return cards_of(self.cards_mask)

    def __reduce__(self) -> tuple[type[Play], tuple[int, int, int, int, bool]]:
        return (Play, self._key())

    def _key(self) -> tuple[int, int, int, int, bool]:
        return (self.cards_mask, self.phoenix, self.wish, self.partner, self.tichu)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Play) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __str__(self) -> str:
        parts = ["play", format_cards(self.cards_mask)]
        if self.phoenix:
            parts.append(f"phoenix={rank_name(self.phoenix)}")
        if self.wish:
            parts.append(f"wish={rank_name(self.wish)}")
        if self.partner >= 0:
            parts.append(f"partner={self.partner}")
        if self.tichu:
            parts.append("tichu")
        return " ".join(parts)

    def __repr__(self) -> str:
        return f"Play({str(self)!r})"


Action = Pass | Decline | GrandTichu | CallTichu | DeclineTichu | Exchange | GiftDragon | Play

PASS: Final = Pass()
DECLINE: Final = Decline()
CALL_TICHU: Final = CallTichu()
DECLINE_TICHU: Final = DeclineTichu()
GRAND_TICHU: Final = GrandTichu(True)
NO_GRAND_TICHU: Final = GrandTichu(False)
_WORDS: Final[dict[str, Action]] = {
    "pass": PASS,
    "decline": DECLINE,
    "tichu": CALL_TICHU,
    "no_tichu": DECLINE_TICHU,
    "grand_tichu": GRAND_TICHU,
    "no_grand_tichu": NO_GRAND_TICHU,
}


def _seat(text: str) -> int:
    if not text.strip().isdigit():
        raise InvalidActionError(f"a seat is a number 0..5, not {text!r}")
    return int(text)


def parse_action(text: str) -> Action:
    """Parse an action from its canonical string (see the module docstring)."""
    words = text.strip().split()
    if not words:
        raise InvalidActionError("empty action")
    head = words[0].lower()
    if head in _WORDS and len(words) == 1:
        return _WORDS[head]
    if head == "gift" and len(words) == 2:
        return GiftDragon(_seat(words[1]))
    if head == "exchange":
        gifts = []
        for word in words[1:]:
            seat, sep, card = word.partition(":")
            if not sep:
                raise InvalidActionError(f"exchange gifts are written seat:card, not {word!r}", "R-EXCH-1")
            gifts.append((_seat(seat), int(parse_card(card))))
        return make_exchange(gifts)
    if head == "play":
        cards: list[str] = []
        options: dict[str, str] = {}
        tichu = False
        for word in words[1:]:
            key, sep, value = word.partition("=")
            if sep:
                if key.lower() not in ("phoenix", "wish", "partner"):
                    raise InvalidActionError(f"unknown play option {key!r}: use phoenix=, wish= or partner=")
                options[key.lower()] = value
            elif word.lower() == "tichu":
                tichu = True
            else:
                cards.append(word)
        if not cards:
            raise InvalidActionError("a play names at least one card; to pass, send 'pass'")
        return Play(
            parse_mask(cards),
            parse_rank(options["phoenix"]) if "phoenix" in options else 0,
            parse_rank(options["wish"]) if "wish" in options else 0,
            _seat(options["partner"]) if "partner" in options else -1,
            tichu,
        )
    raise InvalidActionError(
        f"unknown action {text!r}: expected pass, decline, play ..., exchange ..., gift N, "
        "tichu, no_tichu, grand_tichu or no_grand_tichu"
    )


def make_exchange(gifts: list[tuple[int, int]] | tuple[tuple[int, int], ...]) -> Exchange:
    """An Exchange with its gifts in seat order; the same card twice is malformed."""
    ordered = tuple(sorted(gifts))
    if len({card for _, card in ordered}) != len(ordered):
        raise InvalidActionError("the same card is given twice", "R-EXCH-1")
    return Exchange(ordered)


def action_to_json(action: Action) -> dict[str, Any]:
    """The JSON object form of an action."""
    if isinstance(action, Play):
        out: dict[str, Any] = {"type": "play", "cards": format_cards(action.cards_mask)}
        if action.phoenix:
            out["phoenix"] = rank_name(action.phoenix)
        if action.wish:
            out["wish"] = rank_name(action.wish)
        if action.partner >= 0:
            out["partner"] = action.partner
        if action.tichu:
            out["tichu"] = True
        return out
    if isinstance(action, Exchange):
        return {"type": "exchange", "gifts": {str(seat): CARD_NAMES[c] for seat, c in action.gifts}}
    if isinstance(action, GiftDragon):
        return {"type": "gift", "to": action.to}
    return {"type": str(action)}


def action_from_json(data: Any) -> Action:
    """An action from its JSON object form, or from its canonical string."""
    if isinstance(data, str):
        return parse_action(data)
    if not isinstance(data, dict) or not isinstance(data.get("type"), str):
        raise InvalidActionError("an action is a string like 'play 7s' or an object with a 'type'")
    kind = data["type"].lower()
    if kind == "play":
        cards = data.get("cards")
        if isinstance(cards, list):
            cards = " ".join(str(c) for c in cards)
        if not isinstance(cards, str) or not cards.strip():
            raise InvalidActionError("a play needs 'cards', e.g. \"7s 7j\"")
        partner = data.get("partner")
        if partner is not None and (not isinstance(partner, int) or isinstance(partner, bool)):
            raise InvalidActionError(f"partner must be a seat number, not {partner!r}")
        return Play(
            parse_mask(cards),
            parse_rank(data["phoenix"]) if data.get("phoenix") else 0,
            parse_rank(data["wish"]) if data.get("wish") else 0,
            -1 if partner is None else partner,
            bool(data.get("tichu", False)),
        )
    if kind == "exchange":
        gifts = data.get("gifts")
        if not isinstance(gifts, dict):
            raise InvalidActionError('an exchange needs "gifts": {"<seat>": "<card>", ...}', "R-EXCH-1")
        return make_exchange([(_seat(str(seat)), int(parse_card(str(card)))) for seat, card in gifts.items()])
    if kind == "gift":
        to = data.get("to")
        if not isinstance(to, int) or isinstance(to, bool):
            raise InvalidActionError('a gift needs "to": <seat>', "R-DRG-2")
        return GiftDragon(to)
    if kind in _WORDS:
        return _WORDS[kind]
    raise InvalidActionError(f"unknown action type {data['type']!r}")
