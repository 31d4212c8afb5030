"""RULES.md test vectors of play: bombs and windows (T-BOMB), tricks (T-TRICK), the wish (T-WISH),
the Dog (T-DOG) and the Dragon (T-DRG).

The default config has `bomb_timing = windows`: after every play and pass a bomb window opens and
every active seat answers it before the next regular turn.
"""

from __future__ import annotations

import pytest

from referee.rules import (
    ComboKind,
    GiftDragon,
    Phase,
    State,
    legal_decisions,
    parse_action,
    to_act,
)
from referee.rules.events import (
    DragonGiftPending,
    DragonGiven,
    LeadPassed,
    Played,
    RoundEnded,
    RoundScored,
    TrickWon,
    WentOut,
    WishFulfilled,
)
from tests.rules.vectors_support import (
    DECLINE,
    act,
    answers,
    decline_window,
    full_position,
    names,
    of_type,
    position,
    reject,
    turn,
    turns,
)

# ----------------------------------------------------------------------------- T-BOMB


def test_T_BOMB_1_no_bomb_before_the_lead_after_a_trick_closes() -> None:
    state = position(hands=["9j 9s", "Qj", "3s Kj", "4j 4s 4p 4t 6t"], turn=2)
    state, _ = turns(state, [(2, "play Kj"), (3, "pass"), (0, "pass")])
    state, events = turn(state, 1, "pass")
    assert [(w.seat, w.points) for w in of_type(events, TrickWon)] == [(2, 10)]
    assert state.turn == 2 and state.top is None and not state.window
    reject(state, 3, "play 4j 4s 4p 4t", "R-BOMB-2")
    after, _ = act(state, 2, "play 3s")
    assert after.top_seat == 2


def test_T_BOMB_2_no_bomb_on_the_dog() -> None:
    state = position(hands=["DOG 5j", "2j 2s 2p 2t 9t", "3j 7s", "4j"], turn=0)
    state, events = act(state, 0, "play DOG")
    assert not state.window
    assert state.turn == 2
    assert [(e.seat, e.to) for e in of_type(events, LeadPassed)] == [(0, 2)]
    reject(state, 1, "play 2j 2s 2p 2t", {"R-BOMB-2", "R-DOG-2", "R-BOMB-9"})
    after, _ = act(state, 2, "play 3j")
    assert after.top_seat == 2


def test_T_BOMB_3_bomb_in_the_closing_window_keeps_the_trick_going() -> None:
    state = position(hands=["Ks 4j", "9j 9s", "3j 3s 3p 3t 8t", "Qj Qs"], turn=0)
    state, _ = turns(state, [(0, "play Ks"), (1, "pass"), (2, "pass")])
    state, _ = act(state, 3, "pass")
    assert state.window == (0, 1, 2, 3)  # the closing window, starting after P3
    state, events = answers(state, {0: DECLINE, 1: DECLINE, 2: "play 3j 3s 3p 3t"})
    bombs = of_type(events, Played)
    assert [(p.seat, p.combo.kind, p.out_of_turn) for p in bombs] == [(2, ComboKind.FOUR_OF_A_KIND, True)]
    assert not of_type(events, TrickWon)
    assert state.top_seat == 2
    assert state.window == (3, 0, 1, 2)  # a new window after the bomber
    state, events = decline_window(state)
    assert not of_type(events, TrickWon)
    assert state.turn == 3
    assert state.passed == 0
    assert state.piles == (0, 0, 0, 0)
    assert state.top is not None and state.top.kind is ComboKind.FOUR_OF_A_KIND
    assert "pass" in names(legal_decisions(state, 3))


def test_T_BOMB_4_window_bomb_before_the_next_player_skips_his_turn() -> None:
    state = position(hands=["7j 8j", "9j Aj", "5j 5s 5p 5t 6t", "Qj Qs"], turn=0)
    state, _ = act(state, 0, "play 7j")
    assert state.window == (1, 2, 3, 0)
    state, events = act(state, 2, "play 5j 5s 5p 5t")
    # Accepted; it applies once P1, who comes before P2 in the window, has declined.
    assert not of_type(events, Played)
    assert state.top_seat == 0
    assert 1 in to_act(state)
    state, events = act(state, 1, DECLINE)
    assert [(p.seat, p.out_of_turn) for p in of_type(events, Played)] == [(2, True)]
    assert state.top_seat == 2
    state, _ = decline_window(state)
    assert state.turn == 3
    assert state.hands[1] == position(hands=["", "9j Aj", "", ""]).hands[1]


