"""A tournament's figures for its web page: the standings, the pairing matrix, the SPRTs, progress
and the estimated finish, and the LLR and Elo over time; plain JSON, every figure that cannot be
computed yet said in words.

The standings are the tournament's own (report.compute_standings, over the published games): the
page and `tichu tournament standings` never disagree.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from referee.tournament.progress import format_duration
from referee.tournament.ratings import PairResult, fit_elo
from referee.tournament.report import Standings, compute_standings
from referee.tournament.stats import (
    Estimate,
    format_elo_interval,
    pentanomial_llr,
    sprt_bounds,
)
from referee.tournament.store import GameRow, SeatRow
from referee.web.store_reader import GameView, RunState, TournamentInfo

CHART_POINTS = 240  # at most this many points per series: the charts stay light at 10,000 games
ELO_CHECKPOINTS = 40


def estimate_words(estimate: Estimate, scale: float = 1.0, digits: int = 1, unit: str = "") -> str:
    """A mean with its 95 % interval, or in words why there is none yet."""
    if estimate.n == 0:
        return "no result yet"
    mean = f"{estimate.mean * scale:.{digits}f}{unit}"
    if math.isnan(estimate.low):
        return f"{mean} (no interval yet: one result)"
    if estimate.low == estimate.high:
        return f"{mean} (no interval yet: every result alike)"
    low, high = (f"{v * scale:.{digits}f}" for v in (estimate.low, estimate.high))
    return f"{mean} [{low}, {high}]"


def los_words(los: float) -> str:
    """The likelihood of superiority as a percentage, or words."""
    return "not computable yet" if math.isnan(los) else f"{100 * los:.1f} %"


def _published(views: Sequence[GameView]) -> list[GameRow]:
    """The rows the standings count: a held game (its twin table still playing) as not yet finished."""
    return [v.row if v.status != "held" else dataclasses.replace(v.row, status="running") for v in views]


def standings_of(info: TournamentInfo, views: Sequence[GameView], seats: Sequence[SeatRow]) -> Standings:
    """The tournament's standings over its published games."""
    rows = _published(views)
    return compute_standings(
        rows,
        info.teams,
        info.pairing_firsts,
        info.sprt,
        info.duplicate,
        sum(r.rounds or 0 for r in rows if r.finished),
        seats,
    )


def tournament_figures(
    info: TournamentInfo,
    views: Sequence[GameView],
    seats: Sequence[SeatRow],
    counts: dict[str, int],
    run: RunState,
    now: float | None = None,
) -> dict[str, Any]:
    """Everything the tournament page shows but its game list, as JSON."""
    standings = standings_of(info, views, seats)
    unit = "board pair" if info.duplicate else "game"
    elo = standings.elo
    teams = []
    for place, team in enumerate(standings.teams, start=1):
        rating = elo[team.team]
        teams.append(
            {
                "place": place,
                "team": team.team,
                "players": list(dict.fromkeys(team.players)),
                "games": team.games,
                "wins": team.wins,
                "draws": team.draws,
                "losses": team.losses,
                "score": team.wins + team.draws / 2,
                "win_rate": estimate_words(team.win_rate, 100, 1, " %"),
                "points_per_game": estimate_words(team.points),
                "board_pair_net": estimate_words(team.board_pairs) if info.duplicate else None,
                "elo": None if math.isnan(rating.elo) else round(rating.elo, 1),
                "elo_text": format_elo_interval(rating.elo, rating.low, rating.high)
                if rating.results
                else "no result yet",
                "rating": f"{team.rating.mu:.1f} ± {team.rating.sigma:.1f}",
            }
        )
    names = [t.team for t in standings.teams]
    matrix = []
    for row in names:
        cells: list[dict[str, Any] | None] = []
        for column in names:
            if row == column:
                cells.append(None)
                continue
            cell = standings.head_to_head[(row, column)]
            cells.append(
                {
                    "opponent": column,
                    "record": f"{cell.wins}-{cell.draws}-{cell.losses}",
                    "net": estimate_words(cell.net, digits=0),
                    "elo": format_elo_interval(cell.elo.elo, cell.elo.low, cell.elo.high)
                    if cell.elo.pairs
                    else "no result yet",
                    "los": los_words(cell.elo.los),
                    "results": cell.net.n,
                }
            )
        matrix.append({"team": row, "cells": cells})
    lower, upper = sprt_bounds(info.sprt.alpha, info.sprt.beta)
    sprts = []
    for figures in standings.pairings:
        verdict, pentanomial = figures.verdict, figures.elo
        sprts.append(
            {
                "pairing": f"{verdict.first} vs {verdict.second}",
                "first": verdict.first,
                "second": verdict.second,
                "llr_first": round(verdict.first_stronger.llr, 3),
                "llr_second": round(verdict.second_stronger.llr, 3),
                "pairs": verdict.first_stronger.pairs,
                "decided": verdict.decided,
                "summary": verdict.summary,
                "pentanomial": list(pentanomial.counts),
                "elo": format_elo_interval(pentanomial.elo, pentanomial.low, pentanomial.high)
                if pentanomial.pairs
                else "no result yet",
                "los": los_words(pentanomial.los),
            }
        )
    s = info.sprt
    return {
        "name": info.name,
        "format": info.format,
        "duplicate": info.duplicate,
        "unit": unit,
        "progress": progress(counts, run, now),
        "standings": teams,
        "matrix": {"teams": names, "rows": matrix},
        "sprt": {
            "elo0": s.elo0,
            "elo1": s.elo1,
            "alpha": s.alpha,
            "beta": s.beta,
            "stop_early": s.stop_early,
            "lower": round(lower, 3),
            "upper": round(upper, 3),
            "settings": "from the config"
            if info.sprt_from_config
            else "the store keeps no SPRT settings: the defaults are shown (serve the config for its own)",
            "pairings": sprts,
        },
        "hands_played": standings.hands_played,
        "incidents": list(standings.incidents),
        "series": series(info, _published(views)),
    }


