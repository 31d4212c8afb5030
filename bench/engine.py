"""Engine speed for bot authors: per CPU-second, the garbage collector on (as a bot runs) and off.

Run `make bench`, or `python bench/engine.py [--hands N] [--enumerations N] [--repeats R]`.
Every figure is measured in the pure engine (this process) and, when `make fast`'s copy exists
(build/compiled, made by `make test` or `make bench`), in the compiled one, in a child process
of the same interpreter. `--peer DIR --peer-python PY` also runs frohlfing/tichu from DIR (a
checkout outside this tree, with its requirements installed for PY): its own arena of random
agents under `python -O`, and its lead enumeration on the same hands, side by side.

The figures are CPU time (time.process_time), so a loaded machine slows them less than the
wall clock, and each is the best of R repeats, median beside it. With the collector on, the
process holds what a bot holds (the positions it enumerates); `GC off` is labelled and is how
timeit measures.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from referee.rules import (
    COMPILED,
    Action,
    CallTichu,
    GrandTichu,
    Phase,
    Simulation,
    State,
    answer_window,
    apply,
    legal_actions,
    legal_decisions,
    new_game,
    to_act,
)
from referee.rules.cards import FULL_DECK, format_cards, mask_of, parse_mask
from referee.rules.playout import playout
from referee.rules.state import state_from_json

CALL_PHASES = (Phase.GRAND_TICHU, Phase.TICHU_STEP)
WORST_CASE = "Qj Qs Qp Qt Kj Ks Kp Kt Aj As Ap At PHX MJ"
ROOT = Path(__file__).resolve().parent.parent
COMPILED_COPY = ROOT / "build" / "compiled"


# ----------------------------------------------------------------------------- what is timed


def hands_by_public_api(hands: int, seed: int) -> float:
    """CPU seconds for `hands` random-play rounds through to_act, legal_decisions, apply and
    answer_window; a decision with one legal answer takes it without a draw."""
    rng = random.Random(seed)
    state, _ = new_game(seed=f"bench/{seed}")
    start = time.process_time()
    for played in range(hands):
        round_number = state.round
        while state.round == round_number and not state.is_over:
            seats = to_act(state)
            if state.window:
                answers = {s: _pick(legal_decisions(state, s), rng) for s in seats}
                state, _ = answer_window(state, answers)
            else:
                seat = seats[0] if len(seats) == 1 else rng.choice(seats)
                state, _ = apply(state, seat, _pick(legal_decisions(state, seat), rng))
        if state.is_over:
            state, _ = new_game(seed=f"bench/{seed}/{played}")
    return time.process_time() - start


# Calls made as frohlfing/tichu's random agent makes them (src/players/random_agent.py: Grand
# Tichu 1 time in 20, Tichu 1 in 10), so that a game ends near 1,000 points in about as many
# rounds as its arena's games. With calls drawn like any other answer, half of them fail, both
# teams sink below zero and one game ran for thousands of rounds, each round then copying an
# ever longer score history: another workload than the peer's.
GRAND_TICHU_ODDS = 1 / 20
TICHU_ODDS = 1 / 10


def _pick(options: Sequence[Action], rng: random.Random) -> Action:
    if len(options) == 1:
        return options[0]
    first = options[0]
    if type(first) is GrandTichu:  # (call, no call)
        return first if rng.random() < GRAND_TICHU_ODDS else options[1]
    if type(first) is CallTichu:  # the pre-exchange step: (call, decline)
        return first if rng.random() < TICHU_ODDS else options[1]
    return rng.choice(options)


def _call_index(phase: Phase, random_: Callable[[], float]) -> int:
    """Simulation's index for a call question (0 calls, 1 does not), drawn as _pick draws it."""
    return 0 if random_() < (GRAND_TICHU_ODDS if phase is Phase.GRAND_TICHU else TICHU_ODDS) else 1


