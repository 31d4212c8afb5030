"""Standings from the stored games: a table for the terminal, CSV files and an HTML page.

Everything here is computed from the rows in SQLite, never from the runner's memory, so the
standings of an interrupted and resumed tournament are those of its stored games.
"""

from __future__ import annotations

import csv
import html
import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from referee.tournament.config import SprtSettings, Team
from referee.tournament.ratings import EloRating, PairResult, Rating, fit_elo, rate_games, team_rating
from referee.tournament.stats import (
    Estimate,
    PairingVerdict,
    PentanomialElo,
    format_elo_interval,
    mean_interval,
    pairing_verdict,
    pentanomial_elo,
    wilson_interval,
)
from referee.tournament.store import GameRow, SeatRow


@dataclass(frozen=True, slots=True)
class BoardPair:
    """A duplicate board played at both tables of a pairing, told from the pairing's first team."""

    pairing: int
    board: int
    first: str
    second: str
    net_points: int  # the first team's score minus the second's, summed over both tables
    half_points: int  # the first team's 0-4: 2 per table won, 1 per table drawn


@dataclass(frozen=True, slots=True)
class TeamStanding:
    """One team's line in the standings."""

    team: str
    players: tuple[str, str]
    games: int
    wins: int
    draws: int
    losses: int
    win_rate: Estimate  # the score rate (a draw counts half) with its Wilson interval
    points: Estimate  # per game: own score minus the opponents'
    board_pairs: Estimate  # per duplicate board pair: the net points over both tables
    rating: Rating


@dataclass(frozen=True, slots=True)
class HeadToHead:
    """One team against another: its record and its mean board-pair (or game) net points."""

    wins: int
    draws: int
    losses: int
    net: Estimate
    elo: PentanomialElo  # the row team's pentanomial (board pairs, or games as 0/2/4) and its Elo


@dataclass(frozen=True, slots=True)
class PairingFigures:
    """A pairing's SPRT and, from the same counts, its first team's Elo difference and LOS."""

    verdict: PairingVerdict
    elo: PentanomialElo


@dataclass(frozen=True, slots=True)
class Standings:
    """Standings, the head-to-head matrix, each pairing's SPRT and Elo, the entrants' openskill
    ratings and the teams' maximum-likelihood Elo."""

    teams: list[TeamStanding]
    head_to_head: dict[tuple[str, str], HeadToHead]
    verdicts: list[PairingVerdict]
    ratings: dict[str, Rating]
    games_finished: int
    games_total: int
    hands_played: int
    pairings: list[PairingFigures]
    elo: dict[str, EloRating]
    incidents: tuple[str, ...] = ()  # forfeits and bots that ended early, a line each

    def elo_table(self) -> list[tuple[TeamStanding, EloRating]]:
        """The teams by maximum-likelihood Elo, best first (ties: by name)."""
        return sorted(
            ((t, self.elo[t.team]) for t in self.teams), key=lambda pair: (-pair[1].elo, pair[0].team)
        )

    @property
    def leader(self) -> str:
        """The first team, or '' before any game."""
        return self.teams[0].team if self.teams and self.teams[0].games else ""


def board_pairs(games: Sequence[GameRow], first_of: dict[int, str]) -> list[BoardPair]:
    """The board pairs whose two games are both finished (duplicate tournaments)."""
    by_board: dict[tuple[int, int], list[GameRow]] = defaultdict(list)
    for game in games:
        if game.finished:
            by_board[(game.pairing, game.board)].append(game)
    pairs = []
    for (pairing, board), tables in sorted(by_board.items()):
        if len(tables) != 2:
            continue
        first = first_of[pairing]
        second = next(t for g in tables for t in (g.team_even, g.team_odd) if t != first)
        net = sum(_net_for(g, first) for g in tables)
        half = sum(_half_points_for(g, first) for g in tables)
        pairs.append(BoardPair(pairing, board, first, second, net, half))
    return pairs


def _net_for(game: GameRow, team: str) -> int:
    assert game.score_even is not None and game.score_odd is not None
    diff = game.score_even - game.score_odd
    return diff if game.team_even == team else -diff


