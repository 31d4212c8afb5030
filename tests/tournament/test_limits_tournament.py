"""A bot over its memory limit, in a tournament: stopped, its game decided by the referee's policy,
the reason in the store (seat_stats) and in the standings, and every other game played."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

from referee.tournament.config import parse_config
from referee.tournament.runner import run_tournament
from referee.tournament.store import Store
from tests.tournament.support import OUTPUTS, RANDOM

COMMAND_BOT = Path(__file__).resolve().parent / "command_bot.py"


def test_a_bot_over_its_memory_limit_is_stopped_and_its_game_recorded_with_the_reason(tmp_path: Path) -> None:
    # command_bot's hog mode grabs memory at seat 0 only: at table 0 of the board the hog team
    # sits at seats 0 and 2, at table 1 at seats 1 and 3, where it plays as RandomBot.
    command = json.dumps([sys.executable, str(COMMAND_BOT), "hog", "{server}", "{token}"])
    config = parse_config(
        f"""
[tournament]
seed = "limits"
games_per_pairing = 2
{OUTPUTS}
[rules]
match_mode = "fixed_rounds:1"
[clock]
decision_ms = 3000
bank_ms = 0
max_violations = 2
reconnect_grace_ms = 3000
[sprt]
stop_early = false

[[entrants]]
name = "hog"
command = {command}
memory_mb = 150
{RANDOM}""",
        tmp_path / "t.toml",
    )
    out = io.StringIO()
    assert run_tournament(config, resume=False, out=out, live=False) == 0, out.getvalue()
    store = Store(config.database)
    try:
        games = {game.table_no: game for game in store.games()}
        seats = store.seat_stats()
        builds = store.builds()
    finally:
        store.close()
    assert {game.status for game in games.values()} == {"finished"}
    hogged, played = games[0], games[1]
    assert hogged.players[0] == "hog" and hogged.forfeit and hogged.forfeiting_team == 0
    assert not played.forfeit
    stopped = [s for s in seats if s.exit_reason]
    assert [(s.game_id, s.seat, s.entrant, s.exit_reason) for s in stopped] == [
        (hogged.game_id, 0, "hog", "memory limit of 150 MiB exceeded")
    ]
    assert len(seats) == 8  # a row per seat of each game
    text = out.getvalue()
    assert f"game {hogged.game_id}: seat 0 (hog) ended early: memory limit of 150 MiB exceeded" in text
    assert "Forfeits and bots that ended early" in text
    assert f"{hogged.game_id}: hog forfeited (" in text
    kinds = {build.build.entrant: build.build for build in builds}
    assert kinds["hog"].kind == "command" and "command_bot.py" in kinds["hog"].source
    assert len(kinds["hog"].sha256) == 64
    assert kinds["random"].kind == "bot" and kinds["random"].source.startswith("clients.random_bot:RandomBot")
