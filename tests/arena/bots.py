"""Bots that fail an arena's validation, for its tests."""

from __future__ import annotations

import os

from clients.random_bot import RandomBot
from referee.rules import Action, Observation


class QuitterBot(RandomBot):
    """Ends its own process at its first regular turn, every time."""

    name = "quitter"

    def play(self, obs: Observation) -> Action:
        """Leave the table."""
        os._exit(3)