def _half_points_for(game: GameRow, team: str) -> int:
    if game.winner == -1:
        return 1
    winner = game.team_even if game.winner == 0 else game.team_odd
    return 2 if winner == team else 0


def compute_standings(
    games: Sequence[GameRow],
    teams: Sequence[Team],
    pairing_firsts: dict[int, tuple[str, str]],
    sprt_settings: SprtSettings,
    duplicate: bool,
    rounds_played: int,
    seats: Sequence[SeatRow] = (),
) -> Standings:
    """The standings of the finished games among `games` (all the schedule's rows); `seats`, the
    stored per-seat statistics, name the bots that ended early."""
    finished = [g for g in games if g.finished]
    entrants = sorted({p for t in teams for p in t.players})
    ratings = rate_games(finished, entrants)
    firsts = {index: pair[0] for index, pair in pairing_firsts.items()}
    pairs = board_pairs(finished, firsts) if duplicate else []
    verdicts = []
    figures = []
    for index, (first, second) in sorted(pairing_firsts.items()):
        counts = [0] * 5
        if duplicate:
            for pair in pairs:
                if pair.pairing == index:
                    counts[pair.half_points] += 1
        else:
            # Without duplicate each game is its own "pair": 0, 2 or 4 half points.
            for game in finished:
                if game.pairing == index:
                    counts[2 * _half_points_for(game, first)] += 1
        s = sprt_settings
        verdict = pairing_verdict(first, second, counts, s.elo0, s.elo1, s.alpha, s.beta)
        verdicts.append(verdict)
        figures.append(PairingFigures(verdict, pentanomial_elo(counts)))
    standings = [_team_standing(team, finished, pairs, ratings) for team in teams]
    standings.sort(
        key=lambda t: (-_or_minus_inf(t.board_pairs.mean if duplicate else t.points.mean), -t.rating.mu)
    )
    matrix = {}
    for a in teams:
        for b in teams:
            if a.name != b.name:
                matrix[(a.name, b.name)] = _head_to_head(a.name, b.name, finished, pairs, duplicate)
    elo = fit_elo([t.name for t in teams], _outcomes(finished, pairs, duplicate))
    return Standings(
        standings,
        matrix,
        verdicts,
        ratings,
        len(finished),
        len(games),
        rounds_played,
        figures,
        elo,
        _incidents(finished, seats),
    )


def _incidents(finished: Sequence[GameRow], seats: Sequence[SeatRow]) -> tuple[str, ...]:
    """A line per finished game that a forfeit decided or in which a bot's process ended early."""
    attempts = {g.game_id: g.attempts for g in finished}
    exits: dict[str, list[str]] = {}
    for seat in seats:
        if seat.exit_reason and attempts.get(seat.game_id) == seat.attempt:
            exits.setdefault(seat.game_id, []).append(
                f"seat {seat.seat} ({seat.entrant}): {seat.exit_reason}"
            )
    lines = []
    for game in finished:
        parts = []
        if game.forfeit and game.forfeiting_team is not None:
            team = game.team_even if game.forfeiting_team == 0 else game.team_odd
            parts.append(f"{team} forfeited ({game.reason or 'no reason given'})")
        parts += exits.get(game.game_id, [])
        if parts:
            lines.append(f"{game.game_id}: " + "; ".join(parts))
    return tuple(lines)


def _outcomes(finished: Sequence[GameRow], pairs: Sequence[BoardPair], duplicate: bool) -> list[PairResult]:
    """What the Elo fit sees: a board pair's k/4 over its two games, or each game's 0, 1/2 or 1."""
    if duplicate:
        return [PairResult(p.first, p.second, p.half_points / 4, 2) for p in pairs]
    return [PairResult(g.team_even, g.team_odd, _half_points_for(g, g.team_even) / 2, 1) for g in finished]


def _or_minus_inf(value: float) -> float:
    return -math.inf if math.isnan(value) else value


