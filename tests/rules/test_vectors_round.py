"""RULES.md test vectors of the round: Grand Tichu (T-GT), calls (T-CALL), the exchange (T-EX),
the end of a round and scoring (T-END), the end of the game (T-GAME), six players (T-V6), three
players (T-V3), and the default actions of §15b (R-DEF-1..3).
"""

from __future__ import annotations

import pytest

from referee.rules import (
    CallTichu,
    DeclineTichu,
    GiftDragon,
    GrandTichu,
    InvalidActionError,
    Pass,
    Phase,
    Play,
    RulesConfig,
    State,
    apply,
    can_call_tichu,
    cards_of,
    default_action,
    legal_decisions,
    new_game,
    observe,
    parse_action,
    to_act,
)
from referee.rules.events import (
    Called,
    DragonGiven,
    GameOver,
    Played,
    RoundEnded,
    RoundScored,
    TrickWon,
    WentOut,
)
from tests.rules.vectors_support import (
    DECLINE,
    act,
    answers,
    decline_window,
    full_position,
    of_type,
    points_of,
    position,
    reject,
    turn,
    turns,
)

SIX = {"players": 6}

# ----------------------------------------------------------------------------- T-GT


def answer_grand_tichu(state: State, calls: dict[int, bool]) -> State:
    """Every seat answers the Grand Tichu question (yes for the seats in `calls`)."""
    for seat in range(state.players):
        state, _ = apply(state, seat, GrandTichu(calls.get(seat, False)))
    return state


def answer_grand_tichu_rest(state: State, seats: tuple[int, ...]) -> State:
    """The given seats answer no to the Grand Tichu question."""
    for seat in seats:
        state, _ = apply(state, seat, GrandTichu(False))
    return state


def test_T_GT_1_grand_tichu_with_eight_cards_is_accepted() -> None:
    state, _ = new_game(seed=11)
    assert state.phase is Phase.GRAND_TICHU
    assert all(h.bit_count() == 8 for h in state.hands)
    state, _ = apply(state, 1, GrandTichu(True))
    assert observe(state, 0).calls[1] == "none"  # revealed together, once everyone has answered
    state = answer_grand_tichu_rest(state, (0, 2, 3))
    assert state.calls[1] == 2
    assert all(h.bit_count() == 14 for h in state.hands)


def test_T_GT_1_grand_tichu_after_the_six_cards_is_rejected() -> None:
    state, _ = new_game(seed=11)
    state = answer_grand_tichu(state, {1: True})
    assert state.phase is not Phase.GRAND_TICHU
    assert all(h.bit_count() == 14 for h in state.hands)
    reject(state, 2, GrandTichu(True), {"R-GT-1", "R-GT-2"})
    assert state.calls[2] == 0


# ----------------------------------------------------------------------------- T-CALL

FOURTEEN = "6j 6s 7j 7s 8j 8s 9j 9s 10j 10s Jj Js Qj Qs"


def test_T_CALL_1_call_after_passing_without_playing_is_accepted() -> None:
    state = position(hands=["2j 3j", "4j", "5j", FOURTEEN], trick=[{"seat": 0, "cards": "Kj"}], turn=1)
    assert can_call_tichu(state, 3)
    after, events = act(state, 3, CallTichu())
    assert after.calls[3] == 1
    assert [(e.seat, e.call) for e in of_type(events, Called)] == [(3, "tichu")]
    assert after.turn == 1 and to_act(after) == (1,)  # R-CALL-4: the turn does not change


def test_T_CALL_2_call_after_a_played_card_is_rejected() -> None:
    state = position(
        hands=["2j 3j", "4j", "5j", "6j 6s 7j 7s 8j 8s 9j 9s 10j 10s Jj Js Qj"],
        trick=[{"seat": 0, "cards": "Kj"}],
        turn=1,
        played=[True, True, True, True],
    )
    assert not can_call_tichu(state, 3)
    reject(state, 3, CallTichu(), "R-CALL-1")


def test_T_CALL_4_the_dog_is_a_played_card() -> None:
    state = position(hands=["DOG " + FOURTEEN.replace(" Qs", ""), "4j", "5j", "Qs"], turn=0)
    assert can_call_tichu(state, 0)
    state, _ = act(state, 0, "play DOG")
    assert not can_call_tichu(state, 0)
    reject(state, 0, CallTichu(), "R-CALL-1")


