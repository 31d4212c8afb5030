"""bench/many_games_bench.py in miniature: each socket count's run is counted from its replays and printed."""

from __future__ import annotations

import importlib
import re
from pathlib import Path
from typing import Any

import pytest

from referee.sandbox import SandboxUnavailableError, check_available
from referee.tournament.config import load_config

# Imported by name: bench/ is a folder of scripts, not a package that mypy should follow.
bench: Any = importlib.import_module("bench.many_games_bench")


def test_the_config_starts_every_game_at_once(tmp_path: Path) -> None:
    config = load_config(bench.write_config(tmp_path, 512, 200, 2))
    assert config.concurrency == config.games_per_pairing == 512 and not config.duplicate
    assert (config.clock.decision_ms, config.clock.bank_ms) == (200, 0)
    assert [entrant.processes for entrant in config.entrants] == [2, 2]


def test_main_runs_each_socket_count_and_prints_the_command(capsys: pytest.CaptureFixture[str]) -> None:
    try:
        check_available()
    except SandboxUnavailableError as error:
        pytest.skip(str(error))
    # A generous limit: the figures, not the clock, are under test here.
    assert bench.main(["--games", "4", "--decision-ms", "5000", "--processes", "1", "--sockets", "1,2"]) == 0
    out = capsys.readouterr().out
    line = r"^ +(\d) sockets?: (\d+) of 4 games finished in [\d.]+ s; (\d+) of (\d+) decisions"
    runs = re.findall(line, out, re.M)
    assert [(n, games) for n, games, _, _ in runs] == [("1", "4"), ("2", "4")]
    assert all(int(decisions) > 0 and int(timeouts) <= int(decisions) for _, _, timeouts, decisions in runs)
    assert "Reproduce: .venv/bin/python bench/many_games_bench.py --games 4 --decision-ms 5000" in out
