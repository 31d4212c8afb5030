"""A small duplicate tournament between the sample bots, killed with SIGKILL mid-way and resumed.

Checks what the organiser relies on: no finished game is played again, the interrupted games
are, every game and round is in SQLite with its replay, and the standings (CSV) agree with the
stored rows; and what its audience relies on: the seed commitments published before the first
game are the ones every replay (any attempt) commits to and opens, and every replay is signed.
"""

from __future__ import annotations

import contextlib
import csv
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

from referee.replay import read_replay
from referee.replay.signing import load_public_key, write_key_pair
from referee.replay.verify import verify
from tests.tournament.support import HEURISTIC, OUTPUTS, RANDOM, REPO, SHOWCASE, game_statuses

CONFIG = f"""
[tournament]
name = "e2e"
seed = "e2e-seed"
games_per_pairing = 4        # two duplicate board pairs per pairing
concurrency = 4
signing_key = "referee.key"
{OUTPUTS}
[rules]
preset = "tournament"
match_mode = "fixed_rounds:2"

[sprt]
stop_early = false
{RANDOM}{HEURISTIC}{SHOWCASE}"""
TEAMS = ("random", "heuristic", "showcase")
GAMES = 12  # 3 pairings x 2 boards x 2 tables


def _tichu(*args: str) -> list[str]:
    return [sys.executable, "-m", "referee.cli", "tournament", *args]


def _rows(db: Path, query: str) -> list[tuple[object, ...]]:
    with contextlib.closing(sqlite3.connect(db)) as conn:
        return conn.execute(query).fetchall()


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


