"""bench/engine.py in miniature: every figure is measured and well formed (not held to its bar)."""

from __future__ import annotations

import argparse
import importlib
import math
from typing import Any

from referee.rules import legal_actions
from referee.rules.cards import CARD_NAMES

# Imported by name: bench/ is a folder of scripts, not a package that mypy should follow.
bench: Any = importlib.import_module("bench.engine")


def test_every_figure_is_measured_with_the_collector_on_and_off() -> None:
    args = argparse.Namespace(hands=8, enumerations=20, repeats=1, seed=3)
    figures = bench.measure_this_build(args)
    for key, _label in bench.FIGURES:
        (on_best, on_median), (off_best, off_median) = figures[key]
        for rate in (on_best, on_median, off_best, off_median):
            assert math.isfinite(rate) and rate > 0, key
    assert figures["actions_per_lead"] > 1


def test_the_bench_hands_are_14_cards_and_the_lead_position_gives_seat_0_that_hand() -> None:
    hands = bench.lead_hands(5, seed=1)
    assert hands == bench.lead_hands(5, seed=1) and len(set(hands)) == 5
    for hand in hands:
        assert bin(hand).count("1") == 14
        state = bench.lead_position(hand)
        assert state.hands[0] == hand and state.turn == 0
        assert len(legal_actions(state, 0)) > 0


def test_the_peer_sees_the_same_cards_in_its_own_notation() -> None:
    # frohlfing/tichu: values 0 Dog, 1 Mah Jong, 2..14, 15 Dragon, 16 Phoenix; suits 1..4 for
    # Sword, Pagoda, Jade, Star, 0 for the specials.
    cards = [bench.peer_card(card) for card in range(56)]
    assert len(set(cards)) == 56
    named = dict(zip(CARD_NAMES, cards, strict=True))
    assert named["DOG"] == (0, 0) and named["MJ"] == (1, 0)
    assert named["DRG"] == (15, 0) and named["PHX"] == (16, 0)
    assert (
        named["2s"] == (2, 1) and named["2p"] == (2, 2) and named["2j"] == (2, 3) and named["At"] == (14, 4)
    )