def bomb_led() -> State:
    state = position(hands=["8j 8s 8p 8t 3j", "DRG Jj Js Jp Jt", "4s", "5s"], turn=0)
    state, _ = act(state, 0, "play 8j 8s 8p 8t")
    return state


def test_T_BOMB_6_dragon_on_a_led_bomb_is_rejected_in_the_window() -> None:
    state = bomb_led()
    assert state.window == (1, 2, 3, 0)
    reject(state, 1, "play DRG", {"R-BOMB-9", "R-BOMB-4", "R-BEAT-4"})


def test_T_BOMB_6_dragon_on_a_led_bomb_is_rejected_on_the_turn() -> None:
    state, _ = decline_window(bomb_led())
    assert state.turn == 1
    reject(state, 1, "play DRG", {"R-BOMB-4", "R-BEAT-4", "R-BEAT-2"})


@pytest.mark.parametrize("in_window", [True, False], ids=["T-BOMB-6-window", "T-BOMB-6-turn"])
def test_T_BOMB_6_higher_bomb_on_a_led_bomb_is_accepted(in_window: bool) -> None:
    state = bomb_led()
    if not in_window:
        state, _ = decline_window(state)
    state, events = act(state, 1, "play Jj Js Jp Jt")
    played = of_type(events, Played)
    assert [(p.seat, p.combo.kind, p.combo.rank) for p in played] == [(1, ComboKind.FOUR_OF_A_KIND, 11)]
    assert state.top_seat == 1


def third_out_position() -> State:
    """P0 and P1 are out; P3 plays his last card on P2's 9; P2 is the tailender holding a bomb."""
    return full_position(
        0,
        hands=["", "", "2j 2s 2p 2t 7j", "Aj"],
        trick=[{"seat": 2, "cards": "9s"}],
        out=[0, 1],
        turn=3,
    )


def test_T_BOMB_7_no_bomb_once_the_third_player_is_out() -> None:
    state, events = act(third_out_position(), 3, "play Aj")
    assert [(e.seat, e.place) for e in of_type(events, WentOut)] == [(3, 3)]
    assert [e.reason for e in of_type(events, RoundEnded)] == ["normal"]
    assert [(w.seat, w.points) for w in of_type(events, TrickWon)] == [(3, 0)]
    assert state.phase is Phase.GRAND_TICHU and state.round == 1  # the next round is dealt
    reject(state, 2, "play 2j 2s 2p 2t", {"R-BOMB-2", "R-END-4", "R-FLOW-1", "R-INFO-2", "R-GAME-1"})


def test_T_BOMB_7_pending_window_bomb_is_discarded_when_the_round_ends() -> None:
    state = full_position(
        0,
        hands=["", "", "2j 2s 2p 2t 7j", "3j 3s 3p 3t"],
        out=[0, 1],
        turn=2,
    )
    state, _ = act(state, 2, "play 7j")
    assert state.window == (3, 2)
    state, events = act(state, 2, "play 2j 2s 2p 2t")  # waits for P3
    assert not of_type(events, Played)
    state, events = act(state, 3, "play 3j 3s 3p 3t")  # P3's last cards: third out
    assert [p.seat for p in of_type(events, Played)] == [3]
    assert [e.reason for e in of_type(events, RoundEnded)] == ["normal"]
    assert [(w.seat, w.cards) for w in of_type(events, TrickWon)] == [
        (3, position(hands=["7j 3j 3s 3p 3t", "", "", ""]).hands[0])
    ]


def test_T_BOMB_10_straight_flush_out_of_a_longer_run() -> None:
    state = position(hands=["Qj", "Qs", "3s 4s 5s 6s 7s 8s 9s", "Qp"], turn=2)
    state, events = act(state, 2, "play 3s 4s 5s 6s 7s")
    (played,) = of_type(events, Played)
    assert (played.combo.kind, played.combo.length, played.combo.rank) == (ComboKind.STRAIGHT_FLUSH, 5, 7)
    assert state.hands[2] == position(hands=["", "", "8s 9s", ""]).hands[2]


