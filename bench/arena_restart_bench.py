"""The arena killed during play and started again: is its store still consistent, K times over?

Run `.venv/bin/python bench/arena_restart_bench.py` (5 runs), or with `--runs K --kill-within-s S
--more-pairs N --deals D --seed X --no-sandbox`. Each run starts `tichu arena serve` (a child
process, four house bots and a newcomer that plays its validation pair, all hosted, 2 pairs at
once) on a new store, SIGKILLs it at a random
moment within S seconds of its first pair starting, starts it again on the same store, lets it
finish N more pairs, stops it (SIGTERM) and checks the store:

- no pair is left playing; every voided pair says why, and the pairs the kill cut off say
  "the arena stopped while the pair was being played";
- every finished ladder pair has its two games and is rated exactly once (one history row per
  bot), validation and voided pairs never; the ratings' pair counts add up to that;
- no finished pair and no rating was lost or changed by the kill or the restart;
- `tichu arena rerate` recomputes every rating from the stored pairs and the rows it writes are
  exactly the stored ones (mu, sigma, counts, margin, last played, and the history).

It prints each run's counts and whether rerate matched, and the command that reproduces them.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from referee.arena.store import INTERRUPTED, ArenaStore, PairRow, RatingRow

ROOT = Path(__file__).resolve().parents[1]
# How often the bench looks at the store while it waits for the arena (no deadline: it waits).
POLL_S = 0.1
CONFIG = """
[arena]
name = "restart"
store = "arena.sqlite"
output_dir = "out"
concurrency = 2
pair_every_s = 0.2

[rules]
match_mode = "fixed_rounds:{deals}"
{house}"""
# Four house bots (the three samples and a second random one), so that two pairs play at once.
HOUSE = ("random", "heuristic", "showcase", "random2")
HOUSE_CLASSES = {
    "random": "clients.random_bot:RandomBot",
    "heuristic": "clients.heuristic_bot:HeuristicBot",
    "showcase": "clients.showcase_bot:ShowcaseBot",
    "random2": "clients.random_bot:RandomBot",
}
# A bot registered as an owner would: its first pair is a validation pair, never rated.
NEWCOMER = ("newcomer", "clients.heuristic_bot:HeuristicBot")


@dataclass
class Run:
    """One kill and restart: what the store held, and what was wrong with it."""

    killed_after_s: float
    finished_at_kill: int = 0
    playing_at_kill: int = 0
    finished: int = 0
    rated: int = 0
    voided_interrupted: int = 0
    voided_other: int = 0
    rating_rows: int = 0
    history_rows: int = 0
    rerate_matched: bool = False
    problems: list[str] = field(default_factory=list)


def tichu(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """A `tichu` command run to its end."""
    return subprocess.run(
        [sys.executable, "-m", "referee.cli", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )


def serve(folder: Path, sandbox: bool) -> subprocess.Popen[bytes]:
    """`tichu arena serve` on the folder's config, as an organiser starts it."""
    argv = [sys.executable, "-m", "referee.cli", "arena", "serve", str(folder / "arena.toml")]
    return subprocess.Popen(
        argv + ([] if sandbox else ["--no-sandbox"]),
        cwd=folder,
        stdout=subprocess.DEVNULL,
        stderr=(folder / "serve.err").open("ab"),
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )


def wait_for(process: subprocess.Popen[bytes], folder: Path, enough: int, state: str) -> None:
    """Until the store holds `enough` pairs in `state` (any state when ""); the arena must live."""
    store_path = folder / "arena.sqlite"
    while True:
        if process.poll() is not None:
            errors = (folder / "serve.err").read_text(encoding="utf-8", errors="replace")
            raise RuntimeError(
                f"the arena ended ({process.returncode}) while the bench waited: {errors[-2000:]}"
            )
        if store_path.exists():
            store = ArenaStore(store_path)
            try:
                if len(store.pairs(state=state)) >= enough:
                    return
            finally:
                store.close()
        time.sleep(POLL_S)


