"""The game: new_game, legal_actions, apply, to_act, default_action (RULES.md §3-§16).

`apply(state, seat, action)` validates first and raises InvalidActionError or IllegalActionError
(naming the rule) without changing anything, or returns the next state and the events.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import overload

from referee.rules.actions import (
    CALL_TICHU,
    DECLINE,
    DECLINE_TICHU,
    GRAND_TICHU,
    NO_GRAND_TICHU,
    PASS,
    Action,
    CallTichu,
    Decline,
    DeclineTichu,
    Exchange,
    GiftDragon,
    GrandTichu,
    Pass,
    Play,
    make_exchange,
)
from referee.rules.cards import (
    DOG,
    MJ,
    PHX,
    RANK_MASKS,
    cards_of,
    format_cards,
    mask_points,
    rank_name,
)
from referee.rules.combos import (
    DOG_KIND,
    SINGLE,
    Combo,
    ComboKind,
    beats,
    bombs,
    classify,
    count_single_follows,
    has_bomb,
    nth_single_follow,
    plays,
)
from referee.rules.config import OFFICIAL, RulesConfig
from referee.rules.errors import IllegalActionError, InvalidActionError
from referee.rules.events import (
    CallDeclined,
    Called,
    CardsDealt,
    CardsReceived,
    DragonGiftPending,
    DragonGiven,
    Event,
    ExchangeCompleted,
    ExchangeSubmitted,
    GameOver,
    LeadPassed,
    Passed,
    Played,
    RoundEnded,
    RoundScored,
    RoundStarted,
    TrickWon,
    WentOut,
    WindowClosed,
    WishFulfilled,
)
from referee.rules.state import NO_SEAT, Phase, State, full_hand_size, opponents_of, partners_of, team_of

DOG_COMBO = Combo(DOG_KIND, 1, 0)
# A listed play before it becomes a Play: (cards, reading) or (cards, reading, wish, partner).
Entry = tuple[int, Combo] | tuple[int, Combo, int, int]
# Events are values: the field-less and one-field ones that occur every turn are made once.
WINDOW_CLOSED = WindowClosed()
PASSED = tuple(Passed(seat) for seat in range(6))
_DRAGON_KEY = 30
# The phases as globals: an enum member read through its class costs several times as much.
_GRAND_TICHU = Phase.GRAND_TICHU
_TICHU_STEP = Phase.TICHU_STEP
_EXCHANGE = Phase.EXCHANGE
_PLAY = Phase.PLAY
_ROUND_END = Phase.ROUND_END
_GAME_OVER = Phase.GAME_OVER
# Where the rule code puts its events: None when the caller discards them (playout), so that
# the simulation builds none.
Events = list[Event] | None


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
_WINDOWS = {
    n: [
        [tuple(s for s in _rotation(n, seat) if bits >> s & 1) for bits in range(1 << n)] for seat in range(n)
    ]
    for n in (4, 6)
}
_NEXT = {n: [[(w[0] if w else NO_SEAT) for w in rows] for rows in _WINDOWS[n]] for n in (4, 6)}


def next_active(state: State, seat: int) -> int:
    """The first seat after `seat` in turn order that still holds cards (seat itself last)."""
    return _NEXT[state.config.players][seat][state.active]


# ----------------------------------------------------------------------------- dealing


def new_game(config: RulesConfig = OFFICIAL, seed: int | str = 0) -> tuple[State, list[Event]]:
    """A new game: the first dealer is drawn from the seed (R-FLOW-2) and the first round dealt."""
    st = State.__new__(State)
    st._legal = None
    st._stamp = None
    st._leads = None
    st.config = config
    st.seed = seed
    st.round = 0
    st.scores = (0, 0)
    st.history = ()
    st.winner = None
    st.dealer = random.Random(f"tichu-dealer/{seed}").randrange(config.players)
    events: list[Event] = []
    _deal(st, events)
    return st, events


def _deal(st: State, events: Events) -> None:
    """Shuffle and deal a round (R-DEAL-1/2, R-V6-2) into `st`, which is being built."""
    n = st.config.players
    deck = _shuffled_deck(random.Random(f"tichu-deal/{st.seed}/{st.round}"))
    seen_first = 8 if n == 4 else 6
    hands = []
    unseen = []
    for seat in range(n):
        k = (seat - st.dealer) % n  # dealing order: the dealer takes the first card
        cards = deck[k::n]
        first = cards[:seen_first] if st.config.grand_tichu_enabled else cards
        rest = cards[len(first) :]
        hands.append(_mask(first))
        unseen.append(_mask(rest))
    st.hands = tuple(hands)
    st.active = (1 << n) - 1
    st.unseen = tuple(unseen)
    st.calls = (0,) * n
    st.gt = (-1,) * n
    st.tichu_step = (-1,) * n
    st.exchange = (None,) * n
    st.received = ((),) * n
    st.played = 0
    st.piles = (0,) * n
    st.out = ()
    _reset_trick(st)
    st.turn = NO_SEAT
    st.wish = 0
    st.gift = NO_SEAT
    st.dog_aside = 0
    st.dog_owner = NO_SEAT
    if events is not None:
        events.append(RoundStarted(st.round, st.dealer))
    stage = "first" if st.config.grand_tichu_enabled else "all"
    for seat in range(n):
        if events is not None:
            events.append(CardsDealt(seat, st.hands[seat], stage))
    if st.config.grand_tichu_enabled:
        st.phase = _GRAND_TICHU
    else:
        st.gt = (0,) * n
        _after_full_deal(st, events)


# Each step of random.shuffle over the 56 cards: (i, i + 1, (i + 1).bit_length()).
_SHUFFLE_STEPS = tuple((i, i + 1, (i + 1).bit_length()) for i in reversed(range(1, 56)))


# The cards of each byte of a card mask, per byte value: a hand's cards in a few table reads.
_BYTE_CARDS = tuple(
    tuple(tuple(8 * k + i for i in range(8) if v >> i & 1) for v in range(256)) for k in range(7)
)


def _shuffled_deck(rng: random.Random) -> list[int]:
    """The 56 cards as random.shuffle orders them with `rng`, its per-card draw inlined.

    random.shuffle draws each swap with Random._randbelow (getrandbits of n.bit_length() bits
    until below n); inlined, a deal costs half as much. tests/rules/test_playout.py checks the
    decks are random.shuffle's, so a Python whose shuffle draws otherwise is noticed.
    """
    deck = list(range(56))
    getrandbits = rng.getrandbits
    for i, n, k in _SHUFFLE_STEPS:
        j = getrandbits(k)
        while j >= n:
            j = getrandbits(k)
        deck[i], deck[j] = deck[j], deck[i]
    return deck


def _mask(cards: list[int]) -> int:
    mask = 0
    for c in cards:
        mask |= 1 << c
    return mask


def _reset_trick(st: State) -> None:
    st.trick = ()
    st.table = 0
    st.top = None
    st.top_seat = NO_SEAT
    st.passed = 0
    st.window = ()
    st.window_declined = 0
    st.window_bombs = ()


def _after_full_deal(st: State, events: Events) -> None:
    """Every seat holds its full hand: the pre-exchange Tichu step or the exchange (R-CALL-6)."""
    if st.config.tichu_call_exchange_mode == "pre_step" and 0 in st.calls:
        st.tichu_step = tuple(2 if call else -1 for call in st.calls)
        st.phase = _TICHU_STEP
    else:
        st.phase = _EXCHANGE


def _sequential_gt_seat(st: State) -> int:
    n = st.players
    for k in range(n):
        seat = (st.dealer + k) % n
        if st.gt[seat] < 0:
            return seat
    return NO_SEAT


# ----------------------------------------------------------------------------- queries


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
    if phase is _ROUND_END:
        return (state.gift,)
    return ()


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


class LegalPlays(Sequence[Action]):
    """A seat's legal plays (with a pass, decline or call around them), built on access.

    Bots usually pick one action out of dozens, so each Play object is made only when it is
    first read, and then kept, so repeated reads return the same object.
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
        combo = entry[1]
        if len(entry) == 2:
            return Play(entry[0], combo.phoenix, 0, -1, False, combo, self._stamp, self._seat)
        return Play(entry[0], combo.phoenix, entry[2], entry[3], False, combo, self._stamp, self._seat)

    def __iter__(self) -> Iterator[Action]:
        yield from self._prefix
        made = self._made
        if None in made:
            if not any(made):
                # Build every play in one pass (the common case: a bot reads the whole list).
                stamp, seat = self._stamp, self._seat
                made[:] = [
                    Play(e[0], e[1].phoenix, 0, -1, False, e[1], stamp, seat)
                    if len(e) == 2
                    else Play(e[0], e[1].phoenix, e[2], e[3], False, e[1], stamp, seat)
                    for e in self._entries
                ]
            else:
                make = self._make
                for i, entry in enumerate(self._entries):
                    if made[i] is None:
                        made[i] = make(entry)
        yield from made  # type: ignore[misc]
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


