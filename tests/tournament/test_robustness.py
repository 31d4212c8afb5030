"""A dead bot process is restarted and its games go on; one that never plays cannot hang a tournament."""
# The bots get TICHU_TEST_* through the entrant's pass_env: a bot's environment is an allow-list.

from __future__ import annotations

import dataclasses
import io
import sys
from pathlib import Path

import pytest

from referee.tournament.config import parse_config
from referee.tournament.runner import TournamentError, run_tournament
from referee.tournament.store import Store
from tests.tournament.support import OUTPUTS, RANDOM, entrant

BOT_FILE = Path(__file__).resolve().parent / "crashing_bot.py"
PASSED = '["TICHU_TEST_CRASH_MARKER", "TICHU_TEST_BROKEN_BOT"]'
CONFIG = f"""
[tournament]
seed = "crash"
games_per_pairing = 2
concurrency = 2
start_timeout_s = 4
{OUTPUTS}
[rules]
match_mode = "fixed_rounds:1"

{entrant("crasher", f"{BOT_FILE}:CrashOnceBot")}pass_env = {PASSED}
{RANDOM}"""


def test_a_crashed_worker_is_restarted_and_its_games_finish(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    marker = tmp_path / "crashed"
    monkeypatch.setenv("TICHU_TEST_CRASH_MARKER", str(marker))
    # Without the sandbox: the bot leaves a file to say it crashed once, and a sandbox's files are
    # read-only (restarts work the same in it: the sandbox tests' bots are restarted too).
    # A start timeout a loaded machine meets (CI once took over 4 s to start the first worker).
    slow_start = CONFIG.replace("start_timeout_s = 4", "start_timeout_s = 120")
    config = dataclasses.replace(parse_config(slow_start, tmp_path / "t.toml"), sandbox=False)
    out = io.StringIO()
    assert run_tournament(config, resume=False, out=out, live=False) == 0, out.getvalue()
    assert marker.exists()  # the first worker did die
    store = Store(config.database)
    games = store.games()
    store.close()
    assert [g.status for g in games] == ["finished", "finished"]
    assert not any(g.forfeit for g in games)  # the restarted worker took the seats back in time
    store = Store(config.database)
    assert {a.sandboxed for a in store.attempts()} == {False}  # the record says they ran without
    store.close()
    assert "Played 2 games, 2 hands" in out.getvalue()


def test_a_bot_that_cannot_even_load_stops_the_tournament_before_its_first_game_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TICHU_TEST_BROKEN_BOT", "1")
    config = parse_config(CONFIG.replace("start_timeout_s = 4", "start_timeout_s = 600"), tmp_path / "t.toml")
    with pytest.raises(TournamentError) as failed:
        run_tournament(config, resume=False, out=io.StringIO(), live=False)
    message = str(failed.value)
    assert "entrant crasher (" in message and "crashing_bot.py:CrashOnceBot" in message, message
    assert "this bot cannot even be loaded" in message  # its own words, from its log
    assert "entrant random" not in message
    store = Store(config.database)
    games = store.games()
    store.close()
    assert [g.status for g in games] == ["pending", "pending"]  # no game was started


def test_a_bot_that_never_connects_cannot_hang_the_tournament(tmp_path: Path) -> None:
    # A bot that is alive but never comes: the entrant check gives up after the start timeout.
    sleeper = tmp_path / "sleeper.py"
    sleeper.write_text("import time\ntime.sleep(600)\n", encoding="utf-8")
    config = parse_config(
        CONFIG.replace(
            f"{entrant('crasher', f'{BOT_FILE}:CrashOnceBot')}",
            f'[[entrants]]\nname = "crasher"\ncommand = ["{sys.executable}", "{sleeper}"]\n',
        ),
        tmp_path / "t.toml",
    )
    with pytest.raises(TournamentError, match=r"entrant crasher .*: it did not connect within 4 s"):
        run_tournament(config, resume=False, out=io.StringIO(), live=False)
    store = Store(config.database)
    games = store.games()
    store.close()
    assert [g.status for g in games] == ["pending", "pending"]  # left for resume


def test_a_wrong_class_a_missing_module_and_a_command_that_quits_are_each_named_before_any_game(
    tmp_path: Path,
) -> None:
    config = parse_config(
        f"""
[tournament]
seed = "check"
games_per_pairing = 2
{OUTPUTS}
[rules]
match_mode = "fixed_rounds:1"
{entrant("wrongclass", "clients.random_bot:FirstBotX")}{entrant("nomodule", "mybot:MyBot")}
[[entrants]]
name = "quitter"
command = ["{sys.executable}", "-c", "import sys; print('no config file', file=sys.stderr); sys.exit(3)"]
{RANDOM}""",
        tmp_path / "t.toml",
    )
    with pytest.raises(TournamentError) as failed:
        run_tournament(config, resume=False, out=io.StringIO(), live=False)
    lines = str(failed.value).splitlines()
    assert lines[0] == "an entrant cannot play, so no game was started:"
    named = {line.split()[1]: line for line in lines if line.startswith("  entrant ")}
    assert set(named) == {"wrongclass", "nomodule", "quitter"}, lines
    assert "clients.random_bot has no 'FirstBotX'" in named["wrongclass"]
    assert "no module named 'mybot'" in named["nomodule"]
    assert "exited with code 3" in named["quitter"] and "no config file" in named["quitter"]
