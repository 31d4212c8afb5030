"""What the web face shows of a tournament: its standings, progress and games, from its store.

`tichu tournament run CONFIG --http HOST:PORT` serves it beside the live games of the
tournament's own referee (referee.web); the same view reads a finished store as well. Nothing here
is secret (the store keeps no token), and every name goes to the page as text.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any

from referee.tournament.config import TournamentConfig
from referee.tournament.ratings import EloRating
from referee.tournament.report import Standings
from referee.tournament.runner import stored_standings
from referee.tournament.store import GameRow, Store

# The standings are computed again at most this often however many pages ask.
REFRESH_S = 2.0
# A page lists at most this many games: the running ones, then the latest finished.
GAMES_SHOWN = 200


def _elo_words(rating: EloRating) -> str:
    """A team's Elo with its 95 % interval, or why there is none yet, in words."""
    if rating.results == 0:
        return "no result yet"
    if not math.isfinite(rating.elo):
        return "not yet known (every result went the same way)"
    if not (math.isfinite(rating.low) and math.isfinite(rating.high)):
        return f"{round(rating.elo):+d}, its interval not yet known (too few results)"
    return f"{round(rating.elo):+d} [{round(rating.low):+d}, {round(rating.high):+d}]"


def standings_json(standings: Standings) -> list[dict[str, Any]]:
    """One object per team, best Elo first."""
    rows = []
    for rank, (team, rating) in enumerate(standings.elo_table(), start=1):
        rows.append(
            {
                "rank": rank,
                "team": team.team,
                "players": list(team.players),
                "games": team.games,
                "wins": team.wins,
                "draws": team.draws,
                "losses": team.losses,
                "score_percent": None if team.games == 0 else round(100 * team.win_rate.mean, 1),
                "elo": _elo_words(rating),
            }
        )
    return rows


def game_json(game: GameRow, live: set[str]) -> dict[str, Any]:
    """One game's line; `url` names its live page while the referee holds it."""
    scores = None if game.score_even is None or game.score_odd is None else [game.score_even, game.score_odd]
    return {
        "game_id": game.game_id,
        "pairing": game.pairing,
        "board": game.board,
        "table": game.table_no,
        "teams": [game.team_even, game.team_odd],
        "status": game.status,
        "scores": scores,
        "reason": game.reason or "",
        "forfeit": game.forfeit,
        "url": f"/matches/{game.match_id}" if game.match_id and game.match_id in live else None,
    }


class TournamentView:
    """The tournament page's data, read from the store and cached for REFRESH_S."""

    def __init__(
        self,
        config: TournamentConfig,
        store: Store,
        live_matches: Callable[[], set[str]] = set,
        now: Callable[[], float] = time.monotonic,
    ) -> None:
        self.config = config
        self.store = store
        self._live = live_matches
        self._now = now
        self._cached: tuple[float, dict[str, Any]] | None = None

    def snapshot(self) -> dict[str, Any]:
        """The standings, the progress and the games, as the API gives them."""
        now = self._now()
        if self._cached is not None and now - self._cached[0] < REFRESH_S:
            return self._cached[1]
        rows = self.store.games()
        standings = stored_standings(self.config, rows, self.store.seat_stats())
        live = self._live()
        counts: dict[str, int] = {}
        for row in rows:
            counts[row.status] = counts.get(row.status, 0) + 1
        running = [row for row in rows if row.status == "running"]
        finished = sorted(
            (row for row in rows if row.finished), key=lambda r: r.finished_at or 0, reverse=True
        )
        shown = (running + finished)[:GAMES_SHOWN]
        data = {
            "name": self.config.name,
            "duplicate": self.config.duplicate,
            "progress": {
                "games": len(rows),
                "finished": standings.games_finished,
                "running": counts.get("running", 0),
                "skipped": counts.get("skipped", 0),
                "pending": counts.get("pending", 0),
                "hands": standings.hands_played,
            },
            "standings": standings_json(standings),
            "incidents": list(standings.incidents),
            "games": [game_json(row, live) for row in shown],
        }
        self._cached = (now, data)
        return data


__all__ = ["TournamentView", "game_json", "standings_json"]