_OTHER_SEATS_4 = tuple(tuple(s for s in range(4) if s != seat) for seat in range(4))


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


_DECLINE_ONLY: tuple[Action, ...] = (DECLINE,)


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
                return ()
            if not has_bomb(st.hands[seat]):
                return _DECLINE_ONLY
            return LegalPlays(_stamp_of(st), seat, _DECLINE_ONLY, _window_bombs(st, seat))
        if seat != st.turn:
            return ()
        return _turn_actions(st, seat)
    if phase is _GRAND_TICHU:
        if st.gt[seat] >= 0:
            return ()
        if st.config.gt_decision_mode == "sequential" and seat != _sequential_gt_seat(st):
            return ()
        return (GRAND_TICHU, NO_GRAND_TICHU)
    if phase is _TICHU_STEP:
        return (CALL_TICHU, DECLINE_TICHU) if st.tichu_step[seat] == -1 else ()
    if phase is _EXCHANGE:
        if st.exchange[seat] is not None:
            return ()
        return ExchangeChoices(st.hands[seat], exchange_recipients(st, seat), ())
    if phase is _ROUND_END and seat == st.gift:
        return tuple(GiftDragon(s) for s in _gift_recipients(st, seat))
    return ()


def _window_bombs(st: State, seat: int) -> list[tuple[int, Combo]]:
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


_PASS_ONLY: tuple[Action, ...] = (PASS,)
_NO_BOMBS: list[tuple[int, Combo]] = []
_NOTHING: tuple[Action, ...] = ()


def _lead_plays(st: State, seat: int) -> list[tuple[int, Combo]]:
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
    found: list[tuple[int, Combo]] = plays(hand, top) if top is not None else _lead_plays(st, seat)
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
                fulfilling += [p for p in found if p[1].is_bomb and not p[0] & rank_mask]
            found = fulfilling
    prefix = _NOTHING if top is None or obliged else _PASS_ONLY
    entries: Sequence[Entry] = found
    if top is None:
        # The Mah Jong is always led (R-WISH-10): each of its plays once per possible wish.
        mixed: list[Entry] = []
        if hand & MJ:
            wishes = range(2, 15) if st.config.wish_mandatory else (0, *range(2, 15))
            mixed = [p for p in found if not p[0] & MJ]
            for cards, combo in found:
                if cards & MJ:
                    mixed.extend([(cards, combo, w, -1) for w in wishes])
            entries = mixed
        if hand & DOG and not obliged:
            if not mixed:
                mixed = list(found)
            mixed.extend((DOG, DOG_COMBO, 0, p) for p in _dog_partner_options(st, seat))
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


# ----------------------------------------------------------------------------- apply


def apply(state: State, seat: int, action: Action) -> tuple[State, list[Event]]:
    """Apply `seat`'s action: the next state and its events, or an error and no change."""
    events: list[Event] = []
    return _dispatch(state, seat, action, False, events), events


def apply_all(state: State, moves: Iterable[tuple[int, Action]]) -> tuple[State, list[Event]]:
    """Apply (seat, action) moves in order, all or nothing: the same result as successive
    apply() calls, built on one copy (the referee uses it for a bomb window's answers)."""
    events: list[Event] = []
    st = state
    owned = False
    for seat, action in moves:
        st = _dispatch(st, seat, action, owned, events)
        owned = st is not state
    return st, events


