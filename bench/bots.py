"""Bot strength: one sample bot's win rate against another, two against two, in full games.

Run `.venv/bin/python bench/bots.py` (HeuristicBot against RandomBot, 200 games to 1000 points), or
`bench/bots.py --games N --seed S --target POINTS --team-a NAME --team-b NAME` with the
names random, heuristic and showcase. Games come in pairs on the same deals with the teams
swapping seats (clients.local.play_many), so each team plays every deal from both sides; the
figure is reproducible from the seed.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import sys
from collections.abc import Callable

from clients.bot import Bot
from clients.heuristic_bot import HeuristicBot
from clients.local import MatchOutcome, play_many
from clients.random_bot import RandomBot
from clients.showcase_bot import ShowcaseBot
from referee.rules import OFFICIAL

BOTS: dict[str, Callable[[], Bot]] = {"random": RandomBot, "heuristic": HeuristicBot, "showcase": ShowcaseBot}


def wilson_interval(wins: int, games: int, z: float = 1.96) -> tuple[float, float]:
    """The 95% Wilson score interval of a win rate."""
    if games == 0:
        return (0.0, 1.0)
    p = wins / games
    centre = (p + z * z / (2 * games)) / (1 + z * z / games)
    half = z * math.sqrt(p * (1 - p) / games + z * z / (4 * games * games)) / (1 + z * z / games)
    return (max(0.0, centre - half), min(1.0, centre + half))


def main(argv: list[str] | None = None) -> int:
    """Play the matches and print the win rate, with the command that reproduces it."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--games", type=int, default=200)
    parser.add_argument("--seed", default="2024")
    parser.add_argument("--target", type=int, default=1000, help="points that end a game")
    parser.add_argument("--team-a", choices=sorted(BOTS), default="heuristic")
    parser.add_argument("--team-b", choices=sorted(BOTS), default="random")
    parser.add_argument("--quiet", action="store_true", help="no progress dots")
    args = parser.parse_args(argv)
    config = dataclasses.replace(OFFICIAL, target_score=args.target)
    a, b = BOTS[args.team_a], BOTS[args.team_b]

    def progress(game: int, outcome: MatchOutcome) -> None:
        if not args.quiet:
            done = game + 1
            print("." if done % 50 else f". {done}\n", end="", flush=True)

    summary = play_many([a, b, a, b], args.games, seed=args.seed, config=config, progress=progress)
    low, high = wilson_interval(summary.wins[0], summary.games)
    command = (
        f".venv/bin/python bench/bots.py --games {args.games} --seed {args.seed} --target {args.target} "
        f"--team-a {args.team_a} --team-b {args.team_b}"
    )
    print(f"\n{args.team_a} (x2) vs {args.team_b} (x2), official rules, games to {args.target}")
    print(
        f"{args.team_a} won {summary.wins[0]} of {summary.games} games: "
        f"{summary.win_rate(0):.1%} (95% CI {low:.1%}-{high:.1%}); "
        f"{args.team_b} won {summary.wins[1]}, draws {summary.draws}"
    )
    print(
        f"mean final score {summary.mean_scores[0]:.0f} to {summary.mean_scores[1]:.0f}; "
        f"{summary.rounds} rounds; calls made/succeeded {args.team_a} "
        f"{summary.tichu_calls[0]}/{summary.tichu_made[0]}, {args.team_b} "
        f"{summary.tichu_calls[1]}/{summary.tichu_made[1]}"
    )
    print(f"{summary.seconds:.1f} s ({summary.seconds / max(summary.games, 1):.2f} s a game, one core)")
    print(f"reproduce: {command}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
