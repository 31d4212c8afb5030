"""The teams' maximum-likelihood Elo (ordo's model with a weak prior) against values solved by hand."""

from __future__ import annotations

import math

import pytest

from referee.tournament.ratings import ELO_SCALE, PairResult, fit_elo


def _sigmoid(x: float) -> float:
    return 1 / (1 + math.exp(-x))


def test_two_teams_match_the_one_dimensional_solution() -> None:
    # a scores 3/4 of 20 games against b. By symmetry r_a = -r_b = x, and the score equation is
    # 20 c (3/4 - sigmoid(2 c x)) + c (1/2 - sigmoid(c x)) = 0 (the second term: a's prior draw
    # against 0). Without the prior x would be 400 log10(3) / 2 = 95.42; solved by bisection here.
    low, high = 0.0, 200.0
    for _ in range(200):
        x = (low + high) / 2
        slope = 20 * (0.75 - _sigmoid(2 * ELO_SCALE * x)) + (0.5 - _sigmoid(ELO_SCALE * x))
        low, high = (x, high) if slope > 0 else (low, x)
    fitted = fit_elo(["a", "b"], [PairResult("a", "b", 0.75, 20)])
    a, b = fitted["a"], fitted["b"]
    assert a.elo == pytest.approx(x, abs=1e-6) and b.elo == pytest.approx(-x, abs=1e-6)
    assert 90 < a.elo < 400 * math.log10(3) / 2
    # The information matrix is [[g + h, -g], [-g, g + h]] with g = 20 c^2 p (1 - p) (the games)
    # and h = c^2 q (1 - q) (the prior); the variance of r_a - mean = 1 / (2 (h + 2 g)).
    c, p, q = ELO_SCALE, _sigmoid(2 * ELO_SCALE * x), _sigmoid(ELO_SCALE * x)
    g, h = 20 * c * c * p * (1 - p), c * c * q * (1 - q)
    assert a.error == pytest.approx(1.959963984540054 * math.sqrt(1 / (2 * (h + 2 * g))), rel=1e-9)
    assert a.low == pytest.approx(a.elo - a.error) and a.high == pytest.approx(a.elo + a.error)
    assert (a.points, a.games, a.results, b.points) == (15.0, 20, 1, 5.0)
    assert a.score == 0.75


def test_a_clean_sweep_stays_finite_and_ratings_average_zero() -> None:
    outcomes = [
        PairResult("strong", "middle", 1.0, 2),  # a board pair won at both tables
        PairResult("strong", "weak", 1.0, 2),
        PairResult("middle", "weak", 0.75, 2),
        PairResult("weak", "middle", 0.5, 2),
    ]
    fitted = fit_elo(["weak", "middle", "strong", "idle"], outcomes)
    strong, middle, weak, idle = (fitted[n] for n in ("strong", "middle", "weak", "idle"))
    assert math.isfinite(strong.elo) and strong.elo > middle.elo > weak.elo
    assert math.fsum(r.elo for r in fitted.values()) == pytest.approx(0, abs=1e-9)
    # A team without a game rests on its prior alone: at the prior's 0, which the shift to an
    # average of 0 moves a little (here by 10 Elo), with an interval wider than any other.
    assert idle.games == 0 and abs(idle.elo) < idle.error / 20 and weak.elo < idle.elo < strong.elo
    assert idle.error > max(r.error for r in (strong, middle, weak))
    assert math.isnan(idle.score)
    assert (middle.points, middle.games, middle.results) == (0 + 1.5 + 1.0, 6, 3)
    # The same outcomes in another order give the same ratings.
    again = fit_elo(["idle", "strong", "weak", "middle"], list(reversed(outcomes)))
    assert {n: r.elo for n, r in again.items()} == pytest.approx({n: r.elo for n, r in fitted.items()})


def test_the_prior_is_required() -> None:
    with pytest.raises(ValueError, match="prior_draws must be above 0"):
        fit_elo(["a", "b"], [], prior_draws=0)
