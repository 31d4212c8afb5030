"""The committed stubs are what the pinned grpcio-tools makes of proto/ (DESIGN §4); actions on the wire."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from referee.rules import (
    Phase,
    Play,
    RulesConfig,
    answer_window,
    apply,
    default_action,
    format_cards,
    legal_decisions,
    new_game,
    parse_action,
    to_act,
)
from referee.server.codec import action_from_proto, action_to_proto
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
