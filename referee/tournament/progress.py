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
    """Games settled of the schedule, hands per second, time left and the leader.

    The count is over the whole schedule: the games finished before this run (`already_done`),
    those finished in this run and those skipped (the SPRT made them unnecessary) are settled;
    the rates, and the time left they give, are this run's. On a terminal the line is redrawn in
    place at most every `redraw_s`; elsewhere (a log file, CI) a full line is written every
    `log_every_s`, and always at the end. Anything else printed while it runs goes through
    `message`, so that it never lands in the middle of the bar.
    """

    def __init__(
        self,
        out: TextIO,
        total_games: int,
        already_done: int = 0,
        *,
        skipped: int = 0,
        live: bool | None = None,
        log_every_s: float = 10.0,
        redraw_s: float = 0.25,
        now: Callable[[], float] = time.monotonic,
    ) -> None:
        self.out = out
        self.total = total_games
        self.already_done = already_done
        self.skipped = skipped
        self.live = out.isatty() if live is None else live
        self.log_every_s = log_every_s
        self.redraw_s = redraw_s
        self._now = now
        self.started = now()
        self.done = 0
        self.hands = 0
        self.leader = ""
        self._last_output = -float("inf")
        self._finished = False

    def update(
        self,
        done: int,
        hands: int,
        leader: str,
        total: int | None = None,
        *,
        skipped: int | None = None,
    ) -> None:
        """New counts: this run's finished games and their hands, the leader, and (when given) the
        schedule's total and the games skipped so far in all; draws or logs when it is time."""
        self.done, self.hands, self.leader = done, hands, leader
        if total is not None:
            self.total = total
        if skipped is not None:
            self.skipped = skipped
        now = self._now()
        if now - self._last_output >= (self.redraw_s if self.live else self.log_every_s):
            self._last_output = now
            self._emit(final=False)

    def message(self, text: str) -> None:
        """A line of its own (an SPRT decision, a failed game): on a terminal above the bar, which
        is drawn again below it."""
        text = text.strip("\n")
        if self.live and not self._finished:
            self.out.write(f"\r\x1b[K{text}\n")
            self._draw_bar()
        else:
            self.out.write(text + "\n")
        self.out.flush()

    def finish(self) -> None:
        """The last line (and a newline after a live bar)."""
        self._emit(final=True)
        self._finished = True

    @property
    def settled(self) -> int:
        """Games of the schedule that need no more play: finished (before or in this run) or skipped."""
        return self.already_done + self.done + self.skipped

    def line(self) -> str:
        """The current state in one line."""
        elapsed = max(self._now() - self.started, 1e-9)
        rate_games = self.done / elapsed
        left_games = max(self.total - self.settled, 0)
        left = left_games / rate_games if rate_games > 0 else (0.0 if left_games == 0 else float("inf"))
        count = f"{self.settled}/{self.total} games"
        if self.already_done or self.skipped:
            count += f" ({self.done} this run" + (f", {self.skipped} skipped" if self.skipped else "") + ")"
        text = (
            f"{count}, {self.hands} hands, {self.hands / elapsed:.2f} hands/s, "
            f"{format_duration(elapsed)} elapsed, {format_duration(left)} left"
        )
        return text + (f", leader {self.leader}" if self.leader else "")

    def _draw_bar(self) -> None:
        filled = min(BAR_WIDTH * self.settled // max(self.total, 1), BAR_WIDTH)
        bar = "#" * filled + "." * (BAR_WIDTH - filled)
        self.out.write(f"\r\x1b[K[{bar}] {self.line()}")

    def _emit(self, final: bool) -> None:
        if self.live:
            self._draw_bar()
            if final:
                self.out.write("\n")
        else:
            self.out.write(("finished: " if final else "progress: ") + self.line() + "\n")
        self.out.flush()