def test_T_CALL_5_grand_tichu_caller_cannot_call_tichu() -> None:
    state = position(
        hands=[FOURTEEN, "4j", "5j", "2s"], turn=1, calls=["grand_tichu", "none", "none", "none"]
    )
    reject(state, 0, CallTichu(), "R-CALL-2")
    assert state.calls[0] == 2


def test_T_CALL_7_hopeless_call_is_accepted_and_fails() -> None:
    p2_hand = "2j 2s 4j 4s 6j 6s 7j 7s 8j 8s 9j 9s Jj Js"
    state = full_position(
        1,
        hands=["", "3s", p2_hand, "As"],
        piles=["Kj Ks", "", "", ""],
        out=[0],
        turn=1,
    )
    state, events = act(state, 2, CallTichu())
    assert state.calls[2] == 1
    state, _ = turns(state, [(1, "play 3s"), (2, "pass")])
    state, events = act(state, 3, "play As")
    assert [e.reason for e in of_type(events, RoundEnded)] == ["normal"]
    (scored,) = of_type(events, RoundScored)
    assert scored.call_points == (-100, 0)
    a = points_of("Kj Ks")  # P0's pile; the tailender P2's hand goes to team B
    assert scored.card_points == (a, 100 - a)
    assert scored.round_points == (a - 100, 100 - a)


def test_T_CALL_7_hopeless_call_rejected_with_the_flag() -> None:
    state = position(
        hands=["", "3s", FOURTEEN, "As"], out=[0], turn=1, config={"allow_hopeless_calls": False}
    )
    reject(state, 2, CallTichu(), "R-CALL-5")


def test_T_CALL_8_call_flag_is_recorded_before_the_play() -> None:
    state = position(hands=[FOURTEEN, "4j", "5j", "2s"], turn=0)
    after, events = act(state, 0, "play 6j tichu")
    kinds = [type(e) for e in events]
    assert Called in kinds and Played in kinds
    assert kinds.index(Called) < kinds.index(Played)
    assert after.calls[0] == 1


def test_T_CALL_8_call_flag_on_a_hand_emptying_first_play_counts() -> None:
    # R-CALL-7: the only way to call for a player whose first play is a 14-card straight.
    state = full_position(
        1,
        hands=["MJ 2j 3j 4j 5j 6j 7s 8s 9s 10s Js Qs Ks As", "9t", "2s 3s 4s 5s 6s", "9p"],
        turn=0,
    )
    state, events = act(state, 0, "play MJ 2j 3j 4j 5j 6j 7s 8s 9s 10s Js Qs Ks As tichu")
    assert [(e.seat, e.place) for e in of_type(events, WentOut)] == [(0, 1)]
    assert state.calls[0] == 1
    state, events = answers(state, {1: DECLINE, 2: "play 2s 3s 4s 5s 6s"})
    assert [e.reason for e in of_type(events, RoundEnded)] == ["double_victory"]
    (scored,) = of_type(events, RoundScored)
    assert scored.call_points == (100, 0)
    assert scored.round_points == (300, 0)


# ----------------------------------------------------------------------------- T-EX


def exchange_state(seed: int = 5) -> State:
    state, _ = new_game(seed=seed)
    state = answer_grand_tichu(state, {})
    for seat in range(4):
        state, _ = apply(state, seat, DeclineTichu())
    assert state.phase is Phase.EXCHANGE
    return state


def test_T_EX_1_two_cards_to_one_player_is_rejected() -> None:
    state = exchange_state()
    a, b, c = (str(card) for card in cards_of(state.hands[0])[:3])
    reject(state, 0, f"exchange 1:{a} 1:{b} 2:{c}", "R-EXCH-1")
    after, _ = act(state, 0, f"exchange 1:{a} 2:{b} 3:{c}")
    assert after.exchange[0] is not None


@pytest.mark.parametrize("seat", [0, 1, 2, 3])
def test_T_EX_1_one_card_to_each_other_seat_is_accepted(seat: int) -> None:
    state = exchange_state()
    a, b, c = (str(card) for card in cards_of(state.hands[seat])[:3])
    others = [(seat + k) % 4 for k in (1, 2, 3)]
    after, _ = act(state, seat, f"exchange {others[0]}:{a} {others[1]}:{b} {others[2]}:{c}")
    assert after.exchange[seat] is not None


