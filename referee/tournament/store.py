"""The tournament's results in SQLite: every game and round, committed the moment it ends.

The database is the tournament's memory: the schedule is written first (every game `pending`),
a game becomes `running` when an attempt at it starts and `finished` with its result in one
transaction, its rounds' scores just before it (a host, perhaps on another machine, sends them
back with the result). WAL mode with
synchronous=NORMAL keeps every committed row through a killed process; only games that were
running when the process died are played again on resume (their partial rounds are cleared).

Every attempt at a game is a row of `attempts` (who played it where, and how it ended); the
games row points at the match and replay of its finished attempt only. A game the SPRT made
unnecessary is `skipped`, and can be made pending again. The schema and its migrations are in
migrations.py: a store of an older release is migrated when it is opened.
"""

from __future__ import annotations

import json
import os
import secrets
import socket
import sqlite3
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from referee.match.messages import MatchResult
from referee.match.outcome import Termination
from referee.match.summary import SUMMARY_COUNTS, SeatSummary
from referee.tournament.migrations import SCHEMA_VERSION, migrate, stored_version
from referee.tournament.schedule import GameSpec

__all__ = [
    "AttemptRow",
    "BuildRow",
    "EntrantBuild",
    "GameRow",
    "RunRow",
    "SeatRow",
    "Store",
    "StoreError",
]

GAME_STATUSES = ("pending", "running", "finished", "skipped")
ATTEMPT_OUTCOMES = ("running", "finished", "failed", "interrupted", "lost")
# How an attempt that did not finish ends: it failed here, its run died, or its host vanished.
UNFINISHED_OUTCOMES = ("failed", "interrupted", "lost")
BUILD_KINDS = ("bot", "command", "remote")


class StoreError(Exception):
    """The database belongs to another tournament or a newer tichu, or is missing when it should exist."""


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
    status: str  # pending, running, finished, skipped
    attempts: int
    run_id: int | None
    match_id: str | None  # of its running or finished attempt; None while pending
    replay_path: str | None
    score_even: int | None
    score_odd: int | None
    winner: int | None  # 0: team_even, 1: team_odd, -1: none (a draw, no contest); None: no result
    forfeit: bool
    forfeiting_team: int | None
    reason: str | None
    rounds: int | None
    started_at: float | None
    finished_at: float | None
    host: str = ""  # where its running or finished attempt is played
    skip_reason: str | None = None  # why the game is skipped
    termination: Termination | None = None  # how its match ended; None: no result, or stored before v4

    @property
    def finished(self) -> bool:
        """Whether the game has its result."""
        return self.status == "finished"

    @property
    def skipped(self) -> bool:
        """Whether the game was found unnecessary (it has no result, and needs none)."""
        return self.status == "skipped"


# The seat_stats table's columns, in order: who played the seat, then the summary's statistics.
SEAT_COLUMNS = (
    "game_id", "attempt", "seat", "entrant", "bot_name", "bot_version", *SUMMARY_COUNTS, "exit_reason",
)  # fmt: skip
_INSERT_SEAT = (
    f"INSERT INTO seat_stats ({', '.join(SEAT_COLUMNS)}) VALUES ({', '.join('?' * len(SEAT_COLUMNS))})"
)


@dataclass(frozen=True, slots=True)
class SeatRow:
    """One seat of one attempt of a game: who played it, its statistics (the match summary's line)
    and why its bot process ended early ("" when it did not)."""

    game_id: str
    attempt: int
    entrant: str
    stats: SeatSummary
    exit_reason: str = ""

    @property
    def seat(self) -> int:
        """The seat."""
        return self.stats.seat

    def row(self) -> tuple[object, ...]:
        """Its values in the seat_stats table's column order."""
        stats = self.stats
        counts = stats.counts()
        return (
            self.game_id, self.attempt, stats.seat, self.entrant, stats.bot_name, stats.bot_version,
            *(counts[name] for name in SUMMARY_COUNTS), self.exit_reason,
        )  # fmt: skip

    @classmethod
    def of_row(cls, row: Sequence[Any]) -> SeatRow:
        """The seat of a seat_stats row (in SEAT_COLUMNS order)."""
        values = dict(zip(SEAT_COLUMNS, row, strict=True))
        stats = SeatSummary(
            seat=values["seat"],
            bot_name=values["bot_name"],
            bot_version=values["bot_version"],
            **{name: values[name] for name in SUMMARY_COUNTS},
        )
        return cls(values["game_id"], values["attempt"], values["entrant"], stats, values["exit_reason"])


