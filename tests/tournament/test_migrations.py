"""A store of the first release (schema 1) opens with this code: migrated in place, every row kept."""

from __future__ import annotations

import contextlib
import json
import sqlite3
from dataclasses import replace
from pathlib import Path

import pytest

from referee.match.outcome import Termination
from referee.match.summary import SeatSummary
from referee.tournament.config import parse_config
from referee.tournament.migrations import SCHEMA_VERSION
from referee.tournament.store import Store, StoreError, seat_rows
from tests.tournament.results import match_result

FIXTURE = Path(__file__).parent / "data" / "store_v1.sql"
# The tournament the fixture was made for (its fingerprint is in the fixture's meta).
CONFIG = """
[tournament]
name = "v1"
seed = "fixture"
games_per_pairing = 6

[[entrants]]
name = "random"
bot = "clients.random_bot:RandomBot"

[[entrants]]
name = "heuristic"
bot = "clients.heuristic_bot:HeuristicBot"
"""
G0, G1, G2, G3, G4, G5 = (f"p00-b000{board}-t{table}" for board in range(3) for table in range(2))


def _load(path: Path, *, drop_schema_key: bool = False) -> Path:
    with contextlib.closing(sqlite3.connect(path)) as db:
        db.executescript(FIXTURE.read_text(encoding="utf-8"))
        if drop_schema_key:
            db.execute("DELETE FROM meta WHERE key = 'schema'")
            db.commit()
    return path


def _schema(path: Path) -> list[tuple[str, str]]:
    with contextlib.closing(sqlite3.connect(path)) as db:
        rows = db.execute("SELECT name, sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY name")
        return [(name, sql) for name, sql in rows]


def test_a_v1_store_migrates_keeping_every_row(tmp_path: Path) -> None:
    path = _load(tmp_path / "results.sqlite")
    with contextlib.closing(sqlite3.connect(path)) as db:
        v1_games = db.execute("SELECT game_id, status, summary_json FROM games").fetchall()
    store = Store(path)
    assert store.meta("schema") == str(SCHEMA_VERSION) == "5"
    store.check(parse_config(CONFIG, tmp_path / "t.toml").fingerprint())  # the same tournament
    games = {g.game_id: g for g in store.games()}
    assert [(g.game_id, g.status, g.attempts) for g in games.values()] == [
        (G0, "finished", 1), (G1, "finished", 2), (G2, "running", 1),
        (G3, "pending", 1), (G4, "pending", 0), (G5, "pending", 0),
    ]  # fmt: skip
    assert len(v1_games) == 6 and all(games[g].status == status for g, status, _ in v1_games)
    assert (games[G1].score_even, games[G1].score_odd, games[G1].winner) == (150, 250, 1)
    assert games[G1].match_id == f"v1-{G1}-a2" and games[G1].replay_path == f"out/replays/v1-{G1}-a2.jsonl"
    assert games[G3].match_id is None and games[G3].replay_path is None  # no stale replay any more
    assert all(g.host == "" and g.skip_reason is None for g in games.values())
    # One attempt backfilled per game that had a match: its number, run and outcome.
    attempts = {(a.game_id, a.attempt): a for a in store.attempts()}
    assert {key: (a.run_id, a.outcome) for key, a in attempts.items()} == {
        (G0, 1): (1, "finished"),
        (G1, 2): (2, "finished"),
        (G2, 1): (2, "running"),
        (G3, 1): (2, "failed"),
    }
    assert attempts[(G3, 1)].match_id == f"v1-{G3}-a1" and attempts[(G3, 1)].failure_reason
    assert attempts[(G0, 1)].ended_at == games[G0].finished_at and attempts[(G2, 1)].ended_at is None
    # Seat statistics from the finished games' summaries, which are kept as they were.
    stats = store.seat_stats(G1)
    assert [(s.attempt, s.seat, s.entrant, s.stats.bot_version) for s in stats] == [
        (2, 0, "heuristic", "1.0"), (2, 1, "random", ""), (2, 2, "heuristic", "1.0"), (2, 3, "random", ""),
    ]  # fmt: skip
    summary = {game: text for game, _, text in v1_games}[G1]
    # The store keeps the counts; not the live referee's rate limit and bank.
    lines = [
        replace(SeatSummary.from_json(line), rate_limited=None, bank_left_ms=None)
        for line in json.loads(summary)["seats"]
    ]
    assert stats == seat_rows(G1, 2, games[G1].players, lines)
    assert stats[3].stats.decisions == 43 and stats[3].stats.think_ms_p99 == pytest.approx(5.5)
    # How a game ended was not stored before version 4.
    assert all(g.termination is None for g in games.values())
    assert all(s.exit_reason == "" for s in stats) and len(store.seat_stats()) == 8
    assert [(r.run_id, r.kind, r.pid, r.host, r.ended_at) for r in store.run_rows()] == [
        (1, "run", 4242, "", None), (2, "resume", 4343, "", None),
    ]  # fmt: skip
    assert store.rounds() == [(G0, 0, 300, 100), (G1, 0, 150, 250), (G2, 0, 60, 40)]
    store.close()
    assert _schema(path) == _schema(_fresh(tmp_path / "fresh.sqlite"))  # as if made by this code


