"""Engine speed: random-play hands per second and legal-move enumerations per second.

Run `make bench`, or `python bench/engine.py [--hands N] [--enumerations N] [--repeats R]`.
Figures are for one core (one process, one thread). The machine is shared and noisy, so each
figure is the best of R repeats (the run least disturbed by other work, as timeit reports),
with the median beside it; compare figures measured side by side in one run. As timeit does,
the garbage collector is paused while a repeat is timed (--with-gc keeps it running).
"""

from __future__ import annotations

import argparse
import functools
import gc
import random
import statistics
import sys
import time
from collections.abc import Callable, Sequence

from referee.rules import (
    Action,
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

WORST_CASE = "Qj Qs Qp Qt Kj Ks Kp Kt Aj As Ap At PHX MJ"


def hands_by_playout(hands: int, seed: int) -> float:
    """Seconds to play `hands` complete rounds with rules.playout (a game restarts when it ends).

    Every decision gets a uniformly random legal answer, bomb windows included: each seat in a
    window draws from 'decline' and its bombs; a decision with one legal answer takes it.
    """
    rng = random.Random(seed)
    state, _ = new_game(seed=f"bench/{seed}")
    start = time.perf_counter()
    for played in range(hands):
        state, _ = playout(state, rng, 1)
        if state.is_over:
            state, _ = new_game(seed=f"bench/{seed}/{played}")
    return time.perf_counter() - start


def hands_by_public_api(hands: int, seed: int) -> float:
    """The same through the public API a referee uses: to_act, legal_decisions, apply/answer_window."""
    rng = random.Random(seed)
    state, _ = new_game(seed=f"bench/{seed}")
    start = time.perf_counter()
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
    return time.perf_counter() - start


def _pick(options: Sequence[Action], rng: random.Random) -> Action:
    return options[0] if len(options) == 1 else rng.choice(options)


def lead_positions(count: int, seed: int) -> list[State]:
    """Positions where seat 0 leads a random 14-card hand (the other 42 cards elsewhere)."""
    rng = random.Random(seed)
    states = []
    for _ in range(count):
        deck = list(range(56))
        rng.shuffle(deck)
        hands = [format_cards(mask_of(deck[i * 14 : (i + 1) * 14])) for i in range(4)]
        states.append(state_from_json({"hands": hands, "turn": 0, "phase": "play"}))
    return states


def worst_case_position() -> State:
    """Seat 0 leads three four-of-a-kinds with the Phoenix and the Mah Jong."""
    hand = parse_mask(WORST_CASE)
    rest = [c for c in range(56) if (FULL_DECK & ~hand) >> c & 1]
    others = [format_cards(mask_of(rest[i * 14 : (i + 1) * 14])) for i in range(3)]
    return state_from_json({"hands": [format_cards(hand), *others], "turn": 0, "phase": "play"})


def enumerate_positions(states: list[State], build: bool) -> tuple[float, int]:
    """Seconds to list seat 0's legal actions in fresh copies of `states`; `build`: make every Play."""
    fresh = [s.copy() for s in states]
    total = 0
    start = time.perf_counter()
    if build:
        for state in fresh:
            total += len(list(legal_actions(state, 0)))
    else:
        for state in fresh:
            total += len(legal_actions(state, 0))
    return time.perf_counter() - start, total


PAUSE_GC = True


def timed(run: Callable[[], float]) -> float:
    """One timed repeat, with the garbage collector paused unless --with-gc."""
    gc.collect()
    if PAUSE_GC:
        gc.disable()
    try:
        return run()
    finally:
        gc.enable()


def _enumerate_once(states: list[State], build: bool, result: list[int]) -> float:
    seconds, total = enumerate_positions(states, build)
    result.append(total)
    return seconds


def measure(repeats: int, run: Callable[[], float]) -> tuple[float, float]:
    """(best, median) seconds over `repeats` runs."""
    times = [timed(run) for _ in range(repeats)]
    return min(times), statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    """Print each figure and the command that reproduces it."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--hands", type=int, default=2000)
    parser.add_argument("--enumerations", type=int, default=5000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--with-gc", action="store_true", help="keep the garbage collector running")
    args = parser.parse_args(argv)
    global PAUSE_GC  # noqa: PLW0603 (one switch for the whole run)
    PAUSE_GC = not args.with_gc
    command = (
        f"python bench/engine.py --hands {args.hands} --enumerations {args.enumerations} "
        f"--repeats {args.repeats} --seed {args.seed}" + (" --with-gc" if args.with_gc else "")
    )
    print(f"Python {sys.version.split()[0]}, one core; reproduce: {command}")

    best, median = measure(args.repeats, lambda: hands_by_playout(args.hands, args.seed))
    print(
        f"random-play hands/s, rules.playout:   {args.hands / best:8.0f}   (median {args.hands / median:.0f})"
    )
    api_hands = max(args.hands // 4, 1)
    best, median = measure(args.repeats, lambda: hands_by_public_api(api_hands, args.seed))
    print(
        f"random-play hands/s, public API loop:   {api_hands / best:8.0f}   (median {api_hands / median:.0f})"
    )

    states = lead_positions(args.enumerations, args.seed)
    totals: list[int] = []
    for build in (False, True):
        times = []
        for _ in range(args.repeats):
            result: list[int] = []
            times.append(timed(functools.partial(_enumerate_once, states, build, result)))
            totals.append(result[0])
        what = "every Play object built" if build else "legal_actions() listed"
        rate, mid = len(states) / min(times), len(states) / statistics.median(times)
        print(f"lead enumerations/s, {what + ':':24} {rate:8.0f}   (median {mid:.0f})")
    print(f"  ({totals[-1] / len(states):.1f} legal actions per random 14-card lead on average)")
    worst = [worst_case_position()] * 200
    found: list[int] = []
    seconds = timed(lambda: _enumerate_once(worst, True, found))
    total = found[0]
    print(f"worst case enumerations/s ({WORST_CASE}): {200 / seconds:.0f}  ({total // 200} legal actions)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
