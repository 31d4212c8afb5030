"""A 1,000-hand duplicate tournament of the sample bots: hands/s, wall time, CPU per hand, SPRT verdicts.

Run `.venv/bin/python bench/tournament_bench.py` (a few minutes on 2 cores); `--hands 200` for a
quick one. It writes a round-robin config for RandomBot, HeuristicBot and ShowcaseBot (each a
team of two copies of itself; the tournament preset's 4-deal games, in duplicate board pairs;
early stopping off, so every hand is played) into a temporary folder, runs it exactly as
`tichu tournament run` does (one referee in this process, one worker process per bot), and
prints the figures and the command that reproduces them. `--keep DIR` keeps the config, the
SQLite results, the replays and the standings in DIR.

CPU per hand is the whole tournament's CPU time (user + system) over the hands played: this
process (the referee, the runner, the store; getrusage) and the bot worker processes (the rest of
the process tree's, from bench/cpu_meter.py: a cgroup's cpuacct.usage where one is writable, since
a worker in the sandbox runs under bwrap's namespace init and its CPU never reaches this
process's RUSAGE_CHILDREN; else getrusage, and the bench says that the workers are missed). The
runner stops every worker it started before it returns; the bench checks that no child process
is left, and says so if one is.

It also prints the messages per hand by kind (the referee's service counts every write and
every message inside a Bundle), the CPU per hand when the same bots play the same games' deals
in this process (clients.local, on the same match core: what gRPC costs), and with `--against
REV` the same tournament as git revision REV has it, run in a worktree of its own so that its
workers import its SDK and bots, alternating with this tree (A B B A) so that the machine's
noise hits both alike. `--bot-option referee_passes=0` (repeatable; referee_declines, blocking)
plays the sample bots with one SDK setting changed, to see what each costs.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
import json
import math
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))  # its sibling cpu_meter, as `python bench/...` finds it

from cpu_meter import CpuMeter  # noqa: E402 (after the path is set)

from clients.loading import load_bot  # noqa: E402
from clients.local import play_match  # noqa: E402
from referee.match.proof import match_seed  # noqa: E402
from referee.server.codec import config_from_proto  # noqa: E402
from referee.server.service import Traffic  # noqa: E402
from referee.tournament.config import SprtSettings, TournamentConfig, load_config  # noqa: E402
from referee.tournament.report import board_pairs  # noqa: E402
from referee.tournament.runner import Tournament, stored_standings  # noqa: E402
from referee.tournament.schedule import build_schedule, pairings  # noqa: E402
from referee.tournament.stats import pairing_verdict  # noqa: E402
from referee.tournament.store import GameRow, Store  # noqa: E402
from referee.wire.tichu.v1 import referee_pb2 as pb  # noqa: E402

BOTS = (
    ("random", "clients.random_bot:RandomBot"),
    ("heuristic", "clients.heuristic_bot:HeuristicBot"),
    ("showcase", "clients.showcase_bot:ShowcaseBot"),
)
HANDS_PER_GAME = 4  # the tournament preset
# The Bot settings --bot-option may change: how the SDK asks and how it calls the bot.
BOT_SETTINGS = ("referee_declines", "referee_passes", "blocking")


# --bot-option NAME=VALUE: the sample bots with a Bot setting changed (e.g. referee_passes=0,
# blocking=1), as subclasses in a module written beside the config; what each SDK choice costs.
OPTIONS_MODULE = "bench_bot_options"


def write_bot_options(folder: Path, options: dict[str, bool]) -> list[tuple[str, str]]:
    """A module in `folder` with each sample bot given `options`; the entrants' (name, spec)."""
    lines = ['"""The sample bots with other Bot settings (bench/tournament_bench.py --bot-option)."""\n']
    for _, spec in BOTS:
        module, name = spec.split(":")
        lines.append(f"from {module} import {name} as _{name}\n\n\nclass {name}(_{name}):")
        lines.append(f'    """{name} with {options}."""\n')
        lines += [f"    {key} = {value!r}" for key, value in options.items()]
        lines.append("")
    (folder / f"{OPTIONS_MODULE}.py").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return [(name, f"{OPTIONS_MODULE}:{spec.split(':')[1]}") for name, spec in BOTS]


def write_config(
    folder: Path, hands: int, concurrency: int, seed: str, bots: Sequence[tuple[str, str]] = BOTS
) -> Path:
    """The benchmark's tournament config in `folder`; its path."""
    per_pairing = math.ceil(hands / math.comb(len(bots), 2))
    entrants = "".join(f'\n[[entrants]]\nname = "{name}"\nbot = "{spec}"\n' for name, spec in bots)
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


def cpu_s(meter: CpuMeter) -> tuple[float, float]:
    """CPU seconds so far of this process, and of everything it started (the meter's tree)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    own_s = own.ru_utime + own.ru_stime
    return own_s, meter.seconds() - own_s


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


@dataclass(frozen=True)
class Run:
    """One tournament's figures: CPU seconds by process kind, hands, games and the stream traffic."""

    referee_cpu_s: float
    workers_cpu_s: float
    wall_s: float
    hands: int
    games: int
    forfeits: int
    unwaited: bool
    traffic: Traffic

    def cpu_ms_per_hand(self) -> float:
        """Referee and workers together, per hand played."""
        return (self.referee_cpu_s + self.workers_cpu_s) * 1000 / max(self.hands, 1)


