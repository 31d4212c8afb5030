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

from referee.match.digests import line_hash
from referee.match.fields import RecordError
from referee.match.jsonbytes import compact_json
from referee.match.records import (
    FORMAT,
    Header,
    Record,
    RedactedRecord,
    ResultRecord,
    SeatStart,
    Start,
    header_from_json,
    record_from_json,
)
from referee.replay.archive import ArchiveError, member_lines, split_reference
from referee.replay.bounds import BoundsError, bounded_lines


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
    # Format 2: each line's h as written (the header's first; "" in format 1), the first line
    # whose h is not the chain's (its number and why), and how many records a view withholds.
    hashes: list[str] = field(default_factory=list)
    chain_break: tuple[int, str] | None = None
    withheld: int = 0

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
    except RecursionError:
        raise ReplayFormatError(f"{where}:{number}: JSON nested too deeply for a replay line") from None


def canonical_line(data: object) -> bytes:
    """The one byte form of a line that the referee writes: compact JSON in the object's own key
    order, UTF-8 (not escaped), and a newline."""
    return compact_json(data) + b"\n"


def _check_canonical(raw: bytes, data: object, where: str, number: int) -> None:
    # A chain hashes what a line means, not its bytes: a duplicate key or an extra space would
    # leave a signed replay verifying with other bytes. Only the written form is accepted.
    if raw != canonical_line(data):
        raise ReplayFormatError(
            f"{where}:{number}: not the byte form the referee writes (a duplicate key, extra spaces "
            "or escaped characters): a signed replay's bytes must be exactly those written"
        )


def parse_header(raw: bytes, where: str) -> Header:
    """The first line as a header; ReplayFormatError unless it is a header this code reads."""
    return _header(_json(raw, where, 1), where)


def _header(data: object, where: str) -> Header:
    try:
        return header_from_json(data)
    except (RecordError, ValueError) as error:
        raise ReplayFormatError(f"{where}:1: {error}") from None


def parse_record(raw: bytes, where: str, number: int) -> Record:
    """One complete line after the header as a record; ReplayFormatError names the line."""
    return _record(_json(raw, where, number), where, number)


def _record(data: object, where: str, number: int) -> Record:
    try:
        return record_from_json(data)
    except (RecordError, ValueError) as error:
        raise ReplayFormatError(f"{where}:{number}: {error}") from None


class ChainCheck:
    """Follows a format-2 replay's hash chain line by line; notes the first line that breaks it."""

    def __init__(self) -> None:
        self.head: str | None = None
        self.hashes: list[str] = []
        self.broken: tuple[int, str] | None = None

    def add(self, number: int, data: object, record: Header | Record) -> None:
        """One line (its JSON object and what it reads as)."""
        claimed = data.get("h") if isinstance(data, dict) else None
        self.hashes.append(claimed if isinstance(claimed, str) else "")
        if self.broken is not None:
            return
        if not isinstance(claimed, str):
            self.broken = (number, "the line has no h: the chain stops here")
            return
        if isinstance(record, RedactedRecord):
            self.head = claimed  # withheld: its h stands for it
            return
        assert isinstance(data, dict)
        expected = line_hash(self.head, data)
        if claimed != expected:
            what = (
                "the header's content"
                if self.head is None
                else f"line {number - 1}'s h and this line's content"
            )
            self.broken = (number, f"the chain breaks here: h is not the hash of {what}")
        self.head = claimed


def parse_lines(lines: list[bytes], path: Path | None = None) -> Replay:
    """A Replay from the file's lines (bytes, each with its newline except maybe the last)."""
    where = str(path) if path is not None else "replay"
    complete = [raw for raw in lines if raw.endswith(b"\n")]
    # Only the last line can lack its newline: a crash cut it off while it was written.
    truncated = len(complete) < len(lines)
    if not complete:
        raise ReplayFormatError(f"{where}: no complete line, not a {FORMAT} replay")
    first = _json(complete[0], where, 1)
    header = _header(first, where)
    chain = ChainCheck()
    if header.chained:
        _check_canonical(complete[0], first, where, 1)
        chain.add(1, first, header)
    records = []
    for number, raw in enumerate(complete[1:], start=2):
        data = _json(raw, where, number)
        record = _record(data, where, number)
        if header.chained:
            _check_canonical(raw, data, where, number)
            chain.add(number, data, record)
        records.append(record)
    withheld = sum(isinstance(r, RedactedRecord) for r in records)
    size = sum(len(raw) for raw in complete)
    hashes = chain.hashes or [""] * (len(records) + 1)
    return Replay(path, header, records, truncated, size, hashes, chain.broken, withheld)


def read_replay(path: str | Path) -> Replay:
    """Read a replay file (gzip-compressed when its name ends in .gz); raises ReplayFormatError
    (naming the line) or OSError."""
    path = Path(path)
    return parse_lines(read_lines(path), path)


def read_lines(path: Path) -> list[bytes]:
    """A replay file's lines as bytes, each with its newline (but maybe the last); .gz unpacked;
    `ARCHIVE.zip:MEMBER` reads one replay of a game archive (referee.replay.archive)."""
    reference = split_reference(path)
    if reference is not None:
        try:
            return member_lines(*reference)
        except ArchiveError as error:
            raise ReplayFormatError(str(error)) from None
    try:
        if path.suffix == ".gz":
            with gzip.open(path, "rb") as packed:
                return bounded_lines(packed, str(path))
        with path.open("rb") as file:
            return bounded_lines(file, str(path))
    except BoundsError as error:
        raise ReplayFormatError(str(error)) from None
