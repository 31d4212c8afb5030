"""`tichu demo --local`: one complete game between the sample bots in this process, narrated.

The game is played by the SDK's one in-process match loop (clients.local, the referee's own match
core in virtual time) and told by the same renderer as `tichu replay show`.
"""

from __future__ import annotations

import os
import sys
from typing import TextIO

from clients.heuristic_bot import HeuristicBot
from clients.local import play_match
from clients.showcase_bot import ShowcaseBot
from referee.match.proof import match_seed
from referee.match.records import Line
from referee.replay.text import Renderer
from referee.visible import visible

DEFAULT_SEED = "2024"
SEED_ENV = "TICHU_DEMO_SEED"


def run_local_demo(seed: str | None = None, out: TextIO | None = None) -> int:
    """Play one game to the target, HeuristicBots (team A) against ShowcaseBots (team B), and
    print it round by round; 0 once it is over."""
    stream = sys.stdout if out is None else out
    chosen = seed or os.environ.get(SEED_ENV, "").strip() or DEFAULT_SEED
    deal = match_seed(chosen)  # as the referee reads a seed, so that both deal the same game
    renderer = Renderer()

    def narrate(record: Line) -> None:
        for line in renderer.feed(record):
            stream.write(line + "\n")

    try:
        stream.write(
            f"Tichu demo, in this process: seed {visible(str(deal))} "
            f"(set {SEED_ENV} or --seed for another game)\n"
        )
        bots = [HeuristicBot(), ShowcaseBot(), HeuristicBot(), ShowcaseBot()]
        outcome = play_match(bots, seed=deal, on_record=narrate)
    except BrokenPipeError:
        # The reader has gone (`tichu demo --local | head`): stop quietly, and keep the
        # interpreter's final flush of the dead pipe from printing a second error.
        if stream is sys.stdout:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    stream.write(f"{outcome.rounds} rounds played in {outcome.seconds:.1f} s.\n")
    return 0 if outcome.finished else 1
