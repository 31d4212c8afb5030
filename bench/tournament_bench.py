"""A 1,000-hand duplicate tournament of the sample bots: hands/s, wall time, CPU per hand, SPRT verdicts.

Run `.venv/bin/python bench/tournament_bench.py` (a few minutes on 2 cores); `--hands 200` for a
quick one. It writes a round-robin config for RandomBot, HeuristicBot and ShowcaseBot (each a
team of two copies of itself; the tournament preset's 4-deal games, in duplicate board pairs;
early stopping off, so every hand is played) into a temporary folder, runs it exactly as
`tichu tournament run` does (one referee in this process, one worker process per bot), and
prints the figures and the command that reproduces them. `--keep DIR` keeps the config, the
SQLite results, the replays and the standings in DIR.

CPU per hand is the whole tournament's CPU time (user + system, from getrusage) over the hands
played: this process (the referee, the runner, the store) and the bot worker processes. The
runner waits for every worker it started before it returns (it closes their input, then kills
the ones still running after WORKER_STOP_S), so their CPU time is in RUSAGE_CHILDREN by then;
the bench checks that no child process is left, and says so if one is.
"""

from __future__ import annotations

import argparse
import io
import json
import math
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from clients.connect import load_bot  # noqa: E402 (after the path is set)
from clients.local import play_match  # noqa: E402
from referee.match.proof import match_seed  # noqa: E402
from referee.server.codec import config_from_proto  # noqa: E402
from referee.tournament.config import SprtSettings, TournamentConfig, load_config  # noqa: E402
from referee.tournament.report import board_pairs  # noqa: E402
from referee.tournament.runner import run_tournament, stored_standings  # noqa: E402
from referee.tournament.schedule import build_schedule, pairings  # noqa: E402
from referee.tournament.stats import pairing_verdict  # noqa: E402
from referee.tournament.store import Store  # noqa: E402
from referee.wire.tichu.v1 import referee_pb2 as pb  # noqa: E402

BOTS = (
    ("random", "clients.random_bot:RandomBot"),
    ("heuristic", "clients.heuristic_bot:HeuristicBot"),
    ("showcase", "clients.showcase_bot:ShowcaseBot"),
)
HANDS_PER_GAME = 4  # the tournament preset


def write_config(folder: Path, hands: int, concurrency: int, seed: str) -> Path:
    """The benchmark's tournament config in `folder`; its path."""
    per_pairing = math.ceil(hands / math.comb(len(BOTS), 2))
    entrants = "".join(f'\n[[entrants]]\nname = "{name}"\nbot = "{spec}"\n' for name, spec in BOTS)
    text = f"""# Written by bench/tournament_bench.py
[tournament]
name = "bench"
seed = "{seed}"
format = "round_robin"
hands_per_pairing = {per_pairing}
duplicate = true
concurrency = {concurrency}
database = "results.sqlite"
replay_dir = "replays"
output_dir = "."

[rules]
preset = "tournament"

[sprt]
elo0 = 0
elo1 = 50
alpha = 0.05
beta = 0.05
stop_early = false
{entrants}"""
    path = folder / "bench.toml"
    path.write_text(text, encoding="utf-8")
    return path


def cpu_s() -> tuple[float, float]:
    """CPU seconds so far of this process, and of its child processes that ended and were waited for."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime


def children_left() -> bool:
    """Whether a child process was still running or not yet waited for (its CPU time not counted)."""
    try:
        os.waitpid(-1, os.WNOHANG)  # running, or an exited one that nobody had waited for
    except ChildProcessError:
        return False  # no child at all: every one was waited for
    return True


def first_decision(half_points: list[int], sprt: SprtSettings) -> int | None:
    """After how many board pairs (in board order) both of a pairing's SPRTs had decided, if ever."""
    counts = [0] * 5
    for played, half in enumerate(half_points, start=1):
        counts[half] += 1
        if pairing_verdict("a", "b", counts, sprt.elo0, sprt.elo1, sprt.alpha, sprt.beta).decided:
            return played
    return None


