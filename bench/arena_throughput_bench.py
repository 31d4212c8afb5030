"""The arena's throughput: games an hour with many hosted bots on one machine.

Run `.venv/bin/python bench/arena_throughput_bench.py` (40 hosted random bots, 4 pairs at once,
120 s), or with `--bots N --concurrency C --seconds S --deals D --no-sandbox`. It runs a real
arena (referee.arena.runner: the referee, the bots' processes in the tournament's sandbox, the
matchmaker, the store) on this machine and counts the games of the pairs that finished in the
timed window; it prints games and hands an hour and the command that reproduces them. (No CPU
figure: the bots' workers run in the sandbox's own process namespace, where this process's
children's CPU times do not reach it.)
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import io
import os
import sys
import tempfile
import time
from pathlib import Path

from referee import log
from referee.arena.config import ArenaConfig
from referee.arena.runner import Arena
from referee.arena.store import ArenaStore, BotState
from referee.rules.config import TOURNAMENT


async def measure(config: ArenaConfig, bots: int, seconds: float, warmup_s: float) -> dict[str, float]:
    """Run the arena, and count what finished between warm-up and the end."""
    store = ArenaStore(config.store)
    for index in range(bots):
        store.add_bot(f"r{index:03d}", bot="clients.random_bot:RandomBot", state=BotState.ACTIVE)
    arena = Arena(config, store, io.StringIO())
    await arena.start()
    stop = asyncio.Event()
    runner = asyncio.create_task(arena.run(stop))
    try:
        await asyncio.sleep(warmup_s)
        first = len(store.pairs(state="finished"))
        wall0 = time.monotonic()
        await asyncio.sleep(seconds)
        last = len(store.pairs(state="finished"))
        wall = time.monotonic() - wall0
    finally:
        stop.set()
        await runner
        await arena.stop()
    voided = len(store.pairs(state="voided"))  # the pairs in play when the arena stopped among them
    store.close()
    pairs = last - first
    games = 2 * pairs
    deals = int(config.rules.match_mode.split(":")[1])
    return {
        "pairs": pairs,
        "games": games,
        "wall_s": wall,
        "games_per_hour": games / wall * 3600,
        "hands_per_hour": games * deals / wall * 3600,
        "voided": voided,
    }


def main(argv: list[str] | None = None) -> int:
    """Measure and print the figures, with the command that reproduces them."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--bots", type=int, default=40)
    parser.add_argument("--concurrency", type=int, default=4, help="pairs at once (two tables each)")
    parser.add_argument("--seconds", type=float, default=120.0, help="the timed window")
    parser.add_argument("--warmup-s", type=float, default=20.0)
    parser.add_argument(
        "--deals", type=int, default=4, help="deals a game (default 4, the tournament preset)"
    )
    parser.add_argument("--no-sandbox", action="store_true", help="the bots' processes without the sandbox")
    args = parser.parse_args(argv)
    log.configure(level="warning")  # the seats' comings and goings are not the figure
    with tempfile.TemporaryDirectory(prefix="arena-bench-") as folder:
        base = Path(folder)
        config = ArenaConfig(
            name="bench",
            store=base / "arena.sqlite",
            output_dir=base / "out",
            pair_every_s=0.5,
            concurrency=args.concurrency,
            rules=dataclasses.replace(TOURNAMENT, match_mode=f"fixed_rounds:{args.deals}"),
            house=(),
            sandbox=not args.no_sandbox,
            source=base / "arena.toml",
        )
        figures = asyncio.run(measure(config, args.bots, args.seconds, args.warmup_s))
    print(
        f"{args.bots} hosted random bots, {args.concurrency} pairs at once, {args.deals} deals a game, "
        f"{'no sandbox' if args.no_sandbox else 'sandboxed'}, {os.cpu_count()} CPUs:"
    )
    print(
        f"  {figures['pairs']:.0f} pairs ({figures['games']:.0f} games) in {figures['wall_s']:.0f} s: "
        f"{figures['games_per_hour']:.0f} games an hour, {figures['hands_per_hour']:.0f} hands an hour; "
        f"{figures['voided']:.0f} pairs voided"
    )
    command = " ".join(["bench/arena_throughput_bench.py", *(argv if argv is not None else sys.argv[1:])])
    print(f"reproduce: .venv/bin/python {command}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