def answer_window(state: State, answers: Mapping[int, Action]) -> tuple[State, list[Event]]:
    """Apply several seats' answers (Decline or a bomb) to the open bomb window, on one copy.

    The window resolves from the answers alone (R-BOMB-9): the first bomb in window order applies
    once every seat before it has declined, and later answers are discarded. The result is the
    same as applying each answer with apply() as it arrives, in any order.
    """
    if not state.window:
        raise IllegalActionError("there is no bomb window open", "R-BOMB-9")
    recorded: list[tuple[int, Play]] = []
    declined = state.window_declined
    for seat, action in answers.items():
        if type(seat) is not int or not _owes_window(state, seat):
            if isinstance(seat, int) and seat in state.window:
                raise IllegalActionError(f"seat {seat} has already answered this bomb window", "R-BOMB-9")
            raise IllegalActionError(f"seat {seat!r} is not in this bomb window", "R-BOMB-9")
        if type(action) is Decline:
            declined |= 1 << seat
        elif isinstance(action, Play):
            if action.tichu:
                problem = _call_problem(state, seat)
                if problem is not None:
                    raise IllegalActionError(problem[1], problem[0])
            combo, in_window = _validate_play(state, seat, action)
            assert in_window
            recorded.append((seat, Play(action.cards_mask, combo.phoenix, 0, -1, action.tichu, combo)))
        else:
            raise InvalidActionError(
                f"a bomb window is answered with 'decline' or a bomb, not {action}", "R-BOMB-9"
            )
    st = state.copy()
    st.window_declined = declined
    if recorded:
        st.window_bombs = _in_window_order(st, st.window_bombs + tuple(recorded))
    events: list[Event] = []
    _resolve_window(st, events)
    return st, events


def _own(state: State, owned: bool) -> State:
    """The state to mutate: a fresh copy, or the working copy apply_all already owns."""
    if owned:
        state._legal = None
        state._stamp = None
        return state
    return state.copy()


def _dispatch(state: State, seat: int, action: Action, owned: bool, events: Events) -> State:
    n = state.config.players
    if type(seat) is not int or not 0 <= seat < n:
        raise InvalidActionError(f"seat must be 0..{n - 1}, not {seat!r}")
    phase = state.phase
    if phase is _GAME_OVER:
        raise IllegalActionError("the game is over", "R-GAME-1")
    kind = type(action)
    if kind is Decline:
        return _apply_decline(state, seat, owned, events)
    if kind is Play:
        return _apply_play(state, seat, action, owned, events)  # type: ignore[arg-type]
    if kind is Pass:
        return _apply_pass(state, seat, owned, events)
    if kind is CallTichu:
        return _apply_call(state, seat, owned, events)
    if kind is DeclineTichu:
        if phase is not _TICHU_STEP:
            raise IllegalActionError(
                "no Tichu question is open: 'no_tichu' answers the pre-exchange step", "R-CALL-6"
            )
        if state.tichu_step[seat] != -1:
            raise IllegalActionError("you have already answered the pre-exchange Tichu question", "R-CALL-6")
        st = _own(state, owned)
        st.tichu_step = _set(st.tichu_step, seat, 0)
        _maybe_finish_tichu_step(st, events)
        return st
    if isinstance(action, GrandTichu):
        return _apply_grand_tichu(state, seat, action.call, owned, events)
    if isinstance(action, Exchange):
        return _apply_exchange(state, seat, action, owned, events)
    if isinstance(action, GiftDragon):
        return _apply_gift(state, seat, action.to, owned, events)
    raise InvalidActionError(f"not an action: {action!r}")


def _set(values: tuple[int, ...], index: int, value: int) -> tuple[int, ...]:
    return values[:index] + (value,) + values[index + 1 :]


def _apply_grand_tichu(state: State, seat: int, call: bool, owned: bool, events: Events) -> State:
    if state.phase is not _GRAND_TICHU:
        raise IllegalActionError(
            "the Grand Tichu window is closed: it closes before the 9th card (7th in §16)", "R-GT-1"
        )
    if state.gt[seat] >= 0:
        raise IllegalActionError("you have already answered the Grand Tichu question", "R-GT-1")
    sequential = state.config.gt_decision_mode == "sequential"
    if sequential and seat != _sequential_gt_seat(state):
        raise IllegalActionError(
            f"Grand Tichu decisions go in dealing order; seat {_sequential_gt_seat(state)} decides first",
            "R-GT-1",
        )
    st = _own(state, owned)
    st.gt = _set(st.gt, seat, int(call))
    if sequential:
        _reveal_gt(st, seat, events)
    if min(st.gt) >= 0:
        if not sequential:
            for s in range(st.players):
                _reveal_gt(st, s, events)
        n = st.players
        st.hands = tuple(st.hands[s] | st.unseen[s] for s in range(n))
        for s in range(n):
            if events is not None:
                events.append(CardsDealt(s, st.unseen[s], "rest"))
        st.unseen = (0,) * n
        _after_full_deal(st, events)
    return st


def _reveal_gt(st: State, seat: int, events: Events) -> None:
    if st.gt[seat]:
        st.calls = _set(st.calls, seat, 2)
    if events is not None:
        events.append(Called(seat, "grand_tichu") if st.gt[seat] else CallDeclined(seat, "grand_tichu"))


def _maybe_finish_tichu_step(st: State, events: Events) -> None:
    if -1 in st.tichu_step:
        return
    for s, d in enumerate(st.tichu_step):
        if d == 1:
            st.calls = _set(st.calls, s, 1)
        if events is not None and d in (0, 1):
            events.append(Called(s, "tichu") if d == 1 else CallDeclined(s, "tichu"))
    st.phase = _EXCHANGE


def _apply_call(state: State, seat: int, owned: bool, events: Events) -> State:
    problem = _call_problem(state, seat)
    if problem is not None:
        raise IllegalActionError(problem[1], problem[0])
    st = _own(state, owned)
    if st.phase is _TICHU_STEP:
        st.tichu_step = _set(st.tichu_step, seat, 1)
        _maybe_finish_tichu_step(st, events)
    else:
        st.calls = _set(st.calls, seat, 1)
        if events is not None:
            events.append(Called(seat, "tichu"))
    return st


def _apply_exchange(state: State, seat: int, action: Exchange, owned: bool, events: Events) -> State:
    if state.phase is not _EXCHANGE:
        raise IllegalActionError("the exchange is not open now", "R-EXCH-2")
    if state.exchange[seat] is not None:
        raise IllegalActionError("your exchange is already submitted and final", "R-EXCH-5")
    recipients = exchange_recipients(state, seat)
    given_to = tuple(s for s, _ in action.gifts)
    if given_to != recipients:
        who = " and ".join(str(s) for s in recipients)
        what = "one card to each other seat" if state.players == 4 else "one card to each partner"
        raise InvalidActionError(
            f"give exactly {what}: seats {who}; got seats {' '.join(map(str, given_to)) or 'none'}",
            "R-EXCH-1" if state.players == 4 else "R-V6-4",
        )
    if len({c for _, c in action.gifts}) != len(action.gifts):
        raise InvalidActionError("the same card is given twice", "R-EXCH-1")
    missing = action.mask & ~state.hands[seat]
    if missing:
        raise IllegalActionError(f"you do not hold {format_cards(missing)}", "R-EXCH-1")
    st = _own(state, owned)
    _submit_exchange(st, seat, action.gifts, events)
    return st


