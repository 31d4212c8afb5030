"""Who plays whom next: pure, so that every choice it makes can be tested without a game.

From the bots that are ready (with a free slot, not paused), on one leaderboard at a time: the
bots with the fewest pairs choose first (a newcomer gets games), each the opponent closest to it
in rating (mu), never itself and never the opponent it just met when another is there to meet
(and, between the arena's rounds, not at all: then the bot waits for another to be ready). A
bot plays both seats of its team, as in tournaments, so a pair's two teams are two bots. A bot
with several free slots (a remote bot that plays several games at once) may get several pairs
in one round, each against a different opponent, and chooses again only after every bot has had
its turn. A bot still validating plays its one validation pair against a house bot (else any
active bot), and is never rated for that pair.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Candidate:
    """A ready bot, as the matchmaker sees it."""

    name: str
    leaderboard: str
    mu: float
    pairs: int
    validating: bool = False
    house: bool = False
    slots: int = 1  # the pairs it may still start now


@dataclass(frozen=True, slots=True)
class Match:
    """Two bots to play a pair, on a leaderboard; `validation` when `a` is validating."""

    a: str
    b: str
    leaderboard: str
    validation: bool = False


def choose(
    ready: Sequence[Candidate],
    last_opponent: Mapping[str, str],
    rng: random.Random,
    most: int,
    *,
    rematch: bool = True,
) -> list[Match]:
    """Up to `most` pairs from the ready bots; each bot in as many pairs as it has slots, never
    twice against one opponent. Without `rematch`, a bot that could only meet an opponent it
    just met is left to wait."""
    used: Counter[str] = Counter()  # pairs given to each bot in this call
    met: set[frozenset[str]] = set()  # who meets whom in this call

    def free(candidate: Candidate) -> bool:
        return used[candidate.name] < candidate.slots

    def add(match: Match) -> None:
        used.update((match.a, match.b))
        met.add(frozenset((match.a, match.b)))
        matches.append(match)

    matches: list[Match] = []
    # Validation first: a new bot is waiting to be let in (one pair, whatever its slots).
    for bot in sorted((c for c in ready if c.validating), key=lambda c: c.name):
        if len(matches) >= most:
            return matches
        others = [c for c in ready if c.name != bot.name and not c.validating and free(c)]
        house = [c for c in others if c.house] or others
        if used[bot.name] or not house:
            continue
        opponent = rng.choice(sorted(house, key=lambda c: c.name))
        add(Match(bot.name, opponent.name, bot.leaderboard, validation=True))
    # Then the ladder: the least-played bots choose first; ties broken at random, not by name.
    # A bot with slots left chooses again once every bot has had its turn.
    ladder = [c for c in ready if not c.validating]
    order = sorted(ladder, key=lambda c: (c.pairs, rng.random()))
    chose = True
    while chose and len(matches) < most:
        chose = False
        for bot in order:
            if len(matches) >= most:
                break
            if not free(bot):
                continue
            others = [
                c
                for c in ladder
                if c.leaderboard == bot.leaderboard
                and c.name != bot.name
                and free(c)
                and frozenset((bot.name, c.name)) not in met
            ]
            if not others:
                continue
            # Neither met the other last; else not both (the very pair just played); else anyone.
            last = [
                (last_opponent.get(bot.name) == c.name) + (last_opponent.get(c.name) == bot.name)
                for c in others
            ]
            if not rematch and min(last) > 0:
                continue
            pool = [c for c, m in zip(others, last, strict=True) if m == min(last)]
            opponent = min(pool, key=lambda c: (abs(c.mu - bot.mu), c.pairs, rng.random()))
            add(Match(bot.name, opponent.name, bot.leaderboard))
            chose = True
    return matches


__all__ = ["Candidate", "Match", "choose"]
