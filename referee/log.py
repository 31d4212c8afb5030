"""structlog, configured once: JSON lines when stderr is not a terminal, readable console output on one.

Callers bind `match_id` and `seat` as context; event names are snake_case and past tense
(`seat_connected`, `decision_timed_out`, `match_finished`).
"""

from __future__ import annotations

import logging
import os
import sys
from typing import cast

import structlog
from structlog.typing import EventDict, FilteringBoundLogger, Processor

from referee.visible import visible

LEVEL_ENV = "TICHU_LOG_LEVEL"


def configure(*, json: bool | None = None, level: int | str | None = None, force: bool = False) -> None:
    """Configure structlog for the process; later calls change nothing unless `force` is set.

    `json=None` picks JSON lines when stderr is not a TTY (servers, CI) and the console renderer
    when it is; `level` defaults to the TICHU_LOG_LEVEL environment variable, else INFO.
    """
    if structlog.is_configured() and not force:
        return
    if json is None:
        json = not sys.stderr.isatty()
    if level is None:
        level = os.environ.get(LEVEL_ENV, "INFO")
    if isinstance(level, str):
        number = logging.getLevelNamesMapping().get(level.upper())
        if number is None:
            raise ValueError(f"unknown log level {level!r}")
        level = number
    # JSON escapes every control character itself; on a console they are escaped first.
    tail: list[Processor] = (
        [structlog.processors.dict_tracebacks, structlog.processors.JSONRenderer()]
        if json
        else [structlog.dev.set_exc_info, escape_for_console, structlog.dev.ConsoleRenderer(colors=False)]
    )
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            *tail,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(level),
        logger_factory=structlog.PrintLoggerFactory(sys.stderr),
        # Not cached: structlog.testing.capture_logs() must still reach loggers made earlier.
        cache_logger_on_first_use=False,
    )


def escape_for_console(_logger: object, _method: str, event: EventDict) -> EventDict:
    """A structlog processor: every string (a bot's name, a refusal's reason) with its non-printing
    characters escaped, so that a log line on a terminal stays one plain line."""
    return {
        key: value if not isinstance(value, str) or value.isprintable() else _Escaped(value)
        for key, value in event.items()
    }


class _Escaped:
    """A string the console renderer shows by its repr: quoted, its non-printing characters
    escaped once (\x1b shows as `\x1b`, a newline as `\n`)."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return f"'{visible(self.text)}'"

    def __str__(self) -> str:  # the event itself is shown by str
        return visible(self.text)


def get_logger(**context: object) -> FilteringBoundLogger:
    """A logger with `context` bound (e.g. match_id=..., seat=...)."""
    return cast(FilteringBoundLogger, structlog.get_logger().bind(**context))
