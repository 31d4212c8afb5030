"""What may be done now: to_act, owed (the decision kind), Tichu calls, legal_actions (RULES.md §3-§16).

Every listing is in a deterministic order and is exactly what game.apply accepts. The listings
are lazy views (LegalPlays, ExchangeChoices): a bot usually reads a few of dozens of plays, and
a seat has 2,184 possible exchanges.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from enum import StrEnum
from typing import Final, overload

from referee.rules.actions import (
    CALL_TICHU,
    DECLINE,
    DECLINE_TICHU,
    GRAND_TICHU,
    NO_GRAND_TICHU,
    PASS,
    Action,
    Exchange,
    GiftDragon,
    Play,
)
from referee.rules.cards import DOG, MJ, RANK_MASKS, cards_of
from referee.rules.combos import COMBOS, DOG_KIND, Combo, bombs, code_of, has_bomb, plays
from referee.rules.state import (
    _EXCHANGE,
    _GRAND_TICHU,
    _PLAY,
    _ROUND_END,
    _TICHU_STEP,
    NO_SEAT,
    Phase,
    State,
    opponents_of,
    partners_of,
)

DOG_COMBO: Final = Combo(DOG_KIND, 1, 0)
DOG_CODE: Final = code_of(DOG_COMBO)
# A listed play before it becomes a Play: (cards, code) or (cards, code, wish, partner), where
# the reading is COMBOS[code]: tuples of ints, which the garbage collector stops tracking.
Entry = tuple[int, int] | tuple[int, int, int, int]  # (cards, reading code[, wish, partner])


# ----------------------------------------------------------------------------- seats


def partners(state: State, seat: int) -> tuple[int, ...]:
    """The seat's partners: opposite in §3, the seats ±2 in §16 (R-V6-1)."""
    return partners_of(state.players, seat)


def opponents(state: State, seat: int) -> tuple[int, ...]:
    """The seats of the other team, in turn order after `seat`."""
    return opponents_of(state.players, seat)


def _rotation(n: int, seat: int) -> tuple[int, ...]:
    return tuple((seat + i) % n for i in range(1, n + 1))


# Indexed [players][seat][active seat bits]: the bomb window after `seat` acts (R-BOMB-5: every
# active seat, from the next one round to the actor) and the next active seat after `seat`.
_WINDOWS: Final = {
    n: [
        [tuple(s for s in _rotation(n, seat) if bits >> s & 1) for bits in range(1 << n)] for seat in range(n)
    ]
    for n in (4, 6)
}
_NEXT: Final = {n: [[(w[0] if w else NO_SEAT) for w in rows] for rows in _WINDOWS[n]] for n in (4, 6)}


def next_active(state: State, seat: int) -> int:
    """The first seat after `seat` in turn order that still holds cards (seat itself last)."""
    return _NEXT[state.config.players][seat][state.active]


# ----------------------------------------------------------------------------- queries


def _sequential_gt_seat(st: State) -> int:
    n = st.players
    for k in range(n):
        seat = (st.dealer + k) % n
        if st.gt[seat] < 0:
            return seat
    return NO_SEAT


def to_act(state: State) -> tuple[int, ...]:
    """The seats that owe a decision now (the referee sends each a request)."""
    phase = state.phase
    n = state.players
    if phase is _PLAY:
        if state.gift >= 0:
            return (state.gift,)
        if state.window:
            if not state.window_declined and not state.window_bombs:
                return state.window
            answered = state.window_declined
            for seat, _ in state.window_bombs:
                answered |= 1 << seat
            return tuple(s for s in state.window if not answered >> s & 1)
        return (state.turn,) if state.turn >= 0 else ()
    if phase is _GRAND_TICHU:
        if state.config.gt_decision_mode == "sequential":
            seat = _sequential_gt_seat(state)
            return (seat,) if seat >= 0 else ()
        return tuple([s for s in range(n) if state.gt[s] < 0])
    if phase is _TICHU_STEP:
        return tuple([s for s in range(n) if state.tichu_step[s] < 0])
    if phase is _EXCHANGE:
        return tuple([s for s in range(n) if state.exchange[s] is None])
    if phase is _ROUND_END and state.gift >= 0:
        return (state.gift,)
    return ()


class DecisionKind(StrEnum):
    """The decisions a seat can owe; a request asks for one, a bot answers each with one method."""

    GRAND_TICHU = "grand_tichu"  # R-GT-1: call Grand Tichu on the first cards?
    TICHU_STEP = "tichu_step"  # R-CALL-6 pre_step: call Tichu before the exchange?
    EXCHANGE = "exchange"  # R-EXCH-1: the cards to give
    PLAY = "play"  # a regular turn: a lead or a follow
    BOMB_WINDOW = "bomb_window"  # R-BOMB-5: a bomb, or decline
    DRAGON_GIFT = "dragon_gift"  # R-DRG-2: who receives the Dragon trick


