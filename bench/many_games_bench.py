"""Many games at once on one referee: how many decisions time out when a tournament starts them all.

Run `.venv/bin/python bench/many_games_bench.py` (512 one-deal games at once, about a minute and a
half on 2 cores), or `--games N --decision-ms MS --processes P --sockets 1,4 --no-sandbox`. It
writes a tournament config (two RandomBot entrants with P worker processes each, N one-deal games
all at once, a decision limit of MS with no bank, no early stop), runs it as `tichu tournament run`
does (the referee in this process, the workers in the sandbox unless `--no-sandbox`), and counts
the timeouts of every game from its replay's result record (each seat's `timeouts`). `--sockets`
runs it once for each number of Unix sockets the sandboxed workers reach the referee on
(referee.tournament.host.SANDBOX_SOCKETS; the first given first, then the next, ...). It prints,
for each run, the games finished, the decisions and timeouts, the games with a timeout and the
wall time, and the command that reproduces them. The issue's bar: 512 games at once, 0 timeouts.
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
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import referee.tournament.host as host_module  # noqa: E402 (after the path is set)
from referee.replay import read_replay  # noqa: E402
from referee.tournament.config import TournamentConfig, load_config  # noqa: E402
from referee.tournament.runner import Tournament  # noqa: E402


def write_config(folder: Path, games: int, decision_ms: int, processes: int) -> Path:
    """The bench's tournament config in `folder`; its path."""
    entrants = "".join(
        f'\n[[entrants]]\nname = "{name}"\nbot = "clients.random_bot:RandomBot"\nprocesses = {processes}\n'
        for name in ("r1", "r2")
    )
    text = f"""# Written by bench/many_games_bench.py
[tournament]
name = "many"
seed = "many-games"
games_per_pairing = {games}
duplicate = false
concurrency = {games}
start_timeout_s = 300
database = "results.sqlite"
replay_dir = "replays"
output_dir = "."

[rules]
preset = "tournament"
match_mode = "fixed_rounds:1"

[clock]
decision_ms = {decision_ms}
bank_ms = 0

[sprt]
stop_early = false
{entrants}"""
    path = folder / "many.toml"
    path.write_text(text, encoding="utf-8")
    return path


@dataclass(frozen=True, slots=True)
class Outcome:
    """One run's figures, from its replays."""

    games: int
    decisions: int
    timeouts: int
    games_timed_out: int
    wall_s: float


def count(replay_dir: Path, wall_s: float) -> Outcome:
    """The decisions and timeouts of every finished game in `replay_dir`, from the result records."""
    games = decisions = timeouts = games_timed_out = 0
    for path in replay_dir.glob("*.jsonl"):
        result = read_replay(path).result
        if result is None:
            continue
        games += 1
        decisions += sum(seat.decisions for seat in result.summary)
        timed_out = sum(seat.timeouts for seat in result.summary)
        timeouts += timed_out
        games_timed_out += timed_out > 0
    return Outcome(games, decisions, timeouts, games_timed_out, wall_s)


def play(config: TournamentConfig) -> Outcome:
    """Run the tournament as `tichu tournament run` does; its figures."""
    started = time.monotonic()
    tournament = Tournament(config, io.StringIO(), live=False)
    try:
        tournament.prepare(resume=False)
        asyncio.run(tournament.run())
    finally:
        tournament.close()
    return count(config.replay_dir, time.monotonic() - started)


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print its figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=512, help="games, all at once (default 512)")
    parser.add_argument("--decision-ms", type=int, default=200, help="the decision limit (default 200)")
    parser.add_argument("--processes", type=int, default=2, help="worker processes an entrant (default 2)")
    parser.add_argument(
        "--sockets",
        default=str(host_module.SANDBOX_SOCKETS),
        help="Unix sockets for the sandboxed bots, a run for each: N[,M...] (default: the host's)",
    )
    parser.add_argument("--no-sandbox", action="store_true", help="the workers outside the sandbox, over TCP")
    args = parser.parse_args(argv)
    sockets = [int(n) for n in args.sockets.split(",")]
    if args.no_sandbox:
        sockets = sockets[:1]
    print(
        f"Many games bench: {args.games} one-deal games at once, {args.decision_ms} ms a decision, "
        f"no bank, two RandomBot entrants of {args.processes} worker processes, "
        + ("no sandbox (TCP)" if args.no_sandbox else "workers in the sandbox")
    )
    print(f"  load average before: {os.getloadavg()[0]:.2f} ({os.cpu_count()} cores)")
    chosen = host_module.SANDBOX_SOCKETS
    try:
        for n in sockets:
            host_module.SANDBOX_SOCKETS = n
            with tempfile.TemporaryDirectory(prefix="tichu-many-games-") as folder:
                config = load_config(write_config(Path(folder), args.games, args.decision_ms, args.processes))
                config = dataclasses.replace(config, sandbox=not args.no_sandbox)
                outcome = play(config)
            where = "TCP" if args.no_sandbox else f"{n} socket{'s' if n > 1 else ''}"
            print(
                f"  {where:>10}: {outcome.games} of {args.games} games finished in {outcome.wall_s:.1f} s; "
                f"{outcome.timeouts} of {outcome.decisions} decisions timed out, "
                f"in {outcome.games_timed_out} games"
            )
    finally:
        host_module.SANDBOX_SOCKETS = chosen
    sandbox = " --no-sandbox" if args.no_sandbox else ""
    print(
        f"  load average after: {os.getloadavg()[0]:.2f}\n"
        "Reproduce: .venv/bin/python bench/many_games_bench.py "
        f"--games {args.games} --decision-ms {args.decision_ms} --processes {args.processes} "
        f"--sockets {args.sockets}{sandbox}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