def test_R_BOMB_3_bomb_that_empties_the_hand_trick_goes_on_then_next_active_leads() -> None:
    state = position(hands=["Kj 3s", "9j 9s 9p 9t", "5j 6j", "Qj 4s"], turn=0)
    state, _ = act(state, 0, "play Kj")
    state, events = act(state, 1, "play 9j 9s 9p 9t")
    assert [(e.seat, e.place) for e in of_type(events, WentOut)] == [(1, 1)]
    assert state.window == (2, 3, 0)  # the bomber is out and not in the new window
    state, _ = decline_window(state)
    assert state.turn == 2
    state, events = turns(state, [(2, "pass"), (3, "pass"), (0, "pass")])
    assert [w.seat for w in of_type(events, TrickWon)] == [1]
    assert state.turn == 2 and state.top is None


def test_R_CALL_1_call_accepted_during_a_bomb_window() -> None:
    state = position(hands=["7j 8j", "6j 6s 7s 7p 8s 8p 9j 9s 10j 10s Jj Js Qj Qs", "5j", "Kj"], turn=0)
    state, _ = act(state, 0, "play 7j")
    window = state.window
    after, events = act(state, 1, "tichu")
    assert after.calls[1] == 1
    assert after.window == window and to_act(after) == to_act(state)
    assert not of_type(events, Played)


# ----------------------------------------------------------------------------- T-TRICK


def test_T_TRICK_1_no_ordinary_play_on_ones_own_top() -> None:
    state = position(hands=["5j 8j Kt", "2j", "3j", "4j"], turn=0)
    state, _ = turns(state, [(0, "play 5j"), (1, "pass"), (2, "pass")])
    state, _ = act(state, 3, "pass")
    assert state.window
    reject(state, 0, "play 8j", {"R-TRICK-6", "R-BOMB-9"})
    state, events = decline_window(state)
    assert [(w.seat, w.points) for w in of_type(events, TrickWon)] == [(0, 5)]
    assert state.turn == 0 and state.top is None
    assert state.piles[0] == position(hands=["5j", "", "", ""]).hands[0]
    reject(state, 0, "pass", "R-TRICK-2")
    after, _ = act(state, 0, "play 8j")
    assert after.top_seat == 0


def test_T_TRICK_1_overtaking_allowed_by_the_house_rule_flag() -> None:
    # R-TRICK-6 with allow_overtake_own_trick = true: the top player gets a regular turn.
    state = position(hands=["5j 8j Kt", "2j", "3j", "4j"], turn=0, config={"allow_overtake_own_trick": True})
    state, _ = turns(state, [(0, "play 5j"), (1, "pass"), (2, "pass"), (3, "pass")])
    assert state.turn == 0 and state.top_seat == 0 and state.top is not None
    state, _ = act(state, 0, "play 8j")
    assert state.top is not None and state.top.rank == 8


def test_T_TRICK_3_first_out_player_collects_and_the_next_leads() -> None:
    state = position(hands=["3j 4j", "5j 6j", "Qs", "7j 8j"], trick=[{"seat": 1, "cards": "9j"}], turn=2)
    state, events = turn(state, 2, "play Qs")
    assert [(e.seat, e.place) for e in of_type(events, WentOut)] == [(2, 1)]
    assert state.turn == 3
    state, events = turns(state, [(3, "pass"), (0, "pass"), (1, "pass")])
    assert [(w.seat, w.cards) for w in of_type(events, TrickWon)] == [
        (2, position(hands=["9j Qs", "", "", ""]).hands[0])
    ]
    assert state.turn == 3 and state.top is None


def test_T_TRICK_4_two_passes_close_the_trick_when_a_player_is_out() -> None:
    state = position(hands=["2j 3s", "2s 3j", "", "4j 9j"], out=[2], turn=3)
    state, _ = turns(state, [(3, "play 4j"), (0, "pass")])
    assert state.turn == 1 and state.top is not None
    state, events = turn(state, 1, "pass")
    assert [w.seat for w in of_type(events, TrickWon)] == [3]
    assert state.turn == 3 and state.top is None


def test_T_TRICK_5_the_leader_cannot_pass() -> None:
    state = position(hands=["5j 8j", "2j", "3j", "4j"], turn=0)
    reject(state, 0, "pass", "R-TRICK-2")
    assert "pass" not in names(legal_decisions(state, 0))


