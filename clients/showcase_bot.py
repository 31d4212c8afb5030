"""ShowcaseBot: the moves made outside one's own turn, on top of HeuristicBot's play.

- bomb(): asked in every bomb window where the hand holds a bomb that beats the top (the SDK
  declines the others itself); this bot bombs whenever it may, unless its partner holds the trick.
- call_tichu_now(): asked whenever a spontaneous Tichu call would be accepted, in or out of turn;
  this bot calls as soon as its hand (after the exchange) is strong.
- A Play with tichu=True calls Tichu and plays in one message (R-CALL-7); this bot does so, now
  and then, with its first play when its hand is merely good.
"""

from __future__ import annotations

from clients.bot import combo_of, teammates
from clients.heuristic_bot import HeuristicBot, control, is_tichu_hand
from referee.rules import Action, Observation, Play, mask_of


class ShowcaseBot(HeuristicBot):
    """HeuristicBot that bombs in windows whenever it can and calls Tichu out of turn."""

    name = "showcase"

    def bomb(self, obs: Observation) -> Play | None:
        """The lowest bomb that beats the top, unless the partner is winning the trick."""
        if obs.top_seat in teammates(obs):
            return None
        found = [a for a in obs.legal_decisions if isinstance(a, Play)]
        return min(found, key=lambda p: combo_of(p, obs.top) or ()) if found else None

    def call_tichu_now(self, obs: Observation) -> bool:
        """Call as soon as the hand is strong enough (the same test as the pre-exchange call)."""
        return is_tichu_hand(mask_of(obs.hand))

    def play(self, obs: Observation) -> Action:
        """HeuristicBot's play, sometimes with a Tichu call attached to the first play."""
        action = super().play(obs)
        good = control(mask_of(obs.hand)) >= 3
        if isinstance(action, Play) and obs.can_call_tichu and good and self.rng.random() < 0.5:
            return Play(action.cards_mask, action.phoenix, action.wish, action.partner, tichu=True)
        return action