def test_T_EX_1_exchange_delivers_all_twelve_cards_at_once() -> None:
    # R-EXCH-2/4: nothing moves until all four have submitted; then everyone holds 14 again.
    state = exchange_state()
    start = state
    for seat in range(4):
        low = cards_of(state.hands[seat])[:3]
        gifts = " ".join(f"{(seat + k) % 4}:{low[k - 1]}" for k in (1, 2, 3))
        state, _ = act(state, seat, f"exchange {gifts}")
        if seat < 3:
            assert state.hands == start.hands
            assert state.phase is Phase.EXCHANGE
    assert state.phase is Phase.PLAY
    assert all(h.bit_count() == 14 for h in state.hands)
    for seat in range(4):
        low = cards_of(start.hands[seat])[:3]
        for k in (1, 2, 3):
            assert state.hands[(seat + k) % 4] >> low[k - 1] & 1


# ----------------------------------------------------------------------------- T-END


def double_victory_position(scores: list[int], calls: list[str] | None = None) -> State:
    """P0 is out; P2 plays his last card Q on P1's 9 in the middle of a trick."""
    return full_position(
        1,
        hands=["", "3j 4j Kt", "Qs", "5j 6j"],
        trick=[{"seat": 1, "cards": "9s"}],
        piles=["10j 10s", "", "", ""],
        out=[0],
        turn=2,
        scores=scores,
        calls=calls or ["none"] * 4,
    )


def test_T_END_1_double_victory_ends_the_round_at_once() -> None:
    state, events = act(double_victory_position([0, 0]), 2, "play Qs")
    assert [(e.seat, e.place) for e in of_type(events, WentOut)] == [(2, 2)]
    assert [e.reason for e in of_type(events, RoundEnded)] == ["double_victory"]
    assert not of_type(events, TrickWon)  # nothing on the table is counted
    (scored,) = of_type(events, RoundScored)
    assert scored.card_points == (200, 0)
    assert scored.round_points == (200, 0)
    assert state.scores == (200, 0)


def test_T_END_2_calls_are_scored_on_top_of_a_double_victory() -> None:
    start = double_victory_position([0, 0], ["tichu", "grand_tichu", "none", "none"])
    state, events = act(start, 2, "play Qs")
    (scored,) = of_type(events, RoundScored)
    assert scored.call_points == (100, -200)
    assert scored.round_points == (300, -200)
    assert state.scores == (300, -200)


def test_T_END_5_third_out_collects_the_table() -> None:
    state = full_position(
        3,
        hands=["", "", "Kj 2j 3j", "Qj Qs"],
        trick=[{"seat": 1, "cards": "5j 5s"}, {"seat": 2, "cards": "10s 10j"}],
        piles=["Ks", "", "Kp", ""],
        out=[0, 1],
        turn=3,
    )
    state, events = act(state, 3, "play Qj Qs")
    assert [(e.seat, e.place) for e in of_type(events, WentOut)] == [(3, 3)]
    won = of_type(events, TrickWon)
    assert [(w.seat, w.points) for w in won] == [(3, points_of("5j 5s 10s 10j Qj Qs"))]
    assert won[0].points == 30  # the 10s and 5j (15) and their pair partners (15)
    (scored,) = of_type(events, RoundScored)
    # A: P0's pile and the tailender P2's pile (to P0); P2's hand goes to team B.
    a = points_of("Ks Kp")
    assert scored.card_points == (a, 100 - a)


def test_T_END_7_team_with_only_the_phoenix_scores_minus_25() -> None:
    state = full_position(
        3,
        hands=["", "", "Kj 3s", "Aj"],
        trick=[{"seat": 2, "cards": "9s"}],
        piles=["PHX 2j 3j", "", "4j", ""],
        out=[1, 0],
        turn=3,
    )
    state, events = act(state, 3, "play Aj")
    (scored,) = of_type(events, RoundScored)
    assert scored.card_points == (-25, 125)
    assert scored.round_points == (-25, 125)


# ----------------------------------------------------------------------------- T-GAME