# ----------------------------------------------------------------------------- T-WISH


def wish_seven(p1: str) -> State:
    """P0 has led the MJ wishing 7 and the window is closed; P1 is on turn holding `p1`."""
    state = position(hands=["MJ 9j", p1, "3j", "4j"], turn=0)
    state, _ = turn(state, 0, "play MJ wish=7")
    assert state.wish == 7 and state.turn == 1
    return state


def test_T_WISH_1_holder_of_the_wished_rank_must_play_it() -> None:
    state = wish_seven("7s Kj")
    reject(state, 1, "pass", "R-WISH-4")
    reject(state, 1, "play Kj", "R-WISH-4")
    assert names(legal_decisions(state, 1)) == {"play 7s"}
    after, events = act(state, 1, "play 7s")
    assert after.wish == 0
    assert [(e.seat, e.rank) for e in of_type(events, WishFulfilled)] == [(1, 7)]


@pytest.mark.parametrize("action", ["pass", "play Kj", "play PHX"])
def test_T_WISH_2_phoenix_is_no_wished_card(action: str) -> None:
    state = wish_seven("PHX Kj")
    after, events = act(state, 1, action)
    assert after.wish == 7
    assert not of_type(events, WishFulfilled)


def test_R_WISH_8_window_bomb_with_the_rank_fulfils_the_wish() -> None:
    state = position(hands=["MJ 3j", "7j 7s 7p 7t 2s", "5j", "Kj"], turn=0)
    state, _ = act(state, 0, "play MJ wish=7")
    after, events = act(state, 1, "play 7j 7s 7p 7t")
    assert after.wish == 0
    assert [(e.seat, e.rank) for e in of_type(events, WishFulfilled)] == [(1, 7)]


def wish_straight(p1: str, p2: str) -> State:
    """P0 has led MJ 2 3 4 5 wishing 7 and the window is closed; P1 is on turn."""
    state = position(hands=["MJ 2j 3j 4j 5j Aj", p1, p2, "Qj"], turn=0)
    state, _ = turn(state, 0, "play MJ 2j 3j 4j 5j wish=7")
    assert state.wish == 7 and state.turn == 1
    return state


def test_T_WISH_3_without_a_natural_seven_the_player_is_free() -> None:
    state = wish_straight("5s 6s 8s 9p PHX", "Kt")
    after, _ = act(state, 1, "pass")
    assert after.wish == 7
    after, events = act(state, 1, "play 5s 6s 8s 9p PHX")
    played = of_type(events, Played)[0]
    assert (played.combo.rank, played.combo.phoenix) == (9, 7)
    assert after.wish == 7  # R-PHX-4: a Phoenix standing for 7 does not fulfil
    assert not of_type(events, WishFulfilled)


def test_T_WISH_3_holder_must_play_a_straight_with_his_seven() -> None:
    state = wish_straight("Kt Ks", "5p 6p 7p 8s PHX")
    state, _ = turn(state, 1, "pass")
    assert state.turn == 2
    reject(state, 2, "pass", "R-WISH-4")
    plays = [a for a in legal_decisions(state, 2)]
    readings = set()
    for action in plays:
        after, events = act(state, 2, action)
        combo = of_type(events, Played)[0].combo
        readings.add((combo.kind, combo.length, combo.rank, combo.phoenix))
        assert after.wish == 0
    assert readings == {(ComboKind.STRAIGHT, 5, 8, 4), (ComboKind.STRAIGHT, 5, 9, 9)}
    for reading in ("4", "9"):
        after, _ = act(state, 2, f"play 5p 6p 7p 8s PHX phoenix={reading}")
        assert after.wish == 0


T_WISH_6_P1 = "3j 4s 5j 6s 7j 8s 9j 10s Jj Qs Kj Ks Kp Kt"


def wish_eight_bombed(p3: str) -> State:
    """P0 leads MJ wishing 8; in the window P1 bombs KKKK at once, with no wish duty."""
    state = position(hands=["MJ 2p 4t", T_WISH_6_P1, "2j 3s", p3], turn=0)
    state, _ = act(state, 0, "play MJ wish=8")
    assert state.window == (1, 2, 3, 0)
    state, events = act(state, 1, "play Kj Ks Kp Kt")
    assert [(p.seat, p.combo.kind) for p in of_type(events, Played)] == [(1, ComboKind.FOUR_OF_A_KIND)]
    assert state.wish == 8
    return state


