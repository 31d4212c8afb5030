"""The replay file: `tichu-replay/1`, one JSON object per line, the header first.

Every line is a record with a `kind` and `t_ms` (milliseconds since the match was created).
The README's "Replays" section documents each kind; this module reads a file back, tolerating
the one thing a crash can leave behind: a last line cut off in the middle.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

FORMAT = "tichu-replay/1"
# Every kind of record a replay may hold (the README's "Replays" section documents each).
RECORD_KINDS = frozenset(
    {
        "header",
        "connection",
        "start",
        "event",
        "decision",
        "window",
        "call",
        "violation",
        "rejection",
        "resume",
        "result",
    }
)
# Records that change the game: each is followed by the events it caused.
MOVE_KINDS = frozenset({"decision", "call", "window", "violation"})

Record = dict[str, Any]


class ReplayFormatError(ValueError):
    """A file that is not a readable replay; the message names the line."""


@dataclass(slots=True)
class Replay:
    """A replay read from a file: its header, its records in order, and how it ends."""

    path: Path | None
    header: Record
    records: list[Record] = field(default_factory=list)
    truncated: bool = False  # the last line was cut off (a crash while writing) and was dropped
    complete_bytes: int = 0  # the length of the file up to the last complete line

    @property
    def match_id(self) -> str:
        """The match's id."""
        return str(self.header["match_id"])

    @property
    def result(self) -> Record | None:
        """The result record, if the match finished."""
        last = self.records[-1] if self.records else None
        return last if last is not None and last["kind"] == "result" else None

    @property
    def start(self) -> Record | None:
        """The start record (every seat connected, the game began), if there is one."""
        return next((r for r in self.records if r["kind"] == "start"), None)

    def seat_names(self) -> list[str]:
        """Each seat's bot name (and version, when the bot announced one)."""
        start = self.start
        seats = start["seats"] if start is not None else self.header["seats"]
        names = []
        for seat in seats:
            version = seat.get("bot_version") or ""
            name = seat.get("bot_name") or f"seat {seat['seat']}"
            names.append(f"{name} {version}".strip() if version else name)
        return names


def parse_record(raw: bytes, where: str, number: int) -> Record:
    """One complete line as a record; ReplayFormatError names the line."""
    try:
        record = json.loads(raw)
    except json.JSONDecodeError as error:
        raise ReplayFormatError(f"{where}:{number}: not JSON ({error.msg})") from None
    if not isinstance(record, dict) or not isinstance(record.get("kind"), str):
        raise ReplayFormatError(f"{where}:{number}: a record is a JSON object with a 'kind'")
    return record


def check_header(header: Record, where: str) -> None:
    """Raise ReplayFormatError unless `header` is a header this code reads."""
    if header["kind"] != "header" or header.get("format") != FORMAT:
        found = header.get("format", header["kind"])
        raise ReplayFormatError(f"{where}:1: expected a {FORMAT} header, found {found!r}")
    for key in ("match_id", "config", "seed", "seats"):
        if key not in header:
            raise ReplayFormatError(f"{where}:1: the header lacks {key!r}")


def parse_lines(lines: list[bytes], path: Path | None = None) -> Replay:
    """A Replay from the file's lines (bytes, each with its newline except maybe the last)."""
    where = str(path) if path is not None else "replay"
    records: list[Record] = []
    complete = 0
    truncated = False
    for number, raw in enumerate(lines, start=1):
        if not raw.endswith(b"\n"):
            # Only the last line can lack its newline: a crash cut it off while it was written.
            truncated = True
            break
        records.append(parse_record(raw, where, number))
        complete += len(raw)
    if not records:
        raise ReplayFormatError(f"{where}: no complete line, not a {FORMAT} replay")
    check_header(records[0], where)
    return Replay(path, records[0], records[1:], truncated, complete)


def read_replay(path: str | Path) -> Replay:
    """Read a replay file; raises ReplayFormatError (naming the line) or OSError."""
    path = Path(path)
    with path.open("rb") as file:
        return parse_lines(file.readlines(), path)
