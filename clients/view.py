"""SeatView: one seat's Observation kept current from its events between the referee's snapshots.

Over the network a bot receives its whole observation only in a Snapshot (when it joins and when
it reconnects); then come events and decision requests. SeatView keeps the last observation and
the snapshot's state version; the fold itself is the engine's (referee.rules.observation:
advance, for_request, answered), so a remote bot sees what an in-process one sees.
"""

from __future__ import annotations

from collections.abc import Sequence

from referee.rules import Action, DecisionKind, Event, Observation, RulesConfig
from referee.rules.observation import advance, answered, before_first_deal, for_request, idle

__all__ = ["SeatView"]


class SeatView:
    """One seat's observation: reset from a snapshot, advanced by events, completed by requests."""

    def __init__(self, seat: int, config: RulesConfig) -> None:
        self.seat = seat
        self.config = config
        self.obs = before_first_deal(seat, config)
        self._snapshot_version = -1

    @property
    def snapshot_version(self) -> int:
        """The state version of the last snapshot (-1 before any)."""
        return self._snapshot_version

    def reset(self, obs: Observation, state_version: int) -> None:
        """Start again from a snapshot; events up to its state version are already in it."""
        self.obs = idle(obs)
        self.config = obs.config
        self._snapshot_version = state_version

    def for_request(self, kind: DecisionKind, legal: Sequence[Action], can_call_tichu: bool) -> Observation:
        """The observation to decide on: the view plus what the request says is owed and legal."""
        return for_request(self.obs, kind, legal, can_call_tichu)

    def answered(self, action: Action) -> None:
        """Record this seat's own answer, which its events reveal only later (or never)."""
        self.obs = answered(self.obs, action)

    def apply(self, event: Event, state_version: int | None = None) -> None:
        """Fold one event into the view (skipped if the last snapshot already holds it)."""
        if state_version is not None and state_version <= self._snapshot_version:
            return
        self.obs = advance(self.obs, event)
