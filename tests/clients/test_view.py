"""SeatView, folded from a seat's own events, equals the engine's observe() at every step."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import pytest

from clients.bot import Bot, DecisionKind, Harness, decision_kind
from clients.heuristic_bot import HeuristicBot
from clients.random_bot import RandomBot
from clients.showcase_bot import ShowcaseBot
from clients.view import SeatView
from referee.rules import (
    OFFICIAL,
    TOURNAMENT,
    Action,
    CallTichu,
    Event,
    Observation,
    RulesConfig,
    State,
    answer_window,
    apply,
    new_game,
    observe,
    to_act,
)
from referee.rules.cards import mask_of
from referee.rules.legal import ExchangeChoices, exchange_recipients

# What only a request can say: a view shows "nothing owed" between requests.
CONTROL = {
    "turn",
    "window_open",
    "window_order",
    "must_answer_window",
    "to_act",
    "legal_actions",
    "legal_decisions",
    "can_call_tichu",
}
CONFIGS = {
    "official": OFFICIAL,
    "tournament": TOURNAMENT,
    "six": RulesConfig(players=6),
    "open_calls_dog_aside": RulesConfig(tichu_call_exchange_mode="open", dog_card_pile="next_trick_winner"),
    "dog_to_receiver": RulesConfig(dog_card_pile="receiver", grand_tichu_enabled=False),
    "turn_only_bombs": RulesConfig(bomb_timing="turn_only", gt_decision_mode="sequential"),
}


def same_content(view: Observation, truth: Observation) -> None:
    """Every field but the request-only ones is equal."""
    for field in dataclasses.fields(Observation):
        if field.name not in CONTROL:
            assert getattr(view, field.name) == getattr(truth, field.name), field.name


def strs(actions: Sequence[Action]) -> list[str]:
    """Actions as strings (listed lazily by the engine, as a tuple by a request)."""
    return [str(a) for a in actions]


class Table:
    """The engine, a harness per seat, and a SeatView per seat fed only that seat's events."""

    def __init__(self, config: RulesConfig, seed: int, bots: Sequence[Bot]) -> None:
        self.harnesses = [Harness(bot, seat) for seat, bot in enumerate(bots)]
        self.views = [SeatView(seat, config) for seat in range(config.players)]
        self.state: State
        self.state, events = new_game(config, seed)
        self.publish(events)

    def publish(self, events: list[Event]) -> None:
        for event in events:
            for seat, view in enumerate(self.views):
                if event.visible_to(seat):
                    view.apply(event)
        for seat, view in enumerate(self.views):
            same_content(view.obs, observe(self.state, seat))

    def ask(self, seat: int) -> Action:
        """The seat's answer, decided on the view's observation as a remote bot would."""
        truth = observe(self.state, seat)
        kind = decision_kind(truth)
        assert kind is not None
        legal: Sequence[Action] = tuple(truth.legal_decisions)
        if kind is DecisionKind.EXCHANGE:
            recipients = exchange_recipients(self.state, seat)
            legal = ExchangeChoices(mask_of(self.views[seat].obs.hand), recipients, ())
        view = self.views[seat]
        obs = view.for_request(kind, legal, truth.can_call_tichu)
        same_content(obs, truth)
        assert obs.can_call_tichu == truth.can_call_tichu
        assert obs.must_answer_window == truth.must_answer_window
        assert obs.is_lead == truth.is_lead
        if kind is DecisionKind.EXCHANGE:
            assert len(obs.legal_decisions) == len(truth.legal_decisions)
            assert obs.legal_decisions[0] == truth.legal_decisions[0]
        else:
            assert strs(obs.legal_decisions) == strs(truth.legal_decisions)
            assert strs(obs.legal_actions) == strs(truth.legal_actions)
        harness = self.harnesses[seat]
        if harness.wants_tichu_call(obs):
            view.answered(CallTichu())
            self.state, events = apply(self.state, seat, CallTichu())
            self.publish(events)
            obs = view.for_request(kind, legal, False)
        action = harness.decide(obs, kind)
        view.answered(action)
        return action

    def play(self, rounds: int) -> None:
        while not self.state.is_over and len(self.state.history) < rounds:
            seats = to_act(self.state)
            if self.state.window and self.state.gift < 0:
                answers = {seat: self.ask(seat) for seat in seats}
                self.state, events = answer_window(self.state, answers)
            else:
                action = self.ask(seats[0])
                self.state, events = apply(self.state, seats[0], action)
            self.publish(events)


@pytest.mark.parametrize("name", sorted(CONFIGS))
@pytest.mark.parametrize("seed", [1, 2])
def test_a_view_follows_the_engine(name: str, seed: int) -> None:
    config = CONFIGS[name]
    lineup = (ShowcaseBot, RandomBot, HeuristicBot, RandomBot, ShowcaseBot, HeuristicBot)
    table = Table(config, seed, [cls() for cls in lineup[: config.players]])
    table.play(rounds=3)
    assert len(table.state.history) == 3 or table.state.is_over


def test_a_view_follows_a_whole_game_to_its_end() -> None:
    table = Table(TOURNAMENT, 5, [ShowcaseBot(), RandomBot(), HeuristicBot(), RandomBot()])
    table.play(rounds=100)
    assert table.state.is_over
    assert all(view.obs.winner == table.state.winner for view in table.views)


def test_a_snapshot_replaces_the_view_and_older_events_are_skipped() -> None:
    state, events = new_game(OFFICIAL, seed=3)
    view = SeatView(1, OFFICIAL)
    truth = observe(state, 1)
    view.reset(truth, state_version=7)
    for event in events:
        view.apply(event, state_version=7)  # already in the snapshot
    same_content(view.obs, truth)
    assert view.obs.legal_decisions == ()
    view.apply(events[0], state_version=8)  # a new round starting empties the hand
    assert view.obs.hand == ()
