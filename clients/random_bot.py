"""RandomBot: the smallest complete bot. Run it with `tichu bot clients.random_bot:RandomBot ...`."""

from __future__ import annotations

from clients.bot import Bot
from referee.rules import Action, Observation


class RandomBot(Bot):
    """Plays a uniformly random legal action; every other decision keeps the SDK's default."""

    name = "random"

    def play(self, obs: Observation) -> Action:
        """Any of the legal answers: the SDK guarantees the list is exactly what is accepted."""
        return self.rng.choice(obs.legal_decisions)