def snapshot(
    store: ArenaStore,
) -> tuple[dict[int, PairRow], list[RatingRow], list[tuple[int, str, float, float]]]:
    """The finished pairs, the ratings and the rating history, in a fixed order."""
    finished = {p.id: p for p in store.pairs(state="finished")}
    ratings = sorted(store.ratings(), key=lambda r: (r.leaderboard, r.bot))
    return finished, ratings, store.rating_history()


def check(store: ArenaStore, run: Run, cut_off: set[int]) -> None:
    """The store's invariants after a kill and a restart, counted into `run`."""
    pairs = store.pairs()
    history_by_pair: dict[int, list[str]] = {}
    for pair_id, bot, _, _ in store.rating_history():
        history_by_pair.setdefault(pair_id, []).append(bot)
    for pair in pairs:
        rated_for = sorted(history_by_pair.get(pair.id, []))
        if pair.state == "playing":
            run.problems.append(f"pair {pair.id} is still playing")
        elif pair.state == "voided":
            if not pair.reason:
                run.problems.append(f"pair {pair.id} voided without a reason")
            if pair.reason == INTERRUPTED:
                run.voided_interrupted += 1
            else:
                run.voided_other += 1
        if pair.id in cut_off and (pair.state != "voided" or pair.reason != INTERRUPTED):
            run.problems.append(f"pair {pair.id}, cut off by the kill, is {pair.state} ({pair.reason!r})")
        if pair.state == "finished":
            run.finished += 1
            if len(store.games(pair.id)) != 2:
                run.problems.append(f"finished pair {pair.id} has {len(store.games(pair.id))} games")
        if pair.state == "finished" and not pair.validation:
            run.rated += 1
            if rated_for != sorted((pair.bot_a, pair.bot_b)):
                run.problems.append(f"finished pair {pair.id} rated for {rated_for}, not once for each bot")
        elif rated_for:
            run.problems.append(f"{pair.state} pair {pair.id} (validation {pair.validation}) was rated")
    ratings = store.ratings()
    run.rating_rows = len(ratings)
    run.history_rows = sum(len(bots) for bots in history_by_pair.values())
    if sum(r.pairs for r in ratings) != 2 * run.rated:
        run.problems.append(
            f"the ratings count {sum(r.pairs for r in ratings)} pair-sides, not {2 * run.rated}"
        )


def one_run(folder: Path, rng: random.Random, args: argparse.Namespace) -> Run:
    """Start, kill, start again, stop; the store checked."""
    house = "".join(f'\n[[house]]\nname = "{name}"\nbot = "{HOUSE_CLASSES[name]}"\n' for name in HOUSE)
    (folder / "arena.toml").write_text(CONFIG.format(deals=args.deals, house=house), encoding="utf-8")
    added = tichu(
        "arena", "bot", "add", NEWCOMER[0], "--bot", NEWCOMER[1], "--store", "arena.sqlite", cwd=folder
    )
    if added.returncode != 0:
        raise RuntimeError(f"tichu arena bot add failed: {added.stderr}")
    run = Run(killed_after_s=rng.uniform(0, args.kill_within_s))
    first = serve(folder, not args.no_sandbox)
    try:
        wait_for(first, folder, 1, "")  # its first pair has started: the arena is at play
        time.sleep(run.killed_after_s)
    finally:
        first.send_signal(signal.SIGKILL)
        first.wait()
    store = ArenaStore(folder / "arena.sqlite")
    finished_before, ratings_before, history_before = snapshot(store)
    cut_off = {p.id for p in store.pairs(state="playing")}
    run.finished_at_kill, run.playing_at_kill = len(finished_before), len(cut_off)
    store.close()

    second = serve(folder, not args.no_sandbox)
    try:
        wait_for(second, folder, len(finished_before) + args.more_pairs, "finished")
    finally:
        second.send_signal(signal.SIGTERM)  # a graceful stop: it voids what it plays, then ends
        if second.wait() != 0:
            run.problems.append(f"the restarted arena exited with {second.returncode}")

    store = ArenaStore(folder / "arena.sqlite")
    finished_after, ratings_after, history_after = snapshot(store)
    lost = [i for i, p in finished_before.items() if finished_after.get(i) != p]
    if lost:
        run.problems.append(f"finished pairs lost or changed by the restart: {lost}")
    if len(history_after) < len(history_before) or history_after[: len(history_before)] != history_before:
        run.problems.append("the rating history before the kill was changed")
    check(store, run, cut_off)
    store.close()

    rerated = tichu("arena", "rerate", "--store", str(folder / "arena.sqlite"), cwd=folder)
    if rerated.returncode != 0:
        run.problems.append(f"tichu arena rerate failed: {rerated.stderr.strip()}")
    store = ArenaStore(folder / "arena.sqlite")
    _, ratings_rerated, history_rerated = snapshot(store)
    store.close()
    run.rerate_matched = (
        rerated.returncode == 0
        and "; 0 differed" in rerated.stdout
        and ratings_rerated == ratings_after
        and history_rerated == history_after
    )
    if not ratings_before and not run.rated:
        run.problems.append("no pair was rated: nothing was tested (let it play longer: --more-pairs)")
    return run


