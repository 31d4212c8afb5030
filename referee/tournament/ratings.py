"""A team-aware rating with uncertainty: openskill's Plackett-Luce model, one rating per entrant.

Every finished game is one rating update, in schedule order (so the ratings do not depend on
which table happened to finish first): the two teams are the two seats' pairs of entrants,
ranked by the game's winner (a draw ties them). A team that is two copies of one entrant puts
that entrant's rating in both seats; both copies receive the same update, which becomes the
entrant's new rating.
"""

from __future__ import annotations

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