def _fresh(path: Path) -> Path:
    Store(path).close()
    return path


def test_a_migrated_store_resumes(tmp_path: Path) -> None:
    store = Store(_load(tmp_path / "results.sqlite"))
    run = store.start_run("resume", 99, host="box")
    assert run == 3
    interrupted = store.attempts(G2)
    assert [(a.attempt, a.outcome) for a in interrupted] == [(1, "interrupted")]
    assert "run 3" in interrupted[0].failure_reason
    assert [g.game_id for g in store.games("pending")] == [G2, G3, G4, G5]
    assert store.rounds([G2]) == []  # the killed attempt's round is gone
    # The numbering goes on from version 1's attempt counts.
    assert store.mark_started(G2, run, f"v1-{G2}-a2", f"out/replays/v1-{G2}-a2.jsonl", "box") == 2
    assert store.mark_started(G4, run, f"v1-{G4}-a1", f"out/replays/v1-{G4}-a1.jsonl", "box") == 1
    seat = {"seat": 0, "bot_name": "heuristic", "bot_version": "2.0", "decisions": 5, "think_ms_p50": 1,
            "think_ms_p99": 2, "timeouts": 0, "rejections": 0, "tichu_calls": 0, "tichu_won": 0,
            "grand_tichu_calls": 0, "grand_tichu_won": 0, "bombs_played": 0, "points_won": 0,
            "reconnections": 0}  # fmt: skip
    result = match_result(200, 100, summary=[SeatSummary.from_json(seat)])
    store.mark_finished(G2, result, ("heuristic", "random", "heuristic", "random"))
    store.mark_pending(G4, "the referee refused it")
    store.end_run(run, 1)
    games = {g.game_id: g for g in store.games()}
    assert (games[G2].status, games[G2].match_id, games[G2].host) == ("finished", f"v1-{G2}-a2", "box")
    assert (games[G4].status, games[G4].match_id, games[G4].attempts) == ("pending", None, 1)
    assert [(a.attempt, a.outcome) for a in store.attempts(G2)] == [(1, "interrupted"), (2, "finished")]
    assert store.seat_stats(G2)[0].stats.bot_version == "2.0"
    assert games[G2].termination is Termination.PLAYED_OUT
    last = store.run_rows()[-1]
    assert (last.kind, last.host, last.exit_code) == ("resume", "box", 1) and last.ended_at is not None
    store.close()
    reopened = Store(tmp_path / "results.sqlite")  # already version 2: opened as it is
    assert len(reopened.attempts()) == 6 and reopened.meta("schema") == "5"
    reopened.close()


def test_a_store_without_a_schema_key_is_version_1(tmp_path: Path) -> None:
    store = Store(_load(tmp_path / "results.sqlite", drop_schema_key=True))
    assert store.meta("schema") == "5"
    assert len(store.attempts()) == 4 and len(store.games("finished")) == 2
    store.close()


def test_a_store_of_a_newer_tichu_is_refused_untouched(tmp_path: Path) -> None:
    path = _fresh(tmp_path / "results.sqlite")
    with contextlib.closing(sqlite3.connect(path)) as db:
        db.execute("UPDATE meta SET value = '7' WHERE key = 'schema'")
        db.execute("CREATE TABLE from_the_future (x)")
        db.commit()
    before = _schema(path)
    with pytest.raises(StoreError, match="schema version 7, written by a newer tichu"):
        Store(path)
    assert _schema(path) == before
    with contextlib.closing(sqlite3.connect(path)) as db:
        db.execute("UPDATE meta SET value = 'x' WHERE key = 'schema'")
        db.commit()
    with pytest.raises(StoreError, match="not a tichu results database"):
        Store(path)


def test_a_file_that_is_no_database_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "results.sqlite"
    path.write_text("not sqlite at all, just some text long enough to have a header" * 4)
    with pytest.raises(StoreError, match="give another database path"):
        Store(path)


def test_a_failing_migration_leaves_the_v1_store_as_it_was(tmp_path: Path) -> None:
    path = _load(tmp_path / "results.sqlite")
    before = _schema(path)
    with contextlib.closing(sqlite3.connect(path)) as db:
        db.execute("CREATE TABLE attempts (x)")  # the step's CREATE TABLE fails on it
        db.commit()
    with pytest.raises(sqlite3.OperationalError, match="attempts already exists"):
        Store(path)
    with contextlib.closing(sqlite3.connect(path)) as db:
        assert db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone() == ("1",)
        columns = [row[1] for row in db.execute("PRAGMA table_info(games)")]
    assert "host" not in columns
    assert sorted(_schema(path)) == sorted([*before, ("attempts", "CREATE TABLE attempts (x)")])