def _team_standing(
    team: Team, finished: Sequence[GameRow], pairs: Sequence[BoardPair], ratings: dict[str, Rating]
) -> TeamStanding:
    mine = [g for g in finished if team.name in (g.team_even, g.team_odd)]
    wins = sum(1 for g in mine if _half_points_for(g, team.name) == 2)
    draws = sum(1 for g in mine if g.winner == -1)
    nets: list[float] = [float(p.net_points) for p in pairs if p.first == team.name]
    nets += [float(-p.net_points) for p in pairs if p.second == team.name]
    return TeamStanding(
        team=team.name,
        players=team.players,
        games=len(mine),
        wins=wins,
        draws=draws,
        losses=len(mine) - wins - draws,
        win_rate=wilson_interval(wins + draws / 2, len(mine)),
        points=mean_interval([float(_net_for(g, team.name)) for g in mine]),
        board_pairs=mean_interval(nets),
        rating=team_rating(ratings, team.players),
    )


def _head_to_head(
    row: str, column: str, finished: Sequence[GameRow], pairs: Sequence[BoardPair], duplicate: bool
) -> HeadToHead:
    games = [g for g in finished if {g.team_even, g.team_odd} == {row, column}]
    wins = sum(1 for g in games if _half_points_for(g, row) == 2)
    draws = sum(1 for g in games if g.winner == -1)
    counts = [0] * 5
    if duplicate:
        met = [p for p in pairs if {p.first, p.second} == {row, column}]
        nets = [float(p.net_points if p.first == row else -p.net_points) for p in met]
        for p in met:
            counts[p.half_points if p.first == row else 4 - p.half_points] += 1
    else:
        nets = [float(_net_for(g, row)) for g in games]
        for g in games:
            counts[2 * _half_points_for(g, row)] += 1  # a game counts as a pair of 0, 2 or 4
    elo = pentanomial_elo(counts)
    return HeadToHead(wins, draws, len(games) - wins - draws, mean_interval(nets), elo)


# ------------------------------------------------------------------------------------ output


def _interval(estimate: Estimate, scale: float = 1.0, digits: int = 1) -> str:
    if estimate.n == 0:
        return "-"
    if math.isnan(estimate.low):
        return f"{estimate.mean * scale:.{digits}f}"
    mean, low, high = (f"{v * scale:.{digits}f}" for v in (estimate.mean, estimate.low, estimate.high))
    return f"{mean} [{low}, {high}]"


def format_table(standings: Standings, duplicate: bool) -> str:
    """The standings, the head-to-head matrix and the SPRT verdicts as plain text."""
    lines = [
        f"Standings after {standings.games_finished} of {standings.games_total} games "
        f"({standings.hands_played} hands); 95 % intervals in brackets",
        "",
    ]
    header = (
        f"{'#':>2} {'team':<22}{'games':>6}{'W-D-L':>12}  {'win rate %':<22}{'points/game':<26}"
        + (f"{'board pair':<26}" if duplicate else "")
        + "rating (mu ± sigma)"
    )
    lines.append(header)
    for place, team in enumerate(standings.teams, start=1):
        record = f"{team.wins}-{team.draws}-{team.losses}"
        line = (
            f"{place:>2} {team.team:<22}{team.games:>6}{record:>12}  {_interval(team.win_rate, 100):<22}"
            f"{_interval(team.points):<26}"
            + (f"{_interval(team.board_pairs):<26}" if duplicate else "")
            + f"{team.rating.mu:.1f} ± {team.rating.sigma:.1f}"
        )
        lines.append(line)
    names = [t.team for t in standings.teams]
    lines += ["", "Head to head: the row's mean net points per " + ("board pair" if duplicate else "game")]
    width = max(12, *(len(n) + 2 for n in names))
    lines.append(" " * width + "".join(f"{n:>{width}}" for n in names))
    for row in names:
        cells = []
        for column in names:
            if row == column:
                cells.append(f"{'':>{width}}")
                continue
            cell = standings.head_to_head[(row, column)]
            text = "-" if cell.net.n == 0 else f"{cell.net.mean:+.0f} ({cell.net.n})"
            cells.append(f"{text:>{width}}")
        lines.append(f"{row:<{width}}" + "".join(cells))
    lines += ["", "SPRT per pairing (H1: the side is stronger by at least elo1; H0: by at most elo0)"]
    for verdict in standings.verdicts:
        lines.append(
            f"  {verdict.first} vs {verdict.second}: {verdict.summary} after {verdict.first_stronger.pairs} "
            + ("board pairs" if duplicate else "games")
        )
    lines += ["", _PAIRING_HEADING[duplicate]]
    for figures in standings.pairings:
        v, elo = figures.verdict, figures.elo
        lines.append(f"  {v.first} vs {v.second}: {_pentanomial(elo)}  Elo {elo}")
    lines += ["", _ELO_HEADING[duplicate], _elo_header()]
    for rank, (team, rating) in enumerate(standings.elo_table(), start=1):
        lines.append(_elo_line(rank, team, rating))
    if standings.incidents:
        lines += ["", "Forfeits and bots that ended early (the reason is in the store: games, seat_stats)"]
        lines += [f"  {line}" for line in standings.incidents]
    return "\n".join(lines)


