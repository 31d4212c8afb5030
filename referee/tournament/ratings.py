"""Ratings: openskill's Plackett-Luce model per entrant, and a maximum-likelihood Elo per team.

openskill: a team-aware rating with uncertainty, one rating per entrant.

Every finished game is one rating update, in schedule order (so the ratings do not depend on
which table happened to finish first): the two teams are the two seats' pairs of entrants,
ranked by the game's winner (a draw ties them). A team that is two copies of one entrant puts
that entrant's rating in both seats; both copies receive the same update, which becomes the
entrant's new rating.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from openskill.models import PlackettLuce, PlackettLuceRating

from referee.tournament.store import GameRow


@dataclass(frozen=True, slots=True)
class Rating:
    """mu ± sigma on openskill's scale (a new player: 25 ± 8.33); `ordinal` = mu - 3 sigma."""

    mu: float
    sigma: float
    games: int

    @property
    def ordinal(self) -> float:
        """A conservative estimate: the skill the player almost surely has at least."""
        return self.mu - 3 * self.sigma


def rate_games(games: Iterable[GameRow], entrants: Sequence[str]) -> dict[str, Rating]:
    """Every entrant's rating after the finished games, taken in schedule order."""
    model = PlackettLuce()
    current: dict[str, PlackettLuceRating] = {name: model.rating(name=name) for name in entrants}
    played = dict.fromkeys(entrants, 0)
    for game in sorted((g for g in games if g.finished), key=lambda g: g.seq):
        seats = game.players
        even, odd = [seats[0], seats[2]], [seats[1], seats[3]]
        teams = [[current[p] for p in even], [current[p] for p in odd]]
        ranks = [1.0, 1.0] if game.winner == -1 else ([1.0, 2.0] if game.winner == 0 else [2.0, 1.0])
        updated = model.rate(teams, ranks=ranks)
        changes: dict[str, list[PlackettLuceRating]] = {}
        for names, ratings in zip((even, odd), updated, strict=True):
            for name, rating in zip(names, ratings, strict=True):
                changes.setdefault(name, []).append(rating)
        for name, ratings in changes.items():
            # Two copies of one entrant got the same update: it is that entrant's.
            first = ratings[0]
            current[name] = model.rating(mu=first.mu, sigma=first.sigma, name=name)
            played[name] += 1
    return {name: Rating(r.mu, r.sigma, played[name]) for name, r in current.items()}


def team_rating(ratings: dict[str, Rating], players: Sequence[str]) -> Rating:
    """A team's rating: its members' mean mu, and the sigma of that mean."""
    members = [ratings[p] for p in dict.fromkeys(players)]
    mu = sum(r.mu for r in members) / len(members)
    sigma = (sum(r.sigma**2 for r in members) ** 0.5) / len(members)
    return Rating(mu, sigma, max(r.games for r in members))


# ---------------------------------------------------------------------------- maximum-likelihood Elo

# What ordo fits: the logistic Elo model, P(first scores) = 1 / (1 + 10^(-(r1 - r2) / 400)),
# to every result, a fractional score counting as that share of a win (a draw is half a win).
#
# The unit rated is the team, the side that plays. Per entrant (a team's strength the mean of
# its players') the model would be well-posed only if players changed partners: two entrants
# who always play together give one equation for two unknowns. Teams are usually two copies of
# one entrant, where team and entrant are the same thing, so nothing is lost in the usual case.
#
# Without a prior the likelihood has no maximum once a team wins (or loses) every game, and
# the ratings are defined only up to a common shift. Each team therefore also plays
# PRIOR_DRAWS games drawn against a virtual team rated 0: a weak pull towards the mean that
# keeps every rating finite (a team that won everything is rated high, not infinite) and fixes
# the shift; the ratings are then moved so that their average is exactly 0 (a small move: the
# prior pulls every team towards the same 0, so the fitted average is near it already).
ELO_SCALE = math.log(10) / 400  # d(natural log-odds) / d(Elo)
PRIOR_DRAWS = 1.0
_NEWTON_STEPS = 100
_TOLERANCE_ELO = 1e-9


@dataclass(frozen=True, slots=True)
class PairResult:
    """One result between two teams: `first`'s score share (0..1) over `games` games."""

    first: str
    second: str
    score: float
    games: int


@dataclass(frozen=True, slots=True)
class EloRating:
    """A team's maximum-likelihood Elo (average 0), its 95 % interval, and what it rests on."""

    elo: float
    low: float
    high: float
    points: float  # a win 1, a draw 1/2
    games: int
    results: int  # the outcomes fitted: board pairs in duplicate, games otherwise

    @property
    def error(self) -> float:
        """Half the interval's width (the "±")."""
        return (self.high - self.low) / 2

    @property
    def score(self) -> float:
        """Points per game (NaN before any game)."""
        return self.points / self.games if self.games else math.nan


