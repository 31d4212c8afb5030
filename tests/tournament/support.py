"""What the tournament tests share: the common blocks of their configs, and a look at the results."""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

# Every test tournament writes under its own folder's out/ (the config's folder is tmp_path).
OUTPUTS = """\
database = "out/results.sqlite"
replay_dir = "out/replays"
output_dir = "out"
"""


def entrant(name: str, bot: str) -> str:
    """An [[entrants]] block for a local bot class."""
    return f'\n[[entrants]]\nname = "{name}"\nbot = "{bot}"\n'


RANDOM = entrant("random", "clients.random_bot:RandomBot")
HEURISTIC = entrant("heuristic", "clients.heuristic_bot:HeuristicBot")
SHOWCASE = entrant("showcase", "clients.showcase_bot:ShowcaseBot")


def game_statuses(db: Path) -> dict[str, int]:
    """How many games the results database holds in each status; empty before its schema exists."""
    if not db.exists():
        return {}
    with contextlib.closing(sqlite3.connect(db)) as conn:
        try:
            return dict(conn.execute("SELECT status, COUNT(*) FROM games GROUP BY status").fetchall())
        except sqlite3.OperationalError:  # the schema is not written yet
            return {}
