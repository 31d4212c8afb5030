"""The SDK's Harness: the right method per decision, only legal answers, auto-declined windows."""

from __future__ import annotations

import dataclasses

import pytest
from structlog.testing import capture_logs

from clients.bot import (
    Bot,
    Harness,
    Replacement,
    decision_kind,
    exchange_recipients,
    observe_replacements,
    opponents,
    sensible_exchange,
    teammates,
)
from clients.local import play_match
from clients.random_bot import RandomBot
from referee import log
from referee.rules import (
    OFFICIAL,
    Action,
    DecisionKind,
    Decline,
    DeclineTichu,
    Exchange,
    GiftDragon,
    GrandTichu,
    Observation,
    Pass,
    Phase,
    Play,
    RulesConfig,
    State,
    apply,
    new_game,
    observe,
    owed,
    state_from_json,
    to_act,
)
from referee.rules import DecisionKind as EngineDecisionKind
from referee.rules.cards import parse_mask
from tests.clients.fakes import BrokenBot
from tests.rules.random_games import random_moves


class CountingBot(RandomBot):
    """RandomBot that counts how often bomb() is asked."""

    def __init__(self, answer: Play | None = None) -> None:
        self.asked = 0
        self.answer = answer

    def bomb(self, obs: Observation) -> Play | None:
        """Count, then answer as configured."""
        self.asked += 1
        return self.answer


@pytest.mark.parametrize("players", [4, 6])
def test_a_broken_bot_never_breaks_a_match(players: int) -> None:
    bots: list[Bot] = [BrokenBot() if s % 2 == 0 else RandomBot() for s in range(players)]
    # The warnings are what this test reads: at INFO, whatever level code run before it in this
    # worker left behind (capture_logs swaps the processors, not the level's filter).
    log.configure(json=True, level="INFO", force=True)
    with capture_logs() as logs:
        # apply() raises on anything illegal, so finishing proves every answer sent was legal.
        outcome = play_match(bots, seed=3, max_rounds=3)
    assert outcome.rounds == 3
    broken = [s for s in outcome.seats if s.bot == "broken"]
    assert all(s.replaced > 10 and s.errors > 10 for s in broken)
    assert all(s.replaced == s.errors == 0 for s in outcome.seats if s.bot == "random")
    events = {entry["event"] for entry in logs}
    assert {"answer_replaced", "bot_failed"} <= events


def test_each_replaced_answer_and_exception_is_told_to_the_observers() -> None:
    told: list[Replacement] = []
    stop = observe_replacements(told.append)
    try:
        with capture_logs():
            outcome = play_match([BrokenBot(), RandomBot(), BrokenBot(), RandomBot()], seed=3, max_rounds=1)
    finally:
        stop()
    broken = [s for s in outcome.seats if s.bot == "broken"]
    # Every replaced decision, every exception (some in methods that owe no decision: on_event).
    decisions = [r for r in told if r.sent and r.method != "call_tichu_now"]  # not counted as replaced
    assert len(decisions) == sum(s.replaced for s in broken)
    assert len([r for r in told if r.fault == "bot_raised"]) == sum(s.errors for s in broken)
    raised = next(r for r in told if r.fault == "bot_raised")
    assert raised.problem.startswith("raised ") and raised.traceback
    assert not any("clients/bot.py" in line for line in raised.traceback)
    assert all(r.situation for r in told)
    # Once the observer is gone, it hears nothing.
    heard = len(told)
    with capture_logs():
        play_match([BrokenBot(), RandomBot(), BrokenBot(), RandomBot()], seed=3, max_rounds=1)
    assert len(told) == heard


def test_a_bot_that_ignores_the_wish_is_told_as_breaking_r_wish_4() -> None:
    class Passer(RandomBot):
        def play(self, obs: Observation) -> Action:
            return Pass()

    told: list[Replacement] = []
    stop = observe_replacements(told.append)
    position = {"hands": ["7s 9j Kp", "2j", "5j", "9p"], "trick": [{"seat": 3, "cards": "MJ"}], "wish": "7",
                "turn": 0, "played": [True] * 4}  # fmt: skip
    try:
        with capture_logs():
            sent = Harness(Passer(), 0).decide(observe(state_from_json(position), 0))
    finally:
        stop()
    assert sent == Play(parse_mask("7s"))
    (replacement,) = told
    assert replacement.rule == "R-WISH-4" and replacement.fault == "answer_replaced"
    assert "the wish 7" in replacement.situation and replacement.method == "play"


def test_a_strict_bot_raises_instead() -> None:
    bot = BrokenBot()
    bot.strict = True
    with pytest.raises((RuntimeError, ValueError)):
        play_match([bot, RandomBot(), RandomBot(), RandomBot()], seed=1)


def window_after_seven(hands: list[str]) -> State:
    """Seat 0 leads the 7s from `hands[0]`; the bomb window is open for everyone."""
    state = state_from_json({"hands": hands, "turn": 0})
    state, _ = apply(state, 0, Play.of("7s"))
    assert state.window
    return state


def test_bombless_windows_are_declined_without_asking_the_bot() -> None:
    state = window_after_seven(["7s 9j", "8s Kt", "2j 2s 2p 2t 5j", "3s 3p"])
    for seat, should_ask in ((1, False), (2, True), (3, False), (0, False)):
        bot = CountingBot()
        harness = Harness(bot, seat)
        assert harness.decide(observe(state, seat)) == Decline()
        assert bot.asked == int(should_ask)
        assert harness.stats.auto_declines == int(not should_ask)


