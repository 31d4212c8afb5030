"""Defaults and canonical orders: default_action (R-DEF-1) and the orders of R-DEF-2/3."""

from __future__ import annotations

from typing import Final

from referee.rules.actions import (
    DECLINE,
    DECLINE_TICHU,
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
from referee.rules.cards import DOG, MJ, cards_of
from referee.rules.combos import DOG_KIND, Combo, ComboKind, classify
from referee.rules.errors import IllegalActionError
from referee.rules.legal import _gift_recipients, legal_decisions, to_act
from referee.rules.state import _EXCHANGE, _GRAND_TICHU, _PLAY, _TICHU_STEP, State


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


_KIND_ORDER: Final = {
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


__all__ = ["action_sort_key", "card_order_key", "default_action", "play_order_key"]
