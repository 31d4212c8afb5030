"""The store's schema and its migrations: every version's database opens with the newest code.

`meta.schema` holds a database's version; a database without that key is version 1 (the first
release wrote it only once the schedule was written). A database is brought to SCHEMA_VERSION by
running the steps after its version, in order, in one transaction: a failed step leaves it as it
was. A new database is made the same way, from version 1's tables, so a new and a migrated
database have one schema by construction. A later version appends a step to MIGRATIONS; a step
never changes once released.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable

from referee.match.fields import RecordError
from referee.match.summary import SeatSummary

# Version 1, as the first release made it, byte for byte (the baseline every migration starts
# from; a games status may also be `skipped` from version 2 on).
V1_TABLES = (
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    """CREATE TABLE IF NOT EXISTS runs (
    run_id INTEGER PRIMARY KEY AUTOINCREMENT,
    kind TEXT NOT NULL,             -- 'run' or 'resume'
    started_at REAL NOT NULL,
    pid INTEGER NOT NULL
)""",
    """CREATE TABLE IF NOT EXISTS games (
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
)""",
    """CREATE TABLE IF NOT EXISTS rounds (
    game_id TEXT NOT NULL REFERENCES games(game_id),
    round INTEGER NOT NULL,
    points_even INTEGER NOT NULL,
    points_odd INTEGER NOT NULL,
    total_even INTEGER NOT NULL,
    total_odd INTEGER NOT NULL,
    scored_at REAL NOT NULL,
    PRIMARY KEY (game_id, round)
)""",
    "CREATE INDEX IF NOT EXISTS games_by_status ON games(status, seq)",
)

# Attempts before version 2 kept no reason for a game set back to pending.
V1_UNKNOWN_FAILURE = "recorded before schema 2: failed or interrupted"


# Spelled out: this step writes version 2's columns, whatever SeatStats gains later.
_V2_SEAT_COLUMNS = (
    "game_id", "attempt", "seat", "entrant", "bot_name", "bot_version", "decisions", "think_ms_p50",
    "think_ms_p99", "timeouts", "rejections", "tichu_calls", "tichu_won", "grand_tichu_calls",
    "grand_tichu_won", "bombs_played", "points_won", "reconnections", "exit_reason",
)  # fmt: skip


def _v1_to_v2(db: sqlite3.Connection) -> None:
    """Attempts, seat statistics, entrant builds, skipped games, run ends and hosts."""
    for statement in (
        "ALTER TABLE runs ADD COLUMN ended_at REAL",  # NULL: the run died (or ended before v2)
        "ALTER TABLE runs ADD COLUMN exit_code INTEGER",
        "ALTER TABLE runs ADD COLUMN host TEXT NOT NULL DEFAULT ''",
        "ALTER TABLE games ADD COLUMN host TEXT NOT NULL DEFAULT ''",  # the host of its attempt
        "ALTER TABLE games ADD COLUMN skip_reason TEXT",
        """CREATE TABLE attempts (
    game_id TEXT NOT NULL REFERENCES games(game_id),
    attempt INTEGER NOT NULL,       -- 1, 2, ...: games.attempts is the latest
    run_id INTEGER,
    match_id TEXT NOT NULL,
    host TEXT NOT NULL DEFAULT '',
    started_at REAL,
    ended_at REAL,                  -- NULL while running, or when its run died
    outcome TEXT NOT NULL,          -- running, finished, failed, interrupted, lost
    failure_reason TEXT NOT NULL DEFAULT '',
    replay_path TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (game_id, attempt)
)""",
        "CREATE INDEX attempts_by_outcome ON attempts(outcome)",
        """CREATE TABLE seat_stats (
    game_id TEXT NOT NULL,
    attempt INTEGER NOT NULL,
    seat INTEGER NOT NULL,
    entrant TEXT NOT NULL,
    bot_name TEXT NOT NULL,
    bot_version TEXT NOT NULL,
    decisions INTEGER NOT NULL,
    think_ms_p50 REAL NOT NULL,
    think_ms_p99 REAL NOT NULL,
    timeouts INTEGER NOT NULL,
    rejections INTEGER NOT NULL,
    tichu_calls INTEGER NOT NULL,
    tichu_won INTEGER NOT NULL,
    grand_tichu_calls INTEGER NOT NULL,
    grand_tichu_won INTEGER NOT NULL,
    bombs_played INTEGER NOT NULL,
    points_won INTEGER NOT NULL,
    reconnections INTEGER NOT NULL,
    exit_reason TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (game_id, attempt, seat),
    FOREIGN KEY (game_id, attempt) REFERENCES attempts(game_id, attempt)
)""",
        """CREATE TABLE entrant_builds (
    run_id INTEGER NOT NULL REFERENCES runs(run_id),
    entrant TEXT NOT NULL,
    kind TEXT NOT NULL,             -- bot, command, remote
    source TEXT NOT NULL,           -- MODULE:CLASS, or the command line
    sha256 TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (run_id, entrant)
)""",
    ):
        db.execute(statement)
    # Version 1 kept the latest attempt of each game that was ever started: one row each.
    db.execute(
        "INSERT INTO attempts (game_id, attempt, run_id, match_id, started_at, ended_at, outcome,"
        " failure_reason, replay_path)"
        " SELECT game_id, MAX(attempts, 1), run_id, match_id, started_at,"
        " CASE status WHEN 'finished' THEN finished_at END,"
        " CASE status WHEN 'finished' THEN 'finished' WHEN 'running' THEN 'running' ELSE 'failed' END,"
        " CASE WHEN status NOT IN ('finished', 'running') THEN ? ELSE '' END,"
        " COALESCE(replay_path, '')"
        " FROM games WHERE match_id IS NOT NULL",
        (V1_UNKNOWN_FAILURE,),
    )
    # A pending game no longer points at the replay of an attempt that did not finish.
    db.execute("UPDATE games SET match_id = NULL, replay_path = NULL WHERE status = 'pending'")
    finished = db.execute(
        "SELECT game_id, MAX(attempts, 1), players, summary_json FROM games"
        " WHERE status = 'finished' AND match_id IS NOT NULL AND summary_json IS NOT NULL"
    ).fetchall()
    for game_id, attempt, players, summary_json in finished:
        rows = _v2_seat_rows(game_id, attempt, json.loads(players), summary_json)
        db.executemany(
            f"INSERT OR IGNORE INTO seat_stats ({', '.join(_V2_SEAT_COLUMNS)})"
            f" VALUES ({', '.join('?' * len(_V2_SEAT_COLUMNS))})",
            rows,
        )


def _v2_seat_rows(
    game_id: str, attempt: int, players: list[str], summary_json: str
) -> list[tuple[object, ...]]:
    """Version 2's seat rows of a version 1 game's summary_json; none when this code cannot read it
    (the game keeps it in summary_json)."""
    try:
        summary = json.loads(summary_json)
        lines = [SeatSummary.from_json(line) for line in summary["seats"]]
    except (ValueError, TypeError, KeyError, AttributeError, RecordError):
        return []
    rows = []
    for line in lines:
        entrant = players[line.seat] if 0 <= line.seat < len(players) else ""
        counts = line.counts()
        rows.append(
            (game_id, attempt, line.seat, entrant, line.bot_name, line.bot_version,
             *(counts[name] for name in _V2_SEAT_COLUMNS[6:-1]), "")
        )  # fmt: skip
    return rows


# MIGRATIONS[i] brings version i + 1 to version i + 2.
def _v2_to_v3(db: sqlite3.Connection) -> None:
    """Whether each attempt's bots ran in the sandbox (NULL: unknown, an attempt before v3)."""
    db.execute("ALTER TABLE attempts ADD COLUMN sandboxed INTEGER")


