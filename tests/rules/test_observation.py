"""advance(), the one fold of events: a seat's events folded into its observation give observe().

Random games (4 and 6 players, every dog_card_pile, every way of calling around the exchange,
no Grand Tichu, sequential Grand Tichu, bombs only in turn...) are played move by move. For
every seat after every move, the observation folded from the events it may see (with its own
answers recorded by answered()) equals observe(state, seat) on every field but the referee-only
ones, which are "nothing owed". Each seat starts from before_first_deal(), and now and then
starts again from a snapshot (observe() at that moment), as a bot does when it reconnects. The
games are seeded, and the test checks that they include double victories, Dragon gifts (at the
end of a round too), a Dog lying aside and calls made by a bomb's flag.

Then the cases of tests/clients/test_view.py: a seat deciding on for_request()'s observation
sees what observe() shows it, legal lists included.
"""

from __future__ import annotations

import dataclasses
import random
from collections import Counter
from collections.abc import Sequence
from typing import Any

import pytest

from referee.rules import (
    OFFICIAL,
    TOURNAMENT,
    Action,
    CallTichu,
    DecisionKind,
    Event,
    Observation,
    Phase,
    RulesConfig,
    State,
    answer_window,
    apply,
    new_game,
    observe,
    owed,
    parse_action,
    to_act,
)
from referee.rules.cards import mask_of
from referee.rules.events import DragonGiftPending, DragonGiven, RoundEnded, WindowClosed
from referee.rules.legal import ExchangeChoices, exchange_recipients
from referee.rules.observation import (
    REFEREE_ONLY,
    advance,
    answered,
    before_first_deal,
    for_request,
    idle,
    observation_from_json,
)
from tests.rules.random_games import random_moves
from tests.rules.vectors_support import full_position

IDLE = idle(before_first_deal(0, OFFICIAL))
FOLD_CONFIGS = {
    "official": OFFICIAL,
    "tournament": TOURNAMENT,
    "dog_aside_open_calls": RulesConfig(dog_card_pile="next_trick_winner", tichu_call_exchange_mode="open"),
    "dog_to_receiver_no_gt": RulesConfig(dog_card_pile="receiver", grand_tichu_enabled=False),
    "after_exchange_sequential": RulesConfig(
        tichu_call_exchange_mode="after_exchange_only", gt_decision_mode="sequential"
    ),
    "turn_only_keep_final_dragon": RulesConfig(bomb_timing="turn_only", dragon_gift_on_final_trick=False),
    "own_mj_wish_active_gifts": RulesConfig(
        wish_fulfilled_by_own_mj_play=True,
        dragon_gift_recipients="active_opponents_only",
        wish_mandatory=True,
    ),
    "six": RulesConfig(players=6),
    "six_dog_aside_no_gt": RulesConfig(
        players=6, dog_card_pile="next_trick_winner", grand_tichu_enabled=False
    ),
    "six_dog_to_receiver_open": RulesConfig(
        players=6, dog_card_pile="receiver", tichu_call_exchange_mode="open", v6_triple_victory_mode="bonus"
    ),
    "six_after_exchange": RulesConfig(players=6, tichu_call_exchange_mode="after_exchange_only"),
}


def same_content(folded: Observation, truth: Observation, where: str = "") -> None:
    """Every field but the referee-only ones is equal."""
    for field in dataclasses.fields(Observation):
        if field.name not in REFEREE_ONLY:
            assert getattr(folded, field.name) == getattr(truth, field.name), f"{field.name} {where}"


def test_the_referee_only_fields_are_what_idle_clears() -> None:
    truth = observe(new_game(OFFICIAL, 1)[0], 0)
    assert {
        f.name
        for f in dataclasses.fields(Observation)
        if getattr(idle(truth), f.name) != getattr(truth, f.name)
    }
    for name in REFEREE_ONLY:
        assert getattr(idle(truth), name) == getattr(IDLE, name)
    assert dataclasses.replace(idle(truth), **{n: getattr(truth, n) for n in REFEREE_ONLY}) == truth


