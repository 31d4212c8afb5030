"""Confidence intervals and the sequential probability ratio test (SPRT) on duplicate board pairs.

The SPRT follows the generalised SPRT that chess engine testing (fishtest, fastchess) runs on
game pairs, here on board pairs: a board pair gives the side under test 0 to 4 half points
(2 for a won game, 1 for a draw, at each of the two tables), so the results fall in five classes
(a "pentanomial"). With mu and var the mean and variance of the pair score k/4 over the observed
frequencies, the log-likelihood ratio of H1 (elo = elo1) against H0 (elo = elo0) is, in the
normal approximation,

    LLR = N * (s1 - s0) * (2 * mu - s0 - s1) / (2 * var),    s = 1 / (1 + 10 ** (-elo / 400))

H1 is accepted once LLR >= log((1 - beta) / alpha), H0 once LLR <= log(beta / (1 - alpha)).
The mean and variance are estimated with a weak prior: PRIOR_PAIRS pseudo board pairs between
equal sides (spread over the classes as 1:4:6:4:1, the binomial of four fair games) are added to
the observed counts, N stays the number of real pairs. Without it, the first few pairs
(often all in one class) give a variance near zero and the test "decides" after one or two pairs;
with it, even a side that wins every game needs seven pairs to be found stronger by 50 Elo.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

Z_95 = 1.959963984540054
# Student's t, two-sided 95 %, for 1..30 degrees of freedom (more: the normal's 1.96).
_T_95 = (
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
    2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
    2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
)  # fmt: skip
PRIOR_PAIRS = 2.0
_PRIOR_SHAPE = (1 / 16, 4 / 16, 6 / 16, 4 / 16, 1 / 16)


@dataclass(frozen=True, slots=True)
class Estimate:
    """A mean and its 95 % confidence interval over `n` values (NaN bounds when n < 2)."""

    mean: float
    low: float
    high: float
    n: int

    @property
    def half_width(self) -> float:
        """Half the interval's width (the "±")."""
        return (self.high - self.low) / 2

    def __str__(self) -> str:
        if self.n == 0:
            return "-"
        if math.isnan(self.low):
            return f"{self.mean:+.1f}"
        return f"{self.mean:+.1f} ± {self.half_width:.1f}"


def t_quantile_95(degrees: int) -> float:
    """The two-sided 95 % quantile of Student's t with `degrees` degrees of freedom."""
    if degrees < 1:
        raise ValueError("at least one degree of freedom")
    return _T_95[degrees - 1] if degrees <= len(_T_95) else Z_95


def mean_interval(values: Sequence[float]) -> Estimate:
    """The mean of `values` and its 95 % interval (Student's t with the sample's deviation)."""
    n = len(values)
    if n == 0:
        return Estimate(math.nan, math.nan, math.nan, 0)
    mean = math.fsum(values) / n
    if n < 2:
        return Estimate(mean, math.nan, math.nan, n)
    variance = math.fsum((v - mean) ** 2 for v in values) / (n - 1)
    half = t_quantile_95(n - 1) * math.sqrt(variance / n)
    return Estimate(mean, mean - half, mean + half, n)