def fit_elo(
    teams: Sequence[str], outcomes: Iterable[PairResult], prior_draws: float = PRIOR_DRAWS
) -> dict[str, EloRating]:
    """Every team's maximum-likelihood Elo from the outcomes, its interval from the inverse
    Fisher information (the games counted as independent, as ordo counts them; duplicate's
    pairs vary less than that, so the interval errs on the wide side)."""
    if prior_draws <= 0:
        raise ValueError("the prior is what keeps the fit finite: prior_draws must be above 0")
    index = {name: i for i, name in enumerate(teams)}
    results = [(index[o.first], index[o.second], o.score, float(o.games)) for o in outcomes if o.games > 0]
    n = len(teams)
    ratings = [0.0] * n
    for _ in range(_NEWTON_STEPS):
        gradient, information = _derivatives(ratings, results, prior_draws)
        step = _solve(information, gradient)
        scale, before = 1.0, _log_likelihood(ratings, results, prior_draws)
        # The log-likelihood is concave, so Newton's step is good near the top; far from it
        # (a lopsided record), halve it until the step gains.
        while scale > 1e-6:
            trial = [r + scale * s for r, s in zip(ratings, step, strict=True)]
            if _log_likelihood(trial, results, prior_draws) >= before:
                break
            scale /= 2
        ratings = trial
        if max((abs(scale * s) for s in step), default=0.0) < _TOLERANCE_ELO:
            break
    _, information = _derivatives(ratings, results, prior_draws)
    covariance = _inverse(information)
    mean = math.fsum(ratings) / n if n else 0.0
    row_means = [math.fsum(row) / n for row in covariance]
    total_mean = math.fsum(row_means) / n if n else 0.0
    played = {name: [0.0, 0, 0] for name in teams}
    for o in outcomes:
        for name, share in ((o.first, o.score), (o.second, 1 - o.score)):
            played[name][0] += share * o.games
            played[name][1] += o.games
            played[name][2] += 1
    fitted = {}
    for name, i in index.items():
        # The variance of r_i - mean(r): the anchor takes out the shift all ratings share.
        variance = covariance[i][i] - 2 * row_means[i] + total_mean
        half = 1.959963984540054 * math.sqrt(max(variance, 0.0))
        elo = ratings[i] - mean
        points, games, count = played[name]
        fitted[name] = EloRating(elo, elo - half, elo + half, float(points), int(games), int(count))
    return fitted


def _log_sigmoid(x: float) -> float:
    return -math.log1p(math.exp(-x)) if x >= 0 else x - math.log1p(math.exp(x))


def _sigmoid(x: float) -> float:
    return 1 / (1 + math.exp(-x)) if x >= 0 else math.exp(x) / (1 + math.exp(x))


def _log_likelihood(
    ratings: Sequence[float], results: Sequence[tuple[int, int, float, float]], prior: float
) -> float:
    total = 0.0
    for a, b, score, games in results:
        x = ELO_SCALE * (ratings[a] - ratings[b])
        total += games * (score * _log_sigmoid(x) + (1 - score) * _log_sigmoid(-x))
    for r in ratings:
        x = ELO_SCALE * r
        total += prior * (_log_sigmoid(x) + _log_sigmoid(-x)) / 2
    return total


def _derivatives(
    ratings: Sequence[float], results: Sequence[tuple[int, int, float, float]], prior: float
) -> tuple[list[float], list[list[float]]]:
    """The log-likelihood's gradient and the Fisher information (minus its Hessian), per Elo."""
    n = len(ratings)
    gradient = [0.0] * n
    information = [[0.0] * n for _ in range(n)]
    c = ELO_SCALE
    for a, b, score, games in results:
        p = _sigmoid(c * (ratings[a] - ratings[b]))
        pull = games * c * (score - p)
        gradient[a] += pull
        gradient[b] -= pull
        weight = games * c * c * p * (1 - p)
        information[a][a] += weight
        information[b][b] += weight
        information[a][b] -= weight
        information[b][a] -= weight
    for i, r in enumerate(ratings):
        p = _sigmoid(c * r)
        gradient[i] += prior * c * (0.5 - p)
        information[i][i] += prior * c * c * p * (1 - p)
    return gradient, information


def _solve(matrix: Sequence[Sequence[float]], vector: Sequence[float]) -> list[float]:
    """x with matrix @ x = vector (Gaussian elimination with partial pivoting)."""
    n = len(vector)
    rows = [[*row, value] for row, value in zip(matrix, vector, strict=True)]
    for column in range(n):
        pivot = max(range(column, n), key=lambda r: abs(rows[r][column]))
        rows[column], rows[pivot] = rows[pivot], rows[column]
        lead = rows[column][column]
        for r in range(column + 1, n):
            factor = rows[r][column] / lead
            if factor:
                rows[r] = [x - factor * y for x, y in zip(rows[r], rows[column], strict=True)]
    solution = [0.0] * n
    for r in reversed(range(n)):
        known = math.fsum(rows[r][k] * solution[k] for k in range(r + 1, n))
        solution[r] = (rows[r][n] - known) / rows[r][r]
    return solution


def _inverse(matrix: Sequence[Sequence[float]]) -> list[list[float]]:
    n = len(matrix)
    columns = [_solve(matrix, [1.0 if i == j else 0.0 for i in range(n)]) for j in range(n)]
    return [[columns[j][i] for j in range(n)] for i in range(n)]
