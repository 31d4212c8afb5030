"""A tournament store read for the web archive: small queries, paginated, on the store's indexes.

The pages never read the store through the runner's `Store` (which writes and migrates): each
thread keeps a read-only connection of its own, so a page can be served while the runner writes,
and a query is one indexed statement. `prepare_store` brings an older store to the schema with
the archive's indexes (migrations.py, version 4) before it is served.

What the pages show of a running tournament is what is published: a duplicate board's result
and replay only once both its tables have ended (the runner moves their replays to replay_dir
then); a finished table whose twin still plays is shown as `held`.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from referee.tournament.config import SprtSettings, Team, TournamentConfig
from referee.tournament.store import SEAT_COLUMNS, GameRow, SeatRow, Store

GAME_STATUSES = ("pending", "running", "held", "finished", "skipped")
PAGE_SIZE = 50
MAX_PAGE_SIZE = 200
FAILED_OUTCOMES = ("failed", "interrupted", "lost")


@dataclass(frozen=True, slots=True)
class TournamentInfo:
    """What the archive knows of a tournament: from its config, or (without one) from its store."""

    name: str
    database: Path
    teams: tuple[Team, ...]
    pairing_firsts: dict[int, tuple[str, str]]
    duplicate: bool
    sprt: SprtSettings
    sprt_from_config: bool  # False: the store keeps no SPRT settings, the defaults are shown
    replay_dir: Path | None
    public_key: Path | None = None  # the referee's public key, to check replays' signatures
    format: str = "round_robin"

    @property
    def entrants(self) -> list[str]:
        """Every entrant, sorted."""
        return sorted({p for t in self.teams for p in t.players})

    def teams_of(self, entrant: str) -> list[str]:
        """The teams an entrant plays in."""
        return [t.name for t in self.teams if entrant in t.players]


def info_from_config(config: TournamentConfig, public_key: Path | None = None) -> TournamentInfo:
    """A tournament as its config describes it (the signing key's .pub beside it, if there is one)."""
    from referee.tournament.schedule import pairings

    if public_key is None and config.signing_key is not None:
        candidate = config.signing_key.with_name(config.signing_key.name + ".pub")
        public_key = candidate if candidate.is_file() else None
    return TournamentInfo(
        name=config.name,
        database=config.database,
        teams=config.teams,
        pairing_firsts={p.index: (p.first.name, p.second.name) for p in pairings(config)},
        duplicate=config.duplicate,
        sprt=config.sprt,
        sprt_from_config=True,
        replay_dir=config.replay_dir,
        public_key=public_key,
        format=config.format,
    )


def info_from_store(path: Path, public_key: Path | None = None) -> TournamentInfo:
    """A tournament as its store describes it: the config it keeps (name, teams, duplicate), the
    pairings from the schedule; the SPRT's settings are not kept, so the defaults stand in."""
    db = connect(path)
    try:
        row = db.execute("SELECT value FROM meta WHERE key = 'config'").fetchone()
        described: dict[str, Any] = json.loads(row[0]) if row else {}
        firsts = {
            int(p): (str(even), str(odd))
            for p, even, odd in db.execute(
                "SELECT pairing, team_even, team_odd FROM games WHERE table_no = 0 GROUP BY pairing"
            )
        }
        paths = [r[0] for r in db.execute("SELECT replay_path FROM attempts WHERE replay_path != '' LIMIT 1")]
    finally:
        db.close()
    teams_json = described.get("teams") or {}
    teams = tuple(Team(str(name), (str(players[0]), str(players[1]))) for name, players in teams_json.items())
    replay_dir = Path(paths[0]).parent if paths else None
    if replay_dir is not None and not replay_dir.is_absolute():
        replay_dir = path.parent / replay_dir.name  # a relative path: the store's folder's
    return TournamentInfo(
        name=str(described.get("name") or path.stem),
        database=path,
        teams=teams,
        pairing_firsts=firsts,
        duplicate=bool(described.get("duplicate", False)),
        sprt=SprtSettings(),
        sprt_from_config=False,
        replay_dir=replay_dir,
        public_key=public_key,
        format=str(described.get("format") or "round_robin"),
    )


def prepare_store(path: Path) -> None:
    """Bring the store to the current schema (its indexes included); StoreError when it is not one."""
    Store(path).close()


def connect(path: Path) -> sqlite3.Connection:
    """A read-only connection to a store (it sees every commit of the runner as it lands)."""
    db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, check_same_thread=False)
    db.execute("PRAGMA query_only = ON")
    return db


