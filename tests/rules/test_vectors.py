"""RULES.md test vectors: the deck (T-DECK), combinations (T-COMB), beating (T-BEAT), Phoenix (T-PHX).

Each test names the vector it checks. Rejections also check that the input state is unchanged
(R-INFO-2) and, where the example implies one, the rule the error cites.
"""

from __future__ import annotations

import pytest

from referee.rules import (
    ComboKind,
    Phase,
    State,
    beats,
    classify,
    legal_actions,
    new_game,
    parse_card,
)
from referee.rules.events import Played, TrickWon
from tests.rules.vectors_support import (
    DECK,
    act,
    decline_window,
    names,
    of_type,
    points_of,
    position,
    reject,
    turn,
)

# ----------------------------------------------------------------------------- T-DECK


def test_T_DECK_1_card_points_of_the_full_deck_add_up_to_100() -> None:
    assert len(DECK) == 56
    assert len({parse_card(name) for name in DECK}) == 56
    assert points_of(DECK) == 100
    assert sum(parse_card(name).points for name in DECK) == 100
    expected = {"K": 10, "10": 10, "5": 5}
    for name in DECK:
        card = parse_card(name)
        if name in ("DRG", "PHX", "MJ", "DOG"):
            want = {"DRG": 25, "PHX": -25}.get(name, 0)
        else:
            want = expected.get(name[:-1], 0)
        assert card.points == want, name


def test_T_DECK_1_a_dealt_round_holds_the_whole_deck_worth_100() -> None:
    state, _ = new_game(seed=7)
    assert state.phase is Phase.GRAND_TICHU
    cards = 0
    for seat in range(4):
        assert state.hands[seat].bit_count() == 8
        assert state.unseen[seat].bit_count() == 6
        assert not cards & (state.hands[seat] | state.unseen[seat])
        cards |= state.hands[seat] | state.unseen[seat]
    assert cards == (1 << 56) - 1
    assert sum(parse_card(name).points for name in DECK if cards >> parse_card(name) & 1) == 100


# ----------------------------------------------------------------------------- T-COMB


def lead_state(hand: str) -> State:
    """P0 is to lead holding `hand`; the others hold some cards."""
    used = set(hand.split())
    others = [c for c in ("Aj", "As", "Ap", "At", "Kj", "Ks") if c not in used]
    return position(hands=[hand, " ".join(others[:2]), " ".join(others[2:4]), " ".join(others[4:])], turn=0)


def assert_invalid(cards: str) -> None:
    """No reading, and a lead of these cards is rejected (R-COMB-*) with no change."""
    assert classify(cards) == ()
    reject(lead_state(cards), 0, f"play {cards}", {f"R-COMB-{i}" for i in range(1, 11)})


def test_T_COMB_1_consecutive_pairs_are_stairs() -> None:
    readings = classify("5s 5j 6p 6t")
    assert len(readings) == 1
    stairs = readings[0]
    assert stairs.kind is ComboKind.STAIRS
    assert stairs.length == 4  # two pairs
    assert stairs.rank == 6
    state, events = act(lead_state("5s 5j 6p 6t 9j"), 0, "play 5s 5j 6p 6t")
    assert of_type(events, Played)[0].combo.kind is ComboKind.STAIRS
    assert state.top == stairs


def test_T_COMB_1_pairs_with_a_gap_are_invalid() -> None:
    assert_invalid("5s 5j 7p 7t")


def test_T_COMB_2_four_of_a_kind_is_a_bomb() -> None:
    readings = classify("7s 7j 7p 7t")
    assert len(readings) == 1
    assert readings[0].kind is ComboKind.FOUR_OF_A_KIND
    assert readings[0].is_bomb
    assert readings[0].rank == 7


@pytest.mark.parametrize(
    "cards", ["7s 7j 7p 7t PHX", "7s 7j 7p PHX"], ids=["T-COMB-2-4kind+PHX", "T-COMB-2-3+PHX"]
)
def test_T_COMB_2_phoenix_never_joins_a_bomb(cards: str) -> None:
    assert_invalid(cards)