def test_T_WISH_6_window_bomb_needs_no_wished_rank() -> None:
    state = wish_eight_bombed("6p 7p 8p 9p 10p 2s")
    assert state.top_seat == 1
    assert state.window == (2, 3, 0, 1)


def test_T_WISH_6_straight_flush_holder_must_bomb_with_his_eight() -> None:
    state, _ = decline_window(wish_eight_bombed("6p 7p 8p 9p 10p 2s"))
    state, _ = turn(state, 2, "pass")
    assert state.turn == 3
    reject(state, 3, "pass", "R-WISH-4")
    assert names(legal_decisions(state, 3)) == {"play 6p 7p 8p 9p 10p"}
    after, events = act(state, 3, "play 6p 7p 8p 9p 10p")
    assert after.wish == 0
    assert [(e.seat, e.rank) for e in of_type(events, WishFulfilled)] == [(3, 8)]


def test_T_WISH_6_bomber_who_wins_must_lead_his_eight() -> None:
    state, _ = decline_window(wish_eight_bombed("9s 2s"))
    state, events = turns(state, [(2, "pass"), (3, "pass"), (0, "pass")])
    assert [w.seat for w in of_type(events, TrickWon)] == [1]
    assert state.turn == 1 and state.top is None and state.wish == 8
    reject(state, 1, "play 3j", "R-WISH-4")
    for action in legal_decisions(state, 1):
        assert "8s" in str(action).split()
    after, events = act(state, 1, "play 3j 4s 5j 6s 7j 8s 9j 10s Jj Qs")
    assert after.wish == 0
    assert of_type(events, Played)[0].combo.kind is ComboKind.STRAIGHT


def wish_five_lead(config: dict[str, object] | None = None) -> State:
    return position(hands=["Qj", "Qs", "5s 5j DOG 9j 9s 9p 9t", "Qp"], turn=2, wish="5", config=config or {})


def test_T_WISH_7_leader_holding_the_rank_may_not_lead_the_dog() -> None:
    reject(wish_five_lead(), 2, "play DOG", "R-WISH-4")


def test_T_WISH_7_leader_holding_the_rank_may_not_lead_a_bomb_without_it() -> None:
    reject(wish_five_lead(), 2, "play 9j 9s 9p 9t", {"R-WISH-4", "R-WISH-6"})


@pytest.mark.parametrize("cards", ["5s", "5s 5j"])
def test_T_WISH_7_leader_leads_a_combination_with_the_rank(cards: str) -> None:
    after, events = act(wish_five_lead(), 2, f"play {cards}")
    assert after.wish == 0
    assert [e.seat for e in of_type(events, WishFulfilled)] == [2]


def test_T_WISH_7_bomb_lead_allowed_with_the_lead_exemption_flag() -> None:
    after, _ = act(wish_five_lead({"wish_bomb_exemption_on_lead": True}), 2, "play 9j 9s 9p 9t")
    assert after.wish == 5
    assert after.top_seat == 2


def test_T_WISH_9_wisher_who_wins_must_lead_the_wished_rank() -> None:
    state = position(hands=["MJ 9j 3s", "2j", "2s", "2p"], turn=0)
    state, events = turns(state, [(0, "play MJ wish=9"), (1, "pass"), (2, "pass"), (3, "pass")])
    assert [w.seat for w in of_type(events, TrickWon)] == [0]
    assert state.turn == 0 and state.wish == 9
    reject(state, 0, "play 3s", "R-WISH-4")
    assert names(legal_decisions(state, 0)) == {"play 9j"}
    after, _ = act(state, 0, "play 9j")
    assert after.wish == 0


@pytest.mark.parametrize(
    ("own_play_fulfils", "wish_left"), [(False, 3), (True, 0)], ids=["T-WISH-10-default", "T-WISH-10-flag"]
)
def test_T_WISH_10_mah_jong_straight_with_the_wished_rank(own_play_fulfils: bool, wish_left: int) -> None:
    state = position(
        hands=["MJ 2j 3s 4j 5j Kt", "Qs", "Qp", "Qt"],
        turn=0,
        config={"wish_fulfilled_by_own_mj_play": own_play_fulfils},
    )
    after, events = act(state, 0, "play MJ 2j 3s 4j 5j wish=3")
    assert after.wish == wish_left
    assert bool(of_type(events, WishFulfilled)) == own_play_fulfils


