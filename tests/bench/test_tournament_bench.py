"""bench/tournament_bench.py: the config it writes and when it says the SPRT would have stopped."""

from __future__ import annotations

import importlib
import os
import re
import sys
from pathlib import Path
from typing import Any

import pytest

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


def test_main_prints_the_cpu_per_hand(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert bench.main(["--hands", "6", "--concurrency", "6", "--keep", str(tmp_path / "run")]) == 0
    out = capsys.readouterr().out
    figures = re.search(
        r"CPU +([\d.]+) ms per hand: referee process ([\d.]+) ms, bot workers ([\d.]+) ms", out
    )
    assert figures is not None
    # --against REV reads another checkout's bench output with this pattern.
    assert bench.CPU_LINE.search(out) is not None
    total, referee, workers = (float(figure) for figure in figures.groups())
    assert referee > 0 and workers > 0 and abs(total - referee - workers) <= 0.2
    assert "Reproduce: .venv/bin/python bench/tournament_bench.py --hands 6 --concurrency 6" in out
    # Messages per hand by kind: every request asked for is answered by one decision.
    sent = re.search(r"writes to the bots carrying .*Request ([\d.]+)", out)
    received = re.search(r"and from the bots .*Decision ([\d.]+)", out)
    assert sent is not None and received is not None
    assert float(sent.group(1)) > 0 and abs(float(sent.group(1)) - float(received.group(1))) <= 0.5


def test_bot_options_play_the_sample_bots_with_another_sdk_setting(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["--hands", "6", "--concurrency", "6", "--keep", str(tmp_path / "run")]
    assert bench.main([*argv, "--bot-option", "referee_passes=0", "--no-in-process"]) == 0
    out = capsys.readouterr().out
    assert "the sample bots with referee_passes=0" in out
    module = (tmp_path / "run" / f"{bench.OPTIONS_MODULE}.py").read_text(encoding="utf-8")
    assert module.count("referee_passes = False") == 3
    # Asked on every turn, passes included: more requests than with the referee passing.
    asked = re.search(r"carrying .*Request ([\d.]+)", out)
    assert asked is not None
    assert (
        bench.main(
            ["--hands", "6", "--concurrency", "6", "--keep", str(tmp_path / "plain"), "--no-in-process"]
        )
        == 0
    )
    plain = re.search(r"carrying .*Request ([\d.]+)", capsys.readouterr().out)
    assert plain is not None and float(asked.group(1)) > float(plain.group(1))


def test_a_bot_option_must_be_a_setting_of_the_sdk() -> None:
    with pytest.raises(SystemExit):
        bench.main(["--bot-option", "strict=1"])


def test_bot_options_leave_the_import_path_as_it_was(tmp_path: Path) -> None:
    before = (list(sys.path), os.environ.get("PYTHONPATH"))
    argv = ["--hands", "6", "--concurrency", "6", "--keep", str(tmp_path), "--no-in-process"]
    assert bench.main([*argv, "--bot-option", "blocking=1"]) == 0
    assert (list(sys.path), os.environ.get("PYTHONPATH")) == before
