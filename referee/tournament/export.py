"""`tichu tournament export`: every finished game's replay in one zip, with an index.

The archive's layout is referee.replay.archive's (index.json, index.csv, replays/...), so the
replay commands read it: `tichu replay verify ARCHIVE.zip` checks every replay and its sha256.
The games come from the store (its finished rows, in schedule order); a game whose replay file
is not found is listed in the index as missing, so the archive says what it lacks.
"""

from __future__ import annotations

import csv
import io
import json
import os
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from referee.replay.archive import ARCHIVE_FORMAT, INDEX_CSV, INDEX_JSON, REPLAY_FOLDER, sha256_hex
from referee.tournament.config import TournamentConfig
from referee.tournament.store import GameRow, Store

INDEX_COLUMNS = (
    "game_id", "pairing", "board", "table", "seat_0", "seat_1", "seat_2", "seat_3", "team_even", "team_odd",
    "score_even", "score_odd", "winner", "forfeit", "forfeiting_team", "reason", "rounds", "match_id",
    "member", "sha256", "status",
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class ExportReport:
    """What an export wrote: the archive, how many games it lists, and those without a replay."""

    path: Path
    games: int
    missing: list[str]


def default_archive(config: TournamentConfig) -> Path:
    """`<output_dir>/<name>-games.zip`."""
    return config.output_dir / f"{config.name}-games.zip"


def export_games(config: TournamentConfig, out: Path | None = None) -> ExportReport:
    """Write the archive of the stored tournament's finished games (the database must exist)."""
    store = Store(config.database)
    try:
        games = store.games("finished")
    finally:
        store.close()
    path = out or default_archive(config)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    entries: list[dict[str, Any]] = []
    # Written beside the target and renamed: a failed export never leaves half an archive.
    with zipfile.ZipFile(partial, "w", compression=zipfile.ZIP_DEFLATED) as packed:
        for game in games:
            entry = _entry(game)
            replay = _replay_file(config, game)
            if replay is None:
                entry["status"] = "missing"
            else:
                data = replay.read_bytes()
                member = REPLAY_FOLDER + replay.name
                packed.writestr(zipfile.ZipInfo.from_file(replay, member), data, zipfile.ZIP_DEFLATED)
                entry.update(member=member, sha256=sha256_hex(data), status="ok")
            entries.append(entry)
        index = {"format": ARCHIVE_FORMAT, "tournament": config.name, "seed": config.seed, "games": entries}
        packed.writestr(INDEX_JSON, json.dumps(index, indent=1, ensure_ascii=False) + "\n")
        packed.writestr(INDEX_CSV, _index_csv(entries))
    os.replace(partial, path)
    missing = [str(e["game_id"]) for e in entries if e["status"] == "missing"]
    return ExportReport(path, len(entries), missing)


def _entry(game: GameRow) -> dict[str, Any]:
    teams = (game.team_even, game.team_odd)
    winner = "draw" if game.winner == -1 else teams[game.winner] if game.winner in (0, 1) else ""
    forfeiting = teams[game.forfeiting_team] if game.forfeit and game.forfeiting_team in (0, 1) else ""
    return {
        "game_id": game.game_id,
        "pairing": game.pairing,
        "board": game.board,
        "table": game.table_no,
        "players": list(game.players),
        "team_even": game.team_even,
        "team_odd": game.team_odd,
        "score_even": game.score_even,
        "score_odd": game.score_odd,
        "winner": winner,
        "forfeit": game.forfeit,
        "forfeiting_team": forfeiting,
        "reason": game.reason or "",
        "rounds": game.rounds,
        "match_id": game.match_id or "",
        "member": "",
        "sha256": "",
        "status": "",
    }


def _replay_file(config: TournamentConfig, game: GameRow) -> Path | None:
    """The game's replay: its stored path (relative ones from where the tournament ran, or from
    the config's folder), else a file of that name in the config's replay_dir (a moved folder)."""
    if not game.replay_path:
        return None
    stored = Path(game.replay_path)
    candidates = [stored] if stored.is_absolute() else [stored, config.source.parent / stored]
    candidates.append(config.replay_dir / stored.name)
    return next((c for c in candidates if c.is_file()), None)


def _index_csv(entries: Sequence[dict[str, Any]]) -> str:
    text = io.StringIO()
    writer = csv.writer(text)
    writer.writerow(INDEX_COLUMNS)
    for entry in entries:
        seats = [*entry["players"], "", "", "", ""][:4]
        row = {**entry, **{f"seat_{i}": name for i, name in enumerate(seats)}}
        row["forfeit"] = int(entry["forfeit"])
        writer.writerow(["" if row[c] is None else row[c] for c in INDEX_COLUMNS])
    return text.getvalue()