def test_T_WISH_14_wish_lapses_at_the_end_of_the_round() -> None:
    state = full_position(
        0,
        hands=["", "", "4j 4s Kt", "Aj"],
        trick=[{"seat": 2, "cards": "9s"}],
        out=[0, 1],
        turn=3,
        wish="4",
    )
    after, events = act(state, 3, "play Aj")
    assert of_type(events, RoundEnded)
    assert after.wish == 0
    assert after.round == 1 and after.phase is Phase.GRAND_TICHU


def wish_seven_top(top: str, config: dict[str, object] | None = None) -> State:
    return position(
        hands=["Qj", "7s 2j 2s 2p 2t", "Qp", "Qt"],
        trick=[{"seat": 0, "cards": top}],
        turn=1,
        wish="7",
        config=config or {},
    )


def test_T_WISH_15_turn_only_bomb_on_a_king_leaves_the_wish() -> None:
    state = wish_seven_top("Kj", {"bomb_timing": "turn_only"})
    after, events = act(state, 1, "play 2j 2s 2p 2t")
    assert [p.seat for p in of_type(events, Played)] == [1]
    assert after.wish == 7
    assert not after.window
    assert after.turn == 2


def test_T_WISH_15_turn_only_bomb_replaces_fulfilment() -> None:
    # With a 6 on top the 7 could be played: any_nonlead_bomb still lets the bomb replace it.
    state = wish_seven_top("6j", {"bomb_timing": "turn_only"})
    reject(state, 1, "pass", "R-WISH-4")
    after, _ = act(state, 1, "play 2j 2s 2p 2t")
    assert after.wish == 7


def test_T_WISH_15_contrast_windows_default_turn_bomb_must_fulfil() -> None:
    # R-WISH-6 window_only: on the regular turn (window already declined) the bomb must hold the 7.
    state = wish_seven_top("6j")
    reject(state, 1, "play 2j 2s 2p 2t", "R-WISH-6")
    after, _ = act(state, 1, "play 7s")
    assert after.wish == 0


# ----------------------------------------------------------------------------- T-DOG


def test_T_DOG_1_dog_passes_the_lead_to_the_partner() -> None:
    state = position(hands=["DOG 5j", "6j", "7j", "8j"], turn=0)
    after, events = act(state, 0, "play DOG")
    assert after.turn == 2
    assert after.top is None and not after.window
    assert [(e.seat, e.to) for e in of_type(events, LeadPassed)] == [(0, 2)]
    assert to_act(after) == (2,)


def test_T_DOG_2_partner_out_lead_goes_to_the_next_active_after_him() -> None:
    state = position(hands=["DOG 5j", "6j", "", "8j"], out=[2], turn=0)
    after, events = act(state, 0, "play DOG")
    assert after.turn == 3
    assert [(e.seat, e.to) for e in of_type(events, LeadPassed)] == [(0, 3)]


def test_T_DOG_4_dog_on_a_non_empty_table_is_rejected() -> None:
    state = position(hands=["DOG 5j", "6j", "7j", "8j"], trick=[{"seat": 3, "cards": "4j"}], turn=0)
    reject(state, 0, "play DOG", {"R-DOG-1", "R-COMB-8"})


def test_T_DOG_6_no_bomb_before_the_partner_leads() -> None:
    state = position(hands=["DOG 5j", "2j 2s 2p 2t", "7j", "8j"], turn=0)
    state, _ = act(state, 0, "play DOG")
    reject(state, 1, "play 2j 2s 2p 2t", {"R-BOMB-2", "R-DOG-2", "R-BOMB-9"})
    after, _ = act(state, 2, "play 7j")
    assert after.top_seat == 2


def test_R_DOG_3_lead_can_come_back_to_the_dog_player() -> None:
    state = position(hands=["DOG 5j", "6j", "", ""], out=[2, 3], turn=0)
    after, events = act(state, 0, "play DOG")
    assert [(e.seat, e.to) for e in of_type(events, LeadPassed)] == [(0, 0)]
    assert after.turn == 0