@pytest.mark.parametrize("owed", [None, *REFEREE_ONLY])
def test_an_event_without_a_fold_leaves_nothing_owed(owed: str | None) -> None:
    # A window closing unbombed changes nothing a seat sees: an idle observation comes back as
    # it is; one with any referee-only field set (here `owed`) comes back idle.
    truth = observe(new_game(OFFICIAL, 1)[0], 0)
    changes: dict[str, Any] = {} if owed is None else {owed: getattr(truth, owed)}
    if owed is not None and changes[owed] == getattr(IDLE, owed):
        changes[owed] = _owing(owed)
    before = dataclasses.replace(idle(truth), **changes)
    after = advance(before, WindowClosed())
    assert after == idle(truth)
    assert (after is before) == (owed is None)


def _owing(name: str) -> Any:
    """A value of a referee-only field that says something is owed."""
    return {"turn": 0, "window_open": True, "must_answer_window": True, "can_call_tichu": True}.get(
        name, (0,)
    )


@pytest.mark.parametrize("name", sorted(FOLD_CONFIGS))
def test_folding_a_seats_events_gives_observe(name: str) -> None:
    config = FOLD_CONFIGS[name]
    n = config.players
    seen: Counter[str] = Counter()
    for seed in range(6 if n == 4 else 3):
        rng = random.Random(seed)
        folded = [before_first_deal(seat, config) for seat in range(n)]
        gift_asked = False
        for step, move in enumerate(random_moves(config, seed, rounds=4, call_rate=0.03)):
            for seat in range(n):
                for actor, action in move.actions:
                    if actor == seat:
                        folded[seat] = answered(folded[seat], action)
                for event in move.events:
                    folded[seat] = advance(folded[seat], event)
                truth = observe(move.state, seat)
                same_content(folded[seat], truth, f"seat {seat}, move {step}, seed {seed}")
                if move.events and any(e.visible_to(seat) for e in move.events):
                    assert all(getattr(folded[seat], k) == getattr(IDLE, k) for k in REFEREE_ONLY)
                if rng.random() < 0.02:
                    folded[seat] = idle(truth)  # a snapshot, as after a reconnection
                seen["dog aside"] += truth.dog_aside is not None
            for event in move.events:
                if isinstance(event, RoundEnded):
                    seen[event.reason] += 1
                elif isinstance(event, DragonGiftPending):
                    gift_asked = True
                elif isinstance(event, DragonGiven):
                    seen["dragon gift"] += 1
                    seen["dragon gift, asked"] += gift_asked
                    gift_asked = False
    # The games are seeded: what they include is fixed, and checked so that it stays included.
    assert seen["normal"] > 0 and seen["dragon gift, asked"] > 0
    if n == 4:
        assert seen["double_victory"] > 0
    if config.dog_card_pile == "next_trick_winner":
        assert seen["dog aside"] > 0


@pytest.mark.parametrize(
    "config",
    [OFFICIAL, RulesConfig(gt_decision_mode="sequential"), RulesConfig(players=6)],
    ids=["official", "sequential", "six"],
)
def test_the_events_alone_reveal_the_seats_own_answers(config: RulesConfig) -> None:
    """A seat whose answers the referee made (a timeout's default) never calls answered(): its
    Grand Tichu and pre-step answers then come from the events that reveal them."""
    hidden = {"my_grand_tichu", "my_tichu_step"}
    folded = [before_first_deal(seat, config) for seat in range(config.players)]
    for move in random_moves(config, 5, rounds=3):
        for seat in range(config.players):
            for event in move.events:
                folded[seat] = advance(folded[seat], event)
            truth = observe(move.state, seat)
            if move.state.phase in (Phase.GRAND_TICHU, Phase.TICHU_STEP):
                # Until the answers are revealed together, only the seat's own answer shows them.
                truth = dataclasses.replace(truth, **{name: getattr(folded[seat], name) for name in hidden})
            same_content(folded[seat], truth)