def seat_rows(
    game_id: str,
    attempt: int,
    players: Sequence[str],
    summary: Sequence[SeatSummary],
    exit_reasons: Mapping[int, str] | None = None,
) -> list[SeatRow]:
    """The seats of a match summary as one attempt of a game played them (the entrant at each seat
    from `players`, why its bot ended early from `exit_reasons`)."""
    reasons = exit_reasons or {}
    return [
        SeatRow(
            game_id,
            attempt,
            players[line.seat] if 0 <= line.seat < len(players) else "",
            line,
            reasons.get(line.seat, ""),
        )
        for line in summary
    ]


@dataclass(frozen=True, slots=True)
class AttemptRow:
    """One attempt at a game: where it was played and how it ended."""

    game_id: str
    attempt: int
    run_id: int | None
    match_id: str
    host: str
    started_at: float | None
    ended_at: float | None  # None while running, or when its run died
    outcome: str  # running, finished, failed, interrupted, lost
    failure_reason: str
    replay_path: str
    sandboxed: bool | None = None  # its local bots ran in the sandbox; None: not recorded (before v3)


def _attempt(row: tuple[Any, ...]) -> AttemptRow:
    game_id, attempt, run_id, match_id, host, started_at, ended_at, outcome, failure, replay, sandboxed = row
    return AttemptRow(
        game_id, attempt, run_id, match_id, host, started_at, ended_at, outcome, failure, replay,
        sandboxed=None if sandboxed is None else bool(sandboxed),
    )  # fmt: skip


@dataclass(frozen=True, slots=True)
class RunRow:
    """One run or resume of the tournament."""

    run_id: int
    kind: str  # run or resume
    started_at: float
    pid: int
    host: str  # the machine it ran on ("" before schema 2)
    ended_at: float | None  # None: the run died (or is still going, or ended before schema 2)
    exit_code: int | None


@dataclass(frozen=True, slots=True)
class EntrantBuild:
    """What an entrant ran as: its kind (bot, command, remote), source and code's hash."""

    entrant: str
    kind: str
    source: str  # MODULE:CLASS, or the command line
    sha256: str = ""  # "" when not known (a remote entrant's code)


@dataclass(frozen=True, slots=True)
class BuildRow:
    """An entrant's build as a run recorded it."""

    run_id: int
    build: EntrantBuild