def progress(counts: dict[str, int], run: RunState, now: float | None = None) -> dict[str, Any]:
    """Games by status, and the finish estimated from this run's rate."""
    now = time.time() if now is None else now
    total = sum(counts.values())
    settled = counts.get("finished", 0) + counts.get("skipped", 0)
    left = total - settled - counts.get("held", 0)
    running = run.started_at is not None and run.ended_at is None
    eta_s: float | None = None
    if not running:
        words = "the run has ended" if run.started_at is not None else "not started yet"
        if left <= 0 and run.started_at is not None:
            words = "every game is settled"
    elif left <= 0 and counts.get("held", 0) == 0:
        words = "every game is settled"
    elif run.finished_in_run == 0 or run.started_at is None:
        words = "no estimate yet: no game of this run has finished"
    else:
        rate = run.finished_in_run / max(now - run.started_at, 1e-9)
        eta_s = left / rate
        words = f"about {format_duration(eta_s)} left, at {rate * 60:.1f} games a minute"
    return {
        "total": total,
        "counts": counts,
        "settled": settled,
        "percent": round(100 * settled / total, 1) if total else 0.0,
        "running": running,
        "eta_s": None if eta_s is None else round(eta_s, 1),
        "finish_at": None if eta_s is None else round(now + eta_s, 1),
        "eta": words,
    }


def _half_points(game: GameRow, team: str) -> int:
    if game.winner == -1:
        return 1
    winner = game.team_even if game.winner == 0 else game.team_odd
    return 2 if winner == team else 0


def _results(info: TournamentInfo, rows: Sequence[GameRow]) -> list[tuple[float, int, str, str, int]]:
    """(when, pairing, first, second, first's half points out of 4) of every complete result, in
    the order they completed: a duplicate board pair once both tables ended, else each game."""
    finished = [r for r in rows if r.finished]
    out: list[tuple[float, int, str, str, int]] = []
    if info.duplicate:
        tables: dict[tuple[int, int], list[GameRow]] = defaultdict(list)
        for row in finished:
            tables[(row.pairing, row.board)].append(row)
        for (pairing, _), pair in tables.items():
            if len(pair) != 2 or pairing not in info.pairing_firsts:
                continue
            first, second = info.pairing_firsts[pairing]
            when = max(g.finished_at or 0.0 for g in pair)
            out.append((when, pairing, first, second, sum(_half_points(g, first) for g in pair)))
    else:
        for row in finished:
            if row.pairing not in info.pairing_firsts:
                continue
            first, second = info.pairing_firsts[row.pairing]
            out.append((row.finished_at or 0.0, row.pairing, first, second, 2 * _half_points(row, first)))
    out.sort(key=lambda r: r[0])
    return out


def _thinned(n: int, points: int = CHART_POINTS) -> list[int]:
    """At most `points` indexes of 1..n, the last always among them."""
    if n <= points:
        return list(range(1, n + 1))
    step = n / points
    picks = sorted({max(1, round(step * (i + 1))) for i in range(points)})
    if picks[-1] != n:
        picks.append(n)
    return picks


