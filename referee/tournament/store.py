"""The tournament's results in SQLite: every game and round, committed the moment it ends.

The database is the tournament's memory: the schedule is written first (every game `pending`),
a game becomes `running` when its match is created and `finished` with its result in one
transaction; each round's score is committed as the referee scores it. WAL mode with
synchronous=NORMAL keeps every committed row through a killed process; only games that were
running when the process died are played again on resume (their partial rounds are cleared).
"""

from __future__ import annotations

import json
import secrets
import sqlite3
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from referee.tournament.schedule import GameSpec

SCHEMA_VERSION = "1"
SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
    run_id INTEGER PRIMARY KEY AUTOINCREMENT,
    kind TEXT NOT NULL,             -- 'run' or 'resume'
    started_at REAL NOT NULL,
    pid INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS games (
    game_id TEXT PRIMARY KEY,
    seq INTEGER NOT NULL,           -- position in the schedule
    pairing INTEGER NOT NULL,
    board INTEGER NOT NULL,
    table_no INTEGER NOT NULL,
    seed TEXT NOT NULL,
    team_even TEXT NOT NULL,        -- seats 0 and 2 (the referee's team A)
    team_odd TEXT NOT NULL,         -- seats 1 and 3 (team B)
    players TEXT NOT NULL,          -- JSON: the entrant at each seat
    status TEXT NOT NULL DEFAULT 'pending',  -- pending, running, finished
    attempts INTEGER NOT NULL DEFAULT 0,
    run_id INTEGER,                 -- the run that last started it
    match_id TEXT,
    replay_path TEXT,
    score_even INTEGER,
    score_odd INTEGER,
    winner INTEGER,                 -- 0: team_even, 1: team_odd, -1: draw
    forfeit INTEGER,
    forfeiting_team INTEGER,
    reason TEXT,
    rounds INTEGER,
    started_at REAL,
    finished_at REAL,
    summary_json TEXT
);
CREATE TABLE IF NOT EXISTS rounds (
    game_id TEXT NOT NULL REFERENCES games(game_id),
    round INTEGER NOT NULL,
    points_even INTEGER NOT NULL,
    points_odd INTEGER NOT NULL,
    total_even INTEGER NOT NULL,
    total_odd INTEGER NOT NULL,
    scored_at REAL NOT NULL,
    PRIMARY KEY (game_id, round)
);
CREATE INDEX IF NOT EXISTS games_by_status ON games(status, seq);
"""


class StoreError(Exception):
    """The database belongs to another tournament, or is missing when it should exist."""


@dataclass(frozen=True, slots=True)
class GameRow:
    """One game as stored."""

    game_id: str
    seq: int
    pairing: int
    board: int
    table_no: int
    seed: str
    team_even: str
    team_odd: str
    players: tuple[str, ...]
    status: str
    attempts: int
    run_id: int | None
    match_id: str | None
    replay_path: str | None
    score_even: int | None
    score_odd: int | None
    winner: int | None
    forfeit: bool
    forfeiting_team: int | None
    reason: str | None
    rounds: int | None
    started_at: float | None
    finished_at: float | None

    @property
    def finished(self) -> bool:
        """Whether the game has its result."""
        return self.status == "finished"


@dataclass(frozen=True, slots=True)
class GameResult:
    """What a finished game leaves: the MatchResult's fields plus the rounds played."""

    score_even: int
    score_odd: int
    winner: int
    forfeit: bool
    forfeiting_team: int
    reason: str
    rounds: int
    summary_json: str


class Store:
    """The tournament's SQLite database."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._db = sqlite3.connect(path, isolation_level=None)  # explicit transactions below
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute("PRAGMA foreign_keys=ON")
        self._db.executescript(SCHEMA)

    def close(self) -> None:
        """Close the connection."""
        self._db.close()

    # ---------------------------------------------------------------------------- setup

    def meta(self, key: str) -> str | None:
        """A stored setting (fingerprint, config), or None."""
        row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def salt_key(self) -> bytes:
        """The secret every game's salt is derived from: made once, on the first run that needs
        it (a store from before replays had commitments gains one on its next resume)."""
        with self._transaction():
            self._db.execute(
                "INSERT OR IGNORE INTO meta (key, value) VALUES ('salt_key', ?)", (secrets.token_hex(32),)
            )
        return bytes.fromhex(str(self.meta("salt_key")))

    def is_empty(self) -> bool:
        """No schedule was written yet."""
        count: int = self._db.execute("SELECT COUNT(*) FROM games").fetchone()[0]
        return count == 0

    def initialise(self, fingerprint: str, description: dict[str, Any], schedule: Sequence[GameSpec]) -> None:
        """Write the schedule (every game pending) and what it was made from, in one transaction."""
        with self._transaction():
            self._db.executemany(
                "INSERT INTO meta (key, value) VALUES (?, ?)",
                [
                    ("schema", SCHEMA_VERSION),
                    ("fingerprint", fingerprint),
                    ("config", json.dumps(description, sort_keys=True)),
                    ("created_at", str(time.time())),
                ],
            )
            self._db.executemany(
                "INSERT INTO games (game_id, seq, pairing, board, table_no, seed, team_even, team_odd,"
                " players) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (g.game_id, seq, g.pairing, g.board, g.table, g.seed, g.team_even, g.team_odd,
                     json.dumps(list(g.players)))
                    for seq, g in enumerate(schedule)
                ],
            )  # fmt: skip

    def check(self, fingerprint: str) -> None:
        """Refuse a database written for a tournament with other games or rules."""
        stored = self.meta("fingerprint")
        if stored != fingerprint:
            raise StoreError(
                f"{self.path} holds another tournament (fingerprint {stored}, this config's is "
                f"{fingerprint}): the seed, teams, rules or games per pairing differ"
            )

    def start_run(self, kind: str, pid: int) -> int:
        """Record that a run (or resume) began; its id. Games it finds running were interrupted."""
        with self._transaction():
            cursor = self._db.execute(
                "INSERT INTO runs (kind, started_at, pid) VALUES (?, ?, ?)", (kind, time.time(), pid)
            )
            interrupted = [
                r[0] for r in self._db.execute("SELECT game_id FROM games WHERE status = 'running'")
            ]
            self._db.executemany("DELETE FROM rounds WHERE game_id = ?", [(g,) for g in interrupted])
            self._db.execute("UPDATE games SET status = 'pending' WHERE status = 'running'")
        assert cursor.lastrowid is not None
        return cursor.lastrowid

    # ---------------------------------------------------------------------------- while running

    def mark_started(self, game_id: str, run_id: int, match_id: str, replay_path: str) -> None:
        """A game's match was created: it is running (and counts one more attempt)."""
        with self._transaction():
            self._db.execute("DELETE FROM rounds WHERE game_id = ?", (game_id,))
            self._db.execute(
                "UPDATE games SET status = 'running', attempts = attempts + 1, run_id = ?, match_id = ?,"
                " replay_path = ?, started_at = ? WHERE game_id = ?",
                (run_id, match_id, replay_path, time.time(), game_id),
            )

    def add_round(
        self, game_id: str, round_number: int, points: Sequence[int], totals: Sequence[int]
    ) -> None:
        """A round was scored."""
        with self._transaction():
            self._db.execute(
                "INSERT OR REPLACE INTO rounds (game_id, round, points_even, points_odd, total_even,"
                " total_odd, scored_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (game_id, round_number, points[0], points[1], totals[0], totals[1], time.time()),
            )

    def mark_finished(self, game_id: str, result: GameResult) -> None:
        """A game ended: its result, in one transaction."""
        with self._transaction():
            self._db.execute(
                "UPDATE games SET status = 'finished', score_even = ?, score_odd = ?, winner = ?,"
                " forfeit = ?, forfeiting_team = ?, reason = ?, rounds = ?, finished_at = ?, summary_json = ?"
                " WHERE game_id = ?",
                (
                    result.score_even, result.score_odd, result.winner, int(result.forfeit),
                    result.forfeiting_team, result.reason, result.rounds, time.time(), result.summary_json,
                    game_id,
                ),
            )  # fmt: skip

    def mark_pending(self, game_id: str) -> None:
        """A game could not be played to its end here: it will be played again on resume."""
        with self._transaction():
            self._db.execute("DELETE FROM rounds WHERE game_id = ?", (game_id,))
            self._db.execute("UPDATE games SET status = 'pending' WHERE game_id = ?", (game_id,))

    # ---------------------------------------------------------------------------- reading

    def games(self, status: str | None = None) -> list[GameRow]:
        """The games in schedule order, all or those with `status`."""
        query = "SELECT * FROM games" + (" WHERE status = ?" if status else "") + " ORDER BY seq"
        cursor = self._db.execute(query, (status,) if status else ())
        names = [d[0] for d in cursor.description]
        return [_row(dict(zip(names, values, strict=True))) for values in cursor]

    def rounds(self, game_ids: Iterable[str] | None = None) -> list[tuple[str, int, int, int]]:
        """(game_id, round, points_even, points_odd) of every stored round, or of some games."""
        rows = self._db.execute(
            "SELECT game_id, round, points_even, points_odd FROM rounds ORDER BY game_id, round"
        ).fetchall()
        wanted = None if game_ids is None else set(game_ids)
        return [(r[0], r[1], r[2], r[3]) for r in rows if wanted is None or r[0] in wanted]

    def runs(self) -> list[tuple[int, str]]:
        """(run_id, kind) of every run, first to last."""
        return [(r[0], r[1]) for r in self._db.execute("SELECT run_id, kind FROM runs ORDER BY run_id")]

    def _transaction(self) -> _Transaction:
        return _Transaction(self._db)


class _Transaction:
    """BEGIN ... COMMIT, or ROLLBACK on an exception."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    def __enter__(self) -> None:
        self._db.execute("BEGIN IMMEDIATE")

    def __exit__(self, kind: object, error: object, trace: object) -> None:
        self._db.execute("ROLLBACK" if kind is not None else "COMMIT")


def _row(data: dict[str, Any]) -> GameRow:
    return GameRow(
        game_id=data["game_id"],
        seq=data["seq"],
        pairing=data["pairing"],
        board=data["board"],
        table_no=data["table_no"],
        seed=data["seed"],
        team_even=data["team_even"],
        team_odd=data["team_odd"],
        players=tuple(json.loads(data["players"])),
        status=data["status"],
        attempts=data["attempts"],
        run_id=data["run_id"],
        match_id=data["match_id"],
        replay_path=data["replay_path"],
        score_even=data["score_even"],
        score_odd=data["score_odd"],
        winner=data["winner"],
        forfeit=bool(data["forfeit"]),
        forfeiting_team=data["forfeiting_team"],
        reason=data["reason"],
        rounds=data["rounds"],
        started_at=data["started_at"],
        finished_at=data["finished_at"],
    )