def test_a_bomb_that_cannot_beat_the_top_is_not_asked_about() -> None:
    state = state_from_json(
        {"hands": ["7j 7s 7p 7t 9j", "8s Kt", "2j 2s 2p 2t 5j", "Jj Js Jp Jt"], "turn": 0}
    )
    state, _ = apply(state, 0, Play.of("7j 7s 7p 7t"))
    low, high = CountingBot(), CountingBot(answer=Play.of("Jj Js Jp Jt"))
    assert Harness(low, 2).decide(observe(state, 2)) == Decline()
    assert low.asked == 0
    assert Harness(high, 3).decide(observe(state, 3)) == Play.of("Jj Js Jp Jt")
    assert high.asked == 1


def test_a_window_bomb_the_bot_chooses_is_sent() -> None:
    state = window_after_seven(["7s 9j", "8s Kt", "2j 2s 2p 2t 5j", "3s 3p"])
    bot = CountingBot(answer=Play.of("2j 2s 2p 2t"))
    assert Harness(bot, 2).decide(observe(state, 2)) == Play.of("2j 2s 2p 2t")


class FixedBot(RandomBot):
    """Plays a given action."""

    def __init__(self, action: Action) -> None:
        self.action = action

    def play(self, obs: Observation) -> Action:
        """The given action."""
        return self.action


def test_a_phoenix_play_without_a_named_rank_takes_the_listed_reading() -> None:
    state = state_from_json({"hands": ["5s 5j PHX 9j", "8s Kt", "2j", "3s 3p"], "turn": 0})
    action = Harness(FixedBot(Play.of("5s 5j PHX"))).decide(observe(state, 0))
    assert isinstance(action, Play)
    assert action == Play.of("5s 5j PHX", phoenix="5")
    apply(state, 0, action)


def test_the_tichu_flag_is_kept_while_a_call_is_allowed_and_dropped_after() -> None:
    hands = ["5s 6j 9j", "8s Kt", "2j", "3s 3p"]
    state = state_from_json({"hands": hands, "turn": 0, "played": [False] * 4})
    flagged = Play.of("5s", tichu=True)
    action = Harness(FixedBot(flagged)).decide(observe(state, 0))
    assert action == flagged
    apply(state, 0, action)
    state = state_from_json({"hands": hands, "turn": 0, "played": [True, False, False, False]})
    with capture_logs() as logs:
        action = Harness(FixedBot(flagged)).decide(observe(state, 0))
    assert action == Play.of("5s")
    assert [entry["event"] for entry in logs] == ["tichu_flag_dropped"]


def exchange_observations(config: RulesConfig) -> list[Observation]:
    """Every seat's observation at the exchange of a new game (no calls)."""
    state, _ = new_game(config, seed=4)
    while state.phase.value != "exchange":
        seat = to_act(state)[0]
        answer = GrandTichu(False) if state.phase.value == "grand_tichu" else DeclineTichu()
        state, _ = apply(state, seat, answer)
    return [observe(state, seat) for seat in range(config.players)]


@pytest.mark.parametrize("players", [4, 6])
def test_the_default_exchange_is_legal(players: int) -> None:
    for obs in exchange_observations(dataclasses.replace(OFFICIAL, players=players)):
        gifts = sensible_exchange(obs)
        assert gifts in obs.legal_decisions
        recipients = exchange_recipients(obs)
        assert tuple(s for s, _ in gifts.gifts) == recipients
        if players == 4:
            partner_gift = next(c for s, c in gifts.gifts if s in teammates(obs))
            assert partner_gift not in (54, 55)  # never the Phoenix or the Dragon by default
            assert all(c <= partner_gift for s, c in gifts.gifts)


def test_an_exchange_in_any_order_is_accepted() -> None:
    obs = exchange_observations(OFFICIAL)[0]
    gifts = sensible_exchange(obs).gifts
    shuffled = Exchange(tuple(reversed(gifts)))

    class Giver(RandomBot):
        def exchange(self, obs: Observation) -> Exchange:
            return shuffled

    assert Harness(Giver()).decide(obs) == Exchange(gifts)


def test_the_default_dragon_gift_goes_to_the_likely_tailender() -> None:
    obs = exchange_observations(OFFICIAL)[0]
    pending = dataclasses.replace(
        obs,
        legal_decisions=(GiftDragon(1), GiftDragon(3)),
        hand_sizes=(0, 2, 5, 7),
        to_act=(0,),
        gift_pending=0,
        phase=Phase.PLAY,
    )
    assert decision_kind(pending) is DecisionKind.DRAGON_GIFT
    assert RandomBot().gift_dragon(pending) == 3
    assert RandomBot().gift_dragon(dataclasses.replace(pending, out=(3,))) == 1
    assert opponents(pending) == (1, 3)
    assert teammates(pending) == (2,)


def test_the_sdk_tells_the_decision_kind_as_the_engine_does() -> None:
    """decision_kind(observe(...)) is the engine's owed(): one derivation, one enum."""
    assert DecisionKind is EngineDecisionKind
    for config in (OFFICIAL, RulesConfig(players=6, tichu_call_exchange_mode="open")):
        for move in random_moves(config, seed=4, rounds=2):
            for seat in range(config.players):
                assert decision_kind(observe(move.state, seat)) is owed(move.state, seat)
