"""The arena's ranking accuracy: after how many hands its ratings order bots of known strength.

Run `.venv/bin/python bench/arena_bench.py` (or with `--help`). Five bots play: the random bot,
the heuristic bot, the showcase bot, and two weakened variants (the heuristic bot playing a random
legal action 40% of the time, the showcase bot 15%).

First a pool of real games is played, in-process (clients.local, the referee's own match core):
for every pairing of two bots, `--pool` deal seeds, each played at two tables with the seats
swapped (a duplicate pair). The true order comes from the whole pool: bots ranked by pairs won
less pairs lost over it (what the ratings see of a pair), then by total margin; each step of the
order is printed with its head-to-head margin and standard error, so that a step too close to
call shows as one.

Then the arena's own matchmaker (referee.arena.matchmaker) and ratings (referee.arena.ratings)
run from nothing, `--runs` times per mode on the same budget of hands, each game drawn from the
pool for the pairing the matchmaker chose: with duplicate pairs (both tables of a seed: one
comparison on the pair's total) and with single games (one of the two tables, chosen at random:
one comparison on the game's score). The figure is the hands played until the Kendall tau between
the ratings' order and the true order reaches 1 (and 0.8: every pair of bots but one in order)
and stays there to the end of the budget: the median, the quartiles and the share of runs that
never got there. Drawing from one pool is a bootstrap: it lets hundreds of runs share the cost of
the games (a run's order is a coin flip's worth of noise, and three runs of fresh games said the
opposite of what two hundred say), and both modes see the very same games.
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import math
import multiprocessing
import random
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from clients.bot import Bot
from clients.heuristic_bot import HeuristicBot
from clients.local import play_match
from clients.random_bot import RandomBot
from clients.showcase_bot import ShowcaseBot
from referee.arena.matchmaker import Candidate, choose
from referee.arena.ratings import fresh, rate_pair
from referee.arena.store import PairRow, RatingRow
from referee.rules import Action, Observation
from referee.rules.config import TOURNAMENT


def blundering(base: type[Bot], share: float) -> Callable[[], Bot]:
    """A bot that plays as `base`, except for a random legal play `share` of the time."""

    class Blunderer(base):  # type: ignore[misc, valid-type]
        name = f"{base.name}-{int(share * 100)}"

        def play(self, obs: Observation) -> Action:
            if self.rng.random() < share and obs.legal_decisions:
                choice: Action = self.rng.choice(obs.legal_decisions)
                return choice
            chosen: Action = super().play(obs)
            return chosen

    return Blunderer


# Measured over a pool of 80 pairs per pairing, 4 deals a game: heuristic and showcase are even
# (+19 +- 27 points a pair: no rating can order them, and the bench does not ask it to);
# heuristic > showcase-15 by 118 +- 29, showcase-15 > heuristic-40 by 214 +- 25, heuristic-40 >
# random by 473 +- 22. The close step is the one where the luck of the cards decides single
# games, and so where duplicate pairs should pay; with only wide steps (showcase-80 in place of
# showcase-15: every step 166 points or more) both modes settle after about as many hands.
BOTS: dict[str, Callable[[], Bot]] = {
    "random": RandomBot,
    "heuristic-40": blundering(HeuristicBot, 0.4),
    "showcase-15": blundering(ShowcaseBot, 0.15),
    "heuristic": HeuristicBot,
    "showcase": ShowcaseBot,
}


@dataclass(frozen=True, slots=True)
class PoolPair:
    """One seed's two tables between bots x and y (x first in the pool's key): each table's
    points as (x's, y's); at `x_first` x sat at seats 0 and 2, at `y_first` y did."""

    x_first: tuple[int, int]
    y_first: tuple[int, int]


Pool = dict[tuple[str, str], list[PoolPair]]


def game(a: str, b: str, seed: str, deals: int) -> tuple[int, int]:
    """One game, `a` at seats 0 and 2: both teams' points."""
    rules = dataclasses.replace(TOURNAMENT, match_mode=f"fixed_rounds:{deals}")
    bots = [BOTS[name]() for name in (a, b, a, b)]
    outcome = play_match(bots, rules, seed)
    return outcome.scores


