"""A bot run as a command, not as a Bot class, for the tests of tournament/bots.py.

    python command_bot.py MODE SERVER TOKEN [MORE...]

play: write what it was given (arguments, TICHU_* variables, folder, CPUs) to seat<TICHU_SEAT>.json
in its folder, then play the seat as RandomBot. hog and spin play too, but seat 0 grabs memory
(hog) or CPU (spin) without end at its first exchange. spew writes 3 MiB to standard error,
starts a child that sleeps (its pid in child.pid), and sleeps.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from clients.connect import connect
from clients.random_bot import RandomBot
from referee.rules import Exchange, Observation

MODE, SERVER, TOKEN = sys.argv[1:4]
SEAT = os.environ.get("TICHU_SEAT", "")


class Greedy(RandomBot):
    """RandomBot, but seat 0 takes memory or CPU until it is stopped when asked to exchange."""

    def exchange(self, obs: Observation) -> Exchange:
        """Hog memory or spin on seat 0; else RandomBot's exchange."""
        if SEAT == "0" and MODE == "hog":
            blocks: list[bytearray] = []
            while len(blocks) < 200:  # 1.6 GB at most, should nothing stop it
                blocks.append(bytearray(b"\x01") * (8 << 20))  # written, so resident
                time.sleep(0.05)
            time.sleep(600)
        if SEAT == "0" and MODE == "spin":
            while True:
                pass
        return super().exchange(obs)


def main() -> None:
    """Do what MODE says."""
    if MODE == "spew":
        child = subprocess.Popen(["sleep", "600"])
        Path("child.pid").write_text(str(child.pid))
        for _ in range(48):
            sys.stderr.write("x" * 65535 + "\n")
        sys.stderr.flush()
        time.sleep(600)
        return
    if MODE == "play":
        given = {
            "argv": sys.argv[1:],
            "env": {k: v for k, v in os.environ.items() if k.startswith("TICHU_")},
            "cwd": os.getcwd(),
            "cpus": sorted(os.sched_getaffinity(0)),
        }
        Path(f"seat{SEAT}.json").write_text(json.dumps(given))
    print(f"seat {SEAT} starts", file=sys.stderr, flush=True)
    asyncio.run(connect(Greedy(), SERVER, TOKEN, insecure=True, name=os.environ.get("TICHU_NAME")))


if __name__ == "__main__":
    main()
