"""Match results as a host hands them to the store, made up for store tests."""

from __future__ import annotations

from collections.abc import Sequence

from referee.match.messages import MatchResult
from referee.match.outcome import Outcome, round_scores
from referee.match.summary import SeatSummary


def match_result(
    even: int,
    odd: int,
    *,
    hands: int = 1,
    summary: Sequence[SeatSummary] = (),
    outcome: Outcome | None = None,
) -> MatchResult:
    """A played-out match that ended `even` to `odd` after `hands` scored rounds (the first one
    scoring everything)."""
    scores = (even, odd)
    winner = 0 if even > odd else 1 if odd > even else None
    points = [scores, *[(0, 0)] * (hands - 1)]
    return MatchResult(
        match_id="m",
        outcome=outcome or Outcome.played_out(winner, scores),
        scores=scores,
        round_scores=round_scores(points, scores),
        state_version=9,
        summary=tuple(summary),
    )