def _submit_exchange(st: State, seat: int, gifts: tuple[tuple[int, int], ...], events: Events) -> None:
    """Record a validated exchange; the last one delivers them all (R-EXCH-2)."""
    st.exchange = st.exchange[:seat] + (gifts,) + st.exchange[seat + 1 :]
    if events is not None:
        events.append(ExchangeSubmitted(seat, gifts))
    if None not in st.exchange:
        _deliver_exchange(st, events)


def _deliver_exchange(st: State, events: Events) -> None:
    """R-EXCH-2: every card at once; then the Mah Jong holder leads (R-EXCH-4)."""
    n = st.players
    hands = list(st.hands)
    received: list[list[tuple[int, int]]] = [[] for _ in range(n)]
    for giver, gifts in enumerate(st.exchange):
        assert gifts is not None
        for to, card in gifts:
            hands[giver] &= ~(1 << card)
            received[to].append((giver, card))
    for to in range(n):
        for _, card in received[to]:
            hands[to] |= 1 << card
    st.hands = tuple(hands)
    st.received = tuple(tuple(sorted(r)) for r in received)
    st.exchange = (None,) * n
    for s in range(n):
        if events is not None:
            events.append(CardsReceived(s, st.received[s]))
    if events is not None:
        events.append(ExchangeCompleted())
    st.phase = _PLAY
    st.turn = next(s for s in range(n) if st.hands[s] & MJ)


def _apply_gift(state: State, seat: int, to: int, owned: bool, events: Events) -> State:
    if state.gift < 0 or state.phase not in (_PLAY, _ROUND_END):
        raise IllegalActionError("no Dragon trick is waiting to be given", "R-DRG-2")
    if seat != state.gift:
        raise IllegalActionError(f"seat {state.gift} gives the Dragon trick, not you", "R-DRG-2")
    if not isinstance(to, int) or not 0 <= to < state.players:
        raise InvalidActionError(f"gift to a seat 0..{state.players - 1}, not {to!r}", "R-DRG-2")
    allowed = _gift_recipients(state, seat)
    if to not in allowed:
        if team_of(to) == team_of(seat):
            raise IllegalActionError("the Dragon trick goes to an opponent, never to your team", "R-DRG-2")
        raise IllegalActionError(
            f"seat {to} is out; give the trick to an active opponent: {allowed}", "R-DRG-2"
        )
    st = _own(state, owned)
    _give_dragon(st, seat, to, events)
    return st


def _give_dragon(st: State, seat: int, to: int, events: Events) -> None:
    cards = st.table | st.dog_aside
    if st.dog_aside:
        st.dog_aside = 0
        st.dog_owner = NO_SEAT
    st.piles = _set(st.piles, to, st.piles[to] | cards)
    if events is not None:
        events.append(DragonGiven(seat, to, cards, mask_points(cards)))
    st.gift = NO_SEAT
    _reset_trick(st)
    if st.phase is _ROUND_END:
        _score_round(st, "normal", events)
        return
    st.turn = seat if st.hands[seat] else next_active(st, seat)  # R-DRG-3


def _apply_pass(state: State, seat: int, owned: bool, events: Events) -> State:
    if state.phase is not _PLAY:
        raise IllegalActionError(f"nothing to pass on in the {state.phase.value} phase", "R-TRICK-3")
    if state.gift >= 0:
        raise IllegalActionError("the Dragon trick must be given first", "R-DRG-2")
    if state.window:
        raise IllegalActionError(
            "a bomb window is open: answer it with 'decline' (or a bomb); your turn comes after it",
            "R-BOMB-9",
        )
    if seat != state.turn:
        raise IllegalActionError(f"it is seat {state.turn}'s turn, not yours", "R-TRICK-3")
    if state.top is None:
        raise IllegalActionError("the leader must play; he cannot pass", "R-TRICK-2")
    if _can_fulfil(state, seat):
        raise IllegalActionError(
            f"you can fulfil the wish for {rank_name(state.wish)} and must play a combination containing it",
            "R-WISH-4",
        )
    st = _own(state, owned)
    _perform_pass(st, seat, events)
    return st


def _perform_pass(st: State, seat: int, events: Events) -> None:
    st.passed |= 1 << seat
    st.turn = _NEXT[st.config.players][seat][st.active]
    if events is not None:
        events.append(PASSED[seat])
    _after_action(st, seat, events)


def _apply_decline(state: State, seat: int, owned: bool, events: Events) -> State:
    if not _owes_window(state, seat):
        if not state.window or seat not in state.window:
            raise IllegalActionError("there is no bomb window open for you to decline", "R-BOMB-9")
        raise IllegalActionError("you have already answered this bomb window", "R-BOMB-9")
    st = _own(state, owned)
    st.window_declined |= 1 << seat
    _resolve_window(st, events)
    return st


def _after_action(st: State, actor: int, events: Events) -> None:
    """After a play or a pass: open the bomb window (R-BOMB-5) or go straight on (R-BOMB-7)."""
    if st.config.bomb_timing == "windows":
        st.window = _WINDOWS[st.config.players][actor][st.active]
        st.window_declined = 0
        st.window_bombs = ()
    else:
        _continue_trick(st, events)


def _in_window_order(st: State, bombs: tuple[tuple[int, Play], ...]) -> tuple[tuple[int, Play], ...]:
    """Pending bombs in window order: one canonical order, whatever order they arrived in."""
    return tuple(sorted(bombs, key=lambda bomb: st.window.index(bomb[0])))


def _resolve_window(st: State, events: Events) -> None:
    """R-BOMB-9: the first bomb in window order applies once everyone before it has declined."""
    declined = st.window_declined
    for seat in st.window:
        if declined >> seat & 1:
            continue
        for bomber, play in st.window_bombs:
            if bomber == seat:
                combo = play._combo
                assert combo is not None
                if play.tichu and _call_problem(st, seat) is None:
                    st.calls = _set(st.calls, seat, 1)  # R-CALL-7: the call, then the play
                    if events is not None:
                        events.append(Called(seat, "tichu"))
                _do_play(st, seat, play.cards_mask, combo, play.wish, play.partner, True, events)
                return
        return
    if events is not None:
        events.append(WINDOW_CLOSED)
    st.window = ()
    st.window_declined = 0
    st.window_bombs = ()
    _continue_trick(st, events)