def series(info: TournamentInfo, rows: Sequence[GameRow]) -> dict[str, Any]:
    """The charts' data: x = results completed (board pairs, or games), the LLR of each pairing's
    'first team stronger' test, and each team's maximum-likelihood Elo."""
    results = _results(info, rows)
    pairings = sorted(info.pairing_firsts)
    labels = [f"{info.pairing_firsts[p][0]} vs {info.pairing_firsts[p][1]}" for p in pairings]
    column = {p: i for i, p in enumerate(pairings)}
    counts = [[0] * 5 for _ in pairings]
    llr_rows: list[list[float]] = [[] for _ in pairings]
    xs = _thinned(len(results))
    wanted = set(xs)
    for n, (_, pairing, _, _, half) in enumerate(results, start=1):
        counts[column[pairing]][half] += 1
        if n in wanted:
            for i, c in enumerate(counts):
                llr = pentanomial_llr(c, info.sprt.elo0, info.sprt.elo1)
                llr_rows[i].append(round(llr, 3))
    team_names = [t.name for t in info.teams]
    elo_xs = _thinned(len(results), ELO_CHECKPOINTS)
    elo_rows: list[list[float | None]] = [[] for _ in team_names]
    merged: dict[tuple[str, str, float], int] = defaultdict(int)
    checkpoints = set(elo_xs)
    games_per = 2 if info.duplicate else 1
    for n, (_, _, first, second, half) in enumerate(results, start=1):
        # Identical outcomes add up exactly in the logistic likelihood: one fit of a few rows.
        merged[(first, second, half / 4)] += games_per
        if n in checkpoints:
            fitted = fit_elo(team_names, [PairResult(a, b, score, g) for (a, b, score), g in merged.items()])
            for i, name in enumerate(team_names):
                value = fitted[name].elo
                elo_rows[i].append(None if math.isnan(value) else round(value, 1))
    return {
        "unit": "board pairs" if info.duplicate else "games",
        "llr": {"x": xs, "labels": labels, "series": llr_rows},
        "elo": {"x": elo_xs, "labels": team_names, "series": elo_rows},
        "bounds": [round(b, 3) for b in sprt_bounds(info.sprt.alpha, info.sprt.beta)],
    }


def entrant_figures(
    info: TournamentInfo, entrant: str, views: Sequence[GameView], seats: Sequence[SeatRow]
) -> dict[str, Any]:
    """An entrant's record against each other entrant, its timeouts, violations and think times."""
    mine = set(info.teams_of(entrant))
    opponents: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])  # W, D, L, net points
    for view in views:
        g = view.row
        if view.status != "finished" or g.score_even is None or g.score_odd is None:
            continue
        if g.team_even in mine:
            own, other, net = g.team_even, g.team_odd, g.score_even - g.score_odd
        elif g.team_odd in mine:
            own, other, net = g.team_odd, g.team_even, g.score_odd - g.score_even
        else:
            continue
        half = _half_points(g, own)
        others = {p for t in info.teams if t.name == other for p in t.players} or {other}
        for name in sorted(others):
            record = opponents[name]
            record[{2: 0, 1: 1, 0: 2}[half]] += 1
            record[3] += net
    own_seats = [s for s in seats if s.entrant == entrant]
    decisions = sum(s.stats.decisions for s in own_seats)
    p50s = sorted(s.stats.think_ms_p50 for s in own_seats if s.stats.decisions)
    p99s = sorted(s.stats.think_ms_p99 for s in own_seats if s.stats.decisions)
    exits = [
        {"game_id": s.game_id, "seat": s.seat, "reason": s.exit_reason} for s in own_seats if s.exit_reason
    ]
    return {
        "entrant": entrant,
        "teams": sorted(mine),
        "against": [
            {
                "opponent": name,
                "wins": w,
                "draws": d,
                "losses": lost,
                "games": w + d + lost,
                "net_per_game": round(net / max(1, w + d + lost), 1),
            }
            for name, (w, d, lost, net) in sorted(opponents.items())
        ],
        "seats": len(own_seats),
        "decisions": decisions,
        "timeouts": sum(s.stats.timeouts for s in own_seats),
        "violations": sum(s.stats.rejections for s in own_seats),
        "reconnections": sum(s.stats.reconnections for s in own_seats),
        "think_ms_p50": _percentile(p50s, 0.5),
        "think_ms_p99": _percentile(p99s, 0.99),
        "think_words": _think_words(p50s, p99s),
        "exits": exits,
        "bot_names": sorted({f"{s.stats.bot_name} {s.stats.bot_version}".strip() for s in own_seats}),
    }


def _percentile(values: Sequence[float], q: float) -> float | None:
    if not values:
        return None
    index = min(len(values) - 1, max(0, math.ceil(q * len(values)) - 1))
    return round(values[index], 2)


def _think_words(p50s: Sequence[float], p99s: Sequence[float]) -> str:
    if not p50s:
        return "no decision recorded yet"
    return (
        f"per decision: median {_percentile(p50s, 0.5)} ms (the median of its games' medians), "
        f"p99 {_percentile(p99s, 0.99)} ms (the 99th percentile of its games' p99s)"
    )


__all__ = ["entrant_figures", "estimate_words", "progress", "series", "tournament_figures"]