def test_a_fold_follows_a_whole_game_to_its_end() -> None:
    folded = [before_first_deal(seat, TOURNAMENT) for seat in range(4)]
    state = None
    for move in random_moves(TOURNAMENT, 11, rounds=100):
        state = move.state
        for seat in range(4):
            for actor, action in move.actions:
                if actor == seat:
                    folded[seat] = answered(folded[seat], action)
            for event in move.events:
                folded[seat] = advance(folded[seat], event)
    assert state is not None and state.is_over
    for seat in range(4):
        same_content(folded[seat], observe(state, seat))
        assert folded[seat].winner == state.winner and folded[seat].phase is Phase.GAME_OVER


def test_a_snapshot_is_folded_on_from_and_a_new_round_empties_it() -> None:
    state, events = new_game(OFFICIAL, seed=3)
    snapshot = idle(observe(state, 1))
    same_content(snapshot, observe(state, 1))
    assert snapshot.legal_decisions == () and snapshot.to_act == ()
    started = advance(snapshot, events[0])  # a new round starting: nothing dealt yet
    assert started.hand == () and started.scores == snapshot.scores and started.round == 0


def test_an_event_the_seat_may_not_see_changes_nothing() -> None:
    state, events = new_game(OFFICIAL, 3)
    obs = observe(state, 1)
    private = [e for e in events if not e.visible_to(1)]
    assert private
    for event in private:
        assert advance(obs, event) is obs


# ----------------------------------------------------------------------------- rare ends, from positions

# (config flags, position, moves): each move a seat's action, or "window" for every seat declining.
ENDS: dict[str, tuple[dict[str, Any], dict[str, Any], list[tuple[int, str] | str]]] = {
    "the last trick's Dragon waits for its gift (R-DRG-5)": (
        {},
        {"hands": ["", "", "DRG", "5j 6j"], "out": [0, 1], "turn": 2},
        [(2, "play DRG"), (2, "gift 3")],
    ),
    "a 1-2 with cards on the table (R-END-3)": (
        {},
        {"hands": ["", "3s 4s", "9j", "5j 6j"], "out": [0], "trick": [{"seat": 1, "cards": "3j"}], "turn": 2},
        [(2, "play 9j")],
    ),
    "a Dog as the last card ends the round, given to the receiver (R-DOG-5)": (
        {"dog_card_pile": "receiver"},
        {"hands": ["", "3s 4s", "DOG", "5j 6j"], "out": [0], "turn": 2},
        [(2, "play DOG")],
    ),
    "a Dog aside when the round ends goes to its player (R-DOG-4)": (
        {"dog_card_pile": "next_trick_winner"},
        {"hands": ["DOG", "", "9j", "5j 6j"], "out": [1], "turn": 0},
        [(0, "play DOG"), (2, "play 9j")],
    ),
    "a Dog aside joins the Dragon trick given away": (
        {"dog_card_pile": "next_trick_winner"},
        {"hands": ["DOG 3j", "4s 4j", "DRG 7j", "5j 6j"], "turn": 0},
        [
            (0, "play DOG"),
            (2, "play DRG"),
            "window",
            (3, "pass"),
            "window",
            (0, "pass"),
            "window",
            (1, "pass"),
            "window",
            (2, "gift 1"),
        ],
    ),
    "a triple victory with cards on the table (R-V6-8)": (
        {"players": 6},
        {
            "hands": ["", "3j", "", "5j", "9j", "6j"],
            "out": [0, 2],
            "trick": [{"seat": 3, "cards": "5s"}],
            "turn": 4,
        },
        [(4, "play 9j")],
    ),
    "a Dog to an out partner's next seat, in the receiver's pile (R-DOG-3)": (
        {"dog_card_pile": "receiver"},
        {"hands": ["DOG 3j", "4s 4j", "", "5j 6j"], "out": [2], "turn": 0},
        [(0, "play DOG"), (3, "play 5j")],
    ),
}


