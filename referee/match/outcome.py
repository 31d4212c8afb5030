"""How a match ended, as a value: a `Termination` and an `Outcome` (as python-chess's Outcome),
and each scored round's points (`RoundScore`).

The match core makes the Outcome where the match ends (the rules ended the game, a seat never came,
a seat ran out of time...); its reason text is rendered here, from the termination and the facts
that made it, in the words every replay has always used. `MatchResult` (messages.py) carries the
Outcome from the core to the wire, the replay's result record and the tournament's store unchanged.

A replay written before the termination was recorded says only winner, forfeiting team, reason and
absent seats: `Outcome.of_legacy` reads its termination back from those, for old files only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from referee.rules import team_of


class Termination(StrEnum):
    """Why a match ended."""

    PLAYED_OUT = "played_out"  # the rules ended the game (R-END): a winner, or a draw
    NO_SHOW = "no_show"  # the start timeout passed with seats absent
    WITHDRAWN = "withdrawn"  # a seat's player was gone for good before the game started
    OUT_OF_TIME = "out_of_time"  # a seat's timeouts went past the match's limit
    REFEREE_ERROR = "referee_error"  # the referee failed: no winner

    @property
    def ends_unfinished_game(self) -> bool:
        """Whether the match ended a game that the rules had not ended."""
        return self is not Termination.PLAYED_OUT


def _team(team: int) -> str:
    return "AB"[team]


@dataclass(frozen=True, slots=True)
class Outcome:
    """How a match ended: its termination, the winning team (0 = A, 1 = B; None for none) and
    the team that forfeited (None if none); `reason` says it in words (a result's reason)."""

    termination: Termination
    winner: int | None = None
    forfeiting_team: int | None = None
    reason: str = ""

    @property
    def forfeit(self) -> bool:
        """Whether a team forfeited."""
        return self.forfeiting_team is not None

    # ------------------------------------------------------------------------ the ways it ends

    @classmethod
    def played_out(cls, winner: int | None, totals: Sequence[int]) -> Outcome:
        """The game reached its end (R-END): the winner and the score, or a draw."""
        if winner is None:
            return cls(Termination.PLAYED_OUT, None, None, "draw")
        reason = f"team {_team(winner)} won {totals[winner]} to {totals[1 - winner]}"
        return cls(Termination.PLAYED_OUT, winner, None, reason)

    @classmethod
    def no_show(cls, absent: Sequence[int], start_timeout_ms: int) -> Outcome:
        """The start timeout passed with `absent` seats: their team forfeits (both teams: no contest)."""
        teams = sorted({team_of(seat) for seat in absent})
        waited = f"{start_timeout_ms / 1000:g} s"
        seats = ", ".join(str(seat) for seat in absent)
        if len(teams) == 1:
            team = teams[0]
            reason = f"seat {seats} did not connect within {waited}: team {_team(team)} forfeits"
            return cls(Termination.NO_SHOW, 1 - team, team, reason)
        return cls(
            Termination.NO_SHOW, None, None, f"no contest: seats {seats} did not connect within {waited}"
        )

    @classmethod
    def withdrawn(cls, seat: int, why: str) -> Outcome:
        """A seat's player was gone for good before the game started: its team forfeits."""
        team = team_of(seat)
        reason = f"seat {seat} was gone before it connected ({why}): team {_team(team)} forfeits"
        return cls(Termination.WITHDRAWN, 1 - team, team, reason)

    @classmethod
    def out_of_time(cls, seat: int, count: int, limit: int) -> Outcome:
        """A seat's timeouts went past the match's limit: its team forfeits."""
        team = team_of(seat)
        reason = f"seat {seat} ran out of time {count} times (at most {limit} allowed): "
        reason += f"team {_team(team)} forfeits"
        return cls(Termination.OUT_OF_TIME, 1 - team, team, reason)

    @classmethod
    def referee_error(cls, error: BaseException) -> Outcome:
        """The referee failed while it handled an input: no winner, no forfeit."""
        return cls(Termination.REFEREE_ERROR, None, None, f"referee error: {error!r}")

    @classmethod
    def of_legacy(
        cls, winner: int | None, forfeiting_team: int | None, reason: str, absent: Sequence[int]
    ) -> Outcome:
        """The outcome of a result written before terminations were recorded (its reason is the
        only place that told a withdrawal or a timeout forfeit from the rest)."""
        if forfeiting_team is not None and "was gone before it connected" in reason:
            termination = Termination.WITHDRAWN  # it names its seat as absent too
        elif absent:
            termination = Termination.NO_SHOW
        elif forfeiting_team is not None:
            termination = Termination.OUT_OF_TIME
        elif reason.startswith("referee error"):
            termination = Termination.REFEREE_ERROR
        else:
            termination = Termination.PLAYED_OUT
        return cls(termination, winner, forfeiting_team, reason)


@dataclass(frozen=True, slots=True)
class RoundScore:
    """One scored round: its number (0 for the first), each team's points and the totals after it."""

    round: int
    points: tuple[int, int]
    totals: tuple[int, int]


def round_scores(history: Sequence[tuple[int, int]], scores: Sequence[int]) -> tuple[RoundScore, ...]:
    """Each scored round of a game, from the state's history and its final totals."""
    out = []
    after = (scores[0], scores[1])
    for number in range(len(history) - 1, -1, -1):
        points = (history[number][0], history[number][1])
        out.append(RoundScore(number, points, after))
        after = (after[0] - points[0], after[1] - points[1])
    return tuple(reversed(out))


__all__ = ["Outcome", "RoundScore", "Termination", "round_scores"]
