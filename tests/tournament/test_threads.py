"""A tournament driven from a thread other than the main one (a Ray actor's, a service's): asyncio
refuses signal handlers there, so the runner leaves signals to the thread's owner and plays."""

from __future__ import annotations

import io
import threading
from pathlib import Path

from referee.tournament.config import parse_config
from referee.tournament.runner import run_tournament
from tests.tournament.support import HEURISTIC, OUTPUTS, RANDOM


def test_a_tournament_runs_off_the_main_thread(tmp_path: Path) -> None:
    config = parse_config(
        f'[tournament]\nseed = "thread"\ngames_per_pairing = 2\n{OUTPUTS}\n'
        f'[rules]\nmatch_mode = "fixed_rounds:1"\n{RANDOM}{HEURISTIC}',
        tmp_path / "t.toml",
    )
    results: list[int | BaseException] = []
    out = io.StringIO()

    def play() -> None:
        try:
            results.append(run_tournament(config, resume=False, out=out, live=False))
        except BaseException as error:  # the RuntimeError of add_signal_handler, before the fix
            results.append(error)

    thread = threading.Thread(target=play)
    thread.start()
    thread.join(300)
    assert results == [0], (results, out.getvalue())
    assert "Played 2 games" in out.getvalue()
