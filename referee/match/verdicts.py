"""How a match ends, in words: the winner, the forfeiting team and the reason a result gives."""

from __future__ import annotations

from collections.abc import Sequence

from referee.rules import team_of

# (winner, forfeiting team, reason); -1 for no winner and for no forfeit.
Verdict = tuple[int, int, str]


def played_out(winner: int | None, totals: Sequence[int]) -> Verdict:
    """The game reached its end (R-END): the winner and the score, or a draw."""
    if winner is None:
        return -1, -1, "draw"
    return winner, -1, f"team {'AB'[winner]} won {totals[winner]} to {totals[1 - winner]}"


def no_show(absent: Sequence[int], start_timeout_ms: int) -> Verdict:
    """The start timeout passed with `absent` seats: their team forfeits (both teams: no contest)."""
    teams = sorted({team_of(seat) for seat in absent})
    waited = f"{start_timeout_ms / 1000:g} s"
    seats = ", ".join(str(seat) for seat in absent)
    if len(teams) == 1:
        team = teams[0]
        return 1 - team, team, f"seat {seats} did not connect within {waited}: team {'AB'[team]} forfeits"
    return -1, -1, f"no contest: seats {seats} did not connect within {waited}"


def withdrawn(seat: int, why: str) -> Verdict:
    """A seat's player was gone for good before the game started: its team forfeits."""
    team = team_of(seat)
    return 1 - team, team, f"seat {seat} was gone before it connected ({why}): team {'AB'[team]} forfeits"


def out_of_time(seat: int, count: int, limit: int) -> Verdict:
    """A seat's timeouts went past the match's limit: its team forfeits."""
    team = team_of(seat)
    reason = (
        f"seat {seat} ran out of time {count} times (at most {limit} allowed): team {'AB'[team]} forfeits"
    )
    return 1 - team, team, reason
