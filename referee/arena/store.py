"""The arena's state in one SQLite file (WAL): its bots and their keys' hashes, every pair played
or cut off, each pair's games, and the ratings with their history.

What makes a SIGKILL harmless: a pair is written as `playing` when it starts and becomes
`finished` (its games, its rating update, the bots' new ratings and their forfeits in a row in
the same transaction) or `voided` (with their forfeits in a row too, when its tables said any); an
arena that starts finds the pairs it left `playing` and voids them with the reason.
So no finished pair is lost and none is ever half rated. The schema's version is SQLite's
`user_version`; each migration moves it up by one.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from enum import StrEnum
from pathlib import Path

from referee.arena.keys import key_hash, key_matches, new_key

SCHEMA_VERSION = 3
# A bot's name: what the leaderboard, the pages and the replays show.
BOT_NAME_CHARS = 32
INTERRUPTED = "the arena stopped while the pair was being played"

MIGRATIONS: dict[int, str] = {
    1: """
    CREATE TABLE bots (
        name TEXT PRIMARY KEY,
        kind TEXT NOT NULL CHECK (kind IN ('hosted', 'remote')),
        bot TEXT NOT NULL DEFAULT '',          -- MODULE:CLASS of a hosted Python bot
        command TEXT NOT NULL DEFAULT '[]',    -- a hosted command, as a JSON list of arguments
        workdir TEXT NOT NULL DEFAULT '',      -- where a hosted command runs
        house INTEGER NOT NULL DEFAULT 0,      -- one of the arena's own bots (from its config)
        key_hash TEXT NOT NULL,
        key_set_at REAL NOT NULL,
        state TEXT NOT NULL,
        reason TEXT NOT NULL DEFAULT '',
        version INTEGER NOT NULL DEFAULT 1,    -- a changed command or class is a new version
        created_at REAL NOT NULL
    );
    CREATE TABLE pairs (
        id INTEGER PRIMARY KEY,
        bot_a TEXT NOT NULL REFERENCES bots(name),
        bot_b TEXT NOT NULL REFERENCES bots(name),
        leaderboard TEXT NOT NULL,
        seed TEXT NOT NULL,
        validation INTEGER NOT NULL DEFAULT 0, -- a new bot's first pair: never rated
        state TEXT NOT NULL CHECK (state IN ('playing', 'finished', 'voided')),
        reason TEXT NOT NULL DEFAULT '',
        started_at REAL NOT NULL,
        ended_at REAL,
        points_a INTEGER,                      -- the pair's totals over its tables
        points_b INTEGER,
        finished_seq INTEGER UNIQUE            -- the order pairs finished in: the ratings' order
    );
    CREATE INDEX pairs_by_bot_a ON pairs (bot_a, id);
    CREATE INDEX pairs_by_bot_b ON pairs (bot_b, id);
    CREATE TABLE games (
        pair_id INTEGER NOT NULL REFERENCES pairs(id),
        table_no INTEGER NOT NULL,
        match_id TEXT NOT NULL,
        a_seats INTEGER NOT NULL,              -- 0: bot_a sat at seats 0 and 2; 1: at 1 and 3
        points_a INTEGER NOT NULL,
        points_b INTEGER NOT NULL,
        termination TEXT NOT NULL,
        reason TEXT NOT NULL,
        stats_a TEXT NOT NULL,                 -- JSON: decisions, timeouts, rejections, think time
        stats_b TEXT NOT NULL,
        PRIMARY KEY (pair_id, table_no)
    );
    CREATE TABLE ratings (
        bot TEXT NOT NULL REFERENCES bots(name),
        leaderboard TEXT NOT NULL,
        mu REAL NOT NULL,
        sigma REAL NOT NULL,
        pairs INTEGER NOT NULL,
        wins INTEGER NOT NULL,
        draws INTEGER NOT NULL,
        losses INTEGER NOT NULL,
        margin INTEGER NOT NULL,               -- the sum of its pairs' duplicate margins
        last_played REAL,
        PRIMARY KEY (bot, leaderboard)
    );
    CREATE TABLE rating_history (
        pair_id INTEGER NOT NULL REFERENCES pairs(id),
        bot TEXT NOT NULL,
        mu REAL NOT NULL,
        sigma REAL NOT NULL,
        PRIMARY KEY (pair_id, bot)
    );
    """,
    # Where each game was played: "arena" (the arena's own referee) or a Ray host's name
    # (machine/node/index), as a tournament's store says; games stored before say "".
    2: """
    ALTER TABLE games ADD COLUMN host TEXT NOT NULL DEFAULT '';
    """,
    # The pairs in a row in which a bot forfeited a table: the arena pauses it at its config's
    # pause_after_forfeits, and a restart must not forget how close it is.
    3: """
    ALTER TABLE bots ADD COLUMN forfeits_in_a_row INTEGER NOT NULL DEFAULT 0;
    """,
}


class ArenaStoreError(Exception):
    """The store cannot be used (a newer schema, a name taken or unknown)."""


class BotState(StrEnum):
    """Where a bot stands: validating (its first pair), active, paused (by the arena, with a
    reason), disabled (by its owner or the organiser), refused (it failed its validation)."""

    VALIDATING = "validating"
    ACTIVE = "active"
    PAUSED = "paused"
    DISABLED = "disabled"
    REFUSED = "refused"


@dataclass(frozen=True, slots=True)
class BotRow:
    """A registered bot."""

    name: str
    kind: str  # "hosted" or "remote"
    bot: str
    command: tuple[str, ...]
    workdir: str
    house: bool
    state: BotState
    reason: str
    version: int
    created_at: float
    key_set_at: float
    forfeits_in_a_row: int = 0  # its last pairs, in a row, with a table it forfeited

    @property
    def hosted(self) -> bool:
        """Whether the arena runs it itself."""
        return self.kind == "hosted"


@dataclass(frozen=True, slots=True)
class GameRow:
    """One table of a pair, as it ended."""

    table_no: int
    match_id: str
    a_seats: int
    points_a: int
    points_b: int
    termination: str
    reason: str
    stats_a: dict[str, float]
    stats_b: dict[str, float]
    host: str = ""  # the host that played it ("arena", or a Ray host's machine/node/index)


@dataclass(frozen=True, slots=True)
class PairRow:
    """A duplicate pair between two bots: playing, finished (with its totals) or voided."""

    id: int
    bot_a: str
    bot_b: str
    leaderboard: str
    seed: str
    validation: bool
    state: str
    reason: str
    started_at: float
    ended_at: float | None
    points_a: int | None
    points_b: int | None
    finished_seq: int | None = None

    @property
    def margin(self) -> int:
        """bot_a's duplicate margin: its points minus bot_b's over both tables."""
        return (self.points_a or 0) - (self.points_b or 0)


@dataclass(frozen=True, slots=True)
class RatingRow:
    """A bot's standing on a leaderboard."""

    bot: str
    leaderboard: str
    mu: float
    sigma: float
    pairs: int
    wins: int
    draws: int
    losses: int
    margin: int
    last_played: float | None

    @property
    def score(self) -> float:
        """The conservative rank score: the skill the bot almost surely has at least."""
        return self.mu - 3 * self.sigma