_PAIRING_HEADING = {
    True: "Elo per pairing: [LL, LD, DD+WL, WD, WW] = board pairs in which the first team scored "
    "0, 1, 2, 3, 4 half points; its Elo difference [95 %], LOS",
    False: "Elo per pairing: [L, -, D, -, W] = games the first team lost, drew, won (a game counts "
    "as a pair of 0, 2 or 4 half points); its Elo difference [95 %], LOS",
}
_ELO_HEADING = {
    duplicate: f"Elo per team: the logistic model's maximum likelihood (as ordo) on every {unit};\n"
    "average 0, 95 % intervals; a prior of one drawn game against the average keeps a clean sweep finite"
    for duplicate, unit in ((True, "board pair's k/4"), (False, "game"))
}


def _pentanomial(elo: PentanomialElo) -> str:
    return "[" + ", ".join(str(c) for c in elo.counts) + "]"


def _elo_interval(rating: EloRating) -> str:
    return format_elo_interval(rating.elo, rating.low, rating.high)


def _elo_header() -> str:
    return (
        f"{'#':>2} {'team':<22}{'Elo [95 %]':<28}{'points':>8}{'games':>7}{'board pairs':>13}"
        f"{'score %':>9}  openskill (mu ± sigma)"
    )


def _elo_line(rank: int, team: TeamStanding, rating: EloRating) -> str:
    score = "-" if math.isnan(rating.score) else f"{100 * rating.score:.1f}"
    return (
        f"{rank:>2} {team.team:<22}{_elo_interval(rating):<28}{rating.points:>8g}{rating.games:>7}"
        f"{rating.results:>13}{score:>9}  {team.rating.mu:.1f} ± {team.rating.sigma:.1f}"
    )


