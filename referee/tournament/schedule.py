"""Which games a tournament plays, in which order, on which deals: all of it from the seed.

A pairing is two teams. A board is one deal seed: the game's deals depend only on (seed, round)
(referee.rules.game.new_game), so every game with that seed sees the same cards seat by seat.
Board k has the same seed in every pairing, so every pairing plays the same deals. With
duplicate on, each board is played at two tables at once, the teams' seats swapped: at table 0
the pairing's first team sits at the even seats (0 and 2), at table 1 at the odd ones, so each
team holds at one table the cards the other held at the other.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from itertools import combinations

from referee.tournament.config import Team, TournamentConfig


@dataclass(frozen=True, slots=True)
class Pairing:
    """Two teams that meet; `first` is the side the SPRT and the head-to-head rows are told from."""

    index: int
    first: Team
    second: Team

    @property
    def label(self) -> str:
        """`first vs second`."""
        return f"{self.first.name} vs {self.second.name}"


@dataclass(frozen=True, slots=True)
class GameSpec:
    """One game at one table: its pairing, board and table, deal seed, and who sits where."""

    game_id: str
    pairing: int
    board: int
    table: int  # 0: the pairing's first team at the even seats; 1: at the odd seats
    seed: str
    team_even: str  # the team at seats 0 and 2 (the referee's team A)
    team_odd: str  # the team at seats 1 and 3 (team B)
    players: tuple[str, str, str, str]  # the entrant at each seat


def pairings(config: TournamentConfig) -> list[Pairing]:
    """A round robin's every pair of teams in config order, or the gauntlet's candidate vs each other team."""
    teams = config.teams
    if config.format == "gauntlet":
        candidate = next(t for t in teams if t.name == config.candidate)
        others = [t for t in teams if t.name != config.candidate]
        return [Pairing(i, candidate, other) for i, other in enumerate(others)]
    return [Pairing(i, a, b) for i, (a, b) in enumerate(combinations(teams, 2))]


def board_seed(tournament_seed: str, board: int) -> str:
    """The deal seed of board `board`: the same in every pairing, different for every board."""
    digest = hashlib.sha256(f"tichu-tournament/{tournament_seed}/board/{board}".encode()).hexdigest()
    return f"b{board}-{digest[:12]}"


def build_schedule(config: TournamentConfig) -> list[GameSpec]:
    """Every game, board by board (each board's pairings and both its tables side by side).

    That order keeps the two tables of a board pair together, so they are played at the same
    time, and lets every pairing advance at the same pace, so an early stop or an interruption
    leaves the standings balanced.
    """
    games: list[GameSpec] = []
    matches = pairings(config)
    for board in range(config.boards_per_pairing):
        seed = board_seed(config.seed, board)
        for pairing in matches:
            tables = (0, 1) if config.duplicate else (board % 2,)
            for table in tables:
                even, odd = (pairing.first, pairing.second) if table == 0 else (pairing.second, pairing.first)
                games.append(
                    GameSpec(
                        game_id=f"p{pairing.index:02d}-b{board:04d}-t{table}",
                        pairing=pairing.index,
                        board=board,
                        table=table,
                        seed=seed,
                        team_even=even.name,
                        team_odd=odd.name,
                        players=(even.players[0], odd.players[0], even.players[1], odd.players[1]),
                    )
                )
    return games
