"""Game archives: one zip of replays with an index, as `tichu tournament export` writes them.

The archive holds `index.json` (ARCHIVE_FORMAT: the tournament's name and one entry per finished
game, with its replay's member name and sha256, or `"status": "missing"` when the export found
no replay), the same entries as `index.csv` for spreadsheets, and the replays under `replays/`.
The replay commands read one member as `ARCHIVE.zip:MEMBER`, where MEMBER is the member's name,
or a game id or match id from the index.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import zipfile
from pathlib import Path
from typing import Any

from referee.replay.bounds import BoundsError, bounded_lines, check_archive, read_member

ARCHIVE_FORMAT = "tichu-games/1"
INDEX_JSON = "index.json"
INDEX_CSV = "index.csv"
REPLAY_FOLDER = "replays/"
_MARK = ".zip:"


class ArchiveError(ValueError):
    """An archive that cannot be read as one, or a member it does not hold."""


def split_reference(path: str | Path) -> tuple[Path, str] | None:
    """(archive, member) for `ARCHIVE.zip:MEMBER` whose archive is a file; None for a plain path."""
    text = str(path)
    if _MARK not in text or Path(text).exists():
        return None
    archive, member = text.rsplit(_MARK, 1)
    archive_path = Path(archive + ".zip")
    return (archive_path, member) if archive_path.is_file() and member else None


def is_archive(path: Path) -> bool:
    """Whether `path` is a zip file (an archive of games rather than one replay)."""
    return path.suffix == ".zip" and path.is_file() and zipfile.is_zipfile(path)


def sha256_hex(data: bytes) -> str:
    """The SHA-256 of `data` in hex, as the index records each replay's."""
    return hashlib.sha256(data).hexdigest()


def read_index(archive: Path) -> list[dict[str, Any]] | None:
    """The index's entries, or None for a zip without an index; ArchiveError if it is unreadable."""
    try:
        with zipfile.ZipFile(archive) as packed:
            check_archive(packed, str(archive))
            if INDEX_JSON not in packed.namelist():
                return None
            index = json.loads(read_member(packed, INDEX_JSON, str(archive)))
    except BoundsError as error:
        raise ArchiveError(str(error)) from None
    except (OSError, zipfile.BadZipFile, json.JSONDecodeError, UnicodeDecodeError, RecursionError) as error:
        raise ArchiveError(f"{archive}: cannot read its {INDEX_JSON}: {error}") from None
    games = index.get("games") if isinstance(index, dict) else None
    if not isinstance(games, list) or not all(isinstance(g, dict) for g in games):
        raise ArchiveError(f"{archive}: {INDEX_JSON} is not a {ARCHIVE_FORMAT} index (no list of games)")
    return games


def replay_members(archive: Path) -> list[str]:
    """The names of the replays an archive holds, in its order."""
    try:
        with zipfile.ZipFile(archive) as packed:
            check_archive(packed, str(archive))
            names = packed.namelist()
    except BoundsError as error:
        raise ArchiveError(str(error)) from None
    except (OSError, zipfile.BadZipFile) as error:
        raise ArchiveError(f"{archive}: not a readable zip: {error}") from None
    return [n for n in names if n.endswith((".jsonl", ".jsonl.gz"))]


def resolve_member(archive: Path, name: str) -> str:
    """The member that `name` means: a member's name, or a game id or match id of the index."""
    members = replay_members(archive)
    if name in members:
        return name
    for entry in read_index(archive) or []:
        if name in (entry.get("game_id"), entry.get("match_id")) and entry.get("member"):
            return str(entry["member"])
    shown = ", ".join(members[:3]) + (", ..." if len(members) > 3 else "")
    raise ArchiveError(
        f"{archive} holds no replay {name!r}: name a member ({shown or 'it holds none'}), "
        "or a game id or match id from its index"
    )


def member_bytes(archive: Path, member: str) -> bytes:
    """A member's bytes as stored (before any gzip is unpacked)."""
    try:
        with zipfile.ZipFile(archive) as packed:
            check_archive(packed, str(archive))
            return read_member(packed, member, str(archive))
    except BoundsError as error:
        raise ArchiveError(str(error)) from None
    except KeyError:
        raise ArchiveError(f"{archive} has no member {member}") from None
    except (zipfile.BadZipFile, OSError) as error:
        raise ArchiveError(f"{archive}: cannot read {member}: {error}") from None


def member_lines(archive: Path, name: str) -> list[bytes]:
    """A replay's lines from an archive, as referee.replay.format.read_lines gives a file's."""
    member = resolve_member(archive, name)
    data = member_bytes(archive, member)
    where = f"{archive}:{member}"
    try:
        if member.endswith(".gz"):
            with gzip.GzipFile(fileobj=io.BytesIO(data)) as unpacked:
                return bounded_lines(unpacked, where)
        return bounded_lines(io.BytesIO(data), where)
    except BoundsError as error:
        raise ArchiveError(str(error)) from None
    except (OSError, EOFError) as error:
        raise ArchiveError(f"{where}: not a readable gzip member: {error}") from None