def test_T_COMB_3_no_wrap_around_ace_to_five() -> None:
    assert_invalid("At 2s 3j 4p 5s")


def test_T_COMB_3_mah_jong_is_the_one_of_a_straight() -> None:
    readings = classify("MJ 2s 3j 4p 5s")
    assert len(readings) == 1
    straight = readings[0]
    assert straight.kind is ComboKind.STRAIGHT
    assert straight.length == 5
    assert straight.rank == 5


def test_T_COMB_5_one_suit_run_is_always_a_straight_flush() -> None:
    readings = classify("4s 5s 6s 7s 8s")
    assert len(readings) == 1
    assert readings[0].kind is ComboKind.STRAIGHT_FLUSH
    assert readings[0].length == 5
    assert readings[0].rank == 8
    assert all(r.kind is not ComboKind.STRAIGHT for r in readings)


def test_T_COMB_5_one_suit_run_with_phoenix_is_a_plain_straight() -> None:
    readings = classify("4s 5s 6s 7s PHX")
    assert {(r.kind, r.length, r.rank, r.phoenix) for r in readings} == {
        (ComboKind.STRAIGHT, 5, 7, 3),
        (ComboKind.STRAIGHT, 5, 8, 8),
    }
    assert not any(r.is_bomb for r in readings)


@pytest.mark.parametrize(
    "cards",
    ["MJ PHX", "DRG PHX", "DOG 7s", "DRG As"],
    ids=["T-COMB-7-MJ+PHX", "T-COMB-7-DRG+PHX", "T-COMB-7-DOG+7", "T-COMB-7-DRG+A"],
)
def test_T_COMB_7_special_card_pairs_are_invalid(cards: str) -> None:
    assert_invalid(cards)


def test_T_COMB_9_phoenix_tops_a_mah_jong_straight_as_five() -> None:
    readings = classify("MJ 2s 3j 4p PHX")
    assert len(readings) == 1
    straight = readings[0]
    assert straight.kind is ComboKind.STRAIGHT
    assert straight.length == 5
    assert straight.rank == 5
    assert straight.phoenix == 5
    state, _ = act(lead_state("MJ 2s 3j 4p PHX Kt"), 0, "play MJ 2s 3j 4p PHX")
    assert state.top is not None
    assert (state.top.kind, state.top.rank, state.top.phoenix) == (ComboKind.STRAIGHT, 5, 5)


# ----------------------------------------------------------------------------- T-BEAT


def on_top(top: str, hand: str, top_seat: int = 3, seat: int = 0) -> State:
    """`seat` is on his regular turn, facing `top` played by `top_seat`; the window is closed."""
    hands = ["Qj", "Qs", "Qp", "Qt"]
    hands[seat] = hand
    hands[top_seat] = "Kp Kt"
    return position(hands=hands, trick=[{"seat": top_seat, "cards": top}], turn=seat)


def test_T_BEAT_1_straight_of_other_length_does_not_beat() -> None:
    state = on_top("3j 4s 5p 6t 7j", "4j 5s 6p 7t 8j 9s Kj")
    reject(state, 0, "play 4j 5s 6p 7t 8j 9s", "R-BEAT-1")
    (longer,) = classify("4j 5s 6p 7t 8j 9s")
    (top,) = classify("3j 4s 5p 6t 7j")
    assert not beats(longer, top)


def test_T_BEAT_1_higher_straight_of_same_length_beats() -> None:
    state = on_top("3j 4s 5p 6t 7j", "4j 5s 6p 7t 8j 9s Kj")
    after, events = act(state, 0, "play 4j 5s 6p 7t 8j")
    assert after.top_seat == 0
    assert after.top is not None and after.top.rank == 8 and after.top.length == 5
    assert of_type(events, Played)[0].seat == 0


