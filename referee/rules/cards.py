"""Cards in the notation of RULES.md §0.2, and 56-bit card sets.

A card is an int from 0 to 55 ordered as R-DEF-2 orders cards: DOG < MJ < 2..A < PHX < DRG, and
cards of equal rank in the suit order j < s < p < t. A set of cards is an int bit mask, which is
what the engine computes with; the public API hands out sorted tuples of Card.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from enum import IntEnum
from typing import Final, TypeVar

from referee.rules.errors import InvalidActionError

_T = TypeVar("_T")
try:
    # Only the compiled build reads this decorator; mypy_extensions comes with mypy.
    from mypy_extensions import mypyc_attr
except ImportError:  # the pure build, without mypy installed

    def mypyc_attr(*_attrs: str, **_kwattrs: object) -> Callable[[_T], _T]:
        """Leave the class as it is."""
        return lambda cls: cls


class Suit(IntEnum):
    """The four suits; their order only breaks ties in R-DEF-2."""

    JADE = 0
    SWORD = 1
    PAGODA = 2
    STAR = 3

    @property
    def letter(self) -> str:
        """The suit's letter in RULES.md §0.2."""
        return SUIT_LETTERS[self]


SUIT_LETTERS: Final = "jspt"
RANK_NAMES: Final = {
    1: "MJ",
    2: "2",
    3: "3",
    4: "4",
    5: "5",
    6: "6",
    7: "7",
    8: "8",
    9: "9",
    10: "10",
    11: "J",
    12: "Q",
    13: "K",
    14: "A",
    15: "DRG",
}
RANK_BY_NAME: Final = {name: rank for rank, name in RANK_NAMES.items() if 2 <= rank <= 14}

DOG_INDEX: Final = 0
MJ_INDEX: Final = 1
PHX_INDEX: Final = 54
DRG_INDEX: Final = 55

DOG: Final = 1 << DOG_INDEX
MJ: Final = 1 << MJ_INDEX
PHX: Final = 1 << PHX_INDEX
DRG: Final = 1 << DRG_INDEX
SPECIALS: Final = DOG | MJ | PHX | DRG
FULL_DECK: Final = (1 << 56) - 1
NATURALS: Final = FULL_DECK & ~SPECIALS


def natural_index(rank: int, suit: int) -> int:
    """The index of the natural card of rank 2..14 and suit 0..3."""
    return 4 * rank - 6 + suit


def rank_shift(rank: int) -> int:
    """The bit position of the first card of a natural rank (its nibble holds the four suits)."""
    return 4 * rank - 6


RANK_MASKS: Final = {rank: 0xF << rank_shift(rank) for rank in range(2, 15)}
SUIT_MASKS: Final = tuple(sum(1 << natural_index(rank, suit) for rank in range(2, 15)) for suit in range(4))

_SPECIAL_NAMES: Final = {DOG_INDEX: "DOG", MJ_INDEX: "MJ", PHX_INDEX: "PHX", DRG_INDEX: "DRG"}
_SPECIAL_BY_NAME: Final = {name: index for index, name in _SPECIAL_NAMES.items()}


# A compiled class cannot subclass int; this one stays a Python class in the compiled build.
@mypyc_attr(native_class=False)
class Card(int):
    """One of the 56 cards; `str(card)` is its notation and `parse_card(str(card)) == card`."""

    __slots__ = ()

    @property
    def rank(self) -> int:
        """1 for the Mah Jong, 2..14 for naturals, 15 for the Dragon, 0 for Dog and Phoenix."""
        return CARD_RANKS[self]

    @property
    def suit(self) -> Suit | None:
        """The suit of a natural card, None for a special card."""
        if 2 <= self <= 53:
            return Suit((self - 2) % 4)
        return None

    @property
    def is_special(self) -> bool:
        """True for the Dog, Mah Jong, Phoenix and Dragon."""
        return self in _SPECIAL_NAMES

    @property
    def points(self) -> int:
        """Card points under R-DECK-4."""
        return CARD_POINTS[self]

    @property
    def mask(self) -> int:
        """This card as a one-bit card set."""
        return 1 << self

    def __str__(self) -> str:
        return CARD_NAMES[self]

    def __repr__(self) -> str:
        return f"Card({CARD_NAMES[self]!r})"


