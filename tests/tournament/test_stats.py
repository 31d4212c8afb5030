"""Intervals, the SPRT and the pentanomial's Elo and LOS against values worked out by hand."""

from __future__ import annotations

import math

import pytest

from referee.tournament.stats import (
    elo_to_score,
    format_elo,
    mean_interval,
    pairing_verdict,
    pentanomial_elo,
    pentanomial_llr,
    score_to_elo,
    sprt,
    sprt_bounds,
    wilson_interval,
)


def test_bounds_of_alpha_beta_five_percent() -> None:
    lower, upper = sprt_bounds(0.05, 0.05)
    assert lower == pytest.approx(-2.944439, abs=1e-6)  # ln(0.05 / 0.95)
    assert upper == pytest.approx(2.944439, abs=1e-6)  # ln(0.95 / 0.05)
    lower, upper = sprt_bounds(0.05, 0.10)
    assert lower == pytest.approx(math.log(0.10 / 0.95))
    assert upper == pytest.approx(math.log(0.90 / 0.05))


def test_elo_scores() -> None:
    assert elo_to_score(0) == 0.5
    assert elo_to_score(50) == pytest.approx(0.571463, abs=1e-6)
    assert score_to_elo(elo_to_score(123.0)) == pytest.approx(123.0)


def test_llr_of_a_balanced_sample() -> None:
    # counts + prior 2 * (1, 4, 6, 4, 1) / 16 = (2.125, 4.5, 8.75, 4.5, 2.125) of 22: mean 1/2,
    # variance (2 * 2.125 / 16 + 2 * 4.5 / 64) / 22 = 0.0738636; s0 = 0.5, s1 = 0.5714631:
    # LLR = 20 * 0.0714631 * (1 - 1.0714631) / (2 * 0.0738636) = -0.69141
    assert pentanomial_llr([2, 4, 8, 4, 2], 0, 50) == pytest.approx(-0.69141, abs=1e-5)


def test_llr_of_seven_pairs_all_won_crosses_h1() -> None:
    # weights (0.125, 0.5, 0.75, 0.5, 7.125) of 9: mean 8/9, variance 0.513889 / 9 = 0.0570988;
    # LLR = 7 * 0.0714631 * (16/9 - 1.0714631) / (2 * 0.0570988) = 3.09401 >= 2.944
    assert pentanomial_llr([0, 0, 0, 0, 7], 0, 50) == pytest.approx(3.09401, abs=1e-5)
    assert sprt([0, 0, 0, 0, 6], 0, 50, 0.05, 0.05).verdict == ""
    result = sprt([0, 0, 0, 0, 7], 0, 50, 0.05, 0.05)
    assert result.verdict == "H1" and result.pairs == 7


def test_llr_with_an_elo0_below_zero() -> None:
    # weights (1.125, 3.5, 5.75, 7.5, 4.125) of 22: mean 0.613636, variance 0.0779959;
    # s0 = 0.4856128 (elo -10), s1 = 0.5430665 (elo 30): LLR = 20 * 0.0574537 * 0.198542 / 0.1559917
    assert pentanomial_llr([1, 3, 5, 7, 4], -10, 30) == pytest.approx(1.462888, abs=1e-6)


def test_no_pairs_no_evidence() -> None:
    assert pentanomial_llr([0, 0, 0, 0, 0], 0, 50) == 0.0
    with pytest.raises(ValueError, match="five counts"):
        pentanomial_llr([1, 2, 3], 0, 50)


def test_pairing_verdict_looks_both_ways() -> None:
    strong_first = pairing_verdict("h", "r", [0, 0, 1, 2, 20], 0, 50, 0.05, 0.05)
    assert strong_first.first_stronger.verdict == "H1"
    assert strong_first.second_stronger.verdict == "H0"
    assert strong_first.decided
    assert strong_first.summary.startswith("h is stronger than r")
    strong_second = pairing_verdict("r", "h", [20, 2, 1, 0, 0], 0, 50, 0.05, 0.05)
    assert strong_second.summary.startswith("h is stronger than r")
    early = pairing_verdict("a", "b", [0, 1, 2, 1, 0], 0, 50, 0.05, 0.05)
    assert not early.decided and early.summary.startswith("undecided (LLR of 'a stronger' ")
    assert "H0 at or below -2.94, H1 at or above 2.94" in early.summary


def test_mean_interval_uses_student_t() -> None:
    estimate = mean_interval([1, 2, 3, 4, 5])
    # sd 1.5811, standard error 0.7071, t(4) = 2.776
    assert (estimate.mean, estimate.n) == (3.0, 5)
    assert estimate.low == pytest.approx(3 - 2.776 * math.sqrt(0.5))
    assert estimate.high == pytest.approx(3 + 2.776 * math.sqrt(0.5))
    assert math.isnan(mean_interval([4.0]).low)
    assert mean_interval([]).n == 0