def play_pool(pairings: Sequence[tuple[str, str]], size: int, deals: int, seed: str, jobs: int) -> Pool:
    """`size` duplicate pairs per pairing, played in `jobs` processes."""
    work = [(x, y, f"{seed}/pool/{x}/{y}/{index}", deals) for x, y in pairings for index in range(size)]
    with multiprocessing.get_context("spawn").Pool(jobs) as workers:
        played = workers.map(_play_pair, work, chunksize=max(1, len(work) // (4 * jobs)))
    pool: Pool = {pairing: [] for pairing in pairings}
    for (x, y, _, _), pair in zip(work, played, strict=True):
        pool[(x, y)].append(pair)
    return pool


def _play_pair(work: tuple[str, str, str, int]) -> PoolPair:
    x, y, seed, deals = work
    y_points, x_points = game(y, x, seed, deals)
    return PoolPair(game(x, y, seed, deals), (x_points, y_points))


def _facing(pool: Pool, a: str, b: str) -> tuple[list[PoolPair], bool]:
    """The pool's pairs between `a` and `b`, and whether they are kept from `b`'s side."""
    return (pool[(a, b)], False) if (a, b) in pool else (pool[(b, a)], True)


def _turned(pair: PoolPair, flipped: bool) -> PoolPair:
    """`pair` from the other bot's side when `flipped`."""
    return PoolPair(_swap(pair.y_first), _swap(pair.x_first)) if flipped else pair


def draw(pool: Pool, a: str, b: str, rng: random.Random) -> tuple[tuple[int, int], tuple[int, int]]:
    """A seed's two tables between `a` and `b`, each as (a's points, b's points): first where `a`
    sat at seats 0 and 2, then where `b` did."""
    pairs, flipped = _facing(pool, a, b)
    pair = _turned(rng.choice(pairs), flipped)
    return pair.x_first, pair.y_first


def _swap(points: tuple[int, int]) -> tuple[int, int]:
    return points[1], points[0]


def kendall_tau(order: Sequence[str], truth: Sequence[str]) -> float:
    """Kendall's tau between two orders of the same names (1: the same order)."""
    place = {name: i for i, name in enumerate(truth)}
    concordant = discordant = 0
    for x, y in itertools.combinations(order, 2):
        if place[x] < place[y]:
            concordant += 1
        else:
            discordant += 1
    total = concordant + discordant
    return (concordant - discordant) / total if total else 1.0


@dataclass(frozen=True, slots=True)
class Step:
    """What the pool says of two bots head to head: pairs won and lost, mean margin and its
    standard error, from `stronger`'s side."""

    stronger: str
    weaker: str
    won: int
    lost: int
    margin: float
    error: float


def true_order(pool: Pool) -> tuple[list[str], dict[str, tuple[int, int]], list[Step]]:
    """The bots from strongest to weakest over the whole pool (pairs won less pairs lost, then
    total margin), their records, and each step of the order head to head."""
    score = dict.fromkeys(BOTS, 0)
    margin = dict.fromkeys(BOTS, 0)
    for (x, y), pairs in pool.items():
        for pair in pairs:
            x_total = pair.x_first[0] + pair.y_first[0]
            y_total = pair.x_first[1] + pair.y_first[1]
            margin[x] += x_total - y_total
            margin[y] += y_total - x_total
            score[x] += (x_total > y_total) - (x_total < y_total)
            score[y] += (y_total > x_total) - (y_total < x_total)
    order = sorted(BOTS, key=lambda n: (-score[n], -margin[n]))
    return (
        order,
        {n: (score[n], margin[n]) for n in BOTS},
        [head_to_head(pool, s, w) for s, w in itertools.pairwise(order)],
    )


def head_to_head(pool: Pool, a: str, b: str) -> Step:
    """`a` against `b` over the pool's pairs."""
    pairs, flipped = _facing(pool, a, b)
    margins = [
        p.x_first[0] + p.y_first[0] - p.x_first[1] - p.y_first[1]
        for p in (_turned(pair, flipped) for pair in pairs)
    ]
    error = statistics.stdev(margins) / math.sqrt(len(margins)) if len(margins) > 1 else math.inf
    return Step(
        a, b, sum(m > 0 for m in margins), sum(m < 0 for m in margins), statistics.fmean(margins), error
    )


# How far apart two bots must be over the pool for their order to count as known: their mean
# pair margin at least this many standard errors from even.
RESOLVED_BY = 2.0


def resolved(pool: Pool) -> list[Step]:
    """Every two bots that the pool tells apart (stronger first): the order a rating must find."""
    steps = (head_to_head(pool, x, y) for x, y in pool)
    return [
        step if step.margin > 0 else head_to_head(pool, step.weaker, step.stronger)
        for step in steps
        if abs(step.margin) >= RESOLVED_BY * step.error
    ]


Criterion = Callable[[Sequence[str]], bool]


def criteria(truth: Sequence[str], known: Sequence[Step]) -> dict[str, Criterion]:
    """What a rating's order (strongest first) is checked for: every pair of bots the pool tells
    apart in order; the whole true order (Kendall tau 1); all pairs but one (tau >= 0.8)."""

    def known_order(order: Sequence[str]) -> bool:
        place = {name: i for i, name in enumerate(order)}
        return all(place[step.stronger] < place[step.weaker] for step in known)

    return {
        f"every pair the pool tells apart in order ({len(known)} of {len(truth) * (len(truth) - 1) // 2})": (
            known_order
        ),
        "the whole true order (Kendall tau 1)": lambda order: kendall_tau(order, truth) >= 1 - 1e-9,
        "all pairs but one in order (Kendall tau >= 0.8)": lambda order: (
            kendall_tau(order, truth) >= 0.8 - 1e-9
        ),
    }


def run_arena(
    duplicate: bool, pool: Pool, budget_hands: int, deals: int, seed: str, checks: dict[str, Criterion]
) -> dict[str, int | None]:
    """For each check, the hands after which the ratings' order passes it to the end of the
    budget (None: never)."""
    rng = random.Random(seed)
    ratings: dict[str, RatingRow] = {name: fresh(name, "bench") for name in BOTS}
    last: dict[str, str] = {}
    hands = 0
    settled_at: dict[str, int | None] = dict.fromkeys(checks)
    step = 0
    while hands < budget_hands:
        ready = [Candidate(n, "bench", r.mu, r.pairs) for n, r in ratings.items()]
        [match] = choose(ready, last, rng, 1)
        a_first, b_first = draw(pool, match.a, match.b, rng)
        if duplicate:
            points = (a_first[0] + b_first[0], a_first[1] + b_first[1])
            hands += 2 * deals
        else:
            points = a_first if rng.random() < 0.5 else b_first
            hands += deals
        row = PairRow(step, match.a, match.b, "bench", seed, False, "finished", "", 0.0, 0.0, *points, step)
        update = rate_pair(row, ratings[match.a], ratings[match.b])
        ratings[match.a], ratings[match.b] = update.a, update.b
        last[match.a], last[match.b] = match.b, match.a
        order = sorted(ratings, key=lambda n: -ratings[n].mu)
        for name, check in checks.items():
            settled_at[name] = (settled_at[name] or hands) if check(order) else None
        step += 1
    return settled_at


def summary(found: Sequence[int | None], budget: int) -> str:
    """The median and quartiles of the hands a mode's runs took (a run that never got there
    counts as more than the budget), and how many never did."""
    never = sum(f is None for f in found)
    values = sorted(budget + 1 if f is None else f for f in found)
    q1, median, q3 = statistics.quantiles(values, n=4, method="inclusive") if len(values) > 1 else values * 3

    def shown(value: float) -> str:
        return f"> {budget}" if value > budget else f"{value:,.0f}"

    return (
        f"median {shown(median)} (quartiles {shown(q1)} - {shown(q3)}); never in {never} of {len(found)} runs"
    )


def main(argv: list[str] | None = None) -> int:
    """Measure and print the figures, with the command that reproduces them."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--deals", type=int, default=4, help="deals per game (default 4, the tournament preset)"
    )
    parser.add_argument("--pool", type=int, default=80, help="duplicate pairs per pairing in the pool")
    parser.add_argument("--budget", type=int, default=4000, help="hands each arena run may play")
    parser.add_argument("--runs", type=int, default=200, help="arena runs per mode")
    parser.add_argument("--jobs", type=int, default=2, help="processes that play the pool")
    parser.add_argument("--seed", default="arena-bench")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    cpu = time.process_time()
    pool = play_pool(list(itertools.combinations(BOTS, 2)), args.pool, args.deals, args.seed, args.jobs)
    played = time.perf_counter() - started
    truth, record, steps = true_order(pool)
    shown = " > ".join(f"{n} (won-lost {record[n][0]:+d}, margin {record[n][1]:+d})" for n in truth)
    hands = len(pool) * args.pool * 2 * args.deals
    print(
        f"pool: {args.pool} duplicate pairs per pairing, {args.deals} deals a game, "
        f"{hands:,} hands ({played:.0f} s)"
    )
    print(f"true order over the pool: {shown}")
    for step in steps:
        print(
            f"  {step.stronger} v {step.weaker}: pairs {step.won}-{step.lost}, "
            f"margin {step.margin:+.0f} +- {step.error:.0f} a pair (standard error)"
        )
    known = resolved(pool)
    unknown = [
        f"{x} and {y}" for x, y in pool if not any({step.stronger, step.weaker} == {x, y} for step in known)
    ]
    if unknown:
        print(f"  too close to call (within {RESOLVED_BY:g} standard errors): {', '.join(unknown)}")
    checks = criteria(truth, known)
    figures: dict[str, list[dict[str, int | None]]] = {}
    for mode, duplicate in (("duplicate pairs", True), ("single games", False)):
        figures[mode] = [
            run_arena(duplicate, pool, args.budget, args.deals, f"{args.seed}/run{run}", checks)
            for run in range(args.runs)
        ]
    print(f"hands until the ratings' order passes for good (budget {args.budget:,}):")
    for check in checks:
        print(f"  {check}:")
        for mode, runs in figures.items():
            print(f"    {mode:16} {summary([run[check] for run in runs], args.budget)}")
    print(f"({time.perf_counter() - started:.0f} s, this process's CPU {time.process_time() - cpu:.0f} s)")
    command = " ".join(["bench/arena_bench.py", *(argv if argv is not None else sys.argv[1:])])
    print(f"reproduce: .venv/bin/python {command}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