def test_T_GAME_1_team_over_the_target_wins() -> None:
    state, events = act(double_victory_position([810, 990]), 2, "play Qs")
    assert state.scores == (1010, 990)
    assert state.phase is Phase.GAME_OVER
    assert state.winner == 0
    assert [(e.winner, e.totals) for e in of_type(events, GameOver)] == [(0, (1010, 990))]


def normal_end_position(scores: list[int], calls: list[str], piles: list[str]) -> State:
    """P0 and P1 are out; P3 plays his last card, third out; P2 is the tailender."""
    return full_position(
        1,
        hands=["", "", "2j 3j 4p", "Aj"],
        trick=[{"seat": 2, "cards": "9s"}],
        piles=piles,
        out=[0, 1],
        turn=3,
        scores=scores,
        calls=calls,
    )


def test_T_GAME_2_both_teams_over_the_target_higher_wins() -> None:
    start = normal_end_position([950, 920], ["tichu", "none", "none", "none"], ["2s 3s", "", "2p", ""])
    state, events = act(start, 3, "play Aj")
    (scored,) = of_type(events, RoundScored)
    assert scored.round_points == (100, 100)
    assert state.scores == (1050, 1020)
    assert state.phase is Phase.GAME_OVER
    assert state.winner == 0


def test_R_GAME_3_equal_totals_at_the_target_play_on() -> None:
    start = normal_end_position([950, 950], ["none"] * 4, ["Kj Ks 10j 10s 5j", "", "5s", ""])
    state, events = act(start, 3, "play Aj")
    (scored,) = of_type(events, RoundScored)
    assert scored.round_points == (50, 50)
    assert state.scores == (1000, 1000)
    assert state.phase is Phase.GRAND_TICHU and state.round == 1
    assert not of_type(events, GameOver)


def test_T_GAME_4_card_points_mid_round_end_nothing() -> None:
    state = full_position(
        1,
        hands=["2j", "4j 4s", "3j 3s 3p 3t", "6j 6s"],
        trick=[{"seat": 3, "cards": "10s"}, {"seat": 1, "cards": "Ks"}, {"seat": 0, "cards": "As"}],
        turn=1,
        scores=[980, 0],
    )
    state, events = turns(state, [(1, "pass"), (2, "pass"), (3, "pass")])
    assert [(w.seat, w.points) for w in of_type(events, TrickWon)] == [(0, 20)]
    assert state.phase is Phase.PLAY
    assert state.scores == (980, 0)
    assert not of_type(events, RoundScored) and not of_type(events, GameOver)
    assert state.turn == 0
    state, _ = act(state, 0, "play 2j")
    state, events = answers(state, {1: DECLINE, 2: "play 3j 3s 3p 3t"})
    assert [e.reason for e in of_type(events, RoundEnded)] == ["double_victory"]
    assert state.scores == (1180, 0)
    assert state.phase is Phase.GAME_OVER and state.winner == 0


# ----------------------------------------------------------------------------- T-V6


def six_player_game() -> State:
    """A new 6-player game whose first dealer is P0."""
    config = RulesConfig(players=6)
    for seed in range(200):
        state, _ = new_game(config, seed)
        if state.dealer == 0:
            return state
    raise AssertionError("no seed gives dealer P0")


def test_T_V6_1_deal_and_grand_tichu_before_the_seventh_card() -> None:
    state = six_player_game()
    assert state.phase is Phase.GRAND_TICHU
    assert all(h.bit_count() == 6 for h in state.hands)
    state, _ = apply(state, 3, GrandTichu(True))
    state = answer_grand_tichu_rest(state, (0, 1, 2, 4, 5))
    assert state.calls[3] == 2
    assert tuple(h.bit_count() for h in state.hands) == (10, 10, 9, 9, 9, 9)


def test_T_V6_1_grand_tichu_after_the_seventh_card_is_rejected() -> None:
    state = answer_grand_tichu(six_player_game(), {})
    assert tuple(h.bit_count() for h in state.hands) == (10, 10, 9, 9, 9, 9)
    reject(state, 3, GrandTichu(True), {"R-GT-1", "R-V6-3"})


