"""Bots on the Python SDK with one fault each, which the SDK hides from the referee (it replaces
their answers): the kit must see them all the same."""

from __future__ import annotations

from clients.bot import Bot
from referee.rules import Action, Exchange, Observation, Pass


class NoPlay(Bot):
    """Forgot play(): the SDK's default raises NotImplementedError."""

    name = "noplay"


class RaisesInExchange(Bot):
    """Plays the first legal action, and raises in exchange()."""

    name = "raises_in_exchange"

    def play(self, obs: Observation) -> Action:
        return obs.legal_decisions[0]

    def exchange(self, obs: Observation) -> Exchange:
        return choose_gifts(obs)


def choose_gifts(obs: Observation) -> Exchange:
    raise RuntimeError(f"no gifts chosen for a hand of {len(obs.hand)}")


class IgnoresWish(Bot):
    """Passes whenever it follows, the wish or not (R-WISH-4 says it may not)."""

    name = "ignores_wish"

    def play(self, obs: Observation) -> Action:
        return obs.legal_decisions[0] if obs.is_lead else Pass()