def test_T_BEAT_2_full_house_compares_the_triple_only() -> None:
    (top,) = classify("5j 5s 5p Aj As")
    (play,) = classify("6j 6s 6p 2j 2s")
    assert beats(play, top)
    state = position(
        hands=["6j 6s 6p 2j 2s 9t", "3j", "3s", "3p"], trick=[{"seat": 3, "cards": "5j 5s 5p Aj As"}], turn=0
    )
    after, _ = act(state, 0, "play 6j 6s 6p 2j 2s")
    assert after.top_seat == 0
    assert after.top is not None and after.top.kind is ComboKind.FULL_HOUSE and after.top.rank == 6


def test_T_BEAT_3_longer_stairs_do_not_beat() -> None:
    state = on_top("5j 5s 6j 6s", "6p 6t 7j 7s 8j 8s 9j 9s")
    reject(state, 0, "play 7j 7s 8j 8s 9j 9s", "R-BEAT-1")


def test_T_BEAT_3_higher_stairs_of_same_length_beat() -> None:
    state = on_top("5j 5s 6j 6s", "6p 6t 7j 7s 8j 8s 9j 9s")
    after, _ = act(state, 0, "play 6p 6t 7j 7s")
    assert after.top_seat == 0
    assert after.top is not None and after.top.kind is ComboKind.STAIRS and after.top.rank == 7


def test_T_BEAT_5_any_straight_flush_beats_any_four_of_a_kind() -> None:
    (sf,) = classify("2s 3s 4s 5s 6s")
    (aces,) = classify("Aj As Ap At")
    assert beats(sf, aces)
    assert not beats(aces, sf)
    state = position(
        hands=["2s 3s 4s 5s 6s Kj", "3j", "3p", "3t"], trick=[{"seat": 3, "cards": "Aj As Ap At"}], turn=0
    )
    after, _ = act(state, 0, "play 2s 3s 4s 5s 6s")
    assert after.top_seat == 0
    assert after.top is not None and after.top.kind is ComboKind.STRAIGHT_FLUSH


def test_T_BEAT_5_lower_four_of_a_kind_does_not_beat() -> None:
    (twos,) = classify("2j 2s 2p 2t")
    (threes,) = classify("3j 3s 3p 3t")
    assert not beats(twos, threes)
    state = position(
        hands=["2j 2s 2p 2t Kj", "4j", "4p", "4t"], trick=[{"seat": 3, "cards": "3j 3s 3p 3t"}], turn=0
    )
    reject(state, 0, "play 2j 2s 2p 2t", {"R-BEAT-3", "R-BEAT-4", "R-BOMB-4"})


def dragon_on_top(hand: str) -> State:
    return position(hands=["4j", hand, "4p", "4t"], trick=[{"seat": 0, "cards": "DRG"}], turn=1)


def test_T_BEAT_7_ace_does_not_beat_the_dragon() -> None:
    reject(dragon_on_top("As PHX 2j 2s 2p 2t"), 1, "play As", "R-BEAT-1")


def test_T_BEAT_7_phoenix_does_not_beat_the_dragon() -> None:
    reject(dragon_on_top("As PHX 2j 2s 2p 2t"), 1, "play PHX", {"R-PHX-2", "R-BEAT-1", "R-DRG-1"})


def test_T_BEAT_7_a_bomb_beats_the_dragon() -> None:
    after, _ = act(dragon_on_top("As PHX 2j 2s 2p 2t"), 1, "play 2j 2s 2p 2t")
    assert after.top_seat == 1
    assert after.top is not None and after.top.kind is ComboKind.FOUR_OF_A_KIND


def test_T_BEAT_8_pair_on_a_single_is_rejected() -> None:
    state = on_top("10j", "Jj Js 3t")
    reject(state, 0, "play Jj Js", "R-BEAT-1")
    (pair,) = classify("Jj Js")
    (ten,) = classify("10j")
    assert not beats(pair, ten)
    after, _ = act(state, 0, "play Jj")
    assert after.top_seat == 0


