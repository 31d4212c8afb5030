"""The committed gRPC stubs are exactly what the pinned grpcio-tools makes of proto/ (DESIGN §4)."""

from __future__ import annotations

from pathlib import Path

from referee.codec import action_from_proto, action_to_proto, pb
from referee.rules import parse_action
from referee.wire.generate import generate

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