class Store:
    """The tournament's SQLite database."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        # Owner only (SQLite gives its -wal and -shm files the same mode): results, seeds and salts.
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT, 0o600))
        self._db = sqlite3.connect(path, isolation_level=None)  # explicit transactions below
        try:
            self._refuse_newer(self._version())  # before this code writes anything to it
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute("PRAGMA foreign_keys=ON")
            if self._version() < SCHEMA_VERSION:
                with self._transaction():
                    # Read again under the write lock: another process may have migrated it.
                    version = self._version()
                    self._refuse_newer(version)
                    migrate(self._db, version)
        except BaseException:
            self._db.close()
            raise

    def _version(self) -> int:
        try:
            return stored_version(self._db)
        except (sqlite3.DatabaseError, ValueError) as error:
            raise StoreError(
                f"{self.path} is not a tichu results database ({error}): give another database path"
            ) from None

    def _refuse_newer(self, version: int) -> None:
        if version > SCHEMA_VERSION:
            raise StoreError(
                f"{self.path} has schema version {version}, written by a newer tichu (this one knows "
                f"versions up to {SCHEMA_VERSION}): open it with that tichu or a later one"
            )

    def close(self) -> None:
        """Close the connection."""
        self._db.close()

    # ---------------------------------------------------------------------------- setup

    def meta(self, key: str) -> str | None:
        """A stored setting (fingerprint, config, schema), or None."""
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

    def start_run(self, kind: str, pid: int, host: str | None = None) -> int:
        """Record that a run (or resume) began on `host` (this machine's name by default); its id.
        Attempts it finds running were interrupted: their games are pending again."""
        host = socket.gethostname() if host is None else host
        with self._transaction():
            cursor = self._db.execute(
                "INSERT INTO runs (kind, started_at, pid, host) VALUES (?, ?, ?, ?)",
                (kind, time.time(), pid, host),
            )
            assert cursor.lastrowid is not None
            run_id = cursor.lastrowid
            self._db.execute(
                "UPDATE attempts SET outcome = 'interrupted', failure_reason = ? WHERE outcome = 'running'",
                (f"its run ended before the game did (found by run {run_id})",),
            )
            interrupted = [
                r[0] for r in self._db.execute("SELECT game_id FROM games WHERE status = 'running'")
            ]
            self._db.executemany("DELETE FROM rounds WHERE game_id = ?", [(g,) for g in interrupted])
            self._db.execute(
                "UPDATE games SET status = 'pending', match_id = NULL, replay_path = NULL, host = ''"
                " WHERE status = 'running'"
            )
        return run_id

    def end_run(self, run_id: int, exit_code: int) -> None:
        """Record that a run ended (its exit code); a run that died keeps no end."""
        with self._transaction():
            cursor = self._db.execute(
                "UPDATE runs SET ended_at = ?, exit_code = ? WHERE run_id = ?",
                (time.time(), exit_code, run_id),
            )
            if cursor.rowcount == 0:
                raise StoreError(f"{self.path} has no run {run_id}")

    def record_builds(self, run_id: int, builds: Sequence[EntrantBuild]) -> None:
        """What each entrant runs as in this run (a later record of the same entrant replaces it)."""
        for build in builds:
            if build.kind not in BUILD_KINDS:
                raise ValueError(f"entrant {build.entrant}: kind {build.kind!r} is not one of {BUILD_KINDS}")
        with self._transaction():
            self._db.executemany(
                "INSERT OR REPLACE INTO entrant_builds (run_id, entrant, kind, source, sha256)"
                " VALUES (?, ?, ?, ?, ?)",
                [(run_id, b.entrant, b.kind, b.source, b.sha256) for b in builds],
            )

    # ---------------------------------------------------------------------------- while running

    def mark_started(
        self,
        game_id: str,
        run_id: int,
        match_id: str,
        replay_path: str,
        host: str = "",
        sandboxed: bool | None = None,
    ) -> int:
        """An attempt at a game started (its match was created, on `host`, its local bots in the
        sandbox or not): the game is running; the attempt's number (1 for the first)."""
        now = time.time()
        with self._transaction():
            attempt = self._game_attempts(game_id) + 1
            self._db.execute(
                "UPDATE attempts SET outcome = 'interrupted', ended_at = ?, failure_reason = ?"
                " WHERE game_id = ? AND outcome = 'running'",
                (now, f"attempt {attempt} started before it ended", game_id),
            )
            self._db.execute("DELETE FROM rounds WHERE game_id = ?", (game_id,))
            self._db.execute(
                "INSERT INTO attempts (game_id, attempt, run_id, match_id, host, started_at, outcome,"
                " replay_path, sandboxed) VALUES (?, ?, ?, ?, ?, ?, 'running', ?, ?)",
                (game_id, attempt, run_id, match_id, host, now, replay_path, sandboxed),
            )
            self._db.execute(
                "UPDATE games SET status = 'running', attempts = ?, run_id = ?, match_id = ?,"
                " replay_path = ?, host = ?, started_at = ?, skip_reason = NULL WHERE game_id = ?",
                (attempt, run_id, match_id, replay_path, host, now, game_id),
            )
        return attempt

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

    def mark_finished(
        self,
        game_id: str,
        result: MatchResult,
        players: Sequence[str] = (),
        exit_reasons: Mapping[int, str] | None = None,
        *,
        attempt: int | None = None,
    ) -> None:
        """A game's running attempt (its latest, or `attempt`) ended with `result`: the result and
        its rounds, the attempt closed as finished and its seats' statistics (the entrant at each
        seat from `players`; why a seat's bot ended early from `exit_reasons`), in one transaction."""
        now = time.time()
        outcome = result.outcome
        # The store's columns keep the first release's form: -1 for "none".
        winner = -1 if outcome.winner is None else outcome.winner
        forfeiting = -1 if outcome.forfeiting_team is None else outcome.forfeiting_team
        summary = json.dumps(result.statistics(), separators=(",", ":"))
        with self._transaction():
            number = self._running_attempt(game_id, attempt, "its result")
            self._db.execute("DELETE FROM rounds WHERE game_id = ?", (game_id,))
            self._db.executemany(
                "INSERT INTO rounds (game_id, round, points_even, points_odd, total_even, total_odd,"
                " scored_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                [(game_id, r.round, *r.points, *r.totals, now) for r in result.round_scores],
            )
            self._db.execute(
                "UPDATE attempts SET outcome = 'finished', ended_at = ? WHERE game_id = ? AND attempt = ?",
                (now, game_id, number),
            )
            self._db.execute(
                "UPDATE games SET status = 'finished', score_even = ?, score_odd = ?, winner = ?,"
                " forfeit = ?, forfeiting_team = ?, reason = ?, termination = ?, rounds = ?,"
                " finished_at = ?, summary_json = ?, (match_id, replay_path, host) = (SELECT match_id,"
                " replay_path, host FROM attempts WHERE game_id = ? AND attempt = ?) WHERE game_id = ?",
                (
                    result.scores[0], result.scores[1], winner, int(outcome.forfeit), forfeiting,
                    outcome.reason, outcome.termination.value, result.hands, now, summary,
                    game_id, number, game_id,
                ),
            )  # fmt: skip
            self._db.execute("DELETE FROM seat_stats WHERE game_id = ? AND attempt = ?", (game_id, number))
            rows = seat_rows(game_id, number, players, result.summary, exit_reasons)
            self._db.executemany(_INSERT_SEAT, [seat.row() for seat in rows])

    def mark_pending(
        self, game_id: str, reason: str = "", outcome: str = "failed", *, attempt: int | None = None
    ) -> None:
        """A game will be played (again): its running attempt (its latest, or `attempt`) closed with
        `outcome` (failed; interrupted; lost: its host vanished) and `reason`. A skipped game is
        pending again. Closing an attempt older than the game's latest leaves the game as it is."""
        if outcome not in UNFINISHED_OUTCOMES:
            raise ValueError(f"outcome {outcome!r} is not one of {UNFINISHED_OUTCOMES}")
        with self._transaction():
            latest = self._game_attempts(game_id)
            number = latest if attempt is None else attempt
            self._db.execute(
                "UPDATE attempts SET outcome = ?, failure_reason = ?, ended_at = ?"
                " WHERE game_id = ? AND attempt = ? AND outcome = 'running'",
                (outcome, reason, time.time(), game_id, number),
            )
            if number != latest:
                return
            self._db.execute("DELETE FROM rounds WHERE game_id = ?", (game_id,))
            # A pending game has no result, and points at no replay: its attempts keep theirs.
            self._db.execute(
                "UPDATE games SET status = 'pending', match_id = NULL, replay_path = NULL, host = '',"
                " skip_reason = NULL, score_even = NULL, score_odd = NULL, winner = NULL, forfeit = NULL,"
                " forfeiting_team = NULL, reason = NULL, termination = NULL, rounds = NULL,"
                " finished_at = NULL, summary_json = NULL WHERE game_id = ?",
                (game_id,),
            )

    def mark_skipped(self, game_ids: Sequence[str], reason: str) -> None:
        """Pending games that need not be played (the SPRT decided their pairing), with why."""
        with self._transaction():
            for game_id in game_ids:
                status = self._status(game_id)
                if status not in ("pending", "skipped"):
                    raise StoreError(f"game {game_id} is {status}: only a pending game can be skipped")
            self._db.executemany(
                "UPDATE games SET status = 'skipped', skip_reason = ? WHERE game_id = ?",
                [(reason, game_id) for game_id in game_ids],
            )

    def _status(self, game_id: str) -> str:
        row = self._db.execute("SELECT status FROM games WHERE game_id = ?", (game_id,)).fetchone()
        if row is None:
            raise StoreError(f"{self.path} has no game {game_id}")
        return str(row[0])

    def _game_attempts(self, game_id: str) -> int:
        row = self._db.execute("SELECT attempts FROM games WHERE game_id = ?", (game_id,)).fetchone()
        if row is None:
            raise StoreError(f"{self.path} has no game {game_id}")
        return int(row[0])

    def _running_attempt(self, game_id: str, attempt: int | None, what: str) -> int:
        number = self._game_attempts(game_id) if attempt is None else attempt
        row = self._db.execute(
            "SELECT outcome FROM attempts WHERE game_id = ? AND attempt = ?", (game_id, number)
        ).fetchone()
        if row is None:
            raise StoreError(f"game {game_id} has no attempt {number}: mark_started comes first")
        if row[0] != "running":
            raise StoreError(
                f"game {game_id} attempt {number} is {row[0]}, not running: {what} is not stored"
            )
        return number

    # ---------------------------------------------------------------------------- reading

    def games(self, status: str | None = None) -> list[GameRow]:
        """The games in schedule order, all or those with `status` (pending, running, finished, skipped)."""
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

    def attempts(self, game_id: str | None = None) -> list[AttemptRow]:
        """Every attempt (or a game's), in schedule order and then first to last."""
        rows = self._db.execute(
            "SELECT a.game_id, a.attempt, a.run_id, a.match_id, a.host, a.started_at, a.ended_at,"
            " a.outcome, a.failure_reason, a.replay_path, a.sandboxed FROM attempts a"
            " JOIN games g USING (game_id) WHERE ? IS NULL OR a.game_id = ? ORDER BY g.seq, a.attempt",
            (game_id, game_id),
        )
        return [_attempt(row) for row in rows]

    def seat_stats(self, game_id: str | None = None) -> list[SeatRow]:
        """Every stored seat's statistics (or a game's), by game in schedule order, attempt and seat."""
        columns = ", ".join(f"s.{name}" for name in SEAT_COLUMNS)
        rows = self._db.execute(
            f"SELECT {columns} FROM seat_stats s JOIN games g USING (game_id)"
            " WHERE ? IS NULL OR s.game_id = ? ORDER BY g.seq, s.attempt, s.seat",
            (game_id, game_id),
        )
        return [SeatRow.of_row(row) for row in rows]

    def runs(self) -> list[tuple[int, str]]:
        """(run_id, kind) of every run, first to last."""
        return [(r[0], r[1]) for r in self._db.execute("SELECT run_id, kind FROM runs ORDER BY run_id")]

    def run_rows(self) -> list[RunRow]:
        """Every run, first to last, with where it ran and how it ended."""
        rows = self._db.execute(
            "SELECT run_id, kind, started_at, pid, host, ended_at, exit_code FROM runs ORDER BY run_id"
        )
        return [RunRow(*row) for row in rows]

    def builds(self, run_id: int | None = None) -> list[BuildRow]:
        """The entrants' builds every run recorded (or one run's), by run and entrant."""
        rows = self._db.execute(
            "SELECT run_id, entrant, kind, source, sha256 FROM entrant_builds"
            " WHERE ? IS NULL OR run_id = ? ORDER BY run_id, entrant",
            (run_id, run_id),
        )
        return [BuildRow(row[0], EntrantBuild(*row[1:])) for row in rows]

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
        host=data["host"],
        skip_reason=data["skip_reason"],
        termination=None if data["termination"] is None else Termination(data["termination"]),
    )