# ----------------------------------------------------------------------------- T-PHX


def test_T_PHX_1_led_phoenix_is_one_and_a_half() -> None:
    state = position(hands=["PHX 9j", "MJ 2s 8t", "3j", "3s"], turn=0)
    state, events = turn(state, 0, "play PHX")
    assert of_type(events, Played)[0].combo.rank == 1.5
    assert state.turn == 1
    reject(state, 1, "play MJ", "R-BEAT-1")
    after, _ = act(state, 1, "play 2s")
    assert after.top_seat == 1
    assert after.top is not None and after.top.rank == 2


@pytest.mark.parametrize("wish", ["", " wish=K"], ids=["T-PHX-2-no-wish", "T-PHX-2-wish"])
def test_T_PHX_2_phoenix_on_the_mah_jong_is_one_and_a_half(wish: str) -> None:
    state = position(hands=["MJ 9j", "PHX 8t", "2s 4j", "3s"], turn=0)
    state, _ = turn(state, 0, "play MJ" + wish)
    state, events = turn(state, 1, "play PHX")
    assert of_type(events, Played)[0].combo.rank == 1.5
    assert state.turn == 2
    state, events = act(state, 2, "play 2s")
    assert of_type(events, Played)[0].combo.rank == 2
    assert state.top_seat == 2


def test_T_PHX_4_phoenix_may_not_be_played_on_the_dragon() -> None:
    state = dragon_on_top("PHX 8t")
    reject(state, 1, "play PHX", {"R-PHX-2", "R-BEAT-1", "R-DRG-1"})
    assert "play PHX" not in names(legal_actions(state, 1))


def test_T_PHX_5_phoenix_on_an_eight_is_eight_and_a_half() -> None:
    state = position(hands=["8p 3t", "PHX 4t", "8s 9s 2p", "3j"], trick=[{"seat": 0, "cards": "8j"}], turn=1)
    state, events = turn(state, 1, "play PHX")
    assert of_type(events, Played)[0].combo.rank == 8.5
    assert state.turn == 2
    reject(state, 2, "play 8s", "R-BEAT-1")
    after, _ = act(state, 2, "play 9s")
    assert after.top_seat == 2


def test_T_PHX_7_phoenix_named_as_four_ties_and_is_rejected() -> None:
    state = on_top("4j 5s 6p 7t 8j", "5j 6j 7j 8s PHX 3t")
    reject(state, 0, "play 5j 6j 7j 8s PHX phoenix=4", {"R-PHX-5", "R-BEAT-1"})


def test_T_PHX_7_unnamed_phoenix_takes_the_highest_reading() -> None:
    state = on_top("4j 5s 6p 7t 8j", "5j 6j 7j 8s PHX 3t")
    after, events = act(state, 0, "play 5j 6j 7j 8s PHX")
    combo = of_type(events, Played)[0].combo
    assert (combo.kind, combo.length, combo.rank, combo.phoenix) == (ComboKind.STRAIGHT, 5, 9, 9)
    assert after.top == combo


def test_T_PHX_7_trick_points_include_the_phoenix() -> None:
    # R-PHX-6: the Phoenix is worth -25 to whoever wins the trick holding it.
    state = on_top("4j 5s 6p 7t 8j", "5j 6j 7j 8s PHX 3t")
    state, _ = turn(state, 0, "play 5j 6j 7j 8s PHX")
    state, _ = turn(state, 1, "pass")
    state, _ = turn(state, 2, "pass")
    state, events = act(state, 3, "pass")
    assert state.window
    state, more = decline_window(state)
    won = of_type(events + more, TrickWon)
    assert [(w.seat, w.points) for w in won] == [(0, points_of("4j 5s 6p 7t 8j 5j 6j 7j 8s PHX"))]
    assert won[0].points == -25 + 5 + 5
