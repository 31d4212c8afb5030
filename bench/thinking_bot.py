"""HeuristicBot that thinks THINK_S on every turn it plays: a stand-in for a real bot's search."""

from __future__ import annotations

import time

from clients.heuristic_bot import HeuristicBot
from referee.rules import Action, Observation

THINK_S = 0.1


class ThinkingBot(HeuristicBot):
    """Sleeps THINK_S, then plays as HeuristicBot (in a worker thread: it blocks)."""

    name = "thinking"
    blocking = True

    def play(self, obs: Observation) -> Action:
        """HeuristicBot's play, THINK_S later."""
        time.sleep(THINK_S)
        return super().play(obs)