def _card_name(index: int) -> str:
    if index in _SPECIAL_NAMES:
        return _SPECIAL_NAMES[index]
    rank, suit = divmod(index - 2, 4)
    return RANK_NAMES[rank + 2] + SUIT_LETTERS[suit]


def _card_rank(index: int) -> int:
    if index in (DOG_INDEX, PHX_INDEX):
        return 0
    if index == MJ_INDEX:
        return 1
    if index == DRG_INDEX:
        return 15
    return (index - 2) // 4 + 2


def _card_points(index: int) -> int:
    if index == DRG_INDEX:
        return 25
    if index == PHX_INDEX:
        return -25
    rank = _card_rank(index)
    return {5: 5, 10: 10, 13: 10}.get(rank, 0) if 2 <= rank <= 14 else 0


CARDS: Final[tuple[Card, ...]] = tuple(Card(i) for i in range(56))
CARD_NAMES: Final[tuple[str, ...]] = tuple(_card_name(i) for i in range(56))
CARD_RANKS: Final[tuple[int, ...]] = tuple(_card_rank(i) for i in range(56))
CARD_POINTS: Final[tuple[int, ...]] = tuple(_card_points(i) for i in range(56))
_INDEX_BY_NAME: Final = {name.lower(): i for i, name in enumerate(CARD_NAMES)}
POINT_CARDS: Final = sum(1 << i for i in range(56) if CARD_POINTS[i])


def parse_card(text: str) -> Card:
    """Parse one card in RULES.md §0.2 notation (case-insensitive), e.g. `10s`, `Kp`, `PHX`."""
    index = _INDEX_BY_NAME.get(text.strip().lower())
    if index is None:
        raise InvalidActionError(
            f"unknown card {text!r}: write a rank 2..10, J, Q, K or A followed by a suit "
            "j, s, p or t (e.g. 7j, 10s, Kp), or one of MJ, DOG, PHX, DRG",
            "R-DECK-1",
        )
    return CARDS[index]


def parse_cards(text: str | Iterable[str]) -> tuple[Card, ...]:
    """Parse space- or comma-separated cards; a card named twice is an error."""
    parts = text.replace(",", " ").split() if isinstance(text, str) else list(text)
    cards = tuple(parse_card(part) for part in parts)
    if len(set(cards)) != len(cards):
        seen: set[Card] = set()
        dupes = [str(c) for c in cards if c in seen or seen.add(c)]  # type: ignore[func-returns-value]
        raise InvalidActionError(f"card named twice: {' '.join(dupes)}", "R-DECK-1")
    return tuple(sorted(cards))


def parse_mask(text: str | Iterable[str]) -> int:
    """Parse cards into a card-set mask."""
    mask = 0
    for card in parse_cards(text):
        mask |= 1 << card
    return mask


def mask_of(cards: Iterable[int]) -> int:
    """The card-set mask of some cards."""
    mask = 0
    for card in cards:
        mask |= 1 << card
    return mask


def cards_of(mask: int) -> tuple[Card, ...]:
    """The cards of a mask, in R-DEF-2 order."""
    out = []
    while mask:
        low = mask & -mask
        out.append(CARDS[low.bit_length() - 1])
        mask ^= low
    return tuple(out)


def format_cards(cards: Iterable[int] | int) -> str:
    """Cards in canonical notation: R-DEF-2 order, separated by single spaces."""
    if isinstance(cards, int):
        return " ".join(CARD_NAMES[c] for c in cards_of(cards))
    return " ".join(CARD_NAMES[c] for c in sorted(cards))


def mask_points(mask: int) -> int:
    """The card points (R-DECK-4) of a card set."""
    points = 0
    scoring = mask & POINT_CARDS
    while scoring:
        low = scoring & -scoring
        points += CARD_POINTS[low.bit_length() - 1]
        scoring ^= low
    return points


def parse_rank(text: str | int) -> int:
    """A natural rank 2..14 from its name (`7`, `10`, `J`, `A`) or its number."""
    if isinstance(text, int) and not isinstance(text, bool) and 2 <= text <= 14:
        return text
    rank = RANK_BY_NAME.get(str(text).strip().upper())
    if rank is None:
        raise InvalidActionError(f"unknown rank {text!r}: expected one of 2..10, J, Q, K, A")
    return rank


def rank_name(rank: int) -> str:
    """The notation of a natural rank, `MJ` for 1 and `DRG` for 15."""
    return RANK_NAMES[rank]
