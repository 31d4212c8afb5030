"""bench/tournament_bench.py: the config it writes and when it says the SPRT would have stopped."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

from referee.tournament.config import SprtSettings, load_config

# Imported by name: bench/ is a folder of scripts, not a package that mypy should follow.
bench: Any = importlib.import_module("bench.tournament_bench")


def test_a_thousand_hands_in_duplicate_board_pairs(tmp_path: Path) -> None:
    config = load_config(bench.write_config(tmp_path, 1000, 12, "s"))
    assert [t.name for t in config.teams] == ["random", "heuristic", "showcase"]
    # 334 hands per pairing: 84 games of 4 deals (42 board pairs), 1,008 hands in all.
    assert (config.games_per_pairing, config.boards_per_pairing) == (84, 42)
    assert config.duplicate and not config.sprt.stop_early
    assert config.database == tmp_path / "results.sqlite"


def test_first_decision() -> None:
    sprt = SprtSettings()
    assert bench.first_decision([4] * 10, sprt) == 7
    assert bench.first_decision([2] * 10, sprt) is None
