"""The arena's ranking accuracy: after how many hands its ratings order bots of known strength.

Run `.venv/bin/python bench/arena_bench.py` (or with `--help`). Five bots play: the random bot,
the heuristic bot, the showcase bot, and two weakened variants (the heuristic bot playing a random
legal action 40% of the time, the showcase bot 80%). Their true order is measured first, from a
round robin of duplicate pairs (`--truth-pairs` per pairing), ranked by pairs won less pairs lost
(what the ratings see of a pair), then by total margin. Then the
arena's own matchmaker (referee.arena.matchmaker) and ratings (referee.arena.ratings) run from
nothing, twice on the same budget of hands and from the same seeds: once with duplicate pairs
(two tables, the same deals, the seats swapped: one comparison per pair) and once with single
games (one table, a comparison per game). The figure is the hands played until the Kendall tau
between the ratings' order and the true order reaches 1 (and 0.8: every pair of bots but one in
order) and stays there to the end of the budget; medians over `--runs` runs. Heuristic and
showcase are close (each wins about as many pairs as the other over the round robin), so the
whole order takes many pairs to settle. The games are played in-process (clients.local) with the
referee's own match core, so the figure is about the ratings, not the network.
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import random
import statistics
import sys
import time
from collections.abc import Callable, Sequence

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


# Weakened so that every step of the order is clear (measured: 12 pairs each, 4 deals a game):
# heuristic > showcase by 66 points a pair, showcase > heuristic-40 by 289, heuristic-40 >
# showcase-80 by 432, showcase-80 > random by 144. The closest step decides the figure.
BOTS: dict[str, Callable[[], Bot]] = {
    "random": RandomBot,
    "heuristic-40": blundering(HeuristicBot, 0.4),
    "showcase-80": blundering(ShowcaseBot, 0.8),
    "heuristic": HeuristicBot,
    "showcase": ShowcaseBot,
}


def game(a: str, b: str, seed: str, deals: int) -> tuple[int, int]:
    """One game, `a` at seats 0 and 2: both teams' points."""
    rules = dataclasses.replace(TOURNAMENT, match_mode=f"fixed_rounds:{deals}")
    bots = [BOTS[name]() for name in (a, b, a, b)]
    outcome = play_match(bots, rules, seed)
    return outcome.scores


def pair(a: str, b: str, seed: str, deals: int) -> tuple[int, int]:
    """A duplicate pair: the same deals at two tables, the seats swapped; both bots' totals."""
    first = game(a, b, seed, deals)
    second = game(b, a, seed, deals)
    return first[0] + second[1], first[1] + second[0]


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


def true_order(pairs_each: int, deals: int, seed: str) -> tuple[list[str], dict[str, tuple[int, int]]]:
    """The bots from strongest to weakest over a round robin of duplicate pairs: by pairs won
    less pairs lost (what the ratings see of a pair), then by total margin."""
    score = dict.fromkeys(BOTS, 0)
    margin = dict.fromkeys(BOTS, 0)
    for a, b in itertools.combinations(BOTS, 2):
        for index in range(pairs_each):
            pa, pb = pair(a, b, f"{seed}/truth/{a}/{b}/{index}", deals)
            margin[a] += pa - pb
            margin[b] += pb - pa
            score[a] += (pa > pb) - (pa < pb)
            score[b] += (pb > pa) - (pb < pa)
    order = sorted(BOTS, key=lambda n: (-score[n], -margin[n]))
    return order, {name: (score[name], margin[name]) for name in BOTS}


# Kendall tau of the whole order (1) and of all pairs but one in order (0.8 with five bots).
TAUS = (1.0, 0.8)


def run_arena(
    duplicate: bool, budget_hands: int, deals: int, seed: str, truth: Sequence[str]
) -> dict[float, int | None]:
    """For each of TAUS, the hands after which the ratings' order is at least that close to the
    true order to the end of the budget (None: never)."""
    rng = random.Random(seed)
    ratings: dict[str, RatingRow] = {name: fresh(name, "bench") for name in BOTS}
    last: dict[str, str] = {}
    hands = 0
    settled_at: dict[float, int | None] = dict.fromkeys(TAUS)
    step = 0
    while hands < budget_hands:
        ready = [Candidate(n, "bench", r.mu, r.pairs) for n, r in ratings.items()]
        [match] = choose(ready, last, rng, 1)
        games_seed = f"{seed}/{step}"
        if duplicate:
            points = pair(match.a, match.b, games_seed, deals)
            hands += 2 * deals
        else:
            a_first = rng.random() < 0.5
            scores = (
                game(match.a, match.b, games_seed, deals)
                if a_first
                else game(match.b, match.a, games_seed, deals)[::-1]
            )
            points = (scores[0], scores[1])
            hands += deals
        row = PairRow(
            step, match.a, match.b, "bench", games_seed, False, "finished", "", 0.0, 0.0, *points, step
        )
        update = rate_pair(row, ratings[match.a], ratings[match.b])
        ratings[match.a], ratings[match.b] = update.a, update.b
        last[match.a], last[match.b] = match.b, match.a
        order = sorted(ratings, key=lambda n: -ratings[n].mu)
        tau = kendall_tau(order, truth)
        for least in TAUS:
            settled_at[least] = (settled_at[least] or hands) if tau >= least - 1e-9 else None
        step += 1
    return settled_at


def main(argv: list[str] | None = None) -> int:
    """Measure and print the figures, with the command that reproduces them."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--deals", type=int, default=4, help="deals per game (default 4, the tournament preset)"
    )
    parser.add_argument("--truth-pairs", type=int, default=12, help="pairs per pairing for the true order")
    parser.add_argument("--budget", type=int, default=1600, help="hands each arena run may play")
    parser.add_argument("--runs", type=int, default=3, help="arena runs per mode (medians are printed)")
    parser.add_argument("--seed", default="arena-bench")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    truth, record = true_order(args.truth_pairs, args.deals, args.seed)
    shown = " > ".join(
        f"{name} (won-lost {record[name][0]:+d}, margin {record[name][1]:+d})" for name in truth
    )
    print(f"true order ({args.truth_pairs} pairs per pairing, {args.deals} deals a game): {shown}")
    figures: dict[str, list[dict[float, int | None]]] = {}
    for mode, duplicate in (("duplicate pairs", True), ("single games", False)):
        figures[mode] = [
            run_arena(duplicate, args.budget, args.deals, f"{args.seed}/run{run}", truth)
            for run in range(args.runs)
        ]
    print(f"hands until the ratings' order is this close to the true order for good (budget {args.budget}):")
    for least in TAUS:
        what = "the true order" if least == 1.0 else f"Kendall tau >= {least:g} (all pairs but one in order)"
        print(f"  {what}:")
        for mode, runs in figures.items():
            found = [run[least] for run in runs]
            settled = [f for f in found if f is not None]
            median = statistics.median(settled) if len(settled) == len(found) else None
            shown = ", ".join("never" if f is None else str(f) for f in found)
            middle = "n/a (a run never settled)" if median is None else f"{median:g}"
            print(f"    {mode:16} runs: {shown}; median {middle}")
    print(f"({time.perf_counter() - started:.0f} s)")
    command = " ".join(["bench/arena_bench.py", *(argv if argv is not None else sys.argv[1:])])
    print(f"reproduce: .venv/bin/python {command}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
