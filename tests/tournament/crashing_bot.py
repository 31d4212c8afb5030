"""Bots that take their worker process down, for the tournament's robustness tests."""

from __future__ import annotations

import os
from pathlib import Path

from clients.heuristic_bot import HeuristicBot
from referee.rules import Action, Observation

MARKER_ENV = "TICHU_TEST_CRASH_MARKER"


class CrashOnceBot(HeuristicBot):
    """Kills its process at its first regular turn, once per marker file; then plays as HeuristicBot."""

    name = "crash-once"

    def play(self, obs: Observation) -> Action:
        """HeuristicBot's play, unless this is the first turn since the marker was set."""
        marker = Path(os.environ[MARKER_ENV])
        if not marker.exists():
            marker.write_text("crashed\n", encoding="utf-8")
            os._exit(3)
        return super().play(obs)


raise_on_import = os.environ.get("TICHU_TEST_BROKEN_BOT") == "1"
if raise_on_import:
    raise RuntimeError("this bot cannot even be loaded")