def six_exchange_state() -> State:
    state = answer_grand_tichu(six_player_game(), {})
    for seat in range(6):
        state, _ = apply(state, seat, DeclineTichu())
    assert state.phase is Phase.EXCHANGE
    return state


def test_T_V6_2_exchange_goes_to_the_two_partners_only() -> None:
    state = six_exchange_state()
    a, b = (str(card) for card in cards_of(state.hands[0])[:2])
    after, _ = act(state, 0, f"exchange 2:{a} 4:{b}")
    assert after.exchange[0] is not None
    reject(state, 0, f"exchange 1:{a} 2:{b}", {"R-V6-4", "R-EXCH-1"})
    c = str(cards_of(state.hands[0])[2])
    reject(state, 0, f"exchange 1:{a} 2:{b} 4:{c}", {"R-V6-4", "R-EXCH-1"})


def six_position(config: dict[str, object] | None = None, **fields: object) -> State:
    return full_position(1, config=config or SIX, **fields)


def test_T_V6_4_triple_victory_ends_the_round() -> None:
    state = six_position(
        hands=["", "4j 4s", "", "9j Kt", "Aj", "6j"],
        trick=[{"seat": 3, "cards": "9s"}],
        out=[0, 2],
        turn=4,
        calls=["tichu", "tichu", "none", "none", "none", "none"],
    )
    state, events = act(state, 4, "play Aj")
    assert [e.reason for e in of_type(events, RoundEnded)] == ["triple_victory"]
    (scored,) = of_type(events, RoundScored)
    assert scored.round_points == (400, -100)  # 300 : 0, then the calls
    assert scored.call_points == (100, -100)
    assert scored.card_points[1] == 0 and scored.card_points[0] + scored.bonus_points[0] == 300


def test_T_V6_4_triple_victory_bonus_mode_plays_on() -> None:
    # R-V6-10 bonus: the three out first do not end the round; play goes on to the normal end.
    state = six_position(
        hands=["", "4j 4s", "", "9j Kt", "Aj", "6j"],
        trick=[{"seat": 3, "cards": "9s"}],
        out=[0, 2],
        turn=4,
        config={"players": 6, "v6_triple_victory_mode": "bonus"},
    )
    state, events = act(state, 4, "play Aj")
    assert [(e.seat, e.place) for e in of_type(events, WentOut)] == [(4, 3)]
    assert not of_type(events, RoundEnded)
    assert state.phase is Phase.PLAY


def test_T_V6_5_partners_one_two_is_nothing_special() -> None:
    state = six_position(
        hands=["", "4j 4s", "Qj", "9j Kt", "Aj 2t", "6j"],
        trick=[{"seat": 1, "cards": "9s"}],
        out=[0],
        turn=2,
    )
    state, events = act(state, 2, "play Qj")
    assert [(e.seat, e.place) for e in of_type(events, WentOut)] == [(2, 2)]
    assert not of_type(events, RoundEnded)
    assert state.phase is Phase.PLAY
    state, _ = decline_window(state)
    assert state.turn == 3


def test_T_V6_7_five_passes_close_the_trick() -> None:
    state = position(hands=["2j", "5j 9j", "2s", "3j", "3s", "4j"], turn=1, config=SIX)
    state, _ = turns(state, [(1, "play 5j"), (2, "pass"), (3, "pass"), (4, "pass")])
    state, events = turn(state, 5, "pass")
    assert not of_type(events, TrickWon)
    assert state.turn == 0
    state, events = act(state, 0, "pass")
    assert state.window == (1, 2, 3, 4, 5, 0)
    state, more = decline_window(state)
    assert [w.seat for w in of_type(events + more, TrickWon)] == [1]
    assert state.turn == 1 and state.top is None


# ----------------------------------------------------------------------------- T-V3


@pytest.mark.parametrize("vector", ["T-V3-1", "T-V3-2"])
def test_T_V3_three_players_is_refused_while_out_of_scope(vector: str) -> None:
    # §17 is "not in scope yet": the engine must refuse the config rather than play it wrongly.
    with pytest.raises(InvalidActionError) as info:
        RulesConfig(players=3)
    assert info.value.rule == "R-V3-1", vector


# ----------------------------------------------------------------------------- R-DEF


