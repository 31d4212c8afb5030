"""Games per hour on one machine and on a local Ray cluster of N nodes, side by side.

Run `.venv/bin/python bench/cluster_bench.py` (needs the [ray] extra; a few minutes on 2 cores);
`--nodes 1 2 4` picks the clusters, `--games 16 --rounds 2` the size, `--think` plays bots
that think 100 ms a turn (bench/thinking_bot.py) instead of the fast sample bots. Every run
plays the same seeded round robin (duplicate, early stopping off, so every game is played) with
the same number of games in flight: `concurrency` tables on the one referee of `tichu tournament
run`, and `--games-per-host` on each of the cluster's hosts (one per CPU of each node; the
concurrency of the one-process run is set to the cluster's total). The rate is taken from the
store, from the first game's start to the last game's end, so the cluster's start-up (about
15 s) is not in it; that start-up is printed beside it. On one machine the nodes share its
cores: a local cluster shows what the distribution costs and whether one referee process was
the bottleneck; a cluster of real machines multiplies by their cores.
"""

from __future__ import annotations

import argparse
import io
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from referee.tournament.cluster import RayFleet, RayTarget  # noqa: E402 (after the path is set)
from referee.tournament.config import TournamentConfig, parse_config  # noqa: E402
from referee.tournament.host import Fleet  # noqa: E402
from referee.tournament.runner import run_tournament  # noqa: E402
from referee.tournament.store import Store  # noqa: E402

FAST = ("random", "clients.random_bot:RandomBot"), ("heuristic", "clients.heuristic_bot:HeuristicBot")
THINKING = ("thinking", "bench.thinking_bot:ThinkingBot"), ("heuristic", "clients.heuristic_bot:HeuristicBot")


def config_text(games: int, rounds: int, concurrency: int, think: bool) -> str:
    """The bench's tournament: a duplicate round robin of two teams, every game played."""
    bots = THINKING if think else FAST
    entrants = "".join(f'\n[[entrants]]\nname = "{name}"\nbot = "{bot}"\n' for name, bot in bots)
    return f"""
[tournament]
name = "bench"
seed = "cluster-bench"
games_per_pairing = {games}
concurrency = {concurrency}
database = "out/results.sqlite"
replay_dir = "out/replays"
output_dir = "out"
[rules]
match_mode = "fixed_rounds:{rounds}"
[clock]
decision_ms = 5000
[sprt]
stop_early = false
{entrants}"""


def measure(config: TournamentConfig, fleet: Fleet | None) -> tuple[float, float, int]:
    """(games per hour between the first start and the last end, wall seconds in all, games)."""
    started = time.monotonic()
    code = run_tournament(config, resume=False, out=io.StringIO(), live=False, fleet=fleet)
    wall = time.monotonic() - started
    if code != 0:
        raise SystemExit(f"the tournament in {config.source.parent} failed (exit {code})")
    store = Store(config.database)
    try:
        games = store.games("finished")
    finally:
        store.close()
    first = min(g.started_at or 0.0 for g in games)
    last = max(g.finished_at or 0.0 for g in games)
    return len(games) / max(last - first, 1e-9) * 3600, wall, len(games)


def main(argv: list[str] | None = None) -> None:
    """Run the one-process tournament and each cluster's, print games per hour side by side."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, nargs="+", default=[1, 2], help="local cluster sizes")
    parser.add_argument("--games", type=int, default=16, help="games (tables) in all; even")
    parser.add_argument("--rounds", type=int, default=2, help="deals per game")
    parser.add_argument("--games-per-host", type=int, default=2)
    parser.add_argument("--think", action="store_true", help="bots that think 100 ms a turn")
    args = parser.parse_args(argv)
    # The hosts' bot workers import bench.thinking_bot: from this checkout, wherever Ray starts them.
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))
    cpus = os.cpu_count() or 1
    rows = []
    with tempfile.TemporaryDirectory(prefix="tichu-cluster-bench-") as scratch:
        for nodes in [0, *args.nodes]:
            hosts = cpus if nodes else 1  # a host per CPU: each node gets cpus // nodes of them
            in_flight = max(1, cpus // max(nodes, 1)) * max(nodes, 1) * args.games_per_host
            folder = Path(scratch) / f"nodes-{nodes}"
            folder.mkdir()
            text = config_text(args.games, args.rounds, in_flight, args.think)
            config = parse_config(text, folder / "t.toml")
            fleet = None if nodes == 0 else RayFleet(RayTarget("", nodes), games_per_host=args.games_per_host)
            rate, wall, games = measure(config, fleet)
            label = "one process" if nodes == 0 else f"Ray local:{nodes}"
            rows.append((label, hosts, in_flight, games, rate, wall))
            print(f"  {label}: {games} games, {rate:,.0f} games/hour", file=sys.stderr, flush=True)
    kind = "bots thinking 100 ms a turn" if args.think else "the fast sample bots"
    print(f"Cluster bench: {args.games} games of {args.rounds} deals, {kind}, on {cpus} CPUs")
    print(f"  {'where':<14} {'in flight':>9} {'games':>6} {'games/hour':>11} {'vs one':>7} {'wall s':>7}")
    base = rows[0][4]
    for label, _, in_flight, games, rate, wall in rows:
        print(f"  {label:<14} {in_flight:>9} {games:>6} {rate:>11,.0f} {rate / base:>6.2f}x {wall:>7.1f}")
    print("  (games/hour from the first game's start to the last one's end: cluster start-up excluded)")
    command = " ".join(
        [".venv/bin/python", "bench/cluster_bench.py", *(sys.argv[1:] if argv is None else argv)]
    )
    print(f"Reproduce: {command}")


if __name__ == "__main__":
    main()
