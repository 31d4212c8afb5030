"""`tichu replay redact`: a replay as one seat (or a spectator) may see it, still verifiable.

Every line that the view may not see is replaced by `{"kind": "redacted", "h": ...}`, its place in
the hash chain: the chain, and so the referee's signature of its head, still verify, and the view
holds nothing its seat was not told (R-INFO-1). A seat sees the header, connections, the start,
public events and its own private ones, its own decisions, timeouts and rejections, Tichu calls,
resumptions and the result; a spectator, the same without any seat's own. Bomb windows (every
seat's answer, discarded bombs included) and the seed's reveal (which would tell the deal of a
table still playing the same board) are withheld from every view.
"""

from __future__ import annotations

import json
from pathlib import Path

from referee.match.records import (
    Abandoned,
    CallRecord,
    Connected,
    DecisionRecord,
    Disconnected,
    EventRecord,
    Record,
    RedactedRecord,
    RejectionRecord,
    ResultRecord,
    ResumeRecord,
    Start,
    ViolationRecord,
)
from referee.replay.format import Replay, ReplayFormatError, parse_lines, read_lines

PUBLIC = (Connected, Disconnected, Abandoned, Start, CallRecord, ResumeRecord, ResultRecord)


def sees(record: Record, seat: int | None) -> bool:
    """Whether `seat` (None: a spectator) may see a record."""
    if isinstance(record, PUBLIC):
        return True
    if isinstance(record, EventRecord):
        return record.private_to is None or record.private_to == seat
    if isinstance(record, DecisionRecord | ViolationRecord | RejectionRecord):
        return seat is not None and record.seat == seat
    return False  # windows, the reveal, lines already withheld


def redacted_lines(replay: Replay, raw: list[bytes], seat: int | None) -> list[bytes]:
    """The lines of the view: kept lines as they are, the others replaced by their h."""
    if not replay.header.chained:
        raise ReplayFormatError(f"{replay.path}: a {replay.header.format} replay has no chain to redact")
    if replay.header.initial_state is not None:
        # The header is every view's first line, and a starting position holds every hand.
        raise ReplayFormatError(
            f"{replay.path}: the match started from a given position, whose header shows every "
            "hand: it has no view that hides them"
        )
    if replay.chain_break is not None:
        line, why = replay.chain_break
        raise ReplayFormatError(f"{replay.path}:{line}: {why}; a broken chain is not redacted")
    out = [raw[0]]
    for record, kept, h in zip(replay.records, raw[1:], replay.hashes[1:], strict=True):
        if sees(record, seat) or isinstance(record, RedactedRecord):
            out.append(kept)
        else:
            out.append(json.dumps(RedactedRecord(h).to_json(), separators=(",", ":")).encode() + b"\n")
    return out


def redact(path: Path, out: Path, seat: int | None) -> int:
    """Write the view of seat `seat` (None: the public view) of the replay at `path`; lines withheld."""
    raw = [line for line in read_lines(path) if line.endswith(b"\n")]
    replay = parse_lines(raw, path)
    if seat is not None and not 0 <= seat < len(replay.header.seats):
        raise ReplayFormatError(f"{path}: there is no seat {seat}")
    lines = redacted_lines(replay, raw, seat)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(b"".join(lines))
    return sum(a is not b for a, b in zip(lines, raw, strict=True))