def in_process_cpu_s(config: TournamentConfig) -> tuple[float, int]:
    """The same bots play the same games' deals in this process (clients.local, no gRPC): CPU
    seconds and hands, for the ratio to the tournament's figure."""
    specs = {entrant.name: entrant.bot for entrant in config.entrants}
    # As the runner has the referee read them: the preset and the config's overrides.
    overrides = json.dumps(config.rules_overrides) if config.rules_overrides else ""
    rules = config_from_proto(pb.RulesConfig(json=overrides, preset=config.preset))
    started, hands = time.process_time(), 0
    for game in build_schedule(config):
        bots = [load_bot(specs[player]) for player in game.players]
        hands += play_match(bots, rules, match_seed(game.seed)).rounds
    return time.process_time() - started, hands


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print its figures."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--hands", type=int, default=1000, help="hands in all (default 1000)")
    parser.add_argument("--concurrency", type=int, default=12, help="tables at once (default 12)")
    parser.add_argument("--seed", default="bench-1", help="the tournament's seed")
    parser.add_argument("--keep", type=Path, help="a folder to keep the config and results in")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="tichu-tournament-bench-") as scratch:
        folder = args.keep or Path(scratch)
        folder.mkdir(parents=True, exist_ok=True)
        config_path = write_config(folder, args.hands, args.concurrency, args.seed)
        config = load_config(config_path)
        if config.database.exists():
            print(f"{config.database} exists already: give an empty --keep folder", file=sys.stderr)
            return 2
        log = io.StringIO()
        load_before = os.getloadavg()[0]
        cpu_before = cpu_s()
        started = time.monotonic()
        code = run_tournament(config, resume=False, out=log, live=False)
        wall_s = time.monotonic() - started
        referee_cpu_s, workers_cpu_s = (
            after - before for after, before in zip(cpu_s(), cpu_before, strict=True)
        )
        unwaited = children_left()
        store = Store(config.database)
        rows = store.games()
        hands = sum(r.rounds or 0 for r in rows if r.finished)
        standings = stored_standings(config, rows)
        store.close()
        finished = sum(1 for r in rows if r.finished)
        forfeits = sum(1 for r in rows if r.finished and r.forfeit)
        print(f"Tournament bench: {len(BOTS)} sample bots, round robin, duplicate, tournament preset")
        print(f"  games        {finished} of {len(rows)} ({forfeits} forfeits)")
        print(f"  hands        {hands}")
        print(f"  wall time    {wall_s:.1f} s (referee, workers' start and the standings included)")
        print(f"  rate         {hands / wall_s:.2f} hands/s, {finished / wall_s:.2f} games/s")
        total_cpu_s = referee_cpu_s + workers_cpu_s
        per_hand_ms = 1000 / max(hands, 1)
        print(
            f"  CPU          {total_cpu_s * per_hand_ms:.1f} ms per hand: referee process "
            f"{referee_cpu_s * per_hand_ms:.1f} ms, bot workers {workers_cpu_s * per_hand_ms:.1f} ms "
            f"({total_cpu_s:.1f} s of CPU in all, user + system)"
        )
        if unwaited:
            print("  (a worker process had not been waited for: its CPU time is missing above)")
        local_cpu_s, local_hands = in_process_cpu_s(config)
        local_ms = local_cpu_s * 1000 / max(local_hands, 1)
        print(
            f"  in process   {local_ms:.1f} ms of CPU per hand for the same bots and deals "
            f"(clients.local, {local_hands} hands): gRPC costs x{total_cpu_s * per_hand_ms / local_ms:.1f}"
        )
        print(
            f"  load average {load_before:.2f} before, {os.getloadavg()[0]:.2f} after "
            f"({os.cpu_count()} cores)"
        )
        print("  SPRT (elo0 0, elo1 50, alpha = beta = 0.05), on all the board pairs of each pairing:")
        pairs = board_pairs(rows, {p.index: p.first.name for p in pairings(config)})
        for index, verdict in enumerate(standings.verdicts):
            print(
                f"    {verdict.first} vs {verdict.second}: {verdict.summary}, "
                f"{verdict.first_stronger.pairs} pairs"
            )
            decided_at = first_decision([p.half_points for p in pairs if p.pairing == index], config.sprt)
            if decided_at is not None:
                print(f"      (with stop_early it would have stopped after {decided_at} board pairs)")
        print(f"  leader       {standings.leader}")
        keep = f" --keep {args.keep}" if args.keep else ""
        print(
            "Reproduce: .venv/bin/python bench/tournament_bench.py "
            f"--hands {args.hands} --concurrency {args.concurrency} --seed {args.seed}{keep}"
        )
        if code != 0:
            print(log.getvalue(), file=sys.stderr)
        return code


if __name__ == "__main__":
    sys.exit(main())
