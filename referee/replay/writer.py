"""Writing a replay as the match runs: through structlog, one JSON line per record, flushed."""

from __future__ import annotations

import asyncio
import io
import json
import os
from collections.abc import MutableMapping
from pathlib import Path
from typing import Any

import structlog

from referee.match.jsonbytes import compact_json
from referee.match.records import EventRecord, Header, Line

# The key under which a line already made (an event's, from the JSON the wire carries) reaches
# the renderer.
_TEXT = "_line"


def _dumps(record: Any, **_: Any) -> str:
    return compact_json(record, default=str).decode("utf-8")


def _render(_logger: Any, _method: str, line: MutableMapping[str, Any]) -> str:
    text = line.get(_TEXT)
    return text if isinstance(text, str) else _dumps(line)


def _event_line(record: EventRecord, h: str) -> str:
    """The line _render would make of an event record, put together from the event's JSON text
    (the same bytes, "event" last as structlog orders it): most of a replay's lines are events,
    and encoding each event once more was most of the writer's work."""
    private_to = "null" if record.private_to is None else str(record.private_to)
    chained = f'"h":"{h}",' if h else ""
    return (
        f'{{"kind":"event","version":{record.version},"private_to":{private_to},'
        f'"t_ms":{json.dumps(record.t_ms)},{chained}"event":{record.text}}}'
    )


class ReplayWriter:
    """Appends records to a replay file, one JSON line each, flushed as soon as the referee is
    done with the input that made them.

    Inside an event loop, `write` only keeps the record: the lines are rendered, written and
    flushed together in the loop's next iteration, after the bots' messages have left. Records
    are values that never change, so rendering them later writes the same line. A crash loses at
    most the records of the input being handled. This logger has its own processors and no
    level filter, so the process's logging configuration never drops or reshapes a record.
    `keep_bytes` (when resuming) first cuts the file back to its last complete line. A header is
    written at once: a replay file the referee created has its header, even when the process is
    killed before the loop's next iteration.
    """

    def __init__(self, path: Path, *, keep_bytes: int | None = None) -> None:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.path = path
        if keep_bytes is None:
            # Owner only: a live replay holds every hand (a tournament publishes it after the game).
            descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            self._file = os.fdopen(descriptor, "w", encoding="utf-8")
        else:
            self._file = path.open("r+", encoding="utf-8")
            self._file.truncate(keep_bytes)
            self._file.seek(keep_bytes)
        self._lines = io.StringIO()  # rendered lines, until they are written out together
        # Bound once: each call on the lazy proxy that wrap_logger returns would bind a new
        # BoundLogger, which caches its method in itself, a reference cycle per record.
        self._logger = structlog.wrap_logger(
            structlog.WriteLogger(self._lines),
            processors=[_render],
            wrapper_class=structlog.BoundLogger,
            context_class=dict,
        ).bind()
        self._waiting: list[tuple[Line, str]] = []
        self._flush_due = False

    def write(self, record: Line, h: str = "") -> None:
        """Keep one record for the next flush (at once outside an event loop, and a header)."""
        if self._file.closed:
            return
        self._waiting.append((record, h))
        if self._flush_due:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self.flush()
            return
        if isinstance(record, Header):
            self.flush()
            return
        self._flush_due = True
        # A timer, not call_soon: a due timer runs after the callbacks queued before it ran,
        # and so after the writers woken when the referee is done with the input.
        loop.call_later(0, self.flush)

    def flush(self) -> None:
        """Write the records kept so far, one line each, and flush the file."""
        self._flush_due = False
        if self._file.closed or not self._waiting:
            return
        waiting, self._waiting = self._waiting, []
        for record, h in waiting:
            # ASCII only: the wire's JSON escapes what this file writes as it is.
            if isinstance(record, EventRecord) and record.text and record.text.isascii():
                self._logger.msg(**{_TEXT: _event_line(record, h)})
                continue
            line = record.to_json()
            if h:
                line["h"] = h  # format 2: the line's place in the hash chain
            self._logger.msg(**line)
        self._file.write(self._lines.getvalue())
        self._lines.seek(0)
        self._lines.truncate()
        self._file.flush()

    def close(self) -> None:
        """Write what is kept, then close the file; later writes are dropped."""
        self.flush()
        self._file.close()