def test_killed_tournament_resumes_without_replaying_finished_games(tmp_path: Path) -> None:
    config = tmp_path / "e2e.toml"
    config.write_text(CONFIG, encoding="utf-8")
    public_key = load_public_key(write_key_pair(tmp_path / "referee.key"))
    db = tmp_path / "out" / "results.sqlite"
    commitments_file = tmp_path / "out" / "commitments.csv"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    first_log = (tmp_path / "first.log").open("w")
    first = subprocess.Popen(
        _tichu("run", str(config), "--log-lines"),
        cwd=tmp_path, env=env, stdout=first_log, stderr=subprocess.STDOUT, start_new_session=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while (
            game_statuses(db).get("finished", 0) < 3 and first.poll() is None and time.monotonic() < deadline
        ):
            time.sleep(0.05)
        assert first.poll() is None, "the tournament ended before it could be interrupted"
        assert 3 <= game_statuses(db).get("finished", 0) < GAMES
        published = commitments_file.read_bytes()  # there before the first game began
        os.kill(first.pid, signal.SIGKILL)
        first.wait(10)
    finally:
        if first.poll() is None:
            first.kill()
        first_log.close()
    # The bot workers notice that their referee is gone and exit by themselves.
    deadline = time.monotonic() + 30
    while _group_alive(first.pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    orphans = _group_alive(first.pid)
    if orphans:
        os.killpg(first.pid, signal.SIGKILL)
    assert not orphans, "bot workers outlived the killed tournament by 30 s"

    before = {
        row[0]: row[1:]
        for row in _rows(
            db, "SELECT game_id, finished_at, attempts, run_id FROM games WHERE status = 'finished'"
        )
    }
    interrupted = {row[0] for row in _rows(db, "SELECT game_id FROM games WHERE status = 'running'")}
    assert before

    resumed = subprocess.run(
        _tichu("resume", str(config), "--log-lines"),
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert f"{GAMES - len(before)} of {GAMES} games to play" in resumed.stdout
    # The resume rewrote the same commitments: the salts come from the store, not from the run.
    assert commitments_file.read_bytes() == published
    with commitments_file.open(encoding="utf-8") as file:
        commitments = {row["game_id"]: row["seed_commitment"] for row in csv.DictReader(file)}
    assert len(commitments) == GAMES and len(set(commitments.values())) == GAMES

    games = _rows(
        db,
        "SELECT game_id, status, attempts, run_id, finished_at, team_even, team_odd, score_even, score_odd,"
        " winner, rounds, replay_path, forfeit FROM games ORDER BY seq",
    )
    assert len(games) == GAMES
    assert _rows(db, "SELECT kind FROM runs ORDER BY run_id") == [("run",), ("resume",)]
    for game_id, status, attempts, run_id, finished_at, *_ in games:
        assert status == "finished"
        if game_id in before:
            # Played once, in the first run, and left alone by the resume.
            assert (finished_at, attempts, run_id) == before[game_id]
            assert attempts == 1 and run_id == 1
        else:
            assert run_id == 2
            assert attempts == (2 if game_id in interrupted else 1)

    # Every game has its two rounds, which add up to its final score, and its replay.
    rounds: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for game_id, _round, even, odd in _rows(db, "SELECT game_id, round, points_even, points_odd FROM rounds"):
        rounds[str(game_id)].append((int(even), int(odd)))  # type: ignore[call-overload]
    for game_id, _s, _a, _r, _f, _te, _to, score_even, score_odd, _w, n_rounds, replay_path, forfeit in games:
        assert n_rounds == 2 and len(rounds[str(game_id)]) == 2
        if not forfeit:
            assert sum(e for e, _ in rounds[str(game_id)]) == score_even
            assert sum(o for _, o in rounds[str(game_id)]) == score_odd
        path = Path(str(replay_path)) if Path(str(replay_path)).is_absolute() else tmp_path / str(replay_path)
        # The replay is the game's, complete, and re-runs through the engine to the stored score.
        replay = read_replay(path)
        verdict = verify(replay, public_key)
        assert verdict.run is not None and list(verdict.run.state.scores) == [score_even, score_odd]
        assert replay.header.seed_commitment == commitments[str(game_id)]
    # An interrupted attempt's partial replay commits to the same seed as the game's last attempt.
    for game_id in interrupted:
        first_path = tmp_path / "out" / "replays" / f"e2e-{game_id}-a1.jsonl"
        if not first_path.exists() or first_path.stat().st_size == 0:
            # Killed in the instant between the store's `running` and the header's flush (the
            # kill follows a game's end, which is when the next game starts): nothing to check.
            continue
        first_attempt = read_replay(first_path)
        assert first_attempt.header.seed_commitment == commitments[game_id]
        if first_attempt.result is None:
            assert "seed is not revealed yet" in verify(first_attempt).text
        else:
            # Killed after the replay's last line and before the store recorded the game: the
            # store decides, so resume played it again; this attempt is a whole, valid game.
            assert verify(first_attempt, public_key).run is not None

    # The standings the resume wrote agree with the rows.
    expected: dict[str, dict[str, float]] = {t: defaultdict(float) for t in TEAMS}
    for *_, team_even, team_odd, score_even, score_odd, winner, _n, _rp, _fo in games:
        for team, own, other, side in (
            (team_even, score_even, score_odd, 0),
            (team_odd, score_odd, score_even, 1),
        ):
            stats = expected[str(team)]
            stats["games"] += 1
            stats["wins"] += winner == side
            stats["draws"] += winner == -1
            stats["net"] += int(own) - int(other)  # type: ignore[call-overload]
    with (tmp_path / "out" / "standings.csv").open(encoding="utf-8") as file:
        table = {row["team"]: row for row in csv.DictReader(file)}
    assert set(table) == set(TEAMS)
    for team, stats in expected.items():
        row = table[team]
        assert int(row["games"]) == stats["games"] == 8
        assert int(row["wins"]) == stats["wins"]
        assert int(row["draws"]) == stats["draws"]
        assert abs(float(row["points_per_game"]) - stats["net"] / stats["games"]) < 1e-3
        assert int(row["board_pairs"]) == 4
    # What the resume printed is what `standings` prints from the database alone.
    again = subprocess.run(
        _tichu("standings", str(config)), cwd=tmp_path, env=env, capture_output=True, text=True, check=True
    )
    assert again.stdout.split("\n\nWritten:")[0] in resumed.stdout


def test_a_board_stored_whole_but_killed_before_its_publication_is_published_on_resume(
    tmp_path: Path,
) -> None:
    """The window the killed-tournament test hits only by chance: both tables of a board stored
    as finished, their replays still in the private live folder. Resume publishes them."""
    config = tmp_path / "e2e.toml"
    config.write_text(CONFIG, encoding="utf-8")
    write_key_pair(tmp_path / "referee.key")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        _tichu("run", str(config)),
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    replays = tmp_path / "out" / "replays"
    live = tmp_path / "out" / "live"
    board = sorted(replays.glob("e2e-p00-b0000-t*-a*.jsonl"))
    assert len(board) == 2
    live.mkdir(exist_ok=True)
    for path in board:
        path.rename(live / path.name)  # as a kill between storing and publishing leaves them
    resumed = subprocess.run(
        _tichu("resume", str(config)),
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert sorted(p.name for p in replays.glob("e2e-p00-b0000-t*-a*.jsonl")) == [p.name for p in board]
    assert not list(live.glob("*.jsonl"))
