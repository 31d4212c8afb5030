"""Combinations (RULES.md §7), how they beat each other (§8), and fast enumeration of plays.

A reading of a set of cards is a Combo. Every key is kept in half-ranks so that a Phoenix single
(R-PHX-2) is an integer: a natural single of rank r has key 2r, a Phoenix on it 2r + 1.
"""

from __future__ import annotations

from enum import IntEnum
from typing import NamedTuple

from referee.rules.cards import (
    DOG,
    DRG,
    MJ,
    NATURALS,
    PHX,
    RANK_MASKS,
    SUIT_MASKS,
    format_cards,
    parse_mask,
    rank_name,
    rank_shift,
)


class ComboKind(IntEnum):
    """The kinds of combination of R-COMB-1..8."""

    SINGLE = 1
    PAIR = 2
    TRIPLE = 3
    STAIRS = 4
    FULL_HOUSE = 5
    STRAIGHT = 6
    FOUR_OF_A_KIND = 7
    STRAIGHT_FLUSH = 8
    DOG = 9

    @property
    def is_bomb(self) -> bool:
        """True for the two bomb kinds of R-COMB-7."""
        return self is ComboKind.FOUR_OF_A_KIND or self is ComboKind.STRAIGHT_FLUSH

    @property
    def label(self) -> str:
        """The kind as written in JSON (`single`, `full_house`, `bomb`, ...)."""
        return "bomb" if self.is_bomb else self.name.lower()


KIND_BY_LABEL = {kind.name.lower(): kind for kind in ComboKind}
SINGLE = ComboKind.SINGLE
PAIR = ComboKind.PAIR
TRIPLE = ComboKind.TRIPLE
STAIRS = ComboKind.STAIRS
FULL_HOUSE = ComboKind.FULL_HOUSE
STRAIGHT = ComboKind.STRAIGHT
FOUR = ComboKind.FOUR_OF_A_KIND
SFLUSH = ComboKind.STRAIGHT_FLUSH
DOG_KIND = ComboKind.DOG