def play(config: TournamentConfig, out: io.StringIO, meter: CpuMeter) -> tuple[int, Run, list[GameRow]]:
    """Run the tournament exactly as `tichu tournament run` does; its exit code, figures and rows."""
    cpu_before = cpu_s(meter)
    started = time.monotonic()
    tournament = Tournament(config, out, live=False)
    try:
        tournament.prepare(resume=False)
        code = asyncio.run(tournament.run())
        print(tournament.standings_report(), file=out)
    finally:
        tournament.close()
    wall_s = time.monotonic() - started
    (referee_after, workers_after), (referee_before, workers_before) = cpu_s(meter), cpu_before
    referee_cpu_s, workers_cpu_s = referee_after - referee_before, workers_after - workers_before
    unwaited = children_left()
    store = Store(config.database)
    rows = store.games()
    store.close()
    finished = [r for r in rows if r.finished]
    run = Run(
        referee_cpu_s=referee_cpu_s,
        workers_cpu_s=workers_cpu_s,
        wall_s=wall_s,
        hands=sum(r.rounds or 0 for r in finished),
        games=len(finished),
        forfeits=sum(1 for r in finished if r.forfeit),
        unwaited=unwaited,
        traffic=tournament.traffic,
    )
    return code, run, rows


def per_hand(counts: Counter[str], hands: int) -> str:
    """`counts` per hand, the largest first."""
    return ", ".join(f"{kind} {count / max(hands, 1):.1f}" for kind, count in counts.most_common())


CPU_LINE = re.compile(r"CPU +([\d.]+) ms per hand: referee process ([\d.]+) ms, bot workers ([\d.]+) ms")


def run_elsewhere(tree: Path, hands: int, concurrency: int, seed: str) -> tuple[float, float]:
    """This bench as the checkout in `tree` has it, run there (its referee, its SDK and its bots);
    the referee's and the workers' CPU ms per hand that it printed."""
    command = [
        sys.executable,
        "bench/tournament_bench.py",
        "--hands",
        str(hands),
        "--concurrency",
        str(concurrency),
    ]
    command += ["--seed", seed]
    if "--no-in-process" in (tree / "bench" / "tournament_bench.py").read_text(encoding="utf-8"):
        command.append("--no-in-process")  # older benches have no in-process figure to skip
    done = subprocess.run(
        command,
        cwd=tree,
        capture_output=True,
        text=True,
        check=False,
        # Its own tree first: the workers it starts import the clients of that checkout.
        env={**os.environ, "PYTHONPATH": str(tree)},
    )
    found = CPU_LINE.search(done.stdout)
    if done.returncode != 0 or found is None:
        raise RuntimeError(f"the bench in {tree} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    return float(found.group(2)), float(found.group(3))


@contextlib.contextmanager
def checkout(revision: str) -> Iterator[Path]:
    """A detached worktree of `revision` in a temporary folder, removed afterwards."""
    folder = Path(tempfile.mkdtemp(prefix="tichu-bench-against-"))
    tree = folder / "tree"
    subprocess.run(
        ["git", "-C", str(REPO), "worktree", "add", "--detach", "--quiet", str(tree), revision], check=True
    )
    try:
        yield tree
    finally:
        subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(tree)], check=False)
        shutil.rmtree(folder, ignore_errors=True)