@pytest.mark.parametrize("name", sorted(ENDS))
def test_a_fold_from_a_snapshot_follows_a_rare_end(name: str) -> None:
    flags, fields, moves = ENDS[name]
    # A one-round game: it ends with the round, so the round's end is checked before a deal.
    players = flags.get("players", 4)
    config = {"match_mode": "fixed_rounds:1", **flags}
    state = full_position(3, config=config, played=[True] * players, **fields)
    folded = [idle(observe(state, seat)) for seat in range(players)]
    for move in moves:
        if isinstance(move, str):
            assert move == "window" and state.window
            state, events = answer_window(state, dict.fromkeys(to_act(state), parse_action("decline")))
        else:
            seat, text = move
            state, events = apply(state, seat, parse_action(text))
        for seat in range(players):
            for event in events:
                folded[seat] = advance(folded[seat], event)
            same_content(folded[seat], observe(state, seat), f"after {move}")
        if name.startswith("the last trick's Dragon") and move == (2, "play DRG"):
            assert state.phase is Phase.ROUND_END and folded[0].gift_pending == 2


# ----------------------------------------------------------------------------- the Dog aside in JSON


def dog_aside_state() -> State:
    """A state where seat 0's Dog lies aside (dog_card_pile = next_trick_winner)."""
    config = RulesConfig(dog_card_pile="next_trick_winner")
    for move in random_moves(config, 2, rounds=10):
        if move.state.dog_aside:
            return move.state
    raise AssertionError("no Dog was led")


def test_the_dog_aside_is_in_the_observation_and_its_json() -> None:
    state = dog_aside_state()
    obs = observe(state, 1)
    assert obs.dog_aside == state.dog_owner
    assert obs.to_json()["dog_aside"] == state.dog_owner
    assert observation_from_json(obs.to_json()) == obs


def test_an_older_referees_snapshot_without_the_dog_aside_reads() -> None:
    data = observe(dog_aside_state(), 1).to_json()
    del data["dog_aside"]
    assert observation_from_json(data).dog_aside is None


# ----------------------------------------------------------------------------- requests (test_view's cases)


def strs(actions: Sequence[Action]) -> list[str]:
    """Actions as strings (listed lazily by the engine, as a tuple by a request)."""
    return [str(a) for a in actions]


class Table:
    """The engine and each seat's folded observation, fed only that seat's events; every
    decision is taken on for_request()'s observation, as a remote bot takes it."""

    def __init__(self, config: RulesConfig, seed: int) -> None:
        self.rng = random.Random(seed)
        self.folded = [before_first_deal(seat, config) for seat in range(config.players)]
        self.state: State
        self.state, events = new_game(config, seed)
        self.publish(events)

    def publish(self, events: list[Event]) -> None:
        for event in events:
            for seat, obs in enumerate(self.folded):
                self.folded[seat] = advance(obs, event)
        for seat, obs in enumerate(self.folded):
            same_content(obs, observe(self.state, seat))

    def request(self, seat: int, kind: DecisionKind, can_call: bool) -> Observation:
        """for_request() with what the referee's request carries, checked against observe()."""
        truth = observe(self.state, seat)
        legal: Sequence[Action] = tuple(truth.legal_decisions)
        if kind is DecisionKind.EXCHANGE:
            # An exchange request names the recipients; the choices come from the seat's hand.
            recipients = exchange_recipients(self.state, seat)
            legal = ExchangeChoices(mask_of(self.folded[seat].hand), recipients, ())
        obs = for_request(self.folded[seat], kind, legal, can_call)
        same_content(obs, truth)
        assert obs.can_call_tichu == truth.can_call_tichu
        assert obs.must_answer_window == truth.must_answer_window
        assert obs.window_open == truth.window_open
        assert obs.is_lead == truth.is_lead
        assert obs.is_my_turn
        if kind is DecisionKind.EXCHANGE:
            assert len(obs.legal_decisions) == len(truth.legal_decisions)
            assert obs.legal_decisions[0] == truth.legal_decisions[0]
            assert len(obs.legal_actions) == len(truth.legal_actions)
        else:
            assert strs(obs.legal_decisions) == strs(truth.legal_decisions)
            assert strs(obs.legal_actions) == strs(truth.legal_actions)
        return obs

    def ask(self, seat: int) -> Action:
        """The seat's answer, decided on its folded observation."""
        kind = owed(self.state, seat)
        assert kind is not None
        obs = self.request(seat, kind, observe(self.state, seat).can_call_tichu)
        if obs.can_call_tichu and obs.phase in (Phase.PLAY, Phase.EXCHANGE) and self.rng.random() < 0.1:
            self.folded[seat] = answered(self.folded[seat], CallTichu())
            self.state, events = apply(self.state, seat, CallTichu())
            self.publish(events)
            obs = self.request(seat, kind, False)
        options = obs.legal_decisions
        action = options[self.rng.randrange(len(options))]
        self.folded[seat] = answered(self.folded[seat], action)
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


