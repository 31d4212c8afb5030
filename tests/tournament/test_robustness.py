"""A dead bot process is restarted and its games go on; one that never plays cannot hang a tournament."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from referee.tournament.config import parse_config
from referee.tournament.runner import run_tournament
from referee.tournament.store import Store
from tests.tournament.support import OUTPUTS, RANDOM, entrant

BOT_FILE = Path(__file__).resolve().parent / "crashing_bot.py"
CONFIG = f"""
[tournament]
seed = "crash"
games_per_pairing = 2
concurrency = 2
start_timeout_s = 4
{OUTPUTS}
[rules]
match_mode = "fixed_rounds:1"

{entrant("crasher", f"{BOT_FILE}:CrashOnceBot")}{RANDOM}"""


def test_a_crashed_worker_is_restarted_and_its_games_finish(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    marker = tmp_path / "crashed"
    monkeypatch.setenv("TICHU_TEST_CRASH_MARKER", str(marker))
    config = parse_config(CONFIG, tmp_path / "t.toml")
    out = io.StringIO()
    assert run_tournament(config, resume=False, out=out, live=False) == 0, out.getvalue()
    assert marker.exists()  # the first worker did die
    store = Store(config.database)
    games = store.games()
    store.close()
    assert [g.status for g in games] == ["finished", "finished"]
    assert not any(g.forfeit for g in games)  # the restarted worker took the seats back in time
    assert "Played 2 games, 2 hands" in out.getvalue()


def test_a_bot_that_never_connects_cannot_hang_the_tournament(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TICHU_TEST_BROKEN_BOT", "1")
    config = parse_config(CONFIG, tmp_path / "t.toml")
    out = io.StringIO()
    assert run_tournament(config, resume=False, out=out, live=False) == 1
    store = Store(config.database)
    games = store.games()
    store.close()
    assert [g.status for g in games] == ["pending", "pending"]  # left for resume
    assert out.getvalue().count("did not finish; resume plays it again") == 2