def _restore_path(path: list[str], pythonpath: str | None) -> None:
    sys.path[:] = path
    if pythonpath is None:
        os.environ.pop("PYTHONPATH", None)
    else:
        os.environ["PYTHONPATH"] = pythonpath


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print its figures."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--hands", type=int, default=1000, help="hands in all (default 1000)")
    parser.add_argument("--concurrency", type=int, default=12, help="tables at once (default 12)")
    parser.add_argument("--seed", default="bench-1", help="the tournament's seed")
    parser.add_argument("--keep", type=Path, help="a folder to keep the config and results in")
    parser.add_argument(
        "--against",
        metavar="REVISION",
        help="also run this bench as that git revision has it, alternating with this tree (A B B A)",
    )
    parser.add_argument("--no-in-process", action="store_true", help="skip the in-process figure")
    parser.add_argument(
        "--bot-option",
        action="append",
        default=[],
        metavar="NAME=0|1",
        help="play the sample bots with this Bot setting (e.g. referee_passes=0, blocking=1); repeatable",
    )
    args = parser.parse_args(argv)
    options = {}
    for option in args.bot_option:
        key, _, value = option.partition("=")
        if key not in BOT_SETTINGS or value not in ("0", "1"):
            parser.error(f"--bot-option {option}: give one of {', '.join(BOT_SETTINGS)} as NAME=0 or NAME=1")
        options[key] = value == "1"
    if options and args.against:
        parser.error("--against runs the other checkout's own sample bots: give it without --bot-option")
    meter = CpuMeter()  # before any worker starts: their processes (and cgroups) are made inside it
    with (
        tempfile.TemporaryDirectory(prefix="tichu-tournament-bench-") as scratch,
        contextlib.ExitStack() as restore,
    ):
        folder = args.keep or Path(scratch)
        folder.mkdir(parents=True, exist_ok=True)
        bots: Sequence[tuple[str, str]] = BOTS
        if options:
            bots = write_bot_options(folder, options)
            # Found by this process (the in-process figure) and by the workers it starts; as it
            # was again afterwards (main runs inside the tests too).
            path, pythonpath = list(sys.path), os.environ.get("PYTHONPATH")
            sys.path.insert(0, str(folder))
            os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(folder), pythonpath]))
            restore.callback(_restore_path, path, pythonpath)
        config_path = write_config(folder, args.hands, args.concurrency, args.seed, bots)
        config = load_config(config_path)
        if config.database.exists():
            print(f"{config.database} exists already: give an empty --keep folder", file=sys.stderr)
            return 2
        log = io.StringIO()
        load_before = os.getloadavg()[0]
        theirs: list[tuple[float, float]] = []
        ours_again: list[Run] = []
        with contextlib.ExitStack() as stack:
            tree = stack.enter_context(checkout(args.against)) if args.against else None
            code, run, rows = play(config, log, meter)
            if tree is not None:
                theirs.append(run_elsewhere(tree, args.hands, args.concurrency, args.seed))
                theirs.append(run_elsewhere(tree, args.hands, args.concurrency, args.seed))
                (folder / "again").mkdir(exist_ok=True)
                again = load_config(
                    write_config(folder / "again", args.hands, args.concurrency, args.seed, bots)
                )
                ours_again.append(play(again, io.StringIO(), meter)[1])
        standings = stored_standings(config, rows)
        hands = run.hands
        print(f"Tournament bench: {len(BOTS)} sample bots, round robin, duplicate, tournament preset")
        if options:
            print(f"  bots         the sample bots with {', '.join(args.bot_option)}")
        print(f"  games        {run.games} of {len(rows)} ({run.forfeits} forfeits)")
        print(f"  hands        {hands}")
        print(f"  wall time    {run.wall_s:.1f} s (referee, workers' start and the standings included)")
        print(f"  rate         {hands / run.wall_s:.2f} hands/s, {run.games / run.wall_s:.2f} games/s")
        per_hand_ms = 1000 / max(hands, 1)
        print(
            f"  CPU          {run.cpu_ms_per_hand():.1f} ms per hand: referee process "
            f"{run.referee_cpu_s * per_hand_ms:.1f} ms, bot workers {run.workers_cpu_s * per_hand_ms:.1f} ms "
            f"({run.referee_cpu_s + run.workers_cpu_s:.1f} s of CPU in all, user + system)"
        )
        if run.unwaited:
            print("  (a worker process had not been waited for: its CPU time is missing above)")
        if meter.usage is None and config.sandbox:
            print("  (no writable cpuacct cgroup: the sandboxed workers' CPU is missing above)")
        print(f"               CPU from {meter.source}")
        traffic = run.traffic
        print(
            f"  messages     per hand, all seats: {traffic.writes / max(hands, 1):.1f} writes to the bots "
            f"carrying {per_hand(traffic.sent, hands)}"
        )
        print(f"               and from the bots {per_hand(traffic.received, hands)}")
        if not args.no_in_process:
            local_cpu_s, local_hands = in_process_cpu_s(config)
            local_ms = local_cpu_s * 1000 / max(local_hands, 1)
            print(
                f"  in process   {local_ms:.1f} ms of CPU per hand for the same bots and deals "
                f"(clients.local, {local_hands} hands): gRPC costs x{run.cpu_ms_per_hand() / local_ms:.1f}"
            )
        if theirs:
            ours = [run.cpu_ms_per_hand(), *(r.cpu_ms_per_hand() for r in ours_again)]
            ours_ms = sum(ours) / len(ours)
            theirs_ms = sum(r + w for r, w in theirs) / len(theirs)
            theirs_referee = sum(r for r, _ in theirs) / len(theirs)
            theirs_workers = sum(w for _, w in theirs) / len(theirs)
            print(
                f"  against {args.against}: {theirs_ms:.1f} ms of CPU per hand there (referee "
                f"{theirs_referee:.1f}, workers {theirs_workers:.1f}), {ours_ms:.1f} here: "
                f"x{theirs_ms / ours_ms:.2f} less CPU per hand (runs A B B A, each figure the mean of 2)"
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
        against = f" --against {args.against}" if args.against else ""
        against += "".join(f" --bot-option {option}" for option in args.bot_option)
        print(
            "Reproduce: .venv/bin/python bench/tournament_bench.py "
            f"--hands {args.hands} --concurrency {args.concurrency} --seed {args.seed}{keep}{against}"
        )
        if code != 0:
            print(log.getvalue(), file=sys.stderr)
        return code


if __name__ == "__main__":
    sys.exit(main())
