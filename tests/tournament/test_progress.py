"""Progress counts the whole schedule after a resume, and prints messages on lines of their own."""

from __future__ import annotations

import io

from referee.tournament.progress import Progress


class _Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_totals_over_the_schedule_after_a_resume() -> None:
    clock, out = _Clock(), io.StringIO()
    progress = Progress(out, 48, 25, skipped=1, live=False, log_every_s=5, now=clock)
    clock.now += 60
    progress.update(12, 120, "b (+40 per game)", skipped=3)
    # 25 before + 12 now + 3 skipped of 48; 2 hands/s and 12 games a minute, this run's only.
    assert out.getvalue() == (
        "progress: 40/48 games (12 this run, 3 skipped), 120 hands, 2.00 hands/s, 1m00s elapsed, "
        "40s left, leader b (+40 per game)\n"
    )
    assert progress.settled == 40
    clock.now += 1
    progress.update(13, 130, "b")  # within log_every_s: no line, and the skipped count stays
    assert out.getvalue().count("\n") == 1 and progress.skipped == 3
    progress.finish()
    assert out.getvalue().splitlines()[-1].startswith("finished: 41/48 games (13 this run, 3 skipped)")


def test_a_fresh_run_and_a_run_with_nothing_left() -> None:
    clock, out = _Clock(), io.StringIO()
    progress = Progress(out, 10, live=False, now=clock)
    clock.now += 10
    progress.update(2, 8, "")
    assert out.getvalue() == "progress: 2/10 games, 8 hands, 0.80 hands/s, 10s elapsed, 40s left\n"
    everything_done = Progress(io.StringIO(), 10, 7, skipped=3, live=False, now=clock)
    assert everything_done.line().startswith("10/10 games (0 this run, 3 skipped)")
    assert "0s left" in everything_done.line()  # nothing to wait for, though no game was played


def test_messages_without_a_terminal_are_plain_lines() -> None:
    clock, out = _Clock(), io.StringIO()
    progress = Progress(out, 8, 2, now=clock)  # StringIO is no tty: plain lines
    assert not progress.live
    progress.update(1, 4, "a")
    progress.message("\nSPRT a vs b: b is stronger than a (H1 accepted); no new boards")
    progress.message("game p00-b0003-t1 did not finish; resume plays it again")
    clock.now += 20
    progress.update(2, 8, "a")
    progress.finish()
    text = out.getvalue()
    assert "\x1b" not in text and "\r" not in text
    lines = text.splitlines()
    assert lines[1] == "SPRT a vs b: b is stronger than a (H1 accepted); no new boards"
    assert lines[2] == "game p00-b0003-t1 did not finish; resume plays it again"
    assert lines[0].startswith("progress: 3/8") and lines[3].startswith("progress: 4/8")
    assert lines[4].startswith("finished: 4/8") and len(lines) == 5 and text.endswith("\n")


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_messages_on_a_terminal_clear_the_bar_and_draw_it_again() -> None:
    clock, out = _Clock(), _Terminal()
    progress = Progress(out, 4, now=clock)
    assert progress.live  # from the stream
    clock.now += 1
    progress.update(1, 2, "")
    bar = "\r\x1b[K[######..................] 1/4 games, 2 hands, 2.00 hands/s, 1s elapsed, 3s left"
    assert out.getvalue() == bar
    progress.message("SPRT decided")
    assert out.getvalue() == bar + "\r\x1b[KSPRT decided\n" + bar
    progress.finish()
    assert out.getvalue().endswith(bar + "\n")
    progress.message("after the bar")  # the bar is gone: no escape codes, no bar drawn again
    assert out.getvalue().endswith(bar + "\nafter the bar\n")
