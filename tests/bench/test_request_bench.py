"""bench/request_bench.py in miniature: the requests it times are real, and it prints each figure."""

from __future__ import annotations

import importlib
import json
import sys
from typing import Any

import pytest

from referee.rules import DecisionKind
from referee.server import codec

# Imported by name: bench/ is a folder of scripts, not a package that mypy should follow.
bench: Any = importlib.import_module("bench.request_bench")


def test_the_requests_are_every_decision_of_whole_games() -> None:
    requests, hands = bench.requests_of(1)
    assert hands == 4  # the tournament preset: four deals
    assert {r.kind for r in requests} >= {DecisionKind.EXCHANGE, DecisionKind.PLAY, DecisionKind.BOMB_WINDOW}
    assert all(json.loads(codec.request_to_proto(r).observation_json)["seat"] == r.seat for r in requests)


def test_main_prints_both_figures_and_leaves_the_codec_as_it_was(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    before = codec.request_to_proto.__globals__["observation_data"]
    monkeypatch.setattr(sys, "argv", ["request_bench.py", "--games", "1"])
    bench.main()
    out = capsys.readouterr().out
    assert "with its observation" in out and "the observation adds" in out
    assert "Reproduce: .venv/bin/python bench/request_bench.py --games 1" in out
    assert codec.request_to_proto.__globals__["observation_data"] is before  # unpatched again