# The phases whose every decision is of one kind; the others are decided by kind_owed.
_PHASE_KINDS: Final = {
    _GRAND_TICHU: DecisionKind.GRAND_TICHU,
    _TICHU_STEP: DecisionKind.TICHU_STEP,
    _EXCHANGE: DecisionKind.EXCHANGE,
}


def kind_owed(phase: Phase, gift_pending: bool, window_open: bool) -> DecisionKind | None:
    """The kind of the decision a seat owes, for a seat that owes one: the only derivation.

    It reads only what a seat's Observation also holds, so the referee (owed) and a bot's view
    of the table (clients.bot.decision_kind) cannot tell the kind differently.
    """
    kind = _PHASE_KINDS.get(phase)
    if kind is not None:
        return kind
    if gift_pending:
        return DecisionKind.DRAGON_GIFT  # in PLAY, or in ROUND_END after the last trick (R-DRG-5)
    if phase is not _PLAY:
        return None
    return DecisionKind.BOMB_WINDOW if window_open else DecisionKind.PLAY


def owed(state: State, seat: int) -> DecisionKind | None:
    """The decision `seat` owes now (see to_act), or None if it owes none."""
    if seat not in to_act(state):
        return None
    return kind_owed(state.phase, state.gift >= 0, bool(state.window))


def can_call_tichu(state: State, seat: int) -> bool:
    """Whether a Tichu call by `seat` is accepted now (R-CALL-1, -2, -5, -6)."""
    return _call_problem(state, seat) is None


def _call_problem(st: State, seat: int) -> tuple[str, str] | None:
    phase = st.phase
    mode = st.config.tichu_call_exchange_mode
    if phase is _GRAND_TICHU:
        return ("R-CALL-1", "a Tichu can be called only once you hold your full hand")
    if phase is _TICHU_STEP:
        if st.tichu_step[seat] != -1:
            return ("R-CALL-6", "you have already answered the pre-exchange Tichu question")
    elif phase is _EXCHANGE:
        if mode != "open":
            return ("R-CALL-6", "no calls are accepted while exchange cards are being selected")
    elif phase is not _PLAY:
        return ("R-CALL-1", "the round is over; no call is accepted")
    if st.calls[seat]:
        if st.calls[seat] == 2:
            return ("R-CALL-2", "a Grand Tichu caller cannot also call Tichu")
        return ("R-CALL-2", "you have already called Tichu this round")
    if not st.hands[seat]:
        return ("R-END-2", "a player who is out can no longer call")
    if st.played >> seat & 1:
        return ("R-CALL-1", "a Tichu can be called only before your first card is played")
    if st.out and not st.config.allow_hopeless_calls:
        return ("R-CALL-5", "another player is already out (allow_hopeless_calls = false)")
    return None


def _can_fulfil(st: State, seat: int) -> bool:
    """R-WISH-3: the seat holds a natural of the wished rank and some legal play contains one."""
    wish = st.wish
    if not wish:
        return False
    hand = st.hands[seat]
    if not hand & RANK_MASKS[wish]:
        return False
    if st.top is None:
        return True
    rank_mask = RANK_MASKS[wish]
    return any(cards & rank_mask for cards, _ in plays(hand, st.top))


def _window_bound_seat(st: State) -> int:
    """With wish_bomb_exemption = none: the seat whose regular turn follows this window."""
    if not st.window or _trick_complete(st):
        return NO_SEAT
    return st.turn


def _trick_complete(st: State) -> bool:
    """R-TRICK-5 (and R-TRICK-6 with overtaking): the trick is to be collected now."""
    top_bit = 1 << st.top_seat
    others = st.active & ~top_bit
    if st.passed & others != others:
        return False
    return not (st.config.allow_overtake_own_trick and st.hands[st.top_seat] and not st.passed & top_bit)


def _gift_recipients(st: State, seat: int) -> tuple[int, ...]:
    opps = opponents(st, seat)
    if st.config.dragon_gift_recipients == "active_opponents_only":
        active = tuple(s for s in opps if st.hands[s])
        if active:
            return active
    return opps


# ----------------------------------------------------------------------------- legal actions


