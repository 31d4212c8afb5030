"""What a replay tool reads at most: a hostile file is refused with one clear line, not a traceback
or a machine out of memory.

A whole match's replay is well under a megabyte (a few thousand lines of a few hundred bytes), so
the bounds leave it a wide margin while a crafted file (a zip bomb, a line of 100,000 nested
brackets, a million members) is stopped at the first byte past them.
"""

from __future__ import annotations

import zipfile
from typing import Protocol

MAX_LINE_BYTES = 1 << 20  # one line; the largest real ones (a header with a position) are a few KB
MAX_REPLAY_BYTES = 64 << 20  # one replay, unpacked
MAX_MEMBERS = 100_000  # members of a game archive
MAX_RATIO = 100  # unpacked size over packed size of an archive member (JSON packs about 10 to 1)


class Readable(Protocol):
    """What bounded_lines reads from: a binary file, plain or gzip."""

    def readline(self, size: int = -1, /) -> bytes:
        """At most `size` bytes of the next line."""
        ...


class BoundsError(ValueError):
    """A file past one of the bounds: the message says which, and by how much."""


def bounded_lines(stream: Readable, where: str) -> list[bytes]:
    """Every line of `stream` (each with its newline but maybe the last), refusing a line over
    MAX_LINE_BYTES or a whole over MAX_REPLAY_BYTES before reading further."""
    lines: list[bytes] = []
    total = 0
    while line := stream.readline(MAX_LINE_BYTES + 1):
        if len(line) > MAX_LINE_BYTES:
            raise BoundsError(
                f"{where}:{len(lines) + 1}: a line over {MAX_LINE_BYTES:,} bytes, which no replay writes"
            )
        total += len(line)
        if total > MAX_REPLAY_BYTES:
            raise BoundsError(f"{where}: over {MAX_REPLAY_BYTES:,} bytes unpacked, which no replay reaches")
        lines.append(line)
    return lines


def check_archive(packed: zipfile.ZipFile, where: str) -> None:
    """Refuse an archive of too many members, of a member named twice, or of a member that
    claims to unpack to more than MAX_RATIO times its size or MAX_REPLAY_BYTES."""
    infos = packed.infolist()
    if len(infos) > MAX_MEMBERS:
        raise BoundsError(
            f"{where}: {len(infos):,} members, more than the {MAX_MEMBERS:,} an archive may hold"
        )
    names = [info.filename for info in infos]
    if len(set(names)) != len(names):
        twice = sorted({name for name in names if names.count(name) > 1})
        raise BoundsError(f"{where}: the member {twice[0]!r} is there twice: which one is the game?")
    for info in infos:
        if info.file_size > MAX_REPLAY_BYTES or info.file_size > MAX_RATIO * max(info.compress_size, 1024):
            raise BoundsError(
                f"{where}: {info.filename} unpacks to {info.file_size:,} bytes from {info.compress_size:,}: "
                "a replay is never that large or that compressible"
            )


def read_member(packed: zipfile.ZipFile, member: str, where: str) -> bytes:
    """A member's bytes, read no further than MAX_REPLAY_BYTES whatever its entry claims."""
    with packed.open(member) as stream:
        data = stream.read(MAX_REPLAY_BYTES + 1)
    if len(data) > MAX_REPLAY_BYTES:
        raise BoundsError(f"{where}: {member} is over {MAX_REPLAY_BYTES:,} bytes unpacked")
    return data
