"""SIGINT stops a tournament cleanly: exit code 130, its bot workers gone, the rest left for resume."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.tournament.support import HEURISTIC, OUTPUTS, RANDOM, REPO, game_statuses

CONFIG = f"""
[tournament]
seed = "interrupt"
games_per_pairing = 40
concurrency = 4
{OUTPUTS}
[rules]
match_mode = "fixed_rounds:1"

[sprt]
stop_early = false
{RANDOM}{HEURISTIC}"""


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
        while game_statuses(db).get("finished", 0) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        process.send_signal(signal.SIGINT)
        output, _ = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    assert process.returncode == 130, output
    assert "Interrupted: " in output and "tichu tournament resume t.toml" in output
    statuses = game_statuses(db)
    assert statuses.get("finished", 0) >= 2
    assert sum(statuses.values()) == 40
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, 0)
        raise AssertionError("a bot worker outlived the interrupted tournament")
