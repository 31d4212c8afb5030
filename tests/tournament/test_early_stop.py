"""With stop_early, the SPRT ends a lopsided pairing long before its schedule is played."""

from __future__ import annotations

import io
from pathlib import Path

from referee.tournament.config import parse_config
from referee.tournament.runner import run_tournament
from referee.tournament.store import Store
from tests.tournament.support import HEURISTIC, OUTPUTS, RANDOM

CONFIG = f"""
[tournament]
seed = "early"
games_per_pairing = 60       # 30 board pairs, if the SPRT let them all be played
concurrency = 4
{OUTPUTS}
[rules]
match_mode = "fixed_rounds:1"

[sprt]
stop_early = true
{RANDOM}{HEURISTIC}"""


def test_sprt_stops_random_vs_heuristic_early(tmp_path: Path) -> None:
    config = parse_config(CONFIG, tmp_path / "t.toml")
    out = io.StringIO()
    assert run_tournament(config, resume=False, out=out, live=False) == 0
    text = out.getvalue()
    assert "SPRT random vs heuristic: heuristic is stronger than random (H1 accepted" in text
    store = Store(config.database)
    games = store.games()
    store.close()
    finished = [g for g in games if g.finished]
    # Decided after a handful of board pairs; only the boards already begun were finished.
    assert 14 <= len(finished) < 40
    # The games the SPRT made unnecessary say so (none is left `pending` for ever).
    skipped = [g for g in games if g.skipped]
    assert len(skipped) == 60 - len(finished)
    assert all((g.skip_reason or "").startswith("SPRT decided: heuristic is stronger") for g in skipped)
    assert all(g.match_id is None and g.replay_path is None for g in skipped)
    boards = {g.board for g in finished}
    assert all(sum(1 for g in finished if g.board == b) == 2 for b in boards)  # whole board pairs
    assert f"{60 - len(finished)} games not played: their pairings' SPRTs had decided" in text
    # A resume finds nothing to play, and its progress counts the whole schedule as settled.
    again = io.StringIO()
    assert run_tournament(config, resume=True, out=again, live=False) == 0
    assert "0 of 60 games to play" in again.getvalue()
    assert f"finished: 60/60 games (0 this run, {60 - len(finished)} skipped)" in again.getvalue()
