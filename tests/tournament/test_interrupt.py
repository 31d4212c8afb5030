"""SIGINT stops a tournament cleanly: exit code 130, its bot workers gone, the rest left for resume."""

from __future__ import annotations

import contextlib
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CONFIG = """
[tournament]
seed = "interrupt"
games_per_pairing = 40
concurrency = 4
database = "out/results.sqlite"
replay_dir = "out/replays"
output_dir = "out"

[rules]
match_mode = "fixed_rounds:1"

[sprt]
stop_early = false

[[entrants]]
name = "random"
bot = "clients.random_bot:RandomBot"

[[entrants]]
name = "heuristic"
bot = "clients.heuristic_bot:HeuristicBot"
"""


def _statuses(db: Path) -> dict[str, int]:
    if not db.exists():
        return {}
    with contextlib.closing(sqlite3.connect(db)) as conn:
        try:
            return dict(conn.execute("SELECT status, COUNT(*) FROM games GROUP BY status").fetchall())
        except sqlite3.OperationalError:  # the schema is not written yet
            return {}


def test_sigint_ends_the_run_cleanly(tmp_path: Path) -> None:
    (tmp_path / "t.toml").write_text(CONFIG, encoding="utf-8")
    db = tmp_path / "out" / "results.sqlite"
    process = subprocess.Popen(
        [sys.executable, "-m", "referee.cli", "tournament", "run", "t.toml", "--log-lines"],
        cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(REPO)}, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True, start_new_session=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while _statuses(db).get("finished", 0) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        process.send_signal(signal.SIGINT)
        output, _ = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    assert process.returncode == 130, output
    assert "Interrupted: " in output and "tichu tournament resume t.toml" in output
    statuses = _statuses(db)
    assert statuses.get("finished", 0) >= 2
    assert sum(statuses.values()) == 40
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, 0)
        raise AssertionError("a bot worker outlived the interrupted tournament")