def test_R_DEF_1_grand_tichu_and_tichu_step_default_to_no_call() -> None:
    state, _ = new_game(seed=3)
    for seat in range(4):
        assert default_action(state, seat) == GrandTichu(False)
    state = answer_grand_tichu(state, {})
    assert state.phase is Phase.TICHU_STEP
    for seat in range(4):
        assert default_action(state, seat) == DeclineTichu()


def test_R_DEF_1_bomb_window_defaults_to_decline() -> None:
    state = position(hands=["7j 8j", "9j 9s 9p 9t", "5j", "Qj"], turn=0)
    state, _ = act(state, 0, "play 7j")
    assert default_action(state, 1) == DECLINE


DEFAULT_EXCHANGE_HANDS = [
    "3j 3s 3t Aj 4j 4s 4p 4t 6j 6s 6p 6t 7j 7s",
    "Kj Ks Qp 7p 7t 8j 8s 8p 8t 9j 9s 9p 9t 10j",
    "PHX 2j MJ DOG DRG 10s 10p 10t Jj Js Jp Jt Qj Qs",
    "2s 2p 2t 3p 5j 5s 5p 5t Kp Kt As Ap At Qt",
]
DEFAULT_EXCHANGES = [
    (0, "exchange 1:3j 2:3s 3:3t"),
    (1, "exchange 2:7p 3:7t 0:8j"),
    (2, "exchange 3:DOG 0:MJ 1:2j"),
    (3, "exchange 0:2s 1:2p 2:2t"),
]


@pytest.mark.parametrize(("seat", "expected"), DEFAULT_EXCHANGES)
def test_R_DEF_1_exchange_gives_the_three_lowest_in_turn_order(seat: int, expected: str) -> None:
    state = position(hands=DEFAULT_EXCHANGE_HANDS, phase="exchange")
    assert default_action(state, seat) == parse_action(expected)


@pytest.mark.parametrize(("seat", "expected"), DEFAULT_EXCHANGES)
def test_R_DEF_1_default_exchange_is_a_legal_action(seat: int, expected: str) -> None:
    state = position(hands=DEFAULT_EXCHANGE_HANDS, phase="exchange")
    action = default_action(state, seat)
    assert action in legal_decisions(state, seat)
    after, _ = apply(state, seat, action)
    assert after.exchange[seat] is not None


def test_R_DEF_1_six_player_exchange_gives_the_two_lowest_to_the_partners() -> None:
    state = six_exchange_state()
    for seat in range(6):
        low = cards_of(state.hands[seat])[:2]
        wanted = parse_action(f"exchange {(seat + 2) % 6}:{low[0]} {(seat + 4) % 6}:{low[1]}")
        assert default_action(state, seat) == wanted


def test_R_DEF_1_regular_turn_defaults_to_pass_when_legal() -> None:
    state = position(hands=["3j", "Aj 2s", "5j", "6j"], trick=[{"seat": 0, "cards": "Qj"}], turn=1)
    assert default_action(state, 1) == Pass()


@pytest.mark.parametrize(
    ("hand", "expected"),
    [
        ("DOG 3s 3j Kp", "play 3j"),
        ("PHX DRG As", "play As"),
        ("PHX DRG", "play PHX"),
        ("DOG DRG", "play DRG"),
        ("DOG", "play DOG"),
        ("DOG MJ 2s", "play MJ"),
    ],
)
def test_R_DEF_2_lead_defaults_to_the_lowest_single(hand: str, expected: str) -> None:
    state = position(hands=[hand, "4j", "4s", "4p"], turn=0)
    action = default_action(state, 0)
    assert str(action) == expected
    assert isinstance(action, Play) and action.wish == 0
    apply(state, 0, action)


def test_R_DEF_1_mah_jong_default_wishes_two_when_the_wish_is_mandatory() -> None:
    state = position(hands=["DOG MJ 5s", "4j", "4s", "4p"], turn=0, config={"wish_mandatory": True})
    action = default_action(state, 0)
    assert str(action) == "play MJ wish=2"
    after, _ = apply(state, 0, action)
    assert after.wish == 2


def test_R_DEF_2_lowest_legal_single_under_the_wish() -> None:
    state = position(hands=["3s 7s", "4j", "4s", "4p"], turn=0, wish="7")
    assert str(default_action(state, 0)) == "play 7s"