class ArenaStore:
    """The arena's SQLite store; one writer (the arena), any number of readers (its commands)."""

    def __init__(self, path: Path, *, wall: Callable[[], float] = time.time) -> None:
        self.path = path
        self._wall = wall
        path.parent.mkdir(parents=True, exist_ok=True)
        # Autocommit: each change is its own transaction unless `transaction()` groups them.
        # The timeout is SQLite's busy wait, from the first statement on: turning WAL on takes the
        # file's lock for a moment, which another process opening the store may hold (a loaded
        # machine held it past the default 5 s once, with eight processes opening one new store).
        self._db = sqlite3.connect(path, timeout=30.0, isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA foreign_keys=ON")
        self._migrate()

    def close(self) -> None:
        """Close the file."""
        self._db.close()

    def _migrate(self) -> None:
        version = int(self._db.execute("PRAGMA user_version").fetchone()[0])
        if version > SCHEMA_VERSION:
            raise ArenaStoreError(
                f"{self.path} has schema {version}; this release reads up to {SCHEMA_VERSION}: upgrade tichu"
            )
        for target in range(version + 1, SCHEMA_VERSION + 1):
            with self.transaction():
                # Read again inside the write lock: another process (the arena and a command
                # started at once) may have made this version meanwhile.
                if int(self._db.execute("PRAGMA user_version").fetchone()[0]) >= target:
                    continue
                for statement in _statements(MIGRATIONS[target]):
                    self._db.execute(statement)
                self._db.execute(f"PRAGMA user_version = {target}")

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One transaction: everything in the block is written, or nothing."""
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield self._db
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    # ---------------------------------------------------------------------------- bots

    def add_bot(
        self,
        name: str,
        *,
        bot: str = "",
        command: Sequence[str] = (),
        workdir: str = "",
        house: bool = False,
        state: BotState = BotState.VALIDATING,
    ) -> str:
        """Register a bot (hosted when it has a class or a command, else remote); its key, which
        only its hash is kept of. ArenaStoreError if the name is taken."""
        check_bot_name(name)
        if bot and command:
            raise ArenaStoreError("a hosted bot is a Python class or a command, not both")
        key = new_key()
        now = self._wall()
        kind = "hosted" if bot or command else "remote"
        try:
            self._db.execute(
                "INSERT INTO bots (name, kind, bot, command, house, key_hash, key_set_at, state, created_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    name,
                    kind,
                    bot,
                    json.dumps(list(command)),
                    int(house),
                    key_hash(key),
                    now,
                    state.value,
                    now,
                ),
            )
        except sqlite3.IntegrityError:
            raise ArenaStoreError(f"a bot named {name!r} exists already") from None
        return key

    def bot(self, name: str) -> BotRow:
        """A bot by name; ArenaStoreError if there is none."""
        row = self._db.execute(f"SELECT {_BOT_COLUMNS} FROM bots WHERE name = ?", (name,)).fetchone()
        if row is None:
            raise ArenaStoreError(f"no bot named {name!r}")
        return _bot_row(row)

    def bots(self) -> list[BotRow]:
        """Every bot, oldest first."""
        rows = self._db.execute(f"SELECT {_BOT_COLUMNS} FROM bots ORDER BY created_at, name").fetchall()
        return [_bot_row(row) for row in rows]

    def rotate_key(self, name: str) -> str:
        """A new key for the bot (the old one stops working at once); the new key."""
        self.bot(name)
        key = new_key()
        self._db.execute(
            "UPDATE bots SET key_hash = ?, key_set_at = ? WHERE name = ?", (key_hash(key), self._wall(), name)
        )
        return key

    def authenticate(self, key: str, *, include_disabled: bool = False) -> BotRow | None:
        """The bot whose key this is, if any is and it is not disabled (unless asked)."""
        for row in self._db.execute(f"SELECT {_BOT_COLUMNS}, key_hash FROM bots").fetchall():
            if key_matches(key, row[-1]):
                found = _bot_row(row[:-1])
                return found if include_disabled or found.state is not BotState.DISABLED else None
        return None

    def set_state(self, name: str, state: BotState, reason: str = "") -> None:
        """Move a bot to `state`, saying why."""
        self.bot(name)
        self._db.execute("UPDATE bots SET state = ?, reason = ? WHERE name = ?", (state.value, reason, name))

    def update_hosted(self, name: str, *, bot: str = "", command: Sequence[str] = ()) -> bool:
        """A hosted bot's class or command as its config now says; a change makes a new version
        (to validate again, unless the arena trusts it: a house bot). Whether it changed."""
        row = self.bot(name)
        if row.bot == bot and row.command == tuple(command):
            return False
        self._db.execute(
            "UPDATE bots SET bot = ?, command = ?, version = version + 1, state = ?, reason = ''"
            " WHERE name = ?",
            (bot, json.dumps(list(command)), BotState.VALIDATING.value, name),
        )
        return True

    # ---------------------------------------------------------------------------- pairs

    def start_pair(self, bot_a: str, bot_b: str, leaderboard: str, seed: str, *, validation: bool) -> int:
        """Write a pair as being played; its id."""
        cursor = self._db.execute(
            "INSERT INTO pairs (bot_a, bot_b, leaderboard, seed, validation, state, started_at)"
            " VALUES (?, ?, ?, ?, ?, 'playing', ?)",
            (bot_a, bot_b, leaderboard, seed, int(validation), self._wall()),
        )
        assert cursor.lastrowid is not None
        return cursor.lastrowid

    def void_pair(
        self, pair_id: int, reason: str, forfeited: Mapping[str, bool] | None = None
    ) -> dict[str, int]:
        """A pair cut off: kept, with why, and never rated; with `forfeited`, its bots' forfeits in
        a row counted at once (as finish_pair does); their new counts (none if the pair had ended)."""
        with self.transaction() as db:
            cut = db.execute(
                "UPDATE pairs SET state = 'voided', reason = ?, ended_at = ?"
                " WHERE id = ? AND state = 'playing'",
                (reason, self._wall(), pair_id),
            )
            # A pair that had already ended was counted then: not twice.
            return _count_forfeits(db, forfeited or {}) if cut.rowcount else {}

    def void_interrupted(self) -> list[int]:
        """Void every pair left `playing` by an arena that stopped; their ids."""
        with self.transaction() as db:
            ids = [row[0] for row in db.execute("SELECT id FROM pairs WHERE state = 'playing'").fetchall()]
            db.execute(
                "UPDATE pairs SET state = 'voided', reason = ?, ended_at = ? WHERE state = 'playing'",
                (INTERRUPTED, self._wall()),
            )
        return ids

    def finish_pair(
        self,
        pair_id: int,
        games: Sequence[GameRow],
        ratings: Sequence[RatingRow] = (),
        forfeited: Mapping[str, bool] | None = None,
    ) -> dict[str, int]:
        """A pair played to its end: its games, its totals, the bots' new ratings and (with
        `forfeited`) their forfeits in a row, at once; the new counts of forfeits."""
        points_a = sum(g.points_a for g in games)
        points_b = sum(g.points_b for g in games)
        now = self._wall()
        with self.transaction() as db:
            seq = int(db.execute("SELECT COALESCE(MAX(finished_seq), 0) + 1 FROM pairs").fetchone()[0])
            db.execute(
                "UPDATE pairs SET state = 'finished', ended_at = ?, points_a = ?, points_b = ?,"
                " finished_seq = ? WHERE id = ?",
                (now, points_a, points_b, seq, pair_id),
            )
            db.executemany(
                f"INSERT INTO games ({_GAME_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (
                        pair_id,
                        g.table_no,
                        g.match_id,
                        g.a_seats,
                        g.points_a,
                        g.points_b,
                        g.termination,
                        g.reason,
                        json.dumps(g.stats_a, sort_keys=True),
                        json.dumps(g.stats_b, sort_keys=True),
                        g.host,
                    )
                    for g in games
                ],
            )
            for rating in ratings:
                # Last played when the pair ended: what a rerate reads back from the pair.
                _put_rating(db, replace(rating, last_played=now))
                db.execute(
                    "INSERT INTO rating_history VALUES (?, ?, ?, ?)",
                    (pair_id, rating.bot, rating.mu, rating.sigma),
                )
            return _count_forfeits(db, forfeited or {})

    def pair(self, pair_id: int) -> PairRow:
        """A pair by id."""
        row = self._db.execute(f"SELECT {_PAIR_COLUMNS} FROM pairs WHERE id = ?", (pair_id,)).fetchone()
        if row is None:
            raise ArenaStoreError(f"no pair {pair_id}")
        return _pair_row(row)

    def pairs(self, *, bot: str = "", state: str = "", limit: int = 0) -> list[PairRow]:
        """Pairs, the oldest first (of `bot`, in `state`; the last `limit` of them)."""
        where, args = [], []
        if bot:
            where.append("(bot_a = ? OR bot_b = ?)")
            args += [bot, bot]
        if state:
            where.append("state = ?")
            args.append(state)
        sql = f"SELECT {_PAIR_COLUMNS} FROM pairs"
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY id"
        rows = self._db.execute(sql, args).fetchall()
        if limit:
            rows = rows[-limit:]
        return [_pair_row(row) for row in rows]

    def games(self, pair_id: int) -> list[GameRow]:
        """A finished pair's games, by table."""
        rows = self._db.execute(
            "SELECT table_no, match_id, a_seats, points_a, points_b, termination, reason, stats_a, stats_b,"
            " host FROM games WHERE pair_id = ? ORDER BY table_no",
            (pair_id,),
        ).fetchall()
        return [
            GameRow(
                table_no=int(row[0]),
                match_id=str(row[1]),
                a_seats=int(row[2]),
                points_a=int(row[3]),
                points_b=int(row[4]),
                termination=str(row[5]),
                reason=str(row[6]),
                stats_a=json.loads(row[7]),
                stats_b=json.loads(row[8]),
                host=str(row[9]),
            )
            for row in rows
        ]

    # ---------------------------------------------------------------------------- ratings

    def ratings(self, leaderboard: str = "") -> list[RatingRow]:
        """The ratings (of one leaderboard), the best conservative score first."""
        sql = f"SELECT {_RATING_COLUMNS} FROM ratings"
        args: tuple[str, ...] = ()
        if leaderboard:
            sql += " WHERE leaderboard = ?"
            args = (leaderboard,)
        rows = [RatingRow(*row) for row in self._db.execute(sql, args).fetchall()]
        return sorted(rows, key=lambda r: (-r.score, r.bot))

    def rating(self, bot: str, leaderboard: str) -> RatingRow | None:
        """A bot's rating on a leaderboard, if it has one."""
        row = self._db.execute(
            f"SELECT {_RATING_COLUMNS} FROM ratings WHERE bot = ? AND leaderboard = ?", (bot, leaderboard)
        ).fetchone()
        return None if row is None else RatingRow(*row)

    def history(self, bot: str) -> list[tuple[int, float, float]]:
        """A bot's rating after each of its rated pairs: (pair id, mu, sigma)."""
        rows = self._db.execute(
            "SELECT pair_id, mu, sigma FROM rating_history WHERE bot = ? ORDER BY pair_id", (bot,)
        ).fetchall()
        return [(int(p), float(m), float(s)) for p, m, s in rows]

    def rating_history(self) -> list[tuple[int, str, float, float]]:
        """Every bot's rating after each of its rated pairs: (pair id, bot, mu, sigma), by pair."""
        rows = self._db.execute(
            "SELECT pair_id, bot, mu, sigma FROM rating_history ORDER BY pair_id, bot"
        ).fetchall()
        return [(int(p), str(b), float(m), float(s)) for p, b, m, s in rows]

    def replace_ratings(
        self, ratings: Sequence[RatingRow], history: Sequence[tuple[int, str, float, float]]
    ) -> None:
        """Every rating and its history at once (a rerate)."""
        with self.transaction() as db:
            db.execute("DELETE FROM ratings")
            db.execute("DELETE FROM rating_history")
            for rating in ratings:
                _put_rating(db, rating)
            db.executemany("INSERT INTO rating_history VALUES (?, ?, ?, ?)", history)