class Reader:
    """Read-only connections to one store, one per thread (the server's thread pool)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._local = threading.local()

    def db(self) -> sqlite3.Connection:
        """This thread's connection."""
        db: sqlite3.Connection | None = getattr(self._local, "db", None)
        if db is None:
            db = connect(self.path)
            self._local.db = db
        return db


# ------------------------------------------------------------------------------------------ games


@dataclass(frozen=True, slots=True)
class GameFilter:
    """Which games a list shows: by entrant (its teams), team, status, and forfeits only."""

    teams: tuple[str, ...] = ()  # games of any of these teams; () every game
    status: str = ""  # one of GAME_STATUSES, or "" for all
    forfeit: bool = False
    board: tuple[int, int] | None = None  # (pairing, board)


@dataclass(frozen=True, slots=True)
class GamePage:
    """One page of a game list."""

    games: list[GameView]
    total: int
    page: int
    per_page: int

    @property
    def pages(self) -> int:
        """How many pages the list has (1 when it is empty)."""
        return max(1, -(-self.total // self.per_page))


@dataclass(frozen=True, slots=True)
class GameView:
    """A game as a page shows it: the stored row, and whether its result is published."""

    row: GameRow
    status: str  # the row's, or `held`: finished, its board's other table still playing
    published: bool  # its result may be shown (and its replay, once the file is in replay_dir)

    def to_json(self) -> dict[str, Any]:
        """The game as the JSON API gives it."""
        g = self.row
        shown = self.published and g.finished
        return {
            "game_id": g.game_id,
            "seq": g.seq,
            "pairing": g.pairing,
            "board": g.board,
            "table": g.table_no,
            "team_even": g.team_even,
            "team_odd": g.team_odd,
            "players": list(g.players),
            "status": self.status,
            "attempts": g.attempts,
            "match_id": g.match_id if shown else None,
            "score": [g.score_even, g.score_odd] if shown else None,
            "winner": winner_name(g) if shown else None,
            "forfeit": bool(g.forfeit) if shown else False,
            "forfeiting_team": forfeiting_team(g) if shown else None,
            "reason": g.reason if shown else None,
            "rounds": g.rounds if shown else None,
            "started_at": g.started_at,
            "finished_at": g.finished_at if shown else None,
            "skip_reason": g.skip_reason,
        }


def winner_name(game: GameRow) -> str | None:
    """The winning team's name, "draw", or None without a result."""
    if game.winner is None:
        return None
    if game.winner == -1:
        return "draw"
    return game.team_even if game.winner == 0 else game.team_odd


def forfeiting_team(game: GameRow) -> str | None:
    """The team that forfeited the game, if one did."""
    if not game.forfeit or game.forfeiting_team is None or game.forfeiting_team < 0:
        return None
    return game.team_even if game.forfeiting_team == 0 else game.team_odd


# A finished game is `held` while the other table of its duplicate board has no result yet.
# The boards with a table not finished are found once per statement (few, or none once it ends).
_TWIN_DONE = (
    "(NOT :duplicate OR (g.pairing, g.board) NOT IN"
    " (SELECT pairing, board FROM games WHERE status != 'finished'))"
)
_SHOWN_STATUS = f"CASE WHEN g.status = 'finished' AND NOT {_TWIN_DONE} THEN 'held' ELSE g.status END"


def _where(selection: GameFilter) -> tuple[str, dict[str, Any]]:
    clauses: list[str] = []
    args: dict[str, Any] = {}
    if selection.teams:
        names = {f"team{i}": team for i, team in enumerate(selection.teams)}
        marks = ", ".join(f":{name}" for name in names)
        clauses.append(f"(g.team_even IN ({marks}) OR g.team_odd IN ({marks}))")
        args.update(names)
    if selection.status == "held":
        clauses.append(f"g.status = 'finished' AND NOT {_TWIN_DONE}")
    elif selection.status == "finished":
        clauses.append(f"g.status = 'finished' AND {_TWIN_DONE}")
    elif selection.status:
        clauses.append("g.status = :status")
        args["status"] = selection.status
    if selection.forfeit:
        clauses.append(f"g.forfeit = 1 AND {_TWIN_DONE}")
    if selection.board is not None:
        clauses.append("g.pairing = :pairing AND g.board = :board")
        args["pairing"], args["board"] = selection.board
    return (" WHERE " + " AND ".join(clauses)) if clauses else "", args


_GAME_COLUMNS = (
    "g.game_id, g.seq, g.pairing, g.board, g.table_no, g.seed, g.team_even, g.team_odd, g.players,"
    " g.status, g.attempts, g.run_id, g.match_id, g.replay_path, g.score_even, g.score_odd, g.winner,"
    " g.forfeit, g.forfeiting_team, g.reason, g.rounds, g.started_at, g.finished_at, g.host, g.skip_reason"
)


def _game_row(values: Sequence[Any]) -> GameRow:
    (game_id, seq, pairing, board, table_no, seed, team_even, team_odd, players, status, attempts,
     run_id, match_id, replay_path, score_even, score_odd, winner, forfeit, forfeiting, reason,
     rounds, started_at, finished_at, host, skip_reason) = values  # fmt: skip
    return GameRow(
        game_id, seq, pairing, board, table_no, seed, team_even, team_odd, tuple(json.loads(players)),
        status, attempts, run_id, match_id, replay_path, score_even, score_odd, winner, bool(forfeit),
        forfeiting, reason, rounds, started_at, finished_at, host or "", skip_reason,
    )  # fmt: skip


def _views(db: sqlite3.Connection, sql: str, args: dict[str, Any], duplicate: bool) -> list[GameView]:
    cursor = db.execute(sql, {**args, "duplicate": int(duplicate)})
    views = []
    for values in cursor:
        row = _game_row(values[:-1])
        status = values[-1]
        views.append(GameView(row, status, status not in ("held",)))
    return views


def game_page(
    db: sqlite3.Connection,
    duplicate: bool,
    selection: GameFilter = GameFilter(),
    page: int = 1,
    per_page: int = PAGE_SIZE,
) -> GamePage:
    """A page of the games that `selection` keeps, in schedule order, and how many there are."""
    per_page = max(1, min(per_page, MAX_PAGE_SIZE))
    where, args = _where(selection)
    args["duplicate"] = int(duplicate)
    total = int(db.execute(f"SELECT COUNT(*) FROM games g{where}", args).fetchone()[0])
    pages = max(1, -(-total // per_page))
    page = max(1, min(page, pages))
    sql = (
        f"SELECT {_GAME_COLUMNS}, {_SHOWN_STATUS} FROM games g{where} ORDER BY g.seq"
        " LIMIT :limit OFFSET :offset"
    )
    args.update(limit=per_page, offset=(page - 1) * per_page)
    return GamePage(_views(db, sql, args, duplicate), total, page, per_page)


def game(db: sqlite3.Connection, duplicate: bool, game_id: str) -> GameView | None:
    """One game, or None."""
    sql = f"SELECT {_GAME_COLUMNS}, {_SHOWN_STATUS} FROM games g WHERE g.game_id = :game_id"
    views = _views(db, sql, {"game_id": game_id}, duplicate)
    return views[0] if views else None


def board(db: sqlite3.Connection, duplicate: bool, pairing: int, board_no: int) -> list[GameView]:
    """The games (tables) of one board of a pairing, table 0 first."""
    sql = (
        f"SELECT {_GAME_COLUMNS}, {_SHOWN_STATUS} FROM games g"
        " WHERE g.pairing = :pairing AND g.board = :board ORDER BY g.table_no"
    )
    return _views(db, sql, {"pairing": pairing, "board": board_no}, duplicate)


def all_games(db: sqlite3.Connection, duplicate: bool) -> list[GameView]:
    """Every game in schedule order (for the standings, which the archive caches)."""
    sql = f"SELECT {_GAME_COLUMNS}, {_SHOWN_STATUS} FROM games g ORDER BY g.seq"
    return _views(db, sql, {}, duplicate)


def status_counts(db: sqlite3.Connection, duplicate: bool) -> dict[str, int]:
    """How many games are in each shown status."""
    counts = dict.fromkeys(GAME_STATUSES, 0)
    sql = f"SELECT {_SHOWN_STATUS} AS shown, COUNT(*) FROM games g GROUP BY shown"
    for status, count in db.execute(sql, {"duplicate": int(duplicate)}):
        counts[str(status)] = int(count)
    return counts


def version(db: sqlite3.Connection) -> str:
    """A token that changes whenever the store does in a way the pages show (a poll compares it)."""
    row = db.execute(
        "SELECT (SELECT COUNT(*) FROM attempts), (SELECT COUNT(*) FROM attempts WHERE outcome != 'running'),"
        " (SELECT COUNT(*) FROM games WHERE status = 'skipped'), (SELECT MAX(run_id) FROM runs),"
        " (SELECT COUNT(*) FROM runs WHERE ended_at IS NOT NULL)"
    ).fetchone()
    return "-".join(str(v) for v in row)


# ------------------------------------------------------------------------------- failures, runs


@dataclass(frozen=True, slots=True)
class Failure:
    """An attempt that did not finish, and why."""

    game_id: str
    attempt: int
    match_id: str
    host: str
    outcome: str
    reason: str
    ended_at: float | None

    def to_json(self) -> dict[str, Any]:
        """As the JSON API gives it."""
        return {
            "game_id": self.game_id, "attempt": self.attempt, "match_id": self.match_id, "host": self.host,
            "outcome": self.outcome, "reason": self.reason, "ended_at": self.ended_at,
        }  # fmt: skip


def failures(db: sqlite3.Connection, limit: int = 100) -> tuple[list[Failure], int]:
    """The latest attempts that failed, were interrupted or lost (at most `limit`), and how many there are."""
    marks = ", ".join("?" * len(FAILED_OUTCOMES))
    total = int(
        db.execute(f"SELECT COUNT(*) FROM attempts WHERE outcome IN ({marks})", FAILED_OUTCOMES).fetchone()[0]
    )
    rows = db.execute(
        "SELECT game_id, attempt, match_id, host, outcome, failure_reason, ended_at FROM attempts"
        f" WHERE outcome IN ({marks}) ORDER BY COALESCE(ended_at, started_at) DESC LIMIT ?",
        (*FAILED_OUTCOMES, limit),
    )
    return [Failure(*row) for row in rows], total


def skipped(db: sqlite3.Connection, limit: int = 100) -> tuple[list[tuple[str, str]], int]:
    """(game_id, why) of the skipped games (at most `limit`, in schedule order), and how many there are."""
    total = int(db.execute("SELECT COUNT(*) FROM games WHERE status = 'skipped'").fetchone()[0])
    rows = db.execute(
        "SELECT game_id, COALESCE(skip_reason, '') FROM games WHERE status = 'skipped' ORDER BY seq LIMIT ?",
        (limit,),
    )
    return [(str(g), str(why)) for g, why in rows], total


@dataclass(frozen=True, slots=True)
class RunState:
    """The latest run: when it started, whether it ended, and the games it finished so far."""

    started_at: float | None
    ended_at: float | None
    finished_in_run: int
    first_finish: float | None = None
    last_finish: float | None = None
    runs: int = 0


def run_state(db: sqlite3.Connection) -> RunState:
    """The latest run's progress (the rate of the estimated finish time)."""
    row = db.execute(
        "SELECT run_id, started_at, ended_at, (SELECT COUNT(*) FROM runs) FROM runs"
        " ORDER BY run_id DESC LIMIT 1"
    ).fetchone()
    if row is None:
        return RunState(None, None, 0)
    run_id, started, ended, runs = row
    done, first, last = db.execute(
        "SELECT COUNT(*), MIN(ended_at), MAX(ended_at) FROM attempts"
        " WHERE run_id = ? AND outcome = 'finished'",
        (run_id,),
    ).fetchone()
    return RunState(started, ended, int(done), first, last, int(runs))


# ------------------------------------------------------------------------------- seats, rounds


def seat_stats(db: sqlite3.Connection, entrant: str | None = None, exits_only: bool = False) -> list[SeatRow]:
    """The seat statistics of every finished game's finished attempt (or an entrant's seats; or
    only the seats whose bot ended early, which is all the standings read of them)."""
    columns = ", ".join(f"s.{name}" for name in SEAT_COLUMNS)
    rows = db.execute(
        f"SELECT {columns} FROM seat_stats s JOIN games g ON g.game_id = s.game_id AND g.attempts = s.attempt"
        " WHERE g.status = 'finished' AND (:entrant IS NULL OR s.entrant = :entrant)"
        " AND (NOT :exits OR s.exit_reason != '') ORDER BY g.seq, s.seat",
        {"entrant": entrant, "exits": int(exits_only)},
    )
    return [SeatRow.of_row(row) for row in rows]


def rounds_played(db: sqlite3.Connection) -> int:
    """Hands played in the finished games."""
    return int(
        db.execute("SELECT COALESCE(SUM(rounds), 0) FROM games WHERE status = 'finished'").fetchone()[0]
    )