def _nth_exchange(
    cards: Sequence[int], recipients: tuple[int, ...], index: int
) -> tuple[tuple[int, int], ...]:
    """The gifts of the index-th exchange in ExchangeChoices order.

    The index is read as mixed-radix digits, most significant first: digit i picks recipient i's
    card among those the earlier recipients left, so each index names one distinct exchange.
    """
    remaining = list(cards)
    left = len(remaining)
    base = 1
    for j in range(1, len(recipients)):
        base *= left - j
    gifts = []
    for seat in recipients:
        digit, index = divmod(index, base)
        gifts.append((seat, int(remaining.pop(digit))))
        left -= 1
        if len(gifts) < len(recipients):
            base //= left
    return tuple(gifts)


class ExchangeChoices(Sequence[Action]):
    """Every exchange a seat may submit, in a fixed order, computed on demand (4p: 2,184)."""

    def __init__(self, hand: int, recipients: tuple[int, ...], extra: tuple[Action, ...]) -> None:
        self._cards = cards_of(hand)
        self._recipients = recipients
        self._extra = extra
        count = 1
        for i in range(len(recipients)):
            count *= len(self._cards) - i
        self._count = count

    def __len__(self) -> int:
        return len(self._extra) + self._count

    @overload
    def __getitem__(self, index: int) -> Action: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[Action]: ...

    def __getitem__(self, index: int | slice) -> Action | Sequence[Action]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(index)
        if index < len(self._extra):
            return self._extra[index]
        return Exchange(_nth_exchange(self._cards, self._recipients, index - len(self._extra)))

    def __contains__(self, action: object) -> bool:
        if action in self._extra:
            return True
        if not isinstance(action, Exchange):
            return False
        cards = {card for _, card in action.gifts}
        return (
            tuple(seat for seat, _ in action.gifts) == self._recipients
            and len(cards) == len(action.gifts)
            and cards <= set(self._cards)
        )

    def __iter__(self) -> Iterator[Action]:
        for i in range(len(self)):
            yield self[i]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence) and not isinstance(other, str):
            return len(self) == len(other) and tuple(self) == tuple(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]


def _stamp_of(st: State) -> object:
    """The token of `st` that its listed Plays carry, made on first use.

    Not the state itself: a Play, or a LegalPlays, that referred to its state would close a
    reference cycle with the state's memo of its legal answers, and every state left behind
    would then wait for the garbage collector instead of going at once. A new token for each
    state (and each in-place change, `_own`) keeps a Play listed elsewhere from passing as known.
    """
    stamp = st._stamp
    if stamp is None:
        stamp = st._stamp = object()
    return stamp


def _made_plays(entries: Sequence[Entry], stamp: object, seat: int) -> list[Play]:
    """A Play for each listed entry, in order."""
    combos = COMBOS
    made: list[Play] = []
    for entry in entries:
        combo = combos[entry[1]]
        if len(entry) == 2:
            made.append(Play(entry[0], combo.phoenix, 0, -1, False, combo, stamp, seat))
        else:
            made.append(Play(entry[0], combo.phoenix, entry[2], entry[3], False, combo, stamp, seat))
    return made