def hands_by_simulation(hands: int, seed: int) -> float:
    """The same through rules.Simulation: answers by index, a bomb window no seat can answer
    with a bomb closed at once (take_forced_declines)."""
    rng = random.Random(seed)
    randrange, random_ = rng.randrange, rng.random
    sim = Simulation(new_game(seed=f"bench/{seed}")[0], take_forced_declines=True)
    start = time.process_time()
    for played in range(hands):
        round_number = sim.round
        while sim.round == round_number and not sim.is_over:
            seats = sim.to_act()
            if sim.window:
                sim.answer_window({s: randrange(sim.count(s)) for s in seats})
            else:
                seat = seats[0] if len(seats) == 1 else seats[randrange(len(seats))]
                count = sim.count(seat)
                if count == 1:
                    sim.choose(seat, 0)
                elif sim.phase in CALL_PHASES:
                    sim.choose(seat, _call_index(sim.phase, random_))
                else:
                    sim.choose(seat, randrange(count))
        if sim.is_over:
            sim = Simulation(new_game(seed=f"bench/{seed}/{played}")[0], take_forced_declines=True)
    return time.process_time() - start


def hands_by_playout(hands: int, seed: int) -> float:
    """The same with rules.playout, the engine's own loop (one call per round, no events)."""
    rng = random.Random(seed)
    state, _ = new_game(seed=f"bench/{seed}")
    start = time.process_time()
    for played in range(hands):
        state, _ = playout(state, rng, 1)
        if state.is_over:
            state, _ = new_game(seed=f"bench/{seed}/{played}")
    return time.process_time() - start


def lead_hands(count: int, seed: int) -> list[int]:
    """Random 14-card hands (card masks), the same for this engine and the peer."""
    rng = random.Random(seed)
    hands = []
    for _ in range(count):
        deck = list(range(56))
        rng.shuffle(deck)
        hands.append(mask_of(deck[:14]))
    return hands


def lead_position(hand: int) -> State:
    """Seat 0 leads `hand`; the other 42 cards are dealt to the others in card order."""
    rest = [c for c in range(56) if (FULL_DECK & ~hand) >> c & 1]
    others = [format_cards(mask_of(rest[i * 14 : (i + 1) * 14])) for i in range(3)]
    return state_from_json({"hands": [format_cards(hand), *others], "turn": 0, "phase": "play"})


def enumerate_leads(states: list[State], build: bool, hold: bool = False) -> float:
    """CPU seconds to list seat 0's legal actions in a fresh copy of each of `states`.

    `build`: make every Play (list()), else only count them (len(), the plays stay unmade).
    `hold`: keep every copy, and so the listing each state caches, until the end (a search tree
    that keeps every node); else each copy goes once listed, as when a bot moves on.
    """
    start = time.process_time()
    if hold:
        fresh = [s.copy() for s in states]
        for state in fresh:
            if build:
                list(legal_actions(state, 0))
            else:
                len(legal_actions(state, 0))
    else:
        for state in states:
            if build:
                list(legal_actions(state.copy(), 0))
            else:
                len(legal_actions(state.copy(), 0))
    return time.process_time() - start


def apply_listed(states: list[State], seed: int) -> float:
    """CPU seconds to apply one listed lead (drawn at random, made before timing) per position."""
    rng = random.Random(seed)
    fresh = [s.copy() for s in states]
    chosen = []
    for state in fresh:
        options = legal_decisions(state, 0)
        chosen.append((state, options[rng.randrange(len(options))]))
    start = time.process_time()
    for state, action in chosen:
        apply(state, 0, action)
    return time.process_time() - start


# ----------------------------------------------------------------------------- measuring


def timed(run: Callable[[], float], collector: bool) -> float:
    """One repeat, the garbage collector on or paused."""
    gc.collect()
    if not collector:
        gc.disable()
    try:
        return run()
    finally:
        gc.enable()


def rates(repeats: int, work: int, run: Callable[[], float], collector: bool) -> tuple[float, float]:
    """(best, median) of `work` units per CPU-second over `repeats` runs."""
    seconds = [max(timed(run, collector), 1e-9) for _ in range(repeats)]
    return work / min(seconds), work / statistics.median(seconds)


FIGURES = (
    ("api", "random-play hands, public API (to_act, legal_decisions, apply, answer_window)"),
    ("simulation", "random-play hands, rules.Simulation (answers by index)"),
    ("playout", "random-play hands, rules.playout"),
    ("lazy", "random 14-card leads listed, plays unmade (len(legal_actions))"),
    ("built", "random 14-card leads listed, every Play made (list(legal_actions))"),
    ("held", "the same, every state and its cached listing kept to the end"),
    ("worst", f"worst-case leads ({WORST_CASE}), every Play made"),
    ("apply", "apply() of a listed lead"),
)