_BOT_COLUMNS = (
    "name, kind, bot, command, workdir, house, state, reason, version, created_at, key_set_at,"
    " forfeits_in_a_row"
)
_PAIR_COLUMNS = (
    "id, bot_a, bot_b, leaderboard, seed, validation, state, reason, started_at, ended_at,"
    " points_a, points_b, finished_seq"
)
_GAME_COLUMNS = (
    "pair_id, table_no, match_id, a_seats, points_a, points_b, termination, reason, stats_a, stats_b, host"
)
_RATING_COLUMNS = "bot, leaderboard, mu, sigma, pairs, wins, draws, losses, margin, last_played"


def _statements(script: str) -> Iterator[str]:
    """A script's statements one by one (SQLite decides where one ends: comments and strings
    may hold ';'), so that a migration runs inside the caller's transaction."""
    buffer = ""
    for line in script.splitlines(keepends=True):
        buffer += line
        if sqlite3.complete_statement(buffer):
            yield buffer
            buffer = ""
    if buffer.strip():
        raise ArenaStoreError("a migration ends in an incomplete statement")


def _count_forfeits(db: sqlite3.Connection, forfeited: Mapping[str, bool]) -> dict[str, int]:
    """Inside the caller's transaction: one more pair in a row with a forfeit for each bot that
    forfeited, none for the others; the new counts."""
    for name, did in forfeited.items():
        db.execute(
            "UPDATE bots SET forfeits_in_a_row = CASE WHEN ? THEN forfeits_in_a_row + 1 ELSE 0 END"
            " WHERE name = ?",
            (int(did), name),
        )
    return {
        name: int(db.execute("SELECT forfeits_in_a_row FROM bots WHERE name = ?", (name,)).fetchone()[0])
        for name in forfeited
    }