def _v3_to_v4(db: sqlite3.Connection) -> None:
    """How each game's match ended, as a Termination's value (NULL: no result, or one before v4)."""
    db.execute("ALTER TABLE games ADD COLUMN termination TEXT")


def _v4_to_v5(db: sqlite3.Connection) -> None:
    """Indexes for the web archive's pages: games by schedule order, by team, by board, by match
    and by finish time; seat statistics by entrant; attempts by match."""
    for statement in (
        "CREATE INDEX games_by_seq ON games(seq)",
        "CREATE INDEX games_by_team_even ON games(team_even, seq)",
        "CREATE INDEX games_by_team_odd ON games(team_odd, seq)",
        "CREATE INDEX games_by_board ON games(pairing, board)",
        "CREATE INDEX games_by_match ON games(match_id)",
        "CREATE INDEX games_by_finish ON games(finished_at)",
        "CREATE INDEX seat_stats_by_entrant ON seat_stats(entrant)",
        "CREATE INDEX attempts_by_match ON attempts(match_id)",
    ):
        db.execute(statement)


MIGRATIONS: tuple[Callable[[sqlite3.Connection], None], ...] = (_v1_to_v2, _v2_to_v3, _v3_to_v4, _v4_to_v5)
SCHEMA_VERSION = len(MIGRATIONS) + 1


def stored_version(db: sqlite3.Connection) -> int:
    """The database's schema version: 0 when it has no tables yet, 1 when it has no `schema` key;
    raises ValueError when the key is not a version number."""
    tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if "games" not in tables:
        return 0
    row = db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone() if "meta" in tables else None
    if row is None:
        return 1
    try:
        return int(row[0])
    except ValueError:
        raise ValueError(f"its schema version {row[0]!r} is not a number") from None


def migrate(db: sqlite3.Connection, version: int) -> None:
    """Bring a database of `version` (0: empty) to SCHEMA_VERSION; the caller holds the transaction."""
    if version == 0:
        for statement in V1_TABLES:
            db.execute(statement)
        version = 1
    for step in MIGRATIONS[version - 1 :]:
        step(db)
    db.execute(
        "INSERT INTO meta (key, value) VALUES ('schema', ?)"
        " ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        (str(SCHEMA_VERSION),),
    )