def measure_this_build(args: argparse.Namespace) -> dict[str, Any]:
    """Every figure of FIGURES in this process's build, GC on and off: {key: [on, off]} pairs
    of (best, median)."""
    states = [lead_position(hand) for hand in lead_hands(args.enumerations, args.seed)]
    worst = [lead_position(parse_mask(WORST_CASE))] * max(args.enumerations // 25, 20)
    api_hands = max(args.hands // 4, 1)
    work: dict[str, tuple[int, Callable[[], float]]] = {
        "api": (api_hands, lambda: hands_by_public_api(api_hands, args.seed)),
        "simulation": (args.hands, lambda: hands_by_simulation(args.hands, args.seed)),
        "playout": (args.hands, lambda: hands_by_playout(args.hands, args.seed)),
        "lazy": (len(states), lambda: enumerate_leads(states, False)),
        "built": (len(states), lambda: enumerate_leads(states, True)),
        "held": (len(states), lambda: enumerate_leads(states, True, hold=True)),
        "worst": (len(worst), lambda: enumerate_leads(worst, True)),
        "apply": (len(states), lambda: apply_listed(states, args.seed)),
    }
    figures: dict[str, Any] = {"compiled": COMPILED}
    for key, (units, run) in work.items():
        figures[key] = [rates(args.repeats, units, run, collector) for collector in (True, False)]
    figures["actions_per_lead"] = sum(len(legal_actions(s.copy(), 0)) for s in states) / len(states)
    return figures


def measure_compiled(args: argparse.Namespace) -> dict[str, Any] | None:
    """The same figures in the compiled copy (a child process), or None when it is not built."""
    if COMPILED or not (COMPILED_COPY / ".built").exists():
        return None
    command = [sys.executable, str(Path(__file__).resolve()), "--json", *own_options(args)]
    env = {**os.environ, "PYTHONPATH": str(COMPILED_COPY)}
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
    figures: dict[str, Any] = json.loads(done.stdout)
    if not figures["compiled"]:
        raise RuntimeError(f"{COMPILED_COPY} did not load a compiled engine")
    return figures


def own_options(args: argparse.Namespace) -> list[str]:
    """The options that size the work, to pass on."""
    return [
        f"--hands={args.hands}",
        f"--enumerations={args.enumerations}",
        f"--repeats={args.repeats}",
        f"--seed={args.seed}",
    ]


# ----------------------------------------------------------------------------- the peer

# Run in the peer's own interpreter, in its checkout: its arena's modules, timed like ours.
_PEER_LEADS = """
import gc, json, sys, time
from src.lib.combinations import build_action_space, build_combinations
hands, repeats = json.load(sys.stdin)
hands = [[tuple(card) for card in hand] for hand in hands]
best, actions = None, 0
for _ in range(repeats):
    fresh = [list(hand) for hand in hands]
    gc.collect()
    start = time.process_time()
    for hand in fresh:
        build_action_space(build_combinations(hand), (0, 0, 0), 0)
    seconds = time.process_time() - start
    best = seconds if best is None else min(best, seconds)
actions = sum(len(build_action_space(build_combinations(list(h)), (0, 0, 0), 0)) for h in hands)
print(json.dumps({"seconds": best, "actions": actions}))
"""
# The peer's suits in its own order (Sword, Pagoda, Jade, Star = 1..4) for ours (j, s, p, t).
_PEER_SUIT = (3, 1, 2, 4)


def peer_card(card: int) -> tuple[int, int]:
    """One of our cards as the peer's (value, suit): Dog 0, Mah Jong 1, Dragon 15, Phoenix 16."""
    specials = {0: (0, 0), 1: (1, 0), 54: (16, 0), 55: (15, 0)}
    if card in specials:
        return specials[card]
    return (2 + (card - 2) // 4, _PEER_SUIT[(card - 2) % 4])


def child_cpu(command: list[str], cwd: Path, stdin: str | None = None) -> tuple[float, str]:
    """CPU seconds a child process in the peer's checkout used (user + system), and its output."""
    env = {**os.environ, "PYTHONPATH": str(cwd)}
    before = os.times()
    done = subprocess.run(command, cwd=cwd, env=env, input=stdin, capture_output=True, text=True, check=True)
    after = os.times()
    cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
    return cpu, done.stdout


def measure_peer(args: argparse.Namespace) -> dict[str, float]:
    """frohlfing/tichu's random-play hands per CPU-second in its arena, and its leads per
    CPU-second on our hands (best of the repeats; GC on, python -O as its README runs it)."""
    peer, python = Path(args.peer).resolve(), args.peer_python
    (peer / "data" / "logs").mkdir(parents=True, exist_ok=True)  # where its logger writes
    start_cpu, _ = child_cpu([python, "-O", "-c", "import src.arena, src.players.random_agent"], peer)
    best = 0.0
    hands_seen = 0
    for _ in range(args.repeats):
        cpu, out = child_cpu([python, "-O", "bin/run_arena.py", "-n", str(args.peer_games), "-w", "1"], peer)
        rounds = next(
            int(line.split(":")[1]) for line in out.splitlines() if line.startswith("Anzahl Runden")
        )
        hands_seen = rounds
        best = max(best, rounds / max(cpu - start_cpu, 1e-9))
    hands = [
        [peer_card(c) for c in range(56) if h >> c & 1] for h in lead_hands(args.enumerations, args.seed)
    ]
    _, out = child_cpu([python, "-O", "-c", _PEER_LEADS], peer, json.dumps([hands, args.repeats]))
    leads = json.loads(out)
    return {
        "api": best,
        "hands_per_run": hands_seen,
        "built": len(hands) / leads["seconds"],
        "actions_per_lead": leads["actions"] / len(hands),
        "start_cpu": start_cpu,
    }


# ----------------------------------------------------------------------------- the report


def main(argv: list[str] | None = None) -> int:
    """Print every figure, pure and compiled, GC on and off, and the command that reproduces it."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--hands", type=int, default=2000)
    parser.add_argument("--enumerations", type=int, default=5000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--peer", help="a checkout of frohlfing/tichu, outside this tree")
    parser.add_argument("--peer-python", default=sys.executable, help="the interpreter with its requirements")
    parser.add_argument("--peer-games", type=int, default=200, help="games per run of its arena")
    parser.add_argument("--json", action="store_true", help="print this build's figures as JSON only")
    args = parser.parse_args(argv)
    if args.json:
        print(json.dumps(measure_this_build(args)))
        return 0
    command = "python bench/engine.py " + " ".join(own_options(args))
    if args.peer:
        command += f" --peer {args.peer} --peer-python {args.peer_python} --peer-games {args.peer_games}"
    load = os.getloadavg()[0]
    print(
        f"Python {sys.version.split()[0]}, one core, CPU time, load average {load:.1f}; reproduce: {command}"
    )
    builds = {"pure": measure_this_build(args)}
    compiled = measure_compiled(args)
    if compiled is None:
        print(
            "(no compiled build: `make fast` or `make test` makes build/compiled; only the pure one is shown)"
        )
    else:
        builds["compiled"] = compiled
    peer = measure_peer(args) if args.peer else None
    print_table(builds, peer)
    return 0


def print_table(builds: dict[str, dict[str, Any]], peer: dict[str, float] | None) -> None:
    """One line per figure: per CPU-second, each build GC on and GC off (best, median)."""
    heads = [f"{name} {gc_state}" for name in builds for gc_state in ("GC on", "GC off")]
    print(
        f"{'per CPU-second (best of the repeats, median in brackets)':72} "
        + "".join(f"{h:>22}" for h in heads)
    )
    for key, label in FIGURES:
        cells = []
        for figures in builds.values():
            for best, median in figures[key]:
                cells.append(f"{best:>10,.0f} ({median:>8,.0f})")
        print(f"{label:72} " + "".join(f"{c:>22}" for c in cells))
    pure = builds["pure"]
    print(
        f"  ({pure['actions_per_lead']:.1f} legal actions per random lead, "
        "each Mah Jong play once per wish, and the Dog)"
    )
    if peer is None:
        return
    print(
        f"frohlfing/tichu, GC on: {peer['api']:,.0f} random-play hands per CPU-second in its arena "
        f"({peer['hands_per_run']:,.0f} hands a run, its {peer['start_cpu']:.2f} s start-up left out); "
        f"{peer['built']:,.0f} leads per CPU-second built "
        f"({peer['actions_per_lead']:.1f} combinations per lead)"
    )
    for name, figures in builds.items():
        ratios = ", ".join(
            f"{key} x{figures[key][0][0] / peer[peer_key]:.2f}"
            for key, peer_key in (
                ("api", "api"),
                ("simulation", "api"),
                ("playout", "api"),
                ("built", "built"),
            )
        )
        print(f"  {name}, GC on, against it: {ratios}")


if __name__ == "__main__":
    sys.exit(main())