def _close_unanswerable_window(st: State, events: Events) -> None:
    """A window that no seat in it can answer with a bomb: 'decline' is every seat's only
    answer, so it closes as if all had declined (R-BOMB-9), with no answers recorded."""
    st.window = ()
    st.window_declined = 0
    st.window_bombs = ()
    if events is not None:
        events.append(WINDOW_CLOSED)
    if st.top is not None and _trick_complete(st):
        _close_trick(st, events)


def _continue_trick(st: State, events: Events) -> None:
    """The next regular action: the next turn, or collecting the trick (R-TRICK-5..8)."""
    if st.top is not None and _trick_complete(st):
        _close_trick(st, events)


def _close_trick(st: State, events: Events) -> None:
    winner = st.top_seat
    top = st.top
    assert top is not None
    if top.key == _DRAGON_KEY and top.kind == SINGLE:
        recipients = _gift_recipients(st, winner)
        if len(recipients) == 1:
            _give_dragon(st, winner, recipients[0], events)
        else:
            st.gift = winner
            st.turn = NO_SEAT
            st.window = ()
            if events is not None:
                events.append(DragonGiftPending(winner))
        return
    cards = st.table | st.dog_aside
    if st.dog_aside:
        st.dog_aside = 0
        st.dog_owner = NO_SEAT
    st.piles = _set(st.piles, winner, st.piles[winner] | cards)
    if events is not None:
        events.append(TrickWon(winner, cards, mask_points(cards)))
    _reset_trick(st)
    st.turn = winner if st.hands[winner] else next_active(st, winner)  # R-TRICK-8


def _validate_play(st: State, seat: int, play: Play) -> tuple[Combo, bool]:
    """Check a play; return its reading and whether it is an out-of-turn (window) bomb."""
    cards = play.cards_mask
    if not isinstance(cards, int) or cards <= 0:
        raise InvalidActionError("a play names at least one card; to pass, send 'pass'", "R-COMB-1")
    if st.phase is not _PLAY:
        raise IllegalActionError(f"no cards can be played in the {st.phase.value} phase", "R-FLOW-1")
    hand = st.hands[seat]
    if not hand:
        raise IllegalActionError("you are out and take no further part", "R-END-2")
    missing = cards & ~hand
    if missing:
        raise IllegalActionError(f"you do not hold {format_cards(missing)}", "R-INFO-2")
    top = st.top
    readings = classify(cards, top)
    if not readings:
        raise IllegalActionError(f"{format_cards(cards)} is not a valid combination", "R-COMB-1")
    combo = _choose_reading(st, cards, play, readings)
    in_window = False
    if st.gift >= 0:
        raise IllegalActionError("no play is accepted while a Dragon gift is pending", "R-DRG-2")
    if st.window:
        if seat not in st.window:
            raise IllegalActionError("you are not in this bomb window", "R-BOMB-9")
        if st.window_declined >> seat & 1 or any(s == seat for s, _ in st.window_bombs):
            raise IllegalActionError("you have already answered this bomb window", "R-BOMB-9")
        if not combo.is_bomb:
            raise IllegalActionError(
                "a bomb window is open: only a bomb (or 'decline') is accepted; "
                "your regular turn comes after it",
                "R-BOMB-9",
            )
        in_window = True
    elif seat != st.turn:
        if combo.is_bomb:
            if st.config.bomb_timing == "turn_only":
                raise IllegalActionError(
                    "bombs are played only in your own turn (bomb_timing = turn_only)", "R-BOMB-7"
                )
            if st.top is None:
                raise IllegalActionError(
                    "no bomb out of turn before a lead: the leader leads first", "R-BOMB-2"
                )
            raise IllegalActionError(
                f"no bomb during seat {st.turn}'s turn: bomb in a bomb window, or on your own turn",
                "R-BOMB-9",
            )
        raise IllegalActionError(f"it is seat {st.turn}'s turn, not yours", "R-TRICK-3")
    if combo.kind is DOG_KIND:
        if top is not None:
            raise IllegalActionError("the Dog can only be led", "R-DOG-1")
    elif play.partner >= 0:
        raise InvalidActionError("only a Dog play names a partner", "R-V6-5")
    if top is not None:
        if cards == PHX and top.kind == SINGLE and top.key == _DRAGON_KEY:
            raise IllegalActionError("the Phoenix may not be played on the Dragon", "R-PHX-2")
        if not beats(combo, top):
            rule = "R-BEAT-4" if top.is_bomb else ("R-BEAT-2" if combo.is_bomb else "R-BEAT-1")
            raise IllegalActionError(
                f"{combo.describe()} does not beat the {top.describe()} on the table", rule
            )
    if play.wish:
        if not cards & MJ:
            raise InvalidActionError("a wish is made only with a play containing the Mah Jong", "R-WISH-1")
        if not 2 <= play.wish <= 14:
            raise InvalidActionError("the wished rank must be 2..A", "R-WISH-1")
    elif cards & MJ and st.config.wish_mandatory:
        raise IllegalActionError("a play with the Mah Jong must name a wish (wish_mandatory)", "R-WISH-1")
    if combo.kind is DOG_KIND and st.players == 6:
        options = _dog_partner_options(st, seat)
        if play.partner not in options:
            if play.partner < 0:
                raise IllegalActionError("name which active partner leads after your Dog", "R-V6-5")
            raise IllegalActionError(f"the Dog's lead goes to an active partner: one of {options}", "R-V6-5")
    elif combo.kind is DOG_KIND and play.partner >= 0:
        raise InvalidActionError("in the 4-player game the Dog names no partner (R-DOG-2 decides)", "R-DOG-2")
    _check_wish(st, seat, cards, combo, in_window)
    return combo, in_window


def _choose_reading(st: State, cards: int, play: Play, readings: tuple[Combo, ...]) -> Combo:
    """R-PHX-5: the named Phoenix reading, else the highest (or a rejection if so configured)."""
    if play.phoenix:
        if not cards & PHX:
            raise InvalidActionError("phoenix= names a rank only when the Phoenix is in the play", "R-PHX-5")
        if cards == PHX:
            raise InvalidActionError("a Phoenix single takes its value from the table, not a name", "R-PHX-2")
        for reading in readings:
            if reading.phoenix == play.phoenix:
                return reading
        raise IllegalActionError(
            f"the Phoenix cannot stand for {rank_name(play.phoenix)} in {format_cards(cards)}", "R-PHX-5"
        )
    if len(readings) > 1 and st.config.phoenix_ambiguity_default == "reject_if_undeclared":
        options = ", ".join(rank_name(r.phoenix) for r in readings)
        raise IllegalActionError(f"name the Phoenix's rank: phoenix= one of {options}", "R-PHX-5")
    return readings[0]