class LegalPlays(Sequence[Action]):
    """A seat's legal plays (with a pass, decline or call around them), built on access.

    Bots usually pick one action out of dozens, so each Play object is made only when it is
    read. A play read by index is kept (repeated reads return the same object); iteration
    makes the plays not kept yet and keeps none of them (see __iter__).
    """

    __slots__ = ("_entries", "_made", "_prefix", "_seat", "_stamp", "_suffix")

    def __init__(
        self,
        stamp: object,
        seat: int,
        prefix: tuple[Action, ...],
        entries: Sequence[Entry],
        suffix: tuple[Action, ...] = (),
        made: list[Play | None] | None = None,
    ) -> None:
        self._stamp = stamp
        self._seat = seat
        self._prefix = prefix
        self._entries = entries
        self._suffix = suffix
        self._made: list[Play | None] = [None] * len(entries) if made is None else made

    def __len__(self) -> int:
        return len(self._prefix) + len(self._entries) + len(self._suffix)

    @overload
    def __getitem__(self, index: int) -> Action: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[Action]: ...

    def __getitem__(self, index: int | slice) -> Action | Sequence[Action]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        size = len(self)
        if index < 0:
            index += size
        if not 0 <= index < size:
            raise IndexError(index)
        if index < len(self._prefix):
            return self._prefix[index]
        index -= len(self._prefix)
        if index >= len(self._entries):
            return self._suffix[index - len(self._entries)]
        made = self._made[index]
        if made is None:
            made = self._made[index] = self._make(self._entries[index])
        return made

    def _make(self, entry: Entry) -> Play:
        combo = COMBOS[entry[1]]
        if len(entry) == 2:
            return Play(entry[0], combo.phoenix, 0, -1, False, combo, self._stamp, self._seat)
        return Play(entry[0], combo.phoenix, entry[2], entry[3], False, combo, self._stamp, self._seat)

    def __iter__(self) -> Iterator[Action]:
        yield from self._prefix
        made = self._made
        stamp, seat = self._stamp, self._seat
        if not any(made):
            # Every play in one pass (the common case: a bot reads the whole list), kept by no
            # one but the caller: the state holds this listing as long as it lives, and a kept
            # list of plays would be walked by every full collection for as long (4x slower
            # listing with the garbage collector on, measured in bench/engine.py).
            yield from _made_plays(self._entries, stamp, seat)
        else:
            make = self._make
            for i, entry in enumerate(self._entries):
                play = made[i]
                yield make(entry) if play is None else play
        yield from self._suffix

    def __contains__(self, action: object) -> bool:
        if not isinstance(action, Play):
            return action in self._prefix or action in self._suffix
        return any(a == action for a in self)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence) and not isinstance(other, str):
            return tuple(self) == tuple(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"LegalPlays({[str(a) for a in self]!r})"


_OTHER_SEATS_4: Final = tuple(tuple(s for s in range(4) if s != seat) for seat in range(4))


def exchange_recipients(state: State, seat: int) -> tuple[int, ...]:
    """Who a seat gives a card to, in seat order: each other seat (R-EXCH-1), partners in §16 (R-V6-4)."""
    n = state.players
    if n == 4:
        return _OTHER_SEATS_4[seat]
    return tuple(sorted(partners(state, seat)))


def legal_actions(state: State, seat: int) -> Sequence[Action]:
    """Everything `seat` may do now, in a deterministic order; empty if nothing.

    That is its legal_decisions() plus, when R-CALL-1 allows, a spontaneous Tichu call. A Play
    with `tichu=True` is not listed separately: it is accepted exactly when both the call and the
    play without the flag are listed (R-CALL-7).
    """
    decisions = legal_decisions(state, seat)
    if state.phase not in (_PLAY, _EXCHANGE) or _call_problem(state, seat) is not None:
        return decisions
    if isinstance(decisions, ExchangeChoices):
        return ExchangeChoices(state.hands[seat], exchange_recipients(state, seat), (CALL_TICHU,))
    if isinstance(decisions, LegalPlays):
        return LegalPlays(
            decisions._stamp, seat, decisions._prefix, decisions._entries, (CALL_TICHU,), decisions._made
        )
    return tuple(decisions) + (CALL_TICHU,)


_DECLINE_ONLY: Final[tuple[Action, ...]] = (DECLINE,)


def legal_decisions(state: State, seat: int) -> Sequence[Action]:
    """The legal answers to the decision `seat` owes now (see to_act); empty if it owes none.

    Unlike legal_actions, this leaves out a spontaneous Tichu call, which answers no request.
    """
    cache = state._legal
    if cache is not None:
        found = cache.get(seat)
        if found is not None:
            return found
    result = _legal_decisions(state, seat)
    if result is _DECLINE_ONLY or result is _NOTHING:
        # Shared constants, found again faster than a memo is made: most seats in most bomb
        # windows hold no bomb, and a state's memo would be made for them alone.
        return result
    if cache is None:
        state._legal = {seat: result}
    else:
        cache[seat] = result
    return result


def _legal_decisions(st: State, seat: int) -> Sequence[Action]:
    phase = st.phase
    if phase is _PLAY:
        if st.gift >= 0:
            return tuple(GiftDragon(s) for s in _gift_recipients(st, seat)) if seat == st.gift else ()
        if st.window:
            if not _owes_window(st, seat):
                return _NOTHING
            if not has_bomb(st.hands[seat]):
                return _DECLINE_ONLY
            return LegalPlays(_stamp_of(st), seat, _DECLINE_ONLY, _window_bombs(st, seat))
        if seat != st.turn:
            return _NOTHING
        return _turn_actions(st, seat)
    if phase is _GRAND_TICHU:
        if st.gt[seat] >= 0:
            return _NOTHING
        if st.config.gt_decision_mode == "sequential" and seat != _sequential_gt_seat(st):
            return _NOTHING
        return (GRAND_TICHU, NO_GRAND_TICHU)
    if phase is _TICHU_STEP:
        return (CALL_TICHU, DECLINE_TICHU) if st.tichu_step[seat] == -1 else ()
    if phase is _EXCHANGE:
        if st.exchange[seat] is not None:
            return _NOTHING
        return ExchangeChoices(st.hands[seat], exchange_recipients(st, seat), ())
    if phase is _ROUND_END and seat == st.gift:
        return tuple(GiftDragon(s) for s in _gift_recipients(st, seat))
    return _NOTHING


def _window_bombs(st: State, seat: int) -> list[tuple[int, int]]:
    """The bombs a seat may answer the open window with (R-BOMB-9, R-WISH-6 `none`)."""
    found = bombs(st.hands[seat], st.top)
    if (
        st.config.wish_bomb_exemption == "none"
        and st.wish
        and seat == _window_bound_seat(st)
        and _can_fulfil(st, seat)
    ):
        found = [b for b in found if b[0] & RANK_MASKS[st.wish]]
    return found


def _owes_window(st: State, seat: int) -> bool:
    if not st.window_bombs:
        return not st.window_declined >> seat & 1 and seat in st.window
    return (
        seat in st.window
        and not st.window_declined >> seat & 1
        and all(s != seat for s, _ in st.window_bombs)
    )


_PASS_ONLY: Final[tuple[Action, ...]] = (PASS,)
_NOTHING: Final[tuple[Action, ...]] = ()


def _lead_plays(st: State, seat: int) -> list[tuple[int, int]]:
    """Every lead of the seat's hand, derived from the last one listed for this seat.

    A combination is valid whatever else its player holds, so the leads of a smaller hand are
    the earlier leads that use none of the cards played since; only the first is enumerated.
    """
    hand = st.hands[seat]
    leads = st._leads
    if leads is not None:
        known = leads[seat]
        if known is not None:
            known_hand, known_plays = known
            if known_hand == hand:
                return known_plays
            if not hand & ~known_hand:
                gone = known_hand & ~hand
                found = [p for p in known_plays if not p[0] & gone]
                st._leads = leads[:seat] + ((hand, found),) + leads[seat + 1 :]
                return found
    found = plays(hand, None)
    if leads is None:
        leads = (None,) * st.players
    st._leads = leads[:seat] + ((hand, found),) + leads[seat + 1 :]
    return found


def _turn_actions(st: State, seat: int) -> LegalPlays:
    prefix, entries = _turn_options(st, seat)
    return LegalPlays(_stamp_of(st), seat, prefix, entries)


def _turn_options(st: State, seat: int) -> tuple[tuple[Action, ...], Sequence[Entry]]:
    """The regular turn's legal answers: a pass or nothing, then (cards, reading[, wish, partner])."""
    hand = st.hands[seat]
    top = st.top
    found: list[tuple[int, int]] = plays(hand, top) if top is not None else _lead_plays(st, seat)
    wish = st.wish
    obliged = False
    if wish and hand & RANK_MASKS[wish]:
        rank_mask = RANK_MASKS[wish]
        fulfilling = [p for p in found if p[0] & rank_mask]
        if fulfilling:
            obliged = True
            exempt_bombs = (
                st.config.wish_bomb_exemption_on_lead
                if top is None
                else st.config.effective_wish_bomb_exemption == "any_nonlead_bomb"
            )
            if exempt_bombs:
                fulfilling += [p for p in found if COMBOS[p[1]].is_bomb and not p[0] & rank_mask]
            found = fulfilling
    prefix = _NOTHING if top is None or obliged else _PASS_ONLY
    entries: Sequence[Entry] = found
    if top is None:
        # The Mah Jong is always led (R-WISH-10): each of its plays once per possible wish.
        mixed: list[Entry] = []
        if hand & MJ:
            wishes = range(2, 15) if st.config.wish_mandatory else (0, *range(2, 15))
            mixed = [p for p in found if not p[0] & MJ]
            for cards, code in found:
                if cards & MJ:
                    mixed.extend([(cards, code, w, -1) for w in wishes])
            entries = mixed
        if hand & DOG and not obliged:
            if not mixed:
                mixed = list(found)
            mixed.extend((DOG, DOG_CODE, 0, p) for p in _dog_partner_options(st, seat))
            entries = mixed
    return prefix, entries


def _dog_partner_options(st: State, seat: int) -> tuple[int, ...]:
    """R-V6-5: the partner named with the Dog; -1 for no name."""
    if st.players == 4:
        return (-1,)
    active = tuple(p for p in partners(st, seat) if st.hands[p])
    if len(active) == 2:
        return tuple(sorted(active))
    if len(active) == 1:
        return (-1, active[0])
    return (-1,)


__all__ = [
    "DOG_COMBO",
    "DecisionKind",
    "Entry",
    "ExchangeChoices",
    "LegalPlays",
    "can_call_tichu",
    "exchange_recipients",
    "kind_owed",
    "legal_actions",
    "legal_decisions",
    "next_active",
    "opponents",
    "owed",
    "partners",
    "to_act",
]