def test_R_DOG_5_dog_as_last_card_completes_a_double_victory() -> None:
    state = full_position(1, hands=["DOG", "6j 7j", "", "8j"], out=[2], turn=0)
    after, events = act(state, 0, "play DOG")
    assert [(e.seat, e.place) for e in of_type(events, WentOut)] == [(0, 2)]
    assert [e.reason for e in of_type(events, RoundEnded)] == ["double_victory"]
    assert after.scores == (200, 0)


# ----------------------------------------------------------------------------- T-DRG


def dragon_trick(hands: list[str], out: list[int] | None = None) -> State:
    """P0 leads the Dragon and every other active seat passes; the gift is pending."""
    state = position(hands=hands, out=out or [], turn=0)
    state, _ = turn(state, 0, "play DRG")
    seat = state.turn
    while state.gift < 0:
        state, _ = turn(state, seat, "pass")
        seat = state.turn
    return state


def test_T_DRG_1_gift_goes_to_an_opponent_and_the_dragon_player_leads() -> None:
    state = dragon_trick(["DRG 5j", "6j Aj", "7j", "8j"])
    assert state.gift == 0
    assert to_act(state) == (0,)
    reject(state, 0, "gift 2", "R-DRG-2")
    after, events = act(state, 0, "gift 1")
    assert [(e.seat, e.to, e.points) for e in of_type(events, DragonGiven)] == [(0, 1, 25)]
    assert after.piles[1] == position(hands=["DRG", "", "", ""]).hands[0]
    assert after.turn == 0 and after.gift == -1


def test_T_DRG_2_gift_to_an_opponent_who_is_out() -> None:
    state = dragon_trick(["DRG 5j", "6j Aj", "7j", ""], out=[3])
    assert GiftDragon(3) in legal_decisions(state, 0)
    after, _ = act(state, 0, "gift 3")
    assert after.piles[3] == position(hands=["DRG", "", "", ""]).hands[0]
    assert after.turn == 0


def test_T_DRG_4_bombed_dragon_is_not_given_away() -> None:
    state = position(hands=["DRG 5j", "2j 2s 2p 2t 9t", "7j", "8j"], turn=0)
    state, _ = act(state, 0, "play DRG")
    state, events = act(state, 1, "play 2j 2s 2p 2t")
    assert of_type(events, Played)[0].seat == 1
    state, _ = decline_window(state)
    state, events = turns(state, [(2, "pass"), (3, "pass"), (0, "pass")])
    assert [(w.seat, w.points) for w in of_type(events, TrickWon)] == [(1, 25)]
    assert not of_type(events, DragonGiftPending)
    assert state.gift == -1 and state.turn == 1


@pytest.mark.parametrize("to", [1, 3])
def test_T_DRG_5_dragon_as_last_card_gift_then_next_active_leads(to: int) -> None:
    state = position(hands=["DRG", "6j Aj", "7j", "8j"], turn=0)
    state, events = turn(state, 0, "play DRG")
    assert [(e.seat, e.place) for e in of_type(events, WentOut)] == [(0, 1)]
    state, events = turns(state, [(1, "pass"), (2, "pass"), (3, "pass")])
    assert [e.seat for e in of_type(events, DragonGiftPending)] == [0]
    assert to_act(state) == (0,)
    after, _ = act(state, 0, parse_action(f"gift {to}"))
    assert after.turn == 1
    assert after.piles[to] == position(hands=["DRG", "", "", ""]).hands[0]


def test_R_DRG_5_R_DRG_6_third_out_with_the_dragon_still_gives_the_trick() -> None:
    # P3 goes out third with the Dragon; he gives the trick to the tailender P2, whose tricks
    # then go to the first player out P0 (R-END-5): the points land with team A.
    state = full_position(
        1, hands=["", "", "2j 3j", "DRG"], out=[0, 1], turn=3, trick=[{"seat": 2, "cards": "9s"}]
    )
    state, events = act(state, 3, "play DRG")
    assert [e.reason for e in of_type(events, RoundEnded)] == ["normal"]
    assert state.phase is Phase.ROUND_END
    assert to_act(state) == (3,)
    reject(state, 3, "gift 1", "R-DRG-2")
    after, events = act(state, 3, "gift 2")
    (scored,) = of_type(events, RoundScored)
    assert scored.card_points == (25, 75)
    assert after.round == 1
