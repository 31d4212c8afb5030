"""Reading a replay file: `tichu-replay/1`, one JSON object per line, the header first.

Every line is one record of `referee.match.records` (the schema, documented in the README's
"Replays" section). This module reads a file back, tolerating the one thing a crash can leave
behind: a last line cut off in the middle.
"""

from __future__ import annotations

import gzip
import json
from dataclasses import dataclass, field
from pathlib import Path

from referee.match.records import (
    FORMAT,
    Header,
    Record,
    RecordError,
    ResultRecord,
    SeatStart,
    Start,
    header_from_json,
    record_from_json,
)


class ReplayFormatError(ValueError):
    """A file that is not a readable replay; the message names the line."""


@dataclass(slots=True)
class Replay:
    """A replay read from a file: its header, its records in order, and how it ends."""

    path: Path | None
    header: Header
    records: list[Record] = field(default_factory=list)
    truncated: bool = False  # the last line was cut off (a crash while writing) and was dropped
    complete_bytes: int = 0  # the length of the file up to the last complete line

    @property
    def match_id(self) -> str:
        """The match's id."""
        return self.header.match_id

    @property
    def result(self) -> ResultRecord | None:
        """The result record, if the match finished."""
        last = self.records[-1] if self.records else None
        return last if isinstance(last, ResultRecord) else None

    @property
    def start(self) -> Start | None:
        """The start record (every seat connected, the game began), if there is one."""
        return next((r for r in self.records if isinstance(r, Start)), None)

    def seat_names(self) -> list[str]:
        """Each seat's bot name (and version, when the bot announced one)."""
        start = self.start
        seats = (
            start.seats
            if start is not None
            else [SeatStart(s.seat, s.bot_name, "") for s in self.header.seats]
        )
        names = []
        for seat in seats:
            name = seat.bot_name or f"seat {seat.seat}"
            names.append(f"{name} {seat.bot_version}".strip() if seat.bot_version else name)
        return names


def _json(raw: bytes, where: str, number: int) -> object:
    try:
        return json.loads(raw)
    except json.JSONDecodeError as error:
        raise ReplayFormatError(f"{where}:{number}: not JSON ({error.msg})") from None
    except UnicodeDecodeError:
        raise ReplayFormatError(f"{where}:{number}: not UTF-8 text") from None


def parse_header(raw: bytes, where: str) -> Header:
    """The first line as a header; ReplayFormatError unless it is a header this code reads."""
    try:
        return header_from_json(_json(raw, where, 1))
    except (RecordError, ValueError) as error:
        raise ReplayFormatError(f"{where}:1: {error}") from None


def parse_record(raw: bytes, where: str, number: int) -> Record:
    """One complete line after the header as a record; ReplayFormatError names the line."""
    try:
        return record_from_json(_json(raw, where, number))
    except (RecordError, ValueError) as error:
        raise ReplayFormatError(f"{where}:{number}: {error}") from None


def parse_lines(lines: list[bytes], path: Path | None = None) -> Replay:
    """A Replay from the file's lines (bytes, each with its newline except maybe the last)."""
    where = str(path) if path is not None else "replay"
    complete = [raw for raw in lines if raw.endswith(b"\n")]
    # Only the last line can lack its newline: a crash cut it off while it was written.
    truncated = len(complete) < len(lines)
    if not complete:
        raise ReplayFormatError(f"{where}: no complete line, not a {FORMAT} replay")
    header = parse_header(complete[0], where)
    records = [parse_record(raw, where, number) for number, raw in enumerate(complete[1:], start=2)]
    return Replay(path, header, records, truncated, sum(len(raw) for raw in complete))


def read_replay(path: str | Path) -> Replay:
    """Read a replay file (gzip-compressed when its name ends in .gz); raises ReplayFormatError
    (naming the line) or OSError."""
    path = Path(path)
    if path.suffix == ".gz":
        with gzip.open(path, "rb") as packed:
            return parse_lines(packed.readlines(), path)
    with path.open("rb") as file:
        return parse_lines(file.readlines(), path)