VIEW_CONFIGS = {
    "official": OFFICIAL,
    "tournament": TOURNAMENT,
    "six": RulesConfig(players=6),
    "open_calls_dog_aside": RulesConfig(tichu_call_exchange_mode="open", dog_card_pile="next_trick_winner"),
    "dog_to_receiver": RulesConfig(dog_card_pile="receiver", grand_tichu_enabled=False),
    "turn_only_bombs": RulesConfig(bomb_timing="turn_only", gt_decision_mode="sequential"),
}


@pytest.mark.parametrize("name", sorted(VIEW_CONFIGS))
@pytest.mark.parametrize("seed", [1, 2])
def test_a_request_on_the_folded_observation_shows_what_observe_shows(name: str, seed: int) -> None:
    table = Table(VIEW_CONFIGS[name], seed)
    table.play(rounds=3)
    assert len(table.state.history) == 3 or table.state.is_over


def test_a_dragon_gift_request_keeps_the_phase() -> None:
    obs = idle(observe(new_game(OFFICIAL, 1)[0], 0))
    for phase in (Phase.PLAY, Phase.ROUND_END):
        asked = for_request(dataclasses.replace(obs, phase=phase), DecisionKind.DRAGON_GIFT, (), False)
        assert asked.phase is phase and asked.turn is None and not asked.window_open
    window = for_request(obs, DecisionKind.BOMB_WINDOW, (), True)
    assert window.phase is Phase.PLAY and window.window_open and window.must_answer_window
    assert window.legal_actions == (CallTichu(),) and window.to_act == (0,)
    step = for_request(obs, DecisionKind.TICHU_STEP, (), True)
    assert step.phase is Phase.TICHU_STEP and step.legal_actions == ()  # no spontaneous call in the step


def test_answered_records_the_seats_own_answers() -> None:
    from referee.rules import DeclineTichu, GrandTichu, Pass

    obs = idle(observe(new_game(OFFICIAL, 1)[0], 2))
    assert answered(obs, GrandTichu(True)).my_grand_tichu is True
    assert answered(obs, DeclineTichu()).my_tichu_step is False
    in_step = dataclasses.replace(obs, phase=Phase.TICHU_STEP)
    assert answered(in_step, CallTichu()).my_tichu_step is True
    assert answered(in_step, CallTichu()).calls == obs.calls  # revealed with the others only
    in_play = dataclasses.replace(obs, phase=Phase.PLAY)
    assert answered(in_play, CallTichu()).calls[2] == "tichu"  # R-CALL-4: public at once
    assert answered(in_play, Pass()) is in_play