def main(argv: list[str] | None = None) -> int:
    """Kill and restart the arena K times; print each run and the command that reproduces them."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=5, help="K: kills and restarts, each on a new store")
    parser.add_argument(
        "--kill-within-s", type=float, default=20.0, help="the kill comes within this long of the first pair"
    )
    parser.add_argument("--more-pairs", type=int, default=4, help="pairs to finish after the restart")
    parser.add_argument("--deals", type=int, default=1, help="deals a game (default 1: short games)")
    parser.add_argument("--seed", type=int, default=None, help="the kill moments' seed (default: random)")
    parser.add_argument("--no-sandbox", action="store_true", help="the house bots without the sandbox")
    args = parser.parse_args(argv)
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**32)
    rng = random.Random(seed)
    runs: list[Run] = []
    print(
        f"{args.runs} runs: `tichu arena serve` (4 house bots and a newcomer, 2 pairs at once, "
        f"{args.deals} deal(s) a game{', no sandbox' if args.no_sandbox else ''}) SIGKILLed within "
        f"{args.kill_within_s:g} s of its first pair, started again on the same store until "
        f"{args.more_pairs} more pairs finished, stopped:"
    )
    print(
        "  run  kill at  finished@kill  cut off  finished  rated  voided(cut/other)  rating rows  "
        "history rows  rerate"
    )
    for number in range(1, args.runs + 1):
        folder = Path(tempfile.mkdtemp(prefix="arena-restart-"))
        try:
            run = one_run(folder, rng, args)
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        runs.append(run)
        print(
            f"  {number:3}  {run.killed_after_s:6.1f}s  {run.finished_at_kill:13}  {run.playing_at_kill:7}  "
            f"{run.finished:8}  {run.rated:5}  {run.voided_interrupted:9}/{run.voided_other:<7}  "
            f"{run.rating_rows:11}  {run.history_rows:12}  {'same' if run.rerate_matched else 'DIFFERED'}",
            flush=True,
        )
        for problem in run.problems:
            print(f"       problem: {problem}", flush=True)
    sound = sum(1 for r in runs if r.rerate_matched and not r.problems)
    print(f"  {sound} of {len(runs)} runs consistent (every check held and rerate gave the stored ratings)")
    given = argv if argv is not None else sys.argv[1:]
    command = " ".join(
        ["bench/arena_restart_bench.py", *given, *([] if args.seed is not None else ["--seed", str(seed)])]
    )
    print(f"reproduce: .venv/bin/python {command}")
    return 0 if sound == len(runs) else 1


if __name__ == "__main__":
    sys.exit(main())
