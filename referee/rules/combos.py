"""Combinations (RULES.md §7), how they beat each other (§8), and fast enumeration of plays.

A reading of a set of cards is a Combo. Every key is kept in half-ranks so that a Phoenix single
(R-PHX-2) is an integer: a natural single of rank r has key 2r, a Phoenix on it 2r + 1.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import IntEnum
from itertools import product, repeat
from typing import Final, NamedTuple

from referee.rules.cards import (
    DOG,
    DRG,
    MJ,
    NATURALS,
    PHX,
    SUIT_MASKS,
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


KIND_BY_LABEL: Final = {kind.name.lower(): kind for kind in ComboKind}
SINGLE: Final = ComboKind.SINGLE
PAIR: Final = ComboKind.PAIR
TRIPLE: Final = ComboKind.TRIPLE
STAIRS: Final = ComboKind.STAIRS
FULL_HOUSE: Final = ComboKind.FULL_HOUSE
STRAIGHT: Final = ComboKind.STRAIGHT
FOUR: Final = ComboKind.FOUR_OF_A_KIND
SFLUSH: Final = ComboKind.STRAIGHT_FLUSH
DOG_KIND: Final = ComboKind.DOG


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
    def rank(self) -> int | float:
        """The ranking key of R-COMB-9 as a rank: the value for singles (a Phoenix may be x.5).

        An int unless it is x.5 (`int | float`, not `float`: a compiled build would widen it)."""
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


# Precomputed per rank r and suit nibble n (the suits of rank r held): the card masks of each
# size, and the (cards, reading) pairs of singles, pairs, triples. Enumeration then mostly
# extends lists with ready tuples, which is where its speed comes from.
_SUBSETS: Final[tuple[tuple[tuple[int, ...], ...], ...]] = tuple(
    tuple(tuple(s for s in range(16) if s & ~n == 0 and s.bit_count() == k) for k in range(5))
    for n in range(16)
)
_RANKS: Final = range(2, 15)
_SHIFT: Final = [0, 0] + [rank_shift(r) for r in _RANKS]
_NONE: Final[tuple[int, ...]] = ()


def _sized(size: int) -> list[list[tuple[int, ...]]]:
    table: list[list[tuple[int, ...]]] = [[_NONE] * 16, [_NONE] * 16]
    for r in _RANKS:
        table.append([tuple(sub << _SHIFT[r] for sub in _SUBSETS[n][size]) for n in range(16)])
    return table


_CARDS_OF: Final = _sized(1)
_PAIRS_OF: Final = _sized(2)
_TRIPLES_OF: Final = _sized(3)
# The same with the Phoenix added: a single plus the Phoenix makes a pair, a pair a triple.
_CARDS_PHX_OF: Final = [[tuple(m | PHX for m in row[n]) for n in range(16)] for row in _CARDS_OF]
_PAIRS_PHX_OF: Final = [[tuple(m | PHX for m in row[n]) for n in range(16)] for row in _PAIRS_OF]
# Every reading listed so far, by its code. A listed play is (card mask, code): a tuple of two
# ints, which the garbage collector stops tracking, where (mask, Combo) would be walked by every
# full collection for as long as a state caches its listing (bench/engine.py, "held").
COMBOS: Final[list[Combo]] = []
_CODES: Final[dict[tuple[int, int, int, int], int]] = {}


def _c(kind: ComboKind, length: int, key: int, phoenix: int = 0) -> int:
    """The code of a reading (readings repeat endlessly: each is made once, and kept)."""
    k = (kind, length, key, phoenix)
    found = _CODES.get(k)
    if found is None:
        found = _CODES[k] = len(COMBOS)
        COMBOS.append(Combo(kind, length, key, phoenix))
    return found


def code_of(combo: Combo) -> int:
    """The code of `combo` in COMBOS."""
    return _c(combo.kind, combo.length, combo.key, combo.phoenix)


def _plays_table(
    masks: list[list[tuple[int, ...]]], kind: ComboKind, size: int, phx: bool
) -> list[list[tuple[Play, ...]]]:
    table: list[list[tuple[Play, ...]]] = [[()] * 16, [()] * 16]
    for r in _RANKS:
        row = []
        for n in range(16):
            if phx:
                row.append(tuple((m | PHX, _c(kind, size, 2 * r, r)) for m in masks[r][n]))
            else:
                row.append(tuple((m, _c(kind, size, 2 * r)) for m in masks[r][n]))
        table.append(row)
    return table


Play = tuple[int, int]  # (card mask, reading code): the reading is COMBOS[code]

_SINGLE_PLAYS: Final = _plays_table(_CARDS_OF, SINGLE, 1, False)
_PAIR_PLAYS: Final = _plays_table(_PAIRS_OF, PAIR, 2, False)
_PAIR_PHX_PLAYS: Final = _plays_table(_CARDS_OF, PAIR, 2, True)
_TRIPLE_PLAYS: Final = _plays_table(_TRIPLES_OF, TRIPLE, 3, False)
_TRIPLE_PHX_PLAYS: Final = _plays_table(_PAIRS_OF, TRIPLE, 3, True)
_FOUR_PLAY: Final[list[tuple[Play, ...]]] = [(), ()] + [
    ((15 << _SHIFT[r], _c(FOUR, 4, 2 * r)),) for r in _RANKS
]
_MJ_PLAY: Final = (MJ, _c(SINGLE, 1, 2))
_SINGLE_BY_BIT: Final = {
    1 << (_SHIFT[r] + suit): (1 << (_SHIFT[r] + suit), _c(SINGLE, 1, 2 * r))
    for r in _RANKS
    for suit in range(4)
}
_DRG_PLAY: Final = (DRG, _c(SINGLE, 1, 30))
# Per key of a single on the table (0..30): the naturals of a higher rank, which beat it (a
# Phoenix on rank r has key 2r + 1, which the naturals of rank r do not beat).
_NATURALS_ABOVE: Final = tuple(
    NATURALS & ~((1 << _SHIFT[key // 2 + 1]) - 1) if key < 28 else 0 for key in range(31)
)
_PHX_LED: Final = (PHX, _c(SINGLE, 1, 3))
# A rank's nibble sits at bit 4r-6; one mask with the lowest bit of every rank's nibble.
_NIBBLE_LOWS: Final = sum(1 << _SHIFT[r] for r in _RANKS)


_NO_NIBBLES: Final[list[int]] = []


def _nibbles(hand: int) -> list[int]:
    """Suit nibbles of ranks 0..14 (index = rank; 0 and 1 unused)."""
    return [
        0,
        0,
        (hand >> 2) & 15,
        (hand >> 6) & 15,
        (hand >> 10) & 15,
        (hand >> 14) & 15,
        (hand >> 18) & 15,
        (hand >> 22) & 15,
        (hand >> 26) & 15,
        (hand >> 30) & 15,
        (hand >> 34) & 15,
        (hand >> 38) & 15,
        (hand >> 42) & 15,
        (hand >> 46) & 15,
        (hand >> 50) & 15,
    ]


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


def _singles(hand: int, nibs: list[int], top: Combo | None, out: list[Play]) -> None:
    if top is None:
        if hand & MJ:
            out.append(_MJ_PLAY)
        for r in _RANKS:
            if nibs[r]:
                out.extend(_SINGLE_PLAYS[r][nibs[r]])
        if hand & PHX:
            out.append(_PHX_LED)
        if hand & DRG:
            out.append(_DRG_PLAY)
        return
    key = top.key
    # the naturals above the top's rank, lowest first
    higher = hand & _NATURALS_ABOVE[key]
    while higher:
        low = higher & -higher
        out.append(_SINGLE_BY_BIT[low])
        higher ^= low
    if hand & PHX and key < 30:
        out.append((PHX, _c(SINGLE, 1, key + 1)))
    if hand & DRG and key < 30:
        out.append(_DRG_PLAY)


def count_single_follows(hand: int, key: int) -> int:
    """How many singles plays() lists on a single of `key`, bombs aside, without listing them."""
    if key >= 30:
        return 0
    return (hand & _NATURALS_ABOVE[key]).bit_count() + (1 if hand & PHX else 0) + (1 if hand & DRG else 0)


def nth_single_follow(hand: int, key: int, index: int) -> Play:
    """The index-th of those singles, in plays() order: for a random pick among many, only the
    one drawn is made."""
    higher = hand & _NATURALS_ABOVE[key]
    naturals = higher.bit_count()
    if index < naturals:
        for _ in range(index):
            higher &= higher - 1
        return _SINGLE_BY_BIT[higher & -higher]
    if hand & PHX and index == naturals:
        return (PHX, _c(SINGLE, 1, key + 1))
    return _DRG_PLAY


def _sets(nibs: list[int], phx: bool, size: int, min_rank: int, out: list[Play]) -> None:
    nat, wild = (_PAIR_PLAYS, _PAIR_PHX_PLAYS) if size == 2 else (_TRIPLE_PLAYS, _TRIPLE_PHX_PLAYS)
    for r in range(max(2, min_rank), 15):
        nib = nibs[r]
        if nib:
            out.extend(nat[r][nib])
            if phx:
                out.extend(wild[r][nib])


def _stairs(nibs: list[int], phx: bool, length: int | None, min_top: int, out: list[Play]) -> None:
    """Stairs of `length` pairs (any length >= 2 if None) whose top rank is at least min_top.

    Runs grow one rank at a time from each low rank, keeping the partial runs without the
    Phoenix and those where it completed the pair of rank r (R-COMB-4: at most one such rank).
    """
    pairs = [_PAIRS_OF[r][nibs[r]] if r >= 2 else _NONE for r in range(15)]
    wilds = [_CARDS_PHX_OF[r][nibs[r]] if r >= 2 else _NONE for r in range(15)] if phx else []
    for low in range(2, 14):
        plain: Sequence[int] = pairs[low]
        wild: Sequence[tuple[int, Sequence[int]]] = [(low, wilds[low])] if phx and wilds[low] else []
        if not plain and not wild:
            continue
        for high in range(low + 1, 15):
            count = high - low + 1
            if length is not None and count > length:
                break
            nxt = pairs[high]
            grown: list[tuple[int, Sequence[int]]] = (
                [(r, [m + c for m in masks for c in nxt]) for r, masks in wild] if nxt else []
            )
            if phx and plain and wilds[high]:
                grown.append((high, [m + c for m in plain for c in wilds[high]]))
            plain = [m + c for m in plain for c in nxt] if nxt else []
            wild = grown
            if not plain and not wild:
                break
            if high < min_top or (length is not None and count != length):
                continue
            if plain:
                out.extend(zip(plain, repeat(_c(STAIRS, 2 * count, 2 * high))))
            for r, masks in wild:
                if masks:
                    out.extend(zip(masks, repeat(_c(STAIRS, 2 * count, 2 * high, r))))


def _full_houses(nibs: list[int], phx: bool, min_triple: int, out: list[Play]) -> None:
    pair_ranks = [(r, _PAIRS_OF[r][nibs[r]]) for r in _RANKS if nibs[r].bit_count() >= 2]
    if not pair_ranks and not phx:
        return
    low = max(2, min_triple)
    triples = [
        (t, _TRIPLES_OF[t][nibs[t]], _c(FULL_HOUSE, 5, 2 * t))
        for t in range(low, 15)
        if nibs[t].bit_count() >= 3
    ]
    out.extend(
        [
            (tm | pm, combo)
            for t, tms, combo in triples
            for p, pms in pair_ranks
            if p != t
            for tm in tms
            for pm in pms
        ]
    )
    if phx:
        # the Phoenix completes the pair (a natural triple and a single) or the triple
        singles = [(r, _CARDS_PHX_OF[r][nibs[r]]) for r in _RANKS if nibs[r]]
        out.extend(
            [
                (tm | pm, _c(FULL_HOUSE, 5, 2 * t, p))
                for t, tms, _ in triples
                for p, pms in singles
                if p != t
                for tm in tms
                for pm in pms
            ]
        )
        wild_triples = [(t, _PAIRS_PHX_OF[t][nibs[t]]) for t, _ in pair_ranks if t >= low]
        out.extend(
            [
                (tm | pm, _c(FULL_HOUSE, 5, 2 * t, t))
                for t, tms in wild_triples
                for p, pms in pair_ranks
                if p != t
                for tm in tms
                for pm in pms
            ]
        )


def _holds_natural_run(hand: int) -> bool:
    """Whether five consecutive ranks are all held (the Mah Jong counting as the 1)."""
    held = (hand | hand >> 1 | hand >> 2 | hand >> 3) & _NIBBLE_LOWS  # one bit per rank held
    if held & held >> 4 & held >> 8 & held >> 12 & held >> 16:  # consecutive ranks are 4 bits apart
        return True
    return bool(hand & MJ and held >> 2 & held >> 6 & held >> 10 & held >> 14 & 1)


def _straights(
    hand: int, nibs: list[int], phx: bool, length: int | None, min_top: int, out: list[Play]
) -> None:
    """Plain straights (R-COMB-6); all-natural single-suit runs are bombs and are left out.

    From each low rank the run grows one rank at a time: the first five ranks are combined at
    once, then each further rank extends the runs found so far. Runs without the Phoenix are
    kept apart from those where it stands for rank r (never for the 1).
    """
    if not phx and not _holds_natural_run(hand):
        return
    opts = [_NONE, (MJ,) if hand & MJ else _NONE] + [_CARDS_OF[r][nibs[r]] for r in _RANKS]
    phx_opt = (PHX,)
    for low in range(1, 11):
        if length is not None and (low + length - 1 > 14 or low + length - 1 < min_top):
            continue
        gap = 0 if opts[low] else low
        if gap and (not phx or low < 2):
            continue
        high = low
        while high < low + 4:  # the first five ranks: at most one gap, for the Phoenix
            high += 1
            if not opts[high]:
                if gap or not phx:
                    break
                gap = high
        else:
            window = opts[low : high + 1]
            plain: list[int] = []
            wild: list[tuple[int, list[int]]] = []
            if gap:
                window[gap - low] = phx_opt
                wild.append((gap, list(map(sum, product(*window)))))
            else:
                plain = list(map(sum, product(*window)))
                if phx:
                    for r in range(max(low, 2), high + 1):
                        with_phx = list(window)
                        with_phx[r - low] = phx_opt
                        wild.append((r, list(map(sum, product(*with_phx)))))
            suits = nibs[low] if low >= 2 else 0
            for r in range(low + 1, high + 1):
                suits &= nibs[r]
            while True:
                count = high - low + 1
                if high >= min_top and (length is None or count == length):
                    if plain:
                        combo = _c(STRAIGHT, count, 2 * high)
                        if suits:
                            # some are single-suit runs: straight flushes, not straights (R-COMB-7)
                            out.extend([(m, combo) for m in plain if not any(m & u == m for u in SUIT_MASKS)])
                        else:
                            out.extend(zip(plain, repeat(combo)))
                    for r, masks in wild:
                        out.extend(zip(masks, repeat(_c(STRAIGHT, count, 2 * high, r))))
                if high == 14 or (length is not None and count >= length):
                    break
                high += 1
                nxt = opts[high]
                grown = [(r, [m + c for m in masks for c in nxt]) for r, masks in wild] if nxt else []
                if phx and plain:
                    grown.append((high, [m + PHX for m in plain]))
                plain = [m + c for m in plain for c in nxt] if nxt else []
                suits &= nibs[high]
                wild = grown
                if not plain and not wild:
                    break


def _straight_flushes(hand: int, min_key: tuple[int, int], out: list[Play]) -> None:
    """Straight-flush bombs beating (length, top) = min_key."""
    nat = hand & NATURALS
    if not nat & (nat >> 4) & (nat >> 8) & (nat >> 12) & (nat >> 16):
        return
    for suit in range(4):
        suited = hand & SUIT_MASKS[suit]
        if suited.bit_count() < 5:
            continue
        for low in range(2, 11):
            if not suited >> (_SHIFT[low] + suit) & 1:
                continue
            mask = 0
            for high in range(low, 15):
                bit = 1 << (_SHIFT[high] + suit)
                if not suited & bit:
                    break
                mask |= bit
                count = high - low + 1
                if count >= 5 and (count, 2 * high) > min_key:
                    out.append((mask, _c(SFLUSH, count, 2 * high)))


def _fours(hand: int, min_rank: int, out: list[Play]) -> None:
    quads = hand & (hand >> 1) & (hand >> 2) & (hand >> 3) & _NIBBLE_LOWS
    if quads:
        for r in range(max(2, min_rank), 15):
            if quads >> _SHIFT[r] & 1:
                out.extend(_FOUR_PLAY[r])


def bombs(hand: int, top: Combo | None) -> list[Play]:
    """Every bomb in `hand` that beats `top` (every bomb if top is None or not a bomb)."""
    out: list[Play] = []
    if top is None or not top.is_bomb:
        _fours(hand, 2, out)
        _straight_flushes(hand, (0, 0), out)
    elif top.kind == FOUR:
        _fours(hand, top.key // 2 + 1, out)
        _straight_flushes(hand, (0, 0), out)
    else:
        _straight_flushes(hand, (top.length, top.key), out)
    return out


def _rank_counts(hand: int) -> tuple[int, int, int]:
    """Bit 4r-6 set for each rank r held at least once, at least twice, at least three times."""
    # Within a rank's nibble (suit bits b0..b3): b0&b1 and b2&b3 land on bits 0 and 2 of `both`,
    # b0|b1 and b2|b3 on bits 0 and 2 of `either`.
    both = hand & hand >> 1
    either = hand | hand >> 1
    held = (either | either >> 2) & _NIBBLE_LOWS
    pairs = (both | both >> 2 | either & either >> 2) & _NIBBLE_LOWS
    triples = (both & either >> 2 | both >> 2 & either) & _NIBBLE_LOWS
    return held, pairs, triples


def has_bomb(hand: int) -> bool:
    """Whether the hand holds any bomb at all (a constant-time check for bomb windows)."""
    if hand & (hand >> 1) & (hand >> 2) & (hand >> 3) & _NIBBLE_LOWS:
        return True
    # Same-suit cards of consecutive ranks are 4 bits apart: five in a row is a straight flush.
    nat = hand & NATURALS
    return bool(nat & (nat >> 4) & (nat >> 8) & (nat >> 12) & (nat >> 16))


def plays(hand: int, top: Combo | None) -> list[Play]:
    """Every (cards, reading) the hand can put on `top` (None: a lead), bombs included, no Dog."""
    out: list[Play] = []
    phx = bool(hand & PHX)
    nibs = _nibbles(hand) if top is None or top.kind != SINGLE else _NO_NIBBLES
    if top is None:
        _singles(hand, nibs, None, out)
        _sets(nibs, phx, 2, 2, out)
        _sets(nibs, phx, 3, 2, out)
        # Many hands hold no stairs or no full house: ruled out from the ranks' counts, at once.
        held, pairs, triples = _rank_counts(hand)
        # Stairs need two adjacent ranks paired (one of them may be paired by the Phoenix).
        if pairs & pairs >> 4 or (phx and (pairs & held >> 4 or held & pairs >> 4)):
            _stairs(nibs, phx, None, 0, out)
        # A full house needs a triple and a pair of another rank, either of them possibly
        # completed by the Phoenix: a triple and another rank held, or two pairs.
        two_pairs = pairs & (pairs - 1)
        if (triples and two_pairs) or (phx and (two_pairs or (triples and held & (held - 1)))):
            _full_houses(nibs, phx, 2, out)
        _straights(hand, nibs, phx, None, 0, out)
        _fours(hand, 2, out)
        _straight_flushes(hand, (0, 0), out)
        return out
    kind = top.kind
    if kind == SINGLE:
        _singles(hand, nibs, top, out)
        if has_bomb(hand):
            out.extend(bombs(hand, top))
        return out
    elif kind in (PAIR, TRIPLE):
        _sets(nibs, phx, kind, top.key // 2 + 1, out)
    elif kind == STAIRS:
        _stairs(nibs, phx, top.length // 2, top.key // 2 + 1, out)
    elif kind == FULL_HOUSE:
        _full_houses(nibs, phx, top.key // 2 + 1, out)
    elif kind == STRAIGHT:
        _straights(hand, nibs, phx, top.length, top.key // 2 + 1, out)
    if has_bomb(hand):
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
            if shape in ((3, 2), (2, 3)):
                readings.append(Combo(FULL_HOUSE, 5, 2 * (low if counts[low] == 3 else high)))
            elif shape == (2, 2):
                readings.append(Combo(FULL_HOUSE, 5, 2 * high, high))
                readings.append(Combo(FULL_HOUSE, 5, 2 * low, low))
            elif shape in ((3, 1), (1, 3)):
                triple = low if counts[low] == 3 else high
                single = high if triple == low else low
                readings.append(Combo(FULL_HOUSE, 5, 2 * triple, single))
        if count >= 4 and count % 2 == 0 and len(ranks) >= 2 and ranks[-1] - ranks[0] == len(ranks) - 1:
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


__all__ = [
    "Combo",
    "ComboKind",
    "beats",
    "bombs",
    "classify",
    "count_single_follows",
    "has_bomb",
    "nth_single_follow",
    "plays",
    "single_key",
]
