"""The SQLite store (resume semantics, fingerprint) and the standings and ratings computed from it."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from referee.tournament.config import TournamentConfig, parse_config
from referee.tournament.progress import Progress, format_duration
from referee.tournament.ratings import rate_games
from referee.tournament.report import board_pairs, compute_standings, format_table, write_csv, write_html
from referee.tournament.schedule import build_schedule, pairings
from referee.tournament.store import Store, StoreError
from tests.tournament.results import match_result

CONFIG = """\
[tournament]
seed = "s"
games_per_pairing = 4

[[entrants]]
name = "a"
bot = "clients.random_bot:RandomBot"

[[entrants]]
name = "b"
bot = "clients.heuristic_bot:HeuristicBot"
"""


@pytest.fixture
def config() -> TournamentConfig:
    return parse_config(CONFIG, Path("t.toml"))


def _finish(store: Store, game_id: str, run_id: int, even: int, odd: int) -> None:
    store.mark_started(game_id, run_id, f"m-{game_id}", f"replays/m-{game_id}.jsonl")
    store.mark_finished(game_id, match_result(even, odd, hands=4))


def test_store_keeps_finished_games_and_resets_interrupted_ones(
    tmp_path: Path, config: TournamentConfig
) -> None:
    schedule = build_schedule(config)
    path = tmp_path / "r.sqlite"
    store = Store(path)
    assert store.is_empty()
    store.initialise(config.fingerprint(), {"name": "t"}, schedule)
    run = store.start_run("run", 1)
    _finish(store, schedule[0].game_id, run, 300, 100)
    store.mark_started(schedule[1].game_id, run, "m-1", "replays/m-1.jsonl")
    store.add_round(schedule[1].game_id, 0, (50, 50), (50, 50))
    store.close()  # as a killed process leaves it: game 1 running, one round stored

    reopened = Store(path)
    reopened.check(config.fingerprint())
    with pytest.raises(StoreError, match="another tournament"):
        reopened.check("0000")
    assert reopened.start_run("resume", 2) == 2
    rows = {row.game_id: row for row in reopened.games()}
    first, second = rows[schedule[0].game_id], rows[schedule[1].game_id]
    assert (first.status, first.score_even, first.score_odd, first.winner) == ("finished", 300, 100, 0)
    assert first.replay_path == f"replays/m-{schedule[0].game_id}.jsonl"
    assert (second.status, second.attempts) == ("pending", 1)
    # The finished game's four rounds (the first scored everything); the partial round is gone.
    assert reopened.rounds() == [
        (schedule[0].game_id, n, *((300, 100) if n == 0 else (0, 0))) for n in range(4)
    ]
    assert [r for r, _ in reopened.runs()] == [1, 2]
    assert len(reopened.games("pending")) == len(schedule) - 1
    reopened.close()


def test_board_pairs_standings_and_matrix(tmp_path: Path, config: TournamentConfig) -> None:
    schedule = build_schedule(config)  # board 0: t0 (a even), t1 (b even); board 1 likewise
    store = Store(tmp_path / "r.sqlite")
    store.initialise(config.fingerprint(), {}, schedule)
    run = store.start_run("run", 1)
    scores = {0: (300, 100), 1: (250, 150), 2: (100, 300), 3: (200, 200)}
    for index, (even, odd) in scores.items():
        _finish(store, schedule[index].game_id, run, even, odd)
    rows = store.games()
    pairs = board_pairs(rows, {0: "a"})
    # Board 0: a +200 at table 0, a -100 at table 1 (b even won 250-150): +100, one win each.
    # Board 1: a -200 at table 0, a 0 at table 1 (a draw): -200, a loss and a draw.
    assert [(p.board, p.net_points, p.half_points) for p in pairs] == [(0, 100, 2), (1, -200, 1)]
    standings = compute_standings(
        rows, config.teams, {0: ("a", "b")}, config.sprt, duplicate=True, rounds_played=16
    )
    by_team = {t.team: t for t in standings.teams}
    a, b = by_team["a"], by_team["b"]
    assert (a.games, a.wins, a.draws, a.losses) == (4, 1, 1, 2)
    assert (b.wins, b.draws, b.losses) == (2, 1, 1)
    assert a.points.mean == pytest.approx((200 - 100 - 200 + 0) / 4)
    assert a.board_pairs.mean == pytest.approx(-50) and b.board_pairs.mean == pytest.approx(50)
    assert a.win_rate.mean == pytest.approx(1.5 / 4)
    assert standings.leader == "b"
    cell = standings.head_to_head[("a", "b")]
    assert (cell.wins, cell.draws, cell.losses, cell.net.n) == (1, 1, 2, 2)
    assert standings.verdicts[0].first_stronger.pairs == 2
    # a's pentanomial: board 0 gave it 2 half points, board 1 one: mu 3/8 -> -88.7 Elo (test_stats).
    (figures,) = standings.pairings
    assert figures.elo.counts == (0, 1, 1, 0, 0) and figures.elo.elo == pytest.approx(-88.7395, abs=1e-4)
    assert cell.elo.counts == (0, 1, 1, 0, 0) and standings.head_to_head[("b", "a")].elo.counts == (
        0,
        0,
        1,
        1,
        0,
    )
    assert standings.elo["b"].elo == pytest.approx(-standings.elo["a"].elo) and standings.elo["b"].elo > 0
    assert (standings.elo["b"].points, standings.elo["b"].games, standings.elo["b"].results) == (2.5, 4, 2)
    text = format_table(standings, duplicate=True)
    assert "Standings after 4 of 4 games (16 hands)" in text
    assert "  a vs b: [0, 1, 1, 0, 0]  Elo -88.7 [-238.9, +33.6], LOS 7.9 %" in text
    elo_lines = text.split("Elo per team")[1].splitlines()
    assert elo_lines[3].split()[:3] == ["1", "b", f"{standings.elo['b'].elo:+.1f}"]
    csv_files = write_csv(standings, tmp_path / "out")
    assert csv_files[0].read_text().splitlines()[1].startswith("1,b,b+b,4,2,1,1,")
    matrix = csv_files[1].read_text().splitlines()
    assert matrix[1].startswith("a,b,1,1,2,2,") and matrix[1].endswith(
        ",2,0,1,1,0,0,-88.74,-238.92,33.62,0.0786"
    )
    assert csv_files[2].name == "ratings.csv"
    assert csv_files[2].read_text().splitlines()[1].startswith("1,b,b+b,")
    page = write_html(standings, "T", True, tmp_path / "out" / "s.html").read_text()
    assert "<h2>Head to head</h2>" in page and "1-1-2" in page
    assert "<h2>Elo per team (maximum likelihood)</h2>" in page and "[0, 1, 1, 0, 0]" in page
    # Without duplicate each game is its own "pair" of 0, 2 or 4 half points, as the SPRT counts it:
    # a won, lost, lost and drew; the Elo fit sees four games of 1, 0, 0 and 1/2.
    single = compute_standings(
        rows, config.teams, {0: ("a", "b")}, config.sprt, duplicate=False, rounds_played=16
    )
    assert single.pairings[0].elo.counts == (2, 0, 1, 0, 1) == single.head_to_head[("a", "b")].elo.counts
    assert single.pairings[0].elo.mu == pytest.approx(1.5 / 4)
    assert (single.elo["a"].points, single.elo["a"].games, single.elo["a"].results) == (1.5, 4, 4)
    assert "[L, -, D, -, W]" in format_table(single, duplicate=False)
    store.close()


def test_ratings_follow_results_and_teams(tmp_path: Path, config: TournamentConfig) -> None:
    schedule = build_schedule(config)
    store = Store(tmp_path / "r.sqlite")
    store.initialise(config.fingerprint(), {}, schedule)
    run = store.start_run("run", 1)
    for spec in schedule:
        # b wins every game, from either side of the table
        even, odd = (100, 300) if spec.team_odd == "b" else (300, 100)
        _finish(store, spec.game_id, run, even, odd)
    ratings = rate_games(store.games(), ["a", "b"])
    assert ratings["b"].mu > 25 > ratings["a"].mu
    assert ratings["a"].sigma < 25 / 3 and ratings["b"].games == 4
    # Ratings depend on the games, not on the order rows come in.
    assert rate_games(list(reversed(store.games())), ["a", "b"]) == ratings
    assert math.isclose(ratings["a"].mu + ratings["b"].mu, 50, rel_tol=1e-9)
    store.close()


def test_pairings_first_team_follows_config(config: TournamentConfig) -> None:
    assert [(p.first.name, p.second.name) for p in pairings(config)] == [("a", "b")]


class _Out:
    def __init__(self) -> None:
        self.text = ""

    def write(self, text: str) -> None:
        self.text += text

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False


def test_progress_lines_rate_and_time_left() -> None:
    clock = [100.0]
    out = _Out()
    progress = Progress(out, 10, live=False, log_every_s=5, now=lambda: clock[0])  # type: ignore[arg-type]
    clock[0] = 110.0
    progress.update(5, 20, "b (+50 per board pair)")
    assert out.text == (
        "progress: 5/10 games, 20 hands, 2.00 hands/s, 10s elapsed, 10s left, leader b (+50 per board pair)\n"
    )
    clock[0] = 111.0
    progress.update(6, 24, "b")  # within 5 s of the last line: nothing
    assert out.text.count("\n") == 1
    progress.finish()
    assert out.text.splitlines()[-1].startswith("finished: 6/10 games")
    assert format_duration(3725) == "1h02m" and format_duration(185) == "3m05s"
    assert format_duration(float("inf")) == "?"