def test_wilson_interval() -> None:
    estimate = wilson_interval(8, 10)
    assert estimate.mean == 0.8
    assert estimate.low == pytest.approx(0.4902, abs=1e-4)
    assert estimate.high == pytest.approx(0.9433, abs=1e-4)
    assert wilson_interval(0, 5).low == 0.0


# The pentanomial's Elo and LOS, as fastchess documents them: mu and var over the observed pairs,
# elo = -400 log10(1/mu - 1), the interval mu ± 1.96 sqrt(var / N) through the same map,
# LOS = Phi((mu - 0.5) / sqrt(var / N)). Each row's values are worked out in its comment.
PENTANOMIAL_CASES = [
    # [2, 4, 8, 4, 2]: mu 1/2, var (4 * 0.25 / 2 + 8 * 0.0625 / 2) / 20 = 0.075, se 0.0612372;
    # mu + 1.96 se = 0.620021 -> +85.060; symmetric, LOS exactly one half.
    ([2, 4, 8, 4, 2], 0.5, 0.0, -85.060043, 85.060043, 0.5),
    # [0, 1, 1, 0, 0]: mu 0.375 -> -400 log10(5/3) = -88.7395; var 0.015625, se 0.0883883;
    # [0.201758, 0.548242] -> [-238.9172, +33.6238]; LOS Phi(-1.41421) = 0.0786496.
    ([0, 1, 1, 0, 0], 0.375, -88.739500, -238.917186, 33.623759, 0.0786496),
    # Without duplicate, 3 losses, 2 draws, 5 wins as pairs of 0, 2, 4: mu 0.6 -> +70.4365.
    ([3, 0, 2, 0, 5], 0.6, 70.436504, None, None, None),
    # [0, 0, 0, 1, 4]: mu 0.95, var 0.01, se 0.0447214: the upper bound passes 1 (+inf),
    # the lower is 0.862346 -> +318.760; mu 0.95 -> 400 log10(19) = +511.501.
    ([0, 0, 0, 1, 4], 0.95, 511.501440, 318.759642, math.inf, None),
    # All won: no spread, an infinite difference, certain superiority.
    ([0, 0, 0, 0, 5], 1.0, math.inf, math.inf, math.inf, 1.0),
    ([6, 0, 0, 0, 0], 0.0, -math.inf, -math.inf, -math.inf, 0.0),
]


@pytest.mark.parametrize(("counts", "mu", "elo", "low", "high", "los"), PENTANOMIAL_CASES)
def test_pentanomial_elo(
    counts: list[int], mu: float, elo: float, low: float | None, high: float | None, los: float | None
) -> None:
    estimate = pentanomial_elo(counts)
    assert estimate.pairs == sum(counts) and estimate.counts == tuple(counts)
    assert estimate.mu == pytest.approx(mu)
    assert estimate.elo == pytest.approx(elo, abs=1e-5)
    if low is not None:
        assert estimate.low == pytest.approx(low, abs=1e-5)
    if high is not None:
        assert estimate.high == pytest.approx(high, abs=1e-5)
    if los is not None:
        assert estimate.los == pytest.approx(los, abs=1e-7)
    assert estimate.low <= estimate.elo <= estimate.high


def test_pentanomial_elo_without_pairs_and_mirrored() -> None:
    empty = pentanomial_elo([0, 0, 0, 0, 0])
    assert all(math.isnan(v) for v in (empty.mu, empty.elo, empty.low, empty.high, empty.los))
    assert str(empty) == "-" and format_elo(empty.elo) == "-"
    one, other = pentanomial_elo([1, 3, 5, 7, 4]), pentanomial_elo([4, 7, 5, 3, 1])
    assert one.elo == pytest.approx(-other.elo) and one.low == pytest.approx(-other.high)
    assert one.los == pytest.approx(1 - other.los)
    assert str(pentanomial_elo([0, 1, 1, 0, 0])) == "-88.7 [-238.9, +33.6], LOS 7.9 %"
    # An interval that cannot be computed yet says so in words, never as `inf`.
    assert str(pentanomial_elo([0, 0, 0, 1, 4])) == "+511.5 [+318.8, no upper bound yet], LOS 100.0 %"
    assert str(pentanomial_elo([0, 0, 0, 0, 5])).startswith("no finite Elo yet: every result won")
    assert "inf" not in str(pentanomial_elo([6, 0, 0, 0, 0]))
    with pytest.raises(ValueError, match="five counts"):
        pentanomial_elo([1, 2])


def test_even_teams_show_no_negative_zero() -> None:
    even = pentanomial_elo([0, 0, 3, 0, 0])
    assert (even.elo, even.los) == (0.0, 0.5)
    assert str(even) == "+0.0 (no interval yet: every result alike), LOS 50.0 %"
    assert format_elo(-0.04) == "+0.0" and format_elo(-0.06) == "-0.1"
