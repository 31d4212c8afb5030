"""The committed stubs are what the pinned grpcio-tools makes of proto/ (DESIGN §4); actions on the wire."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from referee.match.messages import Request
from referee.rules import (
    DecisionKind,
    Phase,
    Play,
    RulesConfig,
    answer_window,
    apply,
    can_call_tichu,
    default_action,
    format_cards,
    legal_decisions,
    new_game,
    observe,
    owed,
    parse_action,
    to_act,
)
from referee.rules.legal import exchange_recipients
from referee.server.codec import action_from_proto, action_to_proto, request_to_proto
from referee.wire.generate import generate
from referee.wire.tichu.v1 import referee_pb2 as pb

WIRE = Path(__file__).resolve().parents[1] / "referee" / "wire"


def test_committed_stubs_match_the_proto(tmp_path: Path) -> None:
    generate(tmp_path)
    fresh = {p.relative_to(tmp_path): p.read_text() for p in tmp_path.rglob("*") if p.is_file()}
    assert fresh, "protoc produced nothing"
    for relative, text in fresh.items():
        committed = WIRE / relative
        assert committed.exists(), f"{relative} is not committed: run `make proto`"
        assert committed.read_text() == text, f"{relative} is stale: run `make proto` and commit"


def test_every_action_kind_round_trips_through_the_wire() -> None:
    texts = [
        "pass",
        "decline",
        "grand_tichu",
        "no_grand_tichu",
        "tichu",
        "no_tichu",
        "play MJ 2s 3j 4p 5s wish=7",
        "play 5s 6s 7j 8p PHX phoenix=9 tichu",
        "play DOG partner=2",
        "exchange 1:7s 2:8s 3:PHX",
        "gift 3",
    ]
    for text in texts:
        action = parse_action(text)
        message = action_to_proto(action)
        assert message.text == text
        assert action_from_proto(pb.Action.FromString(message.SerializeToString())) == action
        assert action_from_proto(pb.Action(text=text)) == action


@pytest.mark.parametrize(("players", "seed"), [(4, 1), (4, 2), (6, 3)])
def test_every_legal_action_of_random_games_has_its_canonical_wire_form(players: int, seed: int) -> None:
    # action_to_proto builds a play's text and cards itself (speed): they must stay str(play) and
    # the canonical card order, and read back as the same action.
    rng = random.Random(seed)
    state, _ = new_game(RulesConfig(players=players, match_mode="fixed_rounds:2"), seed)
    checked = 0
    while not state.is_over:
        if state.phase is Phase.EXCHANGE:
            seat = next(s for s in to_act(state))
            state, _ = apply(state, seat, default_action(state, seat))
            continue
        if state.window:
            answers = {s: rng.choice(legal_decisions(state, s)) for s in state.window}
            state, _ = answer_window(state, answers)
            continue
        seat = to_act(state)[0]
        actions = legal_decisions(state, seat)
        for action in actions:
            message = action_to_proto(action)
            assert message.text == str(action)
            if isinstance(action, Play):
                assert list(message.play.cards) == format_cards(action.cards_mask).split()
            assert action_from_proto(pb.Action.FromString(message.SerializeToString())) == action
        checked += len(actions)
        state, _ = apply(state, seat, rng.choice(actions))
    assert checked > 300


@pytest.mark.parametrize(
    "config",
    [
        RulesConfig(match_mode="fixed_rounds:1"),
        RulesConfig(match_mode="fixed_rounds:1", tichu_call_exchange_mode="open"),
        RulesConfig(players=6, match_mode="fixed_rounds:1", dog_card_pile="next_trick_winner"),
        RulesConfig.from_json({"preset": "tournament", "match_mode": "fixed_rounds:1"}),
    ],
    ids=["official", "open-calls", "six", "tournament"],
)
def test_every_requests_observation_is_the_snapshots_json_of_its_state(config: RulesConfig) -> None:
    # request_to_proto makes the observation straight from the state and reuses the wire forms'
    # texts for the listings (speed): the JSON must stay exactly observe()'s, the Snapshot's
    # form, for every kind of request and seat.
    rng = random.Random(5)
    state, _ = new_game(config, 5)
    kinds: set[DecisionKind] = set()
    calls = 0
    while not state.is_over:
        for seat in to_act(state):
            kind = owed(state, seat)
            assert kind is not None
            recipients = exchange_recipients(state, seat) if kind is DecisionKind.EXCHANGE else ()
            can_call = can_call_tichu(state, seat)
            request = Request(7, kind, 3, 1000, 0, can_call, recipients, seat, state)
            wire = pb.DecisionRequest.FromString(request_to_proto(request).SerializeToString())
            expected = observe(state, seat).to_json()
            assert json.loads(wire.observation_json) == expected
            assert wire.observation_json == json.dumps(expected, separators=(",", ":"))
            kinds.add(kind)
            calls += can_call and kind is not DecisionKind.TICHU_STEP
        if state.window:
            answers = {s: rng.choice(legal_decisions(state, s)) for s in to_act(state)}
            state, _ = answer_window(state, answers)
            continue
        seat = to_act(state)[0]
        if state.phase is Phase.EXCHANGE:
            action = default_action(state, seat)
        else:
            action = rng.choice(legal_decisions(state, seat))
        state, _ = apply(state, seat, action)
    assert {DecisionKind.EXCHANGE, DecisionKind.PLAY, DecisionKind.BOMB_WINDOW} <= kinds
    if config.tichu_call_exchange_mode == "open":
        assert calls > 0, "no request where a Tichu call was accepted"


def test_a_request_for_a_seat_that_omits_the_observation_has_none_and_all_else() -> None:
    state, _ = new_game(RulesConfig(), 9)
    seat = to_act(state)[0]
    kind = owed(state, seat)
    assert kind is not None
    request = Request(7, kind, 3, 1000, 0, False, (), seat, state)
    full, bare = request_to_proto(request), request_to_proto(request, observation=False)
    assert full.observation_json and bare.observation_json == ""
    full.observation_json = ""
    assert full == bare