class Combo(NamedTuple):
    """One reading of a play: its kind, number of cards, key in half-ranks, Phoenix rank."""

    kind: ComboKind
    length: int
    key: int
    phoenix: int = 0  # the rank the Phoenix stands for in a multi-card play, 0 if none

    @property
    def is_bomb(self) -> bool:
        """True for bombs."""
        return self.kind >= FOUR and self.kind <= SFLUSH

    @property
    def rank(self) -> float:
        """The ranking key of R-COMB-9 as a rank: the value for singles (a Phoenix may be x.5)."""
        return self.key / 2 if self.key % 2 else self.key // 2

    def to_json(self) -> dict[str, object]:
        """The JSON form used by `tichu rules classify` and in events."""
        out: dict[str, object] = {"kind": self.kind.label}
        if self.is_bomb:
            out["bomb"] = self.kind.name.lower()
        out["length"] = self.length
        out["rank"] = self.rank
        out["phoenix"] = rank_name(self.phoenix) if self.phoenix else None
        return out

    def describe(self) -> str:
        """A short human description, e.g. `straight of 5 to 9`."""
        top = rank_name(self.key // 2) if self.key % 2 == 0 else f"{self.key / 2}"
        if self.kind in (STAIRS, STRAIGHT, SFLUSH):
            return f"{self.kind.name.lower().replace('_', ' ')} of {self.length} to {top}"
        return f"{self.kind.name.lower().replace('_', ' ')} of {top}"


def beats(play: Combo, top: Combo) -> bool:
    """Whether `play` may be played on `top` (R-BEAT-1..5); Phoenix singles must be keyed on top."""
    if play.kind >= FOUR and play.kind <= SFLUSH:
        if top.kind < FOUR or top.kind > SFLUSH:
            return True
        return (play.kind, play.length, play.key) > (top.kind, top.length, top.key)
    return play.kind == top.kind and play.length == top.length and play.key > top.key


# For each 4-bit suit nibble: its sub-nibbles with exactly k bits, k = 0..4.
_SUBSETS: tuple[tuple[tuple[int, ...], ...], ...] = tuple(
    tuple(tuple(s for s in range(16) if s & ~n == 0 and s.bit_count() == k) for k in range(5))
    for n in range(16)
)
_SHIFT = {rank: rank_shift(rank) for rank in range(2, 15)}
_ALL_SINGLES = tuple((rank, suit) for rank in range(2, 15) for suit in range(4))

Play = tuple[int, Combo]  # (card mask, reading)


def _nibbles(hand: int) -> list[int]:
    """Suit nibbles of ranks 0..14 (index = rank; 0 and 1 unused)."""
    return [0, 0] + [(hand >> (4 * r - 6)) & 15 for r in range(2, 15)]


def _rank_options(nib: int, shift: int, size: int, phx: bool) -> list[tuple[int, bool]]:
    """Ways to make `size` cards of one rank: (mask, uses the Phoenix)."""
    out = [(s << shift, False) for s in _SUBSETS[nib][size]]
    if phx and size > 1:
        out.extend(((s << shift) | PHX, True) for s in _SUBSETS[nib][size - 1])
    return out


def single_key(card_mask: int, top: Combo | None) -> int:
    """The key of a single card played on `top` (R-PHX-2 for the Phoenix)."""
    if card_mask == PHX:
        if top is None or top.kind != SINGLE:
            return 3
        return top.key + 1
    if card_mask == MJ:
        return 2
    if card_mask == DRG:
        return 30
    return 2 * ((card_mask.bit_length() - 3) // 4 + 2)


def _singles(hand: int, top: Combo | None, out: list[Play]) -> None:
    min_key = top.key + 1 if top is not None else 0
    if hand & MJ and 2 >= min_key:
        out.append((MJ, Combo(SINGLE, 1, 2)))
    nat = hand & NATURALS
    while nat:
        low = nat & -nat
        key = 2 * ((low.bit_length() - 3) // 4 + 2)
        if key >= min_key:
            out.append((low, Combo(SINGLE, 1, key)))
        nat ^= low
    if hand & PHX and (top is None or top.key < 30):
        out.append((PHX, Combo(SINGLE, 1, single_key(PHX, top))))
    if hand & DRG and 30 >= min_key:
        out.append((DRG, Combo(SINGLE, 1, 30)))


def _sets(nibs: list[int], phx: bool, size: int, kind: ComboKind, min_rank: int, out: list[Play]) -> None:
    for rank in range(max(2, min_rank), 15):
        nib = nibs[rank]
        if nib.bit_count() + phx < size or not nib:
            continue
        shift = _SHIFT[rank]
        for sub in _SUBSETS[nib][size]:
            out.append((sub << shift, Combo(kind, size, 2 * rank)))
        if phx:
            for sub in _SUBSETS[nib][size - 1]:
                out.append(((sub << shift) | PHX, Combo(kind, size, 2 * rank, rank)))


def _stairs(nibs: list[int], phx: bool, length: int | None, min_top: int, out: list[Play]) -> None:
    """Stairs of `length` pairs (any length >= 2 if None) whose top rank is at least min_top."""

    def extend(rank: int, mask: int, pairs: int, used_phx: int) -> None:
        if pairs >= 2 and (length is None or pairs == length) and rank - 1 >= min_top:
            out.append((mask, Combo(STAIRS, 2 * pairs, 2 * (rank - 1), used_phx)))
        if rank > 14 or (length is not None and pairs >= length):
            return
        nib = nibs[rank]
        shift = _SHIFT[rank]
        for sub in _SUBSETS[nib][2]:
            extend(rank + 1, mask | (sub << shift), pairs + 1, used_phx)
        if phx and not used_phx:
            for sub in _SUBSETS[nib][1]:
                extend(rank + 1, mask | (sub << shift) | PHX, pairs + 1, rank)

    for low in range(2, 14):
        if length is not None and low + length - 1 < min_top:
            continue
        if length is not None and low + length - 1 > 14:
            break
        nib = nibs[low]
        shift = _SHIFT[low]
        for sub in _SUBSETS[nib][2]:
            extend(low + 1, sub << shift, 1, 0)
        if phx:
            for sub in _SUBSETS[nib][1]:
                extend(low + 1, (sub << shift) | PHX, 1, low)


def _full_houses(nibs: list[int], phx: bool, min_triple: int, out: list[Play]) -> None:
    for trank in range(max(2, min_triple), 15):
        tnib = nibs[trank]
        if tnib.bit_count() + phx < 3:
            continue
        for tmask, tphx in _rank_options(tnib, _SHIFT[trank], 3, phx):
            for prank in range(2, 15):
                if prank == trank:
                    continue
                pnib = nibs[prank]
                if not pnib:
                    continue
                for pmask, pphx in _rank_options(pnib, _SHIFT[prank], 2, phx and not tphx):
                    reading = trank if tphx else (prank if pphx else 0)
                    out.append((tmask | pmask, Combo(FULL_HOUSE, 5, 2 * trank, reading)))


def _straights(
    hand: int, nibs: list[int], phx: bool, length: int | None, min_top: int, out: list[Play]
) -> None:
    """Plain straights (R-COMB-6); all-natural single-suit runs are bombs and are left out."""
    has_mj = bool(hand & MJ)

    def options(rank: int) -> tuple[int, ...]:
        if rank == 1:
            return (MJ,) if has_mj else ()
        if rank < 1:
            return ()
        shift = _SHIFT[rank]
        return tuple(s << shift for s in _SUBSETS[nibs[rank]][1])

    opts = [options(rank) for rank in range(15)]

    def extend(rank: int, mask: int, count: int, used_phx: int, suits: int) -> None:
        if count >= 5 and (length is None or count == length) and rank - 1 >= min_top:
            # A run of naturals of one suit is a straight flush, never a straight (R-COMB-7).
            if used_phx or mask & MJ or suits.bit_count() > 1:
                out.append((mask, Combo(STRAIGHT, count, 2 * (rank - 1), used_phx)))
        if rank > 14 or (length is not None and count >= length):
            return
        for card in opts[rank]:
            suit_bit = 1 << ((card.bit_length() - 3) % 4) if rank > 1 else 0
            extend(rank + 1, mask | card, count + 1, used_phx, suits | suit_bit)
        if phx and not used_phx and rank >= 2:
            extend(rank + 1, mask | PHX, count + 1, rank, suits)

    for low in range(1, 11):
        if length is not None and (low + length - 1 > 14 or low + length - 1 < min_top):
            continue
        extend(low, 0, 0, 0, 0) if opts[low] or (phx and low >= 2) else None


def _straight_flushes(hand: int, length: int | None, min_key: tuple[int, int], out: list[Play]) -> None:
    """Straight-flush bombs beating (length, top) = min_key, in lexicographic order."""
    for suit in range(4):
        suited = hand & SUIT_MASKS[suit]
        if suited.bit_count() < 5:
            continue
        present = [False, False] + [bool(suited >> (4 * r - 6 + suit) & 1) for r in range(2, 15)]
        for low in range(2, 11):
            if not present[low]:
                continue
            mask = 0
            for high in range(low, 15):
                if not present[high]:
                    break
                mask |= 1 << (4 * high - 6 + suit)
                count = high - low + 1
                if count >= 5 and (length is None or count == length) and (count, 2 * high) > min_key:
                    out.append((mask, Combo(SFLUSH, count, 2 * high)))


def _fours(nibs: list[int], min_rank: int, out: list[Play]) -> None:
    for rank in range(max(2, min_rank), 15):
        if nibs[rank] == 15:
            out.append((15 << _SHIFT[rank], Combo(FOUR, 4, 2 * rank)))


def bombs(hand: int, top: Combo | None) -> list[Play]:
    """Every bomb in `hand` that beats `top` (every bomb if top is None or not a bomb)."""
    out: list[Play] = []
    if top is None or not top.is_bomb:
        _fours(_nibbles(hand), 2, out)
        _straight_flushes(hand, None, (0, 0), out)
    elif top.kind == FOUR:
        _fours(_nibbles(hand), top.key // 2 + 1, out)
        _straight_flushes(hand, None, (0, 0), out)
    else:
        _straight_flushes(hand, None, (top.length, top.key), out)
    return out


def has_bomb(hand: int) -> bool:
    """Whether the hand holds any bomb at all (a cheap pre-check for bomb windows)."""
    nat = hand & NATURALS
    if nat.bit_count() < 4:
        return False
    for rank in range(2, 15):
        if (nat >> _SHIFT[rank]) & 15 == 15:
            return True
    for suit_mask in SUIT_MASKS:
        if (nat & suit_mask).bit_count() >= 5:
            suited = nat & suit_mask
            run = 0
            for rank in range(2, 15):
                if suited >> _SHIFT[rank] & 15:
                    run += 1
                    if run >= 5:
                        return True
                else:
                    run = 0
    return False


def plays(hand: int, top: Combo | None) -> list[Play]:
    """Every (cards, reading) the hand can put on `top` (None: a lead), bombs included, no Dog."""
    out: list[Play] = []
    phx = bool(hand & PHX)
    if top is None:
        nibs = _nibbles(hand)
        _singles(hand, None, out)
        _sets(nibs, phx, 2, PAIR, 2, out)
        _sets(nibs, phx, 3, TRIPLE, 2, out)
        _stairs(nibs, phx, None, 0, out)
        _full_houses(nibs, phx, 2, out)
        _straights(hand, nibs, phx, None, 0, out)
        _fours(nibs, 2, out)
        _straight_flushes(hand, None, (0, 0), out)
        return out
    kind = top.kind
    if kind == SINGLE:
        _singles(hand, top, out)
    elif kind == PAIR or kind == TRIPLE:
        _sets(_nibbles(hand), phx, kind, kind, top.key // 2 + 1, out)
    elif kind == STAIRS:
        _stairs(_nibbles(hand), phx, top.length // 2, top.key // 2 + 1, out)
    elif kind == FULL_HOUSE:
        _full_houses(_nibbles(hand), phx, top.key // 2 + 1, out)
    elif kind == STRAIGHT:
        _straights(hand, _nibbles(hand), phx, top.length, top.key // 2 + 1, out)
    if hand & NATURALS and has_bomb(hand):
        out.extend(bombs(hand, top))
    return out


def classify(cards: int | str, top: Combo | None = None) -> tuple[Combo, ...]:
    """Every valid reading of a set of cards, highest first; () if it is no combination.

    `top` only matters for a Phoenix single, whose value depends on what it is played on.
    """
    mask = parse_mask(cards) if isinstance(cards, str) else cards
    count = mask.bit_count()
    if count == 0:
        return ()
    if count == 1:
        if mask == DOG:
            return (Combo(DOG_KIND, 1, 0),)
        return (Combo(SINGLE, 1, single_key(mask, top)),)
    if mask & (DOG | DRG):
        return ()
    phx = bool(mask & PHX)
    has_mj = bool(mask & MJ)
    nibs = _nibbles(mask)
    counts = [n.bit_count() for n in nibs]
    ranks = [r for r in range(2, 15) if counts[r]]
    readings: list[Combo] = []
    if not has_mj:
        if len(ranks) == 1:
            rank = ranks[0]
            if count == 2:
                readings.append(Combo(PAIR, 2, 2 * rank, rank if phx else 0))
            elif count == 3:
                readings.append(Combo(TRIPLE, 3, 2 * rank, rank if phx else 0))
            elif count == 4 and not phx:
                readings.append(Combo(FOUR, 4, 2 * rank))
        if count == 5 and len(ranks) == 2:
            low, high = ranks
            shape = (counts[low], counts[high])
            if shape == (3, 2) or shape == (2, 3):
                readings.append(Combo(FULL_HOUSE, 5, 2 * (low if counts[low] == 3 else high)))
            elif shape == (2, 2):
                readings.append(Combo(FULL_HOUSE, 5, 2 * high, high))
                readings.append(Combo(FULL_HOUSE, 5, 2 * low, low))
            elif shape == (3, 1) or shape == (1, 3):
                triple = low if counts[low] == 3 else high
                single = high if triple == low else low
                readings.append(Combo(FULL_HOUSE, 5, 2 * triple, single))
        if count >= 4 and count % 2 == 0 and len(ranks) >= 2:
            if ranks[-1] - ranks[0] == len(ranks) - 1:
                ones = [r for r in ranks if counts[r] == 1]
                if all(counts[r] in (1, 2) for r in ranks) and len(ones) == (1 if phx else 0):
                    readings.append(Combo(STAIRS, count, 2 * ranks[-1], ones[0] if ones else 0))
    if count >= 5 and all(counts[r] == 1 for r in ranks):
        seq = ([1] if has_mj else []) + ranks
        low, high = seq[0], seq[-1]
        span = high - low + 1
        if not phx and span == count:
            suited = any(mask & NATURALS == mask & s for s in SUIT_MASKS) and not has_mj
            if suited:
                readings.append(Combo(SFLUSH, count, 2 * high))
            else:
                readings.append(Combo(STRAIGHT, count, 2 * high))
        elif phx and span == count:
            gap = next(r for r in range(low, high + 1) if r not in seq)
            readings.append(Combo(STRAIGHT, count, 2 * high, gap))
        elif phx and span == count - 1:
            if high < 14:
                readings.append(Combo(STRAIGHT, count, 2 * (high + 1), high + 1))
            if low > 2:
                readings.append(Combo(STRAIGHT, count, 2 * high, low - 1))
    readings.sort(key=lambda c: (c.kind.is_bomb, c.key), reverse=True)
    return tuple(readings)


def describe_cards(mask: int) -> str:
    """Cards in notation, for messages."""
    return format_cards(mask)


__all__ = [
    "Combo",
    "ComboKind",
    "RANK_MASKS",
    "beats",
    "bombs",
    "classify",
    "has_bomb",
    "plays",
    "single_key",
]
