"""`tichu replay show`: a replay in the terminal, round by round and trick by trick, as it is
written (`--follow`) or once it is complete; the lines are referee.replay.text's Renderer's."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

from referee.match.records import Line, ResultRecord
from referee.replay.archive import split_reference
from referee.replay.format import ReplayFormatError, parse_header, parse_record, read_lines
from referee.replay.text import Renderer

FOLLOW_POLL_S = 0.25


def _lines_of(path: Path, follow: bool, poll_s: float) -> Iterator[bytes]:
    """The file's complete lines; with `follow`, wait for more until the result is written.
    `ARCHIVE.zip:MEMBER`: the member's lines (an archived game is over: nothing to follow)."""
    if split_reference(path) is not None:
        yield from (line for line in read_lines(path) if line.endswith(b"\n"))
        return
    with path.open("rb") as file:
        pending = b""
        while True:
            chunk = file.readline()
            if chunk:
                pending += chunk
                if pending.endswith(b"\n"):
                    yield pending
                    pending = b""
                continue
            if not follow:
                return
            time.sleep(poll_s)


def show(
    path: Path,
    *,
    seat: int | None = None,
    round_number: int | None = None,
    follow: bool = False,
    out: TextIO | None = None,
    poll_s: float = FOLLOW_POLL_S,
) -> int:
    """Print a replay (following it while it grows, with `follow`); the exit code."""
    out = out or sys.stdout
    renderer = Renderer(seat, round_number)
    number = 0
    try:
        for raw in _lines_of(path, follow, poll_s):
            number += 1
            record: Line
            if number == 1:
                record = parse_header(raw, str(path))
                players = len(record.seats)
                if seat is not None and not 0 <= seat < players:
                    print(f"tichu replay show: --seat must be 0..{players - 1}", file=sys.stderr)
                    return 2
            else:
                record = parse_record(raw, str(path), number)
            for line in renderer.feed(record):
                print(line, file=out, flush=follow)
            if isinstance(record, ResultRecord):
                return 0
    except OSError as error:
        print(f"tichu replay show: {error}", file=sys.stderr)
        return 1
    except ReplayFormatError as error:
        print(f"tichu replay show: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # The reader went away (e.g. `| head`): stop quietly, as other command-line tools do.
        sys.stderr.close()
        return 0
    if number == 0:
        print(f"tichu replay show: {path} is empty", file=sys.stderr)
        return 1
    return 0
