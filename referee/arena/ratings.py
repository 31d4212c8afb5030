"""The arena's ratings: openskill's Plackett-Luce model, one comparison per finished pair.

A duplicate pair is two tables with the same deals and the teams' seats swapped, so the luck of
the cards cancels in the pair's total; the pair is one game between two bots, ranked by that
total (equal totals: a draw). Ratings are a fold over the finished pairs in the order they
finished (pairs play at once, so not the order they started in): `rerate` folds them again
from nothing and must give the stored numbers.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

from openskill.models import PlackettLuce

from referee.arena.store import PairRow, RatingRow

# A bot is provisional on the leaderboard until its sigma falls below this (a new bot: 8.33;
# the three sample bots get there in 20-30 pairs).
PROVISIONAL_SIGMA = 5.0


@dataclass(frozen=True, slots=True)
class PairUpdate:
    """What one pair changes: both bots' ratings after it."""

    a: RatingRow
    b: RatingRow


def fresh(bot: str, leaderboard: str) -> RatingRow:
    """A bot's rating before its first rated pair (openskill's prior: 25 +- 8.33)."""
    prior = PlackettLuce().rating()
    return RatingRow(bot, leaderboard, prior.mu, prior.sigma, 0, 0, 0, 0, 0, None)


def rate_pair(pair: PairRow, a: RatingRow, b: RatingRow) -> PairUpdate:
    """Both bots' ratings after a finished pair, from their ratings before it."""
    assert pair.state == "finished" and pair.points_a is not None and pair.points_b is not None
    model = PlackettLuce()
    margin = pair.points_a - pair.points_b
    ranks = [1.0, 1.0] if margin == 0 else ([1.0, 2.0] if margin > 0 else [2.0, 1.0])
    [[new_a], [new_b]] = model.rate(
        [[model.rating(mu=a.mu, sigma=a.sigma)], [model.rating(mu=b.mu, sigma=b.sigma)]], ranks=ranks
    )
    return PairUpdate(
        _after(a, new_a.mu, new_a.sigma, margin, pair.ended_at),
        _after(b, new_b.mu, new_b.sigma, -margin, pair.ended_at),
    )


def _after(before: RatingRow, mu: float, sigma: float, margin: int, at: float | None) -> RatingRow:
    return replace(
        before,
        mu=mu,
        sigma=sigma,
        pairs=before.pairs + 1,
        wins=before.wins + (margin > 0),
        draws=before.draws + (margin == 0),
        losses=before.losses + (margin < 0),
        margin=before.margin + margin,
        last_played=at,
    )


def rerate(pairs: Iterable[PairRow]) -> tuple[list[RatingRow], list[tuple[int, str, float, float]]]:
    """Every rating from the finished, rated pairs (validation pairs and voided ones count for
    nothing), folded in order; and the history (pair id, bot, mu, sigma)."""
    current: dict[tuple[str, str], RatingRow] = {}
    history: list[tuple[int, str, float, float]] = []
    finished = [p for p in pairs if p.state == "finished" and not p.validation]
    for pair in sorted(finished, key=lambda p: p.finished_seq or 0):
        key_a, key_b = (pair.bot_a, pair.leaderboard), (pair.bot_b, pair.leaderboard)
        update = rate_pair(
            pair,
            current.get(key_a) or fresh(*key_a),
            current.get(key_b) or fresh(*key_b),
        )
        current[key_a], current[key_b] = update.a, update.b
        history += [(pair.id, r.bot, r.mu, r.sigma) for r in (update.a, update.b)]
    return list(current.values()), history


def provisional(rating: RatingRow, threshold: float = PROVISIONAL_SIGMA) -> bool:
    """Whether the rating is still too uncertain to rank on."""
    return rating.sigma >= threshold


__all__ = ["PROVISIONAL_SIGMA", "PairUpdate", "fresh", "provisional", "rate_pair", "rerate"]
