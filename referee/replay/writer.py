"""Writing a replay as the match runs: through structlog, one JSON line per record, flushed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import structlog


def _dumps(record: Any, **_: Any) -> str:
    return json.dumps(record, separators=(",", ":"), ensure_ascii=False, default=str)


class ReplayWriter:
    """Appends records to a replay file, one flushed JSON line each, so a crash loses none.

    structlog's WriteLogger flushes after every line; this logger has its own processors and
    no level filter, so the process's logging configuration never drops or reshapes a record.
    `keep_bytes` (when resuming) first cuts the file back to its last complete line.
    """

    def __init__(self, path: Path, *, keep_bytes: int | None = None) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        if keep_bytes is None:
            self._file = path.open("w", encoding="utf-8")
        else:
            self._file = path.open("r+", encoding="utf-8")
            self._file.truncate(keep_bytes)
            self._file.seek(keep_bytes)
        self._logger = structlog.wrap_logger(
            structlog.WriteLogger(self._file),
            processors=[structlog.processors.JSONRenderer(serializer=_dumps)],
            wrapper_class=structlog.BoundLogger,
            context_class=dict,
        )

    def write(self, record: dict[str, Any]) -> None:
        """Write one record as one line, flushed."""
        if not self._file.closed:
            self._logger.msg(**record)

    def close(self) -> None:
        """Close the file; later writes are dropped."""
        self._file.close()
