"""playout: the fast simulation driver for Monte Carlo bots and the benchmark.

It answers every decision with a uniformly random legal answer from the same sets that
legal_decisions() lists and applies it with the same rule code as apply(), without building the
public objects; tests/rules/test_playout.py holds it equal to a loop over the public API.
"""

from __future__ import annotations

import random
from typing import Final

from referee.rules.actions import Play
from referee.rules.cards import RANK_MASKS
from referee.rules.combos import COMBOS, SINGLE, bombs, count_single_follows, has_bomb, nth_single_follow
from referee.rules.game import (
    _close_unanswerable_window,
    _dispatch,
    _do_play,
    _perform_pass,
    _play_entry,
    _resolve_window,
    _submit_exchange,
)
from referee.rules.legal import (
    _legal_decisions,
    _nth_exchange,
    _turn_options,
    _window_bombs,
    exchange_recipients,
    to_act,
)
from referee.rules.round import Events
from referee.rules.state import _EXCHANGE, _GAME_OVER, _PLAY, State

_NO_BOMBS: Final[list[tuple[int, int]]] = []
# The cards of each byte of a card mask, per byte value: a hand's cards in a few table reads.
_BYTE_CARDS: Final = tuple(
    tuple(tuple(8 * k + i for i in range(8) if v >> i & 1) for v in range(256)) for k in range(7)
)


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
                            cards, code = options[pick - 1]
                            combo = COMBOS[code]
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
                        cards, code = nth_single_follow(hand, key, pick - 1)
                    else:
                        cards, code = beating[pick - 1 - singles]
                    _do_play(st, seat, cards, COMBOS[code], 0, -1, False, events)
            else:
                prefix, entries = _turn_options(st, seat)
                count = len(prefix) + len(entries)
                pick = int(random_() * count) if count > 1 else 0
                if pick < len(prefix):
                    _perform_pass(st, seat, events)
                else:
                    _play_entry(st, seat, entries[pick - len(prefix)], events)
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
        if not seats:
            break  # a round scored with the next deal held back (round.without_next_deal)
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


__all__ = ["playout"]