def _check_wish(st: State, seat: int, cards: int, combo: Combo, in_window: bool) -> None:
    """R-WISH-4/6: a seat that can fulfil must play the wished rank on its regular turn."""
    wish = st.wish
    if not wish or cards & RANK_MASKS[wish]:
        return
    if in_window:
        if (
            st.config.wish_bomb_exemption == "none"
            and seat == _window_bound_seat(st)
            and _can_fulfil(st, seat)
        ):
            raise IllegalActionError(
                f"your turn is next and you can fulfil the wish for {rank_name(wish)}: "
                "a bomb must contain it (wish_bomb_exemption = none)",
                "R-WISH-6",
            )
        return
    if not _can_fulfil(st, seat):
        return
    if st.top is None:
        if combo.is_bomb and st.config.wish_bomb_exemption_on_lead:
            return
        what = "the Dog" if combo.kind is DOG_KIND else format_cards(cards)
        raise IllegalActionError(
            f"you hold a {rank_name(wish)} and must lead a combination containing it, not {what}", "R-WISH-4"
        )
    if combo.is_bomb and st.config.effective_wish_bomb_exemption == "any_nonlead_bomb":
        return
    raise IllegalActionError(
        f"you can fulfil the wish for {rank_name(wish)} and must play a combination containing it",
        "R-WISH-6" if combo.is_bomb else "R-WISH-4",
    )


def _apply_play(state: State, seat: int, play: Play, owned: bool, events: Events) -> State:
    combo = play._combo
    origin = play._origin
    if (
        combo is not None
        and origin is not None
        and origin is state._stamp
        and play._seat == seat
        and not play.tichu
    ):
        in_window = bool(state.window)
    else:
        if play.tichu:
            problem = _call_problem(state, seat)
            if problem is not None:
                raise IllegalActionError(problem[1], problem[0])
        combo, in_window = _validate_play(state, seat, play)
    st = _own(state, owned)
    if play.tichu and not in_window:
        st.calls = _set(st.calls, seat, 1)
        if events is not None:
            events.append(Called(seat, "tichu"))
    if in_window:
        # Recorded, not yet public: it applies once every seat before it has declined. A call
        # it carries is made only if it applies, else the call would reveal a submitted bomb.
        trusted = Play(play.cards_mask, combo.phoenix, 0, -1, play.tichu, combo)
        st.window_bombs = _in_window_order(st, st.window_bombs + ((seat, trusted),))
        _resolve_window(st, events)
        return st
    _do_play(st, seat, play.cards_mask, combo, play.wish, play.partner, False, events)
    return st


def _do_play(
    st: State, seat: int, cards: int, combo: Combo, wish: int, partner: int, out_of_turn: bool, events: Events
) -> None:
    """Put a validated play on the table (or lead the Dog) and move the game on."""
    hands = st.hands
    left = hands[seat] & ~cards
    st.hands = hands[:seat] + (left,) + hands[seat + 1 :]
    st.played |= 1 << seat
    if combo.kind is DOG_KIND:
        _play_dog(st, seat, partner, events)
        return
    if not cards & MJ:
        wish = 0
    if events is not None:
        events.append(Played(seat, cards, combo, wish, -1, out_of_turn))
    st.trick = st.trick + ((seat, cards, combo),)
    st.table |= cards
    st.top = combo
    st.top_seat = seat
    st.passed = 0
    st.window = ()
    st.window_declined = 0
    st.window_bombs = ()
    if wish:
        if st.config.wish_fulfilled_by_own_mj_play and cards & RANK_MASKS[wish]:
            if events is not None:
                events.append(WishFulfilled(seat, wish))
            st.wish = 0
        else:
            st.wish = wish
    elif st.wish and cards & RANK_MASKS[st.wish]:
        if events is not None:
            events.append(WishFulfilled(seat, st.wish))
        st.wish = 0
    st.turn = _NEXT[st.config.players][seat][st.active]
    if not left and _went_out(st, seat, events):
        return
    _after_action(st, seat, events)


def _play_dog(st: State, seat: int, partner: int, events: Events) -> None:
    """R-DOG-1..5 and R-V6-5: the lead passes; no trick, no window."""
    if events is not None:
        events.append(Played(seat, DOG, DOG_COMBO, 0, partner, False))
    n = st.players
    active = st.active if st.hands[seat] else st.active & ~(1 << seat)
    if n == 4:
        receiver = partners(st, seat)[0]
        if not active >> receiver & 1:
            receiver = _NEXT[n][receiver][active]  # R-DOG-3
    elif partner >= 0:
        receiver = partner
    else:
        named = [p for p in partners(st, seat) if active >> p & 1]
        receiver = named[0] if named else _NEXT[n][seat][active]  # R-V6-5 fallback
    pile_mode = st.config.dog_card_pile
    if pile_mode == "next_trick_winner":
        st.dog_aside = DOG
        st.dog_owner = seat
    else:
        owner = receiver if pile_mode == "receiver" and receiver >= 0 else seat
        st.piles = _set(st.piles, owner, st.piles[owner] | DOG)
    if not st.hands[seat] and _went_out(st, seat, events):
        return
    if events is not None:
        events.append(LeadPassed(seat, receiver))
    st.turn = receiver


def _went_out(st: State, seat: int, events: Events) -> bool:
    """Record a seat going out (R-END-1); end the round if that ends it. True if it did."""
    st.out = st.out + (seat,)
    st.active &= ~(1 << seat)
    if events is not None:
        events.append(WentOut(seat, len(st.out)))
    out = st.out
    if st.players == 4:
        if len(out) == 2 and team_of(out[0]) == team_of(out[1]):
            _end_round(st, "double_victory", events)
            return True
        if len(out) == 3:
            _end_round(st, "normal", events)
            return True
        return False
    if (
        len(out) == 3
        and st.config.v6_triple_victory_mode == "replace"
        and team_of(out[0]) == team_of(out[1]) == team_of(out[2])
    ):
        _end_round(st, "triple_victory", events)
        return True
    if len(out) == 5:
        _end_round(st, "normal", events)
        return True
    return False