def test_R_DEF_3_non_bomb_before_bomb_then_lowest_cards() -> None:
    state = position(
        hands=["7j 7s 7p 7t 9j 9s", "Qj", "Qs", "Kp"],
        trick=[{"seat": 3, "cards": "5s 5j"}],
        turn=0,
        wish="7",
    )
    assert str(default_action(state, 0)) == "play 7j 7s"


@pytest.mark.parametrize(
    ("top", "hand", "wish", "kind_rank"),
    [
        ("3j 4s 5p 6t 7j", "5s 6s 7s 8j PHX", "8", (5, 9, 9)),
        ("3j 3s 3p 2j 2s", "4j 4s 6j 6s PHX", "6", (5, 6, 6)),
    ],
    ids=["straight", "full-house"],
)
def test_R_DEF_1_phoenix_takes_its_highest_reading(
    top: str, hand: str, wish: str, kind_rank: tuple[int, int, int]
) -> None:
    state = position(hands=[hand, "Qj", "Qs", "Kp"], trick=[{"seat": 3, "cards": top}], turn=0, wish=wish)
    assert Pass() not in legal_decisions(state, 0)
    action = default_action(state, 0)
    assert isinstance(action, Play)
    assert action.cards_mask == position(hands=[hand, "", "", ""]).hands[0]
    _, events = apply(state, 0, action)
    combo = of_type(events, Played)[0].combo
    assert (combo.length, combo.rank, combo.phoenix) == kind_rank


@pytest.mark.parametrize(("out", "partner"), [([], 2), ([2], 4)])
def test_R_DEF_1_six_player_dog_names_the_first_active_partner(out: list[int], partner: int) -> None:
    hands = ["DOG", "4j", "4s", "4p", "4t", "5j"]
    for seat in out:
        hands[seat] = ""
    state = position(hands=hands, turn=0, out=out, config=SIX)
    action = default_action(state, 0)
    assert isinstance(action, Play) and action.partner == partner
    after, _ = apply(state, 0, action)
    assert after.turn == partner


def dragon_gift_pending(state: State) -> State:
    """The Dragon player's trick: every other active seat passes until the gift is asked."""
    seat = state.turn
    while state.gift < 0:
        state, _ = turn(state, seat, "pass")
        seat = state.turn
    return state


@pytest.mark.parametrize(("out", "expected"), [([], 3), ([3], 3)])
def test_R_DEF_1_dragon_gift_to_the_first_opponent_after_the_dragon_player(
    out: list[int], expected: int
) -> None:
    hands = ["5j", "6j", "DRG 2j", "7j"]
    for seat in out:
        hands[seat] = ""
    state = position(hands=hands, out=out, turn=2)
    state, _ = turn(state, 2, "play DRG")
    state = dragon_gift_pending(state)
    assert default_action(state, 2) == GiftDragon(expected)
    assert GiftDragon(expected) in legal_decisions(state, 2)


@pytest.mark.parametrize(("recipients", "expected"), [("any_opponent", 1), ("active_opponents_only", 3)])
def test_R_DEF_1_dragon_gift_default_skips_who_may_not_receive(recipients: str, expected: int) -> None:
    # Six players: P1 is out; with active_opponents_only he may not receive, so P3 is first.
    state = position(
        hands=["DRG 2j", "", "5j", "6j", "7j", "8j"],
        out=[1],
        turn=0,
        config={"players": 6, "dragon_gift_recipients": recipients},
    )
    state, _ = turn(state, 0, "play DRG")
    state = dragon_gift_pending(state)
    assert default_action(state, 0) == GiftDragon(expected)
    assert GiftDragon(expected) in legal_decisions(state, 0)


def test_R_DRG_2_single_allowed_recipient_gets_the_trick_without_asking() -> None:
    state = position(
        hands=["5j", "6j", "DRG 2j", ""],
        out=[3],
        turn=2,
        config={"dragon_gift_recipients": "active_opponents_only"},
    )
    state, _ = turn(state, 2, "play DRG")
    state, _ = turn(state, 0, "pass")
    state, events = turn(state, 1, "pass")
    assert state.gift == -1
    assert [(e.seat, e.to) for e in of_type(events, DragonGiven)] == [(2, 1)]
    assert state.turn == 2
