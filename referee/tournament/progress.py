"""Progress while a tournament runs: a live bar on a terminal, plain log lines otherwise."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import TextIO

BAR_WIDTH = 24


def format_duration(seconds: float) -> str:
    """`1h02m`, `3m05s` or `42s`."""
    if math.isnan(seconds) or math.isinf(seconds):  # no rate yet: not known
        return "?"
    whole = round(seconds)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes:02d}m"
    if minutes:
        return f"{minutes}m{secs:02d}s"
    return f"{secs}s"


class Progress:
    """Games done of the total, hands per second, time left and the leader.

    On a terminal the line is redrawn in place at most every `redraw_s`; elsewhere (a log file,
    CI) a full line is written every `log_every_s`, and always at the end.
    """

    def __init__(
        self,
        out: TextIO,
        total_games: int,
        *,
        live: bool | None = None,
        log_every_s: float = 10.0,
        redraw_s: float = 0.25,
        now: Callable[[], float] = time.monotonic,
    ) -> None:
        self.out = out
        self.total = total_games
        self.live = out.isatty() if live is None else live
        self.log_every_s = log_every_s
        self.redraw_s = redraw_s
        self._now = now
        self.started = now()
        self.done = 0
        self.hands = 0
        self.leader = ""
        self._last_output = -float("inf")

    def update(self, done: int, hands: int, leader: str, total: int | None = None) -> None:
        """New counts (this run's games and hands); draws or logs when it is time."""
        self.done, self.hands, self.leader = done, hands, leader
        if total is not None:
            self.total = total
        now = self._now()
        if now - self._last_output >= (self.redraw_s if self.live else self.log_every_s):
            self._last_output = now
            self._emit(final=False)

    def finish(self) -> None:
        """The last line (and a newline after a live bar)."""
        self._emit(final=True)

    def line(self) -> str:
        """The current state in one line."""
        elapsed = max(self._now() - self.started, 1e-9)
        rate_games = self.done / elapsed
        left = (self.total - self.done) / rate_games if rate_games > 0 else float("inf")
        text = (
            f"{self.done}/{self.total} games, {self.hands} hands, {self.hands / elapsed:.2f} hands/s, "
            f"{format_duration(elapsed)} elapsed, {format_duration(left)} left"
        )
        return text + (f", leader {self.leader}" if self.leader else "")

    def _emit(self, final: bool) -> None:
        if self.live:
            filled = BAR_WIDTH * self.done // max(self.total, 1)
            bar = "#" * filled + "." * (BAR_WIDTH - filled)
            self.out.write(f"\r\x1b[K[{bar}] {self.line()}" + ("\n" if final else ""))
        else:
            self.out.write(("finished: " if final else "progress: ") + self.line() + "\n")
        self.out.flush()