def write_csv(standings: Standings, folder: Path) -> list[Path]:
    """standings.csv (one row per team), head_to_head.csv (one row per ordered pair of teams, with
    its pentanomial and Elo) and ratings.csv (the teams' maximum-likelihood Elo, by rank)."""
    folder.mkdir(parents=True, exist_ok=True)
    table = folder / "standings.csv"
    with table.open("w", newline="", encoding="utf-8") as out:
        writer = csv.writer(out)
        writer.writerow(
            [
                "place", "team", "players", "games", "wins", "draws", "losses",
                "win_rate", "win_rate_low", "win_rate_high",
                "points_per_game", "points_low", "points_high",
                "board_pairs", "board_pair_net", "board_pair_low", "board_pair_high",
                "rating_mu", "rating_sigma", "rating_ordinal",
            ]
        )  # fmt: skip
        for place, team in enumerate(standings.teams, start=1):
            writer.writerow(
                [
                    place, team.team, "+".join(team.players), team.games, team.wins, team.draws, team.losses,
                    *_csv_estimate(team.win_rate),
                    *_csv_estimate(team.points),
                    team.board_pairs.n, *_csv_estimate(team.board_pairs),
                    f"{team.rating.mu:.3f}", f"{team.rating.sigma:.3f}", f"{team.rating.ordinal:.3f}",
                ]
            )  # fmt: skip
    matrix = folder / "head_to_head.csv"
    with matrix.open("w", newline="", encoding="utf-8") as out:
        writer = csv.writer(out)
        writer.writerow(
            [
                "team", "opponent", "wins", "draws", "losses", "n", "net", "net_low", "net_high",
                "pairs", "ptnml_0", "ptnml_1", "ptnml_2", "ptnml_3", "ptnml_4", "elo", "elo_low", "elo_high",
                "los",
            ]
        )  # fmt: skip
        for (row, column), cell in sorted(standings.head_to_head.items()):
            e = cell.elo
            writer.writerow(
                [
                    row, column, cell.wins, cell.draws, cell.losses, cell.net.n, *_csv_estimate(cell.net),
                    e.pairs, *e.counts, *(_csv_number(v, 2) for v in (e.elo, e.low, e.high)),
                    _csv_number(e.los, 4),
                ]
            )  # fmt: skip
    elo = folder / "ratings.csv"
    with elo.open("w", newline="", encoding="utf-8") as out:
        writer = csv.writer(out)
        writer.writerow(
            [
                "rank", "team", "players", "elo", "elo_low", "elo_high", "elo_error", "points", "games",
                "board_pairs", "score", "openskill_mu", "openskill_sigma",
            ]
        )  # fmt: skip
        for rank, (team, rating) in enumerate(standings.elo_table(), start=1):
            writer.writerow(
                [
                    rank, team.team, "+".join(team.players),
                    *(_csv_number(v, 2) for v in (rating.elo, rating.low, rating.high, rating.error)),
                    f"{rating.points:g}", rating.games, rating.results, _csv_number(rating.score, 4),
                    f"{team.rating.mu:.3f}", f"{team.rating.sigma:.3f}",
                ]
            )  # fmt: skip
    return [table, matrix, elo]


def _csv_number(value: float, digits: int) -> str:
    """NaN as an empty cell, infinities as inf and -inf (what spreadsheets and float() read)."""
    if math.isnan(value):
        return ""
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return f"{round(value, digits) + 0.0:.{digits}f}"  # + 0.0: no "-0.00"


def _csv_estimate(estimate: Estimate) -> list[str]:
    return ["" if math.isnan(v) else f"{v:.4f}" for v in (estimate.mean, estimate.low, estimate.high)]


def write_html(standings: Standings, title: str, duplicate: bool, path: Path) -> Path:
    """A self-contained HTML page: standings, head-to-head matrix, SPRT verdicts, Elo, ratings."""
    esc = html.escape
    rows = []
    for place, team in enumerate(standings.teams, start=1):
        cells = [
            str(place), esc(team.team), esc(" + ".join(dict.fromkeys(team.players))), str(team.games),
            f"{team.wins}-{team.draws}-{team.losses}", esc(_interval(team.win_rate, 100)),
            esc(_interval(team.points)),
        ]  # fmt: skip
        if duplicate:
            cells.append(esc(_interval(team.board_pairs)))
        cells.append(f"{team.rating.mu:.1f} ± {team.rating.sigma:.1f}")
        rows.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    headers = ["#", "team", "players", "games", "W-D-L", "win rate % [95 %]", "points/game [95 %]"]
    if duplicate:
        headers.append("board pair net [95 %]")
    headers.append("rating μ ± σ")
    names = [t.team for t in standings.teams]
    matrix = ["<tr><th></th>" + "".join(f"<th>{esc(n)}</th>" for n in names) + "</tr>"]
    for row in names:
        cells = []
        for column in names:
            if row == column:
                cells.append("<td></td>")
                continue
            cell = standings.head_to_head[(row, column)]
            text = (
                f"{cell.wins}-{cell.draws}-{cell.losses}<br>{esc(str(cell.net))}<br>Elo {esc(str(cell.elo))}"
                if cell.net.n
                else "-"
            )
            cells.append(f"<td>{text}</td>")
        matrix.append(f"<tr><th>{esc(row)}</th>" + "".join(cells) + "</tr>")
    verdicts = "".join(
        f"<li>{esc(v.first)} vs {esc(v.second)}: {esc(v.summary)} ({v.first_stronger.pairs} pairs)</li>"
        for v in standings.verdicts
    )
    pairing_rows = "".join(
        f"<tr><td>{esc(f.verdict.first)} vs {esc(f.verdict.second)}</td><td>{esc(_pentanomial(f.elo))}</td>"
        f"<td>{f.elo.pairs}</td><td>{esc(format_elo_interval(f.elo.elo, f.elo.low, f.elo.high))}</td>"
        f"<td>{'-' if math.isnan(f.elo.los) else f'{100 * f.elo.los:.1f} %'}</td></tr>"
        for f in standings.pairings
    )
    elo_rows = "".join(
        f"<tr><td>{rank}</td><td>{esc(team.team)}</td>"
        f"<td>{esc(format_elo_interval(r.elo, r.low, r.high))}</td>"
        f"<td>{r.points:g}</td><td>{r.games}</td>"
        f"<td>{r.results}</td><td>{'-' if math.isnan(r.score) else f'{100 * r.score:.1f} %'}</td>"
        f"<td>{team.rating.mu:.1f} ± {team.rating.sigma:.1f}</td></tr>"
        for rank, (team, r) in enumerate(standings.elo_table(), start=1)
    )
    unit = "board pair" if duplicate else "game"
    ratings = "".join(
        f"<tr><td>{esc(name)}</td><td>{r.mu:.2f}</td><td>{r.sigma:.2f}</td><td>{r.ordinal:.2f}</td>"
        f"<td>{r.games}</td></tr>"
        for name, r in sorted(standings.ratings.items(), key=lambda item: -item[1].mu)
    )
    incidents = (
        "<h2>Forfeits and bots that ended early</h2><ul>"
        + "".join(f"<li>{esc(line)}</li>" for line in standings.incidents)
        + "</ul>\n"
        if standings.incidents
        else ""
    )
    page = f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{esc(title)}: standings</title>