def _bot_row(row: Sequence[object]) -> BotRow:
    name, kind, bot, command, workdir, house, state, reason, version, created_at, key_set_at, forfeits = row
    return BotRow(
        name=str(name),
        kind=str(kind),
        bot=str(bot),
        command=tuple(json.loads(str(command))),
        workdir=str(workdir),
        house=bool(house),
        state=BotState(str(state)),
        reason=str(reason),
        version=int(str(version)),
        created_at=float(str(created_at)),
        key_set_at=float(str(key_set_at)),
        forfeits_in_a_row=int(str(forfeits)),
    )


def _pair_row(row: Sequence[object]) -> PairRow:
    pair_id, a, b, board, seed, validation, state, reason, started, ended, points_a, points_b, seq = row
    return PairRow(
        id=int(str(pair_id)),
        bot_a=str(a),
        bot_b=str(b),
        leaderboard=str(board),
        seed=str(seed),
        validation=bool(validation),
        state=str(state),
        reason=str(reason),
        started_at=float(str(started)),
        ended_at=None if ended is None else float(str(ended)),
        points_a=None if points_a is None else int(str(points_a)),
        points_b=None if points_b is None else int(str(points_b)),
        finished_seq=None if seq is None else int(str(seq)),
    )


def _put_rating(db: sqlite3.Connection, rating: RatingRow) -> None:
    db.execute(
        f"INSERT OR REPLACE INTO ratings ({_RATING_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            rating.bot,
            rating.leaderboard,
            rating.mu,
            rating.sigma,
            rating.pairs,
            rating.wins,
            rating.draws,
            rating.losses,
            rating.margin,
            rating.last_played,
        ),
    )


def check_bot_name(name: str) -> None:
    """A bot's name: 1-32 letters, digits, '-', '_' or '.', starting with a letter or digit."""
    ok = (
        0 < len(name) <= BOT_NAME_CHARS and name[0].isalnum() and all(c.isalnum() or c in "-_." for c in name)
    )
    if not ok or not name.isascii():
        raise ArenaStoreError(
            f"a bot's name is 1-{BOT_NAME_CHARS} ASCII letters, digits, '-', '_' or '.', "
            f"starting with a letter or digit, not {name[:40]!r}"
        )


__all__ = [
    "INTERRUPTED",
    "SCHEMA_VERSION",
    "ArenaStore",
    "ArenaStoreError",
    "BotRow",
    "BotState",
    "GameRow",
    "PairRow",
    "RatingRow",
    "check_bot_name",
]