def _end_round(st: State, reason: str, events: Events) -> None:
    """R-END-3/4, R-V6-8: the round ends at once; the last trick and the final Dragon gift."""
    if events is not None:
        events.append(RoundEnded(reason, st.out))
    st.window = ()
    st.window_declined = 0
    st.window_bombs = ()
    st.turn = NO_SEAT
    st.wish = 0  # R-WISH-9
    last = st.out[-1]
    if st.dog_aside:
        st.piles = _set(st.piles, st.dog_owner, st.piles[st.dog_owner] | st.dog_aside)
        st.dog_aside = 0
        st.dog_owner = NO_SEAT
    if reason == "normal" and st.table:
        top = st.top
        assert top is not None
        if top.kind == SINGLE and top.key == _DRAGON_KEY and st.config.dragon_gift_on_final_trick:
            recipients = _gift_recipients(st, last)
            if len(recipients) > 1:
                st.phase = _ROUND_END
                st.gift = last
                if events is not None:
                    events.append(DragonGiftPending(last))
                return
            st.phase = _ROUND_END
            _give_dragon(st, last, recipients[0], events)
            return
        st.piles = _set(st.piles, last, st.piles[last] | st.table)
        if events is not None:
            events.append(TrickWon(last, st.table, mask_points(st.table)))
    elif st.table:
        # A 1-2 (or a triple victory) counts no cards (R-END-3); the cards still lie somewhere.
        st.piles = _set(st.piles, st.top_seat, st.piles[st.top_seat] | st.table)
    _reset_trick(st)
    _score_round(st, reason, events)


def _score_round(st: State, reason: str, events: Events) -> None:
    """R-SCORE-1..4, R-V6-9/10, then the end of the game (§15) or the next round."""
    n = st.players
    out = st.out
    card = [0, 0]
    bonus = [0, 0]
    if reason == "double_victory":
        card[team_of(out[0])] = st.config.double_victory_points
    elif reason == "triple_victory":
        bonus[team_of(out[0])] = 300
    else:
        piles = list(st.piles)
        hands = list(st.hands)
        tail = next(s for s in range(n) if s not in out)
        if n == 4:
            piles[out[0]] |= piles[tail]  # R-END-5: the tailender's tricks to the first out
            piles[tail] = 0
            card[1 - team_of(tail)] += mask_points(hands[tail])
        else:
            fifth = out[4]
            piles[out[0]] |= piles[fifth]  # R-V6-9
            piles[fifth] = 0
            card[1 - team_of(tail)] += mask_points(hands[tail] | piles[tail])
            piles[tail] = 0
            if st.config.v6_triple_victory_mode == "bonus" and team_of(out[0]) == team_of(out[1]) == team_of(
                out[2]
            ):
                bonus[team_of(out[0])] = 300
        for s in range(n):
            card[team_of(s)] += mask_points(piles[s])
    calls = [0, 0]
    first = out[0] if out else NO_SEAT
    for s, call in enumerate(st.calls):
        if not call:
            continue
        value = 100 if call == 1 else 200
        if s == first:
            calls[team_of(s)] += value
        elif st.config.failed_call_mode == "award_opponents":
            calls[1 - team_of(s)] += value
        else:
            calls[team_of(s)] -= value
    round_points = (card[0] + calls[0] + bonus[0], card[1] + calls[1] + bonus[1])
    st.scores = (st.scores[0] + round_points[0], st.scores[1] + round_points[1])
    st.history = st.history + (round_points,)
    if events is not None:
        events.append(RoundScored(st.round, tuple(card), tuple(calls), tuple(bonus), round_points, st.scores))
    st.gift = NO_SEAT
    if _game_over(st):
        st.phase = _GAME_OVER
        a, b = st.scores
        st.winner = None if a == b else (0 if a > b else 1)
        if events is not None:
            events.append(GameOver(st.winner, st.scores))
        return
    st.round += 1
    st.dealer = first if first >= 0 else st.dealer  # R-FLOW-2
    _deal(st, events)


def _game_over(st: State) -> bool:
    """R-GAME-1..5."""
    a, b = st.scores
    rounds = st.config.fixed_rounds
    if rounds is not None:
        return len(st.history) >= rounds
    if max(a, b) < st.config.target_score:
        return False
    return a != b or st.config.tie_at_target == "draw"


# ----------------------------------------------------------------------------- simulation


def playout(state: State, rng: random.Random, rounds: int = 1) -> tuple[State, int]:
    """Play on from `state` with a uniformly random legal answer to every decision.

    For Monte Carlo bots and the engine benchmark. Every decision of to_act() is answered, bomb
    windows included (each seat draws from 'decline' and its bombs), from the same legal sets
    legal_decisions() lists, with every rule applied by the same code as apply(); only the
    public objects are skipped, and a decision with one legal answer takes it without a draw.
    Stops after `rounds` rounds end or at game over; returns the state and the number of
    decisions made. `state` itself is not changed.
    """
    st = state.copy()
    events: Events = None
    target = st.round + rounds
    decisions = 0
    random_ = rng.random
    bombs_known_for: tuple[int, ...] = ()
    holders = 0  # seat bits of the hands of bombs_known_for that hold a bomb
    known_round = -1  # the round of bombs_known_for
    while True:
        phase = st.phase
        if phase is _PLAY and st.gift < 0:
            hands = st.hands
            if hands is not bombs_known_for:
                if known_round != st.round:
                    known_round = st.round
                    holders = 0
                    for seat, hand in enumerate(hands):
                        if has_bomb(hand):
                            holders |= 1 << seat
                elif holders:
                    # Hands only lose cards during the play: only a holder can stop holding.
                    bits = holders
                    while bits:
                        low = bits & -bits
                        bits ^= low
                        if not has_bomb(hands[low.bit_length() - 1]):
                            holders ^= low
                bombs_known_for = hands
            window = st.window
            if window:
                decisions += len(window)
                if not holders & st.active:
                    _close_unanswerable_window(st, events)
                    continue
                declined = 0
                bombs_found: list[tuple[int, Play]] = []
                for seat in window:
                    if holders >> seat & 1:
                        options = _window_bombs(st, seat)
                        pick = int(random_() * (len(options) + 1))
                        if pick:
                            cards, combo = options[pick - 1]
                            bombs_found.append((seat, Play(cards, combo.phoenix, 0, -1, False, combo)))
                            continue
                    declined |= 1 << seat
                st.window_declined = declined
                if bombs_found:
                    st.window_bombs = tuple(bombs_found)
                _resolve_window(st, events)
                continue
            seat = st.turn
            decisions += 1
            top = st.top
            hand = hands[seat]
            wish = st.wish
            if top is not None and top.kind is SINGLE and not (wish and hand & RANK_MASKS[wish]):
                # The most common decision: a pass, the singles that beat the top, and any
                # bombs, in _turn_options order; only the single drawn is made.
                key = top.key
                singles = count_single_follows(hand, key)
                beating = bombs(hand, top) if holders >> seat & 1 else _NO_BOMBS
                count = 1 + singles + len(beating)
                pick = int(random_() * count) if count > 1 else 0
                if not pick:
                    _perform_pass(st, seat, events)
                else:
                    if pick <= singles:
                        cards, combo = nth_single_follow(hand, key, pick - 1)
                    else:
                        cards, combo = beating[pick - 1 - singles]
                    _do_play(st, seat, cards, combo, 0, -1, False, events)
            else:
                prefix, entries = _turn_options(st, seat)
                count = len(prefix) + len(entries)
                pick = int(random_() * count) if count > 1 else 0
                if pick < len(prefix):
                    _perform_pass(st, seat, events)
                else:
                    entry = entries[pick - len(prefix)]
                    if len(entry) == 2:
                        _do_play(st, seat, entry[0], entry[1], 0, -1, False, events)
                    else:
                        _do_play(st, seat, entry[0], entry[1], entry[2], entry[3], False, events)
            window = st.window
            # The window this opened, at once when no seat in it can bomb (holders is at worst
            # a superset here: the actor's hand may just have lost its bomb).
            if window and not holders & st.active:
                decisions += len(window)
                _close_unanswerable_window(st, events)
            continue
        if st.round >= target or phase is _GAME_OVER:
            break
        seats = to_act(st)
        seat = seats[0] if len(seats) == 1 else seats[int(random_() * len(seats))]
        decisions += 1
        if phase is _EXCHANGE:
            # The exchange listing has thousands of entries: decode the one drawn, as listed.
            recipients = exchange_recipients(st, seat)
            hand = st.hands[seat]
            hand_cards = [card for k in range(7) for card in _BYTE_CARDS[k][hand >> 8 * k & 255]]
            count = 1
            for i in range(len(recipients)):
                count *= len(hand_cards) - i
            _submit_exchange(st, seat, _nth_exchange(hand_cards, recipients, int(random_() * count)), events)
            continue
        answers = _legal_decisions(st, seat)
        st = _dispatch(st, seat, answers[int(random_() * len(answers))], True, events)
    st._legal = None
    st._stamp = None
    return st, decisions


