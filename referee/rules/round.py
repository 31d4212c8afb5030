"""The round: dealing, going out, the end of a round, scoring and the end of the game (§4, §14-§15).

Rule code here and in game.py builds the next state in place on a copy that it owns; apply()
hands it out only once complete.
"""

from __future__ import annotations

import random
from typing import Final

from referee.rules.cards import mask_points
from referee.rules.combos import SINGLE
from referee.rules.config import RulesConfig
from referee.rules.events import (
    CardsDealt,
    DragonGiftPending,
    DragonGiven,
    Event,
    GameOver,
    RoundEnded,
    RoundScored,
    RoundStarted,
    TrickWon,
    WentOut,
)
from referee.rules.legal import _gift_recipients, next_active
from referee.rules.state import (
    _EXCHANGE,
    _GAME_OVER,
    _GRAND_TICHU,
    _ROUND_END,
    _TICHU_STEP,
    NO_SEAT,
    Phase,
    State,
    first_cards,
    team_of,
)

_DRAGON_KEY: Final = 30  # the Dragon single's Combo.key: rank 15 in half-ranks
# Where the rule code puts its events: None when the caller discards them (playout), so that
# the simulation builds none.
Events = list[Event] | None


def _set(values: tuple[int, ...], index: int, value: int) -> tuple[int, ...]:
    return values[:index] + (value,) + values[index + 1 :]


# ----------------------------------------------------------------------------- dealing


def _deal(st: State, events: Events) -> None:
    """Shuffle and deal a round (R-DEAL-1/2, R-V6-2) into `st`, which is being built."""
    n = st.config.players
    deck = _shuffled_deck(random.Random(f"tichu-deal/{st.seed}/{st.round}"))
    seen_first = first_cards(n)
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
_SHUFFLE_STEPS: Final = tuple((i, i + 1, (i + 1).bit_length()) for i in reversed(range(1, 56)))


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
    st.phase = _phase_after_full_deal(st.config, 0 in st.calls)
    if st.phase is _TICHU_STEP:
        st.tichu_step = tuple(2 if call else -1 for call in st.calls)


def _phase_after_full_deal(config: RulesConfig, anyone_uncalled: bool) -> Phase:
    """R-CALL-6: the pre-exchange step if a seat that has not called Grand Tichu is to be asked."""
    if config.tichu_call_exchange_mode == "pre_step" and anyone_uncalled:
        return _TICHU_STEP
    return _EXCHANGE


# ----------------------------------------------------------------------------- end of round


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
    if st._stop_before_deal:
        st.phase = _ROUND_END  # scored, and nothing is owed: see without_next_deal
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


def without_next_deal(state: State) -> State:
    """A copy of `state` from which play stops once its round is scored, before the next deal.

    The engine scores a round and deals the next one in the same move. From this copy, the
    move that ends the round leaves the table as the round ended (its hands, piles and out
    order) in ROUND_END, with nothing owed and no action accepted, and its events are apply()'s
    up to the deal; a move that ends the game is unchanged. For viewers of a replay.
    """
    held = state.copy()
    held._stop_before_deal = True
    return held


def outcome(state: State) -> int | None:
    """The winning team (0 = A, 1 = B) once the game is over; None while running or for a draw."""
    return state.winner if state.phase is _GAME_OVER else None


__all__ = ["outcome", "without_next_deal"]