def wilson_interval(score: float, n: int) -> Estimate:
    """A rate (`score` successes of `n`; a draw counts half) with its 95 % Wilson score interval."""
    if n == 0:
        return Estimate(math.nan, math.nan, math.nan, 0)
    rate = score / n
    z2 = Z_95 * Z_95
    centre = (rate + z2 / (2 * n)) / (1 + z2 / n)
    half = Z_95 * math.sqrt(rate * (1 - rate) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return Estimate(rate, max(0.0, centre - half), min(1.0, centre + half), n)


def elo_to_score(elo: float) -> float:
    """The expected score of a side `elo` points stronger (the logistic Elo model)."""
    return 1 / (1 + 10 ** (-elo / 400))


def score_to_elo(score: float) -> float:
    """The Elo difference that gives an expected `score` (infinite at 0 and 1)."""
    if score <= 0:
        return -math.inf
    if score >= 1:
        return math.inf
    return -400 * math.log10(1 / score - 1)


def sprt_bounds(alpha: float, beta: float) -> tuple[float, float]:
    """(lower, upper) LLR bounds: H0 is accepted at or below the lower, H1 at or above the upper."""
    return math.log(beta / (1 - alpha)), math.log((1 - beta) / alpha)


def pentanomial_llr(counts: Sequence[int], elo0: float, elo1: float) -> float:
    """The LLR of elo1 against elo0 given how many board pairs gave 0, 1, 2, 3 and 4 half points."""
    if len(counts) != 5:
        raise ValueError("a pentanomial has five counts")
    pairs = sum(counts)
    if pairs == 0:
        return 0.0
    weights = [c + PRIOR_PAIRS * share for c, share in zip(counts, _PRIOR_SHAPE, strict=True)]
    total = math.fsum(weights)
    frequencies = [w / total for w in weights]
    mu = math.fsum(f * k / 4 for k, f in enumerate(frequencies))
    variance = math.fsum(f * (k / 4 - mu) ** 2 for k, f in enumerate(frequencies))
    s0, s1 = elo_to_score(elo0), elo_to_score(elo1)
    return pairs * (s1 - s0) * (2 * mu - s0 - s1) / (2 * variance)


@dataclass(frozen=True, slots=True)
class SprtResult:
    """Where a test stands: its LLR, the bounds, and the verdict (H1, H0, or '' while undecided)."""

    llr: float
    lower: float
    upper: float
    pairs: int
    verdict: str

    @property
    def decided(self) -> bool:
        """Whether a bound was reached."""
        return bool(self.verdict)


def sprt(counts: Sequence[int], elo0: float, elo1: float, alpha: float, beta: float) -> SprtResult:
    """The SPRT's state after the board pairs in `counts` (see pentanomial_llr)."""
    lower, upper = sprt_bounds(alpha, beta)
    llr = pentanomial_llr(counts, elo0, elo1)
    verdict = "H1" if llr >= upper else "H0" if llr <= lower else ""
    return SprtResult(llr, lower, upper, sum(counts), verdict)


@dataclass(frozen=True, slots=True)
class PairingVerdict:
    """Both one-sided tests of a pairing: is the first team stronger; is the second?"""

    first: str
    second: str
    first_stronger: SprtResult
    second_stronger: SprtResult
    elo1: float

    @property
    def decided(self) -> bool:
        """Both tests have reached a bound: more board pairs would change nothing."""
        return self.first_stronger.decided and self.second_stronger.decided

    @property
    def summary(self) -> str:
        """One line for people."""
        a, b = self.first_stronger, self.second_stronger
        if a.verdict == "H1":
            return f"{self.first} is stronger than {self.second} ({_accepted(a)})"
        if b.verdict == "H1":
            return f"{self.second} is stronger than {self.first} ({_accepted(b)})"
        if self.decided:
            return f"neither is stronger by {self.elo1:g} Elo (H0 accepted both ways)"
        return (
            f"undecided (LLR of '{self.first} stronger' {a.llr:+.2f}, of '{self.second} stronger' "
            f"{b.llr:+.2f}; H0 at or below {a.lower:.2f}, H1 at or above {a.upper:.2f})"
        )


def _accepted(test: SprtResult) -> str:
    return f"H1 accepted, LLR {test.llr:+.2f} >= {test.upper:.2f}"


def pairing_verdict(
    first: str, second: str, counts: Sequence[int], elo0: float, elo1: float, alpha: float, beta: float
) -> PairingVerdict:
    """The two SPRTs of a pairing from the first team's pentanomial counts."""
    mirrored = list(reversed(counts))
    return PairingVerdict(
        first,
        second,
        sprt(counts, elo0, elo1, alpha, beta),
        sprt(mirrored, elo0, elo1, alpha, beta),
        elo1,
    )


# ---------------------------------------------------------------------------- Elo from a pentanomial


@dataclass(frozen=True, slots=True)
class PentanomialElo:
    """A pairing's first team as fastchess reports it: the pentanomial, the Elo difference with
    its 95 % interval, and the likelihood of superiority (LOS), from the observed pairs alone.

    `mu` is the mean pair score (half points / 4) and `variance` its variance per pair; the
    interval is mu ± 1.96 * sqrt(variance / pairs) mapped through score_to_elo, so it is
    asymmetric, and infinite on the side where it passes a score of 0 or 1. Every figure is NaN
    without a pair.
    """

    counts: tuple[int, int, int, int, int]
    mu: float
    variance: float
    elo: float
    low: float
    high: float
    los: float

    @property
    def pairs(self) -> int:
        """The board pairs (or, without duplicate, the games) counted."""
        return sum(self.counts)

    @property
    def error(self) -> float:
        """Half the interval's width in Elo, as fastchess prints it after "±" (inf at 0 or 1)."""
        return (self.high - self.low) / 2

    def __str__(self) -> str:
        if not self.pairs:
            return "-"
        return f"{format_elo_interval(self.elo, self.low, self.high)}, LOS {100 * self.los:.1f} %"


def format_elo(elo: float) -> str:
    """An Elo figure for people: signed, one decimal; "+inf", "-inf" or "-" (NaN)."""
    if math.isnan(elo):
        return "-"
    if math.isinf(elo):
        return "+inf" if elo > 0 else "-inf"
    # Even teams give -0.0 (the log of 1 is negated) or a hair below: shown as +0.0.
    return f"{round(elo, 1) + 0.0:+.1f}"


def format_elo_interval(elo: float, low: float, high: float) -> str:
    """An Elo figure and its 95 % interval for people: a bound (or the figure) that cannot be
    computed yet is said in words, never as `inf`, and an interval of no width is not shown."""
    if math.isnan(elo):
        return "-"
    if math.isinf(elo):
        side = "won" if elo > 0 else "lost"
        return f"no finite Elo yet: every result {side}, so no interval yet"
    if math.isnan(low) or math.isnan(high):
        return f"{format_elo(elo)} (no interval yet: too few results)"
    if low == high:
        return f"{format_elo(elo)} (no interval yet: every result alike)"
    lower = "no lower bound yet" if math.isinf(low) else format_elo(low)
    upper = "no upper bound yet" if math.isinf(high) else format_elo(high)
    return f"{format_elo(elo)} [{lower}, {upper}]"


def normal_cdf(x: float) -> float:
    """The standard normal distribution function, Phi(x)."""
    return 0.5 * math.erfc(-x / math.sqrt(2))


def pentanomial_elo(counts: Sequence[int]) -> PentanomialElo:
    """The Elo difference, its 95 % interval and the LOS from counts of 0, 1, 2, 3 and 4 half points."""
    if len(counts) != 5:
        raise ValueError("a pentanomial has five counts")
    five = (counts[0], counts[1], counts[2], counts[3], counts[4])
    pairs = sum(five)
    if pairs == 0:
        nan = math.nan
        return PentanomialElo(five, nan, nan, nan, nan, nan, nan)
    mu = math.fsum(c * k / 4 for k, c in enumerate(five)) / pairs
    variance = math.fsum(c * (k / 4 - mu) ** 2 for k, c in enumerate(five)) / pairs
    error = math.sqrt(variance / pairs)
    low, high = score_to_elo(mu - Z_95 * error), score_to_elo(mu + Z_95 * error)
    # Every pair alike leaves no spread to weigh the difference by: it is certain, or nil.
    certain = 1.0 if mu > 0.5 else 0.0 if mu < 0.5 else 0.5
    los = normal_cdf((mu - 0.5) / error) if error > 0 else certain
    return PentanomialElo(five, mu, variance, score_to_elo(mu), low, high, los)