<style>
body {{ font-family: system-ui, sans-serif; margin: 2em; }}
table {{ border-collapse: collapse; margin-bottom: 1.5em; }}
td, th {{ border: 1px solid #bbb; padding: 0.3em 0.6em; text-align: right; }}
td:nth-child(2), th {{ text-align: left; }}
</style></head><body>
<h1>{esc(title)}</h1>
<p>{standings.games_finished} of {standings.games_total} games finished, {standings.hands_played} hands.</p>
<h2>Standings</h2>
<table><tr>{"".join(f"<th>{esc(h)}</th>" for h in headers)}</tr>
{"".join(rows)}</table>
<h2>Head to head</h2>
<p>Each cell: the row team's wins-draws-losses against the column team, and its mean net points per
{"duplicate board pair" if duplicate else "game"} with the 95 % interval.</p>
<table>{"".join(matrix)}</table>
<h2>SPRT</h2><ul>{verdicts}</ul>
<h2>Elo per pairing</h2>
<p>The first team's {unit}s by half points scored, 0 to 4 ({
        "[LL, LD, DD+WL, WD, WW]" if duplicate else "a game counts as a pair of 0, 2 or 4"
    }), its Elo difference from their mean and variance with the
95 % interval, and the likelihood that it is the stronger (LOS).</p>
<table><tr><th>pairing</th><th>pentanomial</th><th>{unit}s</th><th>Elo [95 %]</th><th>LOS</th></tr>
{pairing_rows}</table>
<h2>Elo per team (maximum likelihood)</h2>
<p>The logistic Elo model fitted, as ordo fits it, to every {unit} ({
        "k/4 for k half points" if duplicate else "a draw counts half"
    }); the average is 0, the intervals (95 %) come from the Fisher information; each team
also draws one game against the average, a weak prior that keeps a team that won everything finite.</p>
<table><tr><th>#</th><th>team</th><th>Elo [95 %]</th><th>points</th><th>games</th><th>{unit}s</th>
<th>score</th><th>openskill μ ± σ</th></tr>{elo_rows}</table>
{incidents}<h2>Ratings (openskill Plackett-Luce)</h2>
<table><tr><th>entrant</th><th>μ</th><th>σ</th><th>μ − 3σ</th><th>games</th></tr>{ratings}</table>
</body></html>
"""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(page, encoding="utf-8")
    return path