# ----------------------------------------------------------------------------- defaults


def card_order_key(cards: int) -> tuple[int, ...]:
    """R-DEF-2: a play's cards, lowest first, for comparing plays card by card."""
    return tuple(cards_of(cards))


def play_order_key(play: Play) -> tuple[int, int, int, int, tuple[int, ...], int, int, int]:
    """R-DEF-3: non-bombs first, fewer cards, lower key, then cards; the Dog after non-bombs."""
    combo = play._combo
    if combo is None:
        readings = classify(play.cards_mask)
        combo = readings[0] if readings else Combo(ComboKind.SINGLE, 1, 0)
    is_dog = combo.kind is DOG_KIND
    return (
        int(combo.is_bomb),
        int(is_dog),
        combo.length,
        combo.key,
        card_order_key(play.cards_mask),
        -combo.phoenix,
        play.wish,
        play.partner,
    )


_KIND_ORDER = {
    Pass: 0,
    Decline: 1,
    GrandTichu: 2,
    DeclineTichu: 3,
    CallTichu: 4,
    Exchange: 5,
    GiftDragon: 6,
    Play: 7,
}


def action_sort_key(action: Action) -> tuple[object, ...]:
    """The canonical order of `tichu rules legal`: pass/decline, answers, then plays by R-DEF-3."""
    kind = _KIND_ORDER[type(action)]
    if isinstance(action, Play):
        return (kind, play_order_key(action))
    if isinstance(action, GrandTichu):
        return (kind, (not action.call,))
    if isinstance(action, Exchange):
        return (kind, action.gifts)
    if isinstance(action, GiftDragon):
        return (kind, (action.to,))
    return (kind, ())


def default_action(state: State, seat: int) -> Action:
    """R-DEF-1: the action the referee takes for a seat that does not answer in time."""
    if seat not in to_act(state):
        raise IllegalActionError(f"seat {seat} owes no decision now", "R-DEF-1")
    phase = state.phase
    n = state.players
    if phase is _GRAND_TICHU:
        return NO_GRAND_TICHU
    if phase is _TICHU_STEP:
        return DECLINE_TICHU
    if phase is _EXCHANGE:
        lowest = cards_of(state.hands[seat])
        order = [(seat + i) % n for i in range(1, n)] if n == 4 else [(seat + 2) % n, (seat + 4) % n]
        return make_exchange([(to, int(card)) for to, card in zip(order, lowest, strict=False)])
    if state.gift >= 0 and seat == state.gift:
        return GiftDragon(_gift_recipients(state, seat)[0])
    if phase is _PLAY and state.window and seat in to_act(state):
        return DECLINE
    legal = legal_decisions(state, seat)
    if PASS in legal:
        return PASS
    candidates = [a for a in legal if isinstance(a, Play)]
    if not candidates:
        raise IllegalActionError(f"seat {seat} has no decision to make now")
    singles = [p for p in candidates if p.cards_mask.bit_count() == 1 and p.cards_mask != DOG]
    # R-DEF-2 orders single cards by card (the Phoenix above the Ace); R-DEF-3 orders the rest.
    first = min(p.cards_mask for p in singles) if singles else min(candidates, key=play_order_key).cards_mask
    same = [p for p in candidates if p.cards_mask == first]
    if first & MJ:
        # The Mah Jong names no wish, or 2 when a wish is mandatory (R-DEF-1).
        return min(same, key=lambda p: (p.wish, -(p._combo.key if p._combo else 0)))
    if first == DOG:
        # In §16 the Dog names the first active partner in turn order after p.
        named = [p for p in same if p.partner >= 0]
        return min(named, key=lambda p: (p.partner - seat) % n) if named else same[0]
    # A Phoenix takes its highest reading.
    return max(same, key=lambda p: (p._combo.key if p._combo else 0, p.phoenix))


def outcome(state: State) -> int | None:
    """The winning team (0 = A, 1 = B) once the game is over; None while running or for a draw."""
    return state.winner if state.phase is _GAME_OVER else None


__all__ = [
    "action_sort_key",
    "answer_window",
    "apply",
    "apply_all",
    "can_call_tichu",
    "default_action",
    "exchange_recipients",
    "full_hand_size",
    "legal_actions",
    "legal_decisions",
    "new_game",
    "next_active",
    "opponents",
    "outcome",
    "partners",
    "playout",
    "to_act",
]
