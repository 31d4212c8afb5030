"""`tichu new-bot NAME`: a starter bot that runs as it is, and a test for it.

It writes NAME.py (a Bot subclass that plays its lowest legal combination, with every decision
it may override named) and test_NAME.py (pytest: a few games in-process, with no answer the SDK
had to replace), and says what to run next. It never overwrites a file.
"""

from __future__ import annotations

import argparse
import keyword
import re
import sys
from pathlib import Path

BOT = '''"""{cls}, a Tichu bot.

Play it: tichu match {module}.py:{cls}
Grade it: tichu check-bot {module}.py:{cls}
"""

from __future__ import annotations

from clients.bot import Bot
from referee.rules import Action, Exchange, Observation, Play


class {cls}(Bot):
    """Plays its lowest legal combination; passes only when it cannot play."""

    name = "{name}"  # shown in replays and standings

    def play(self, obs: Observation) -> Action:
        """A regular turn: one of obs.legal_decisions (pass first when allowed, then the plays,
        lowest first)."""
        plays = [a for a in obs.legal_decisions if isinstance(a, Play)]
        return plays[0] if plays else obs.legal_decisions[0]

    # Every other decision has a default; override the ones you want to play better.
    def grand_tichu(self, obs: Observation) -> bool:
        """Call Grand Tichu on your first eight cards?"""
        return False

    def tichu(self, obs: Observation) -> bool:
        """Call Tichu before the exchange?"""
        return False

    def exchange(self, obs: Observation) -> Exchange:
        """The three cards to give (the default: low cards to opponents, a good one to your partner)."""
        return super().exchange(obs)

    def bomb(self, obs: Observation) -> Play | None:
        """A bomb from obs.legal_decisions in a bomb window, or None to let it pass."""
        return None

    def gift_dragon(self, obs: Observation) -> int:
        """The opponent who gets the trick your Dragon won."""
        return super().gift_dragon(obs)
'''

TEST = '''"""Tests of {cls}: pytest test_{module}.py"""

from __future__ import annotations

from clients.bot import Replacement, observe_replacements
from clients.local import play_match
from clients.random_bot import RandomBot
from {module} import {cls}


def test_it_plays_whole_games_with_only_its_own_legal_answers() -> None:
    replaced: list[Replacement] = []
    stop = observe_replacements(replaced.append)  # exceptions and illegal answers the SDK replaced
    try:
        for seed in range(3):
            outcome = play_match([{cls}(), RandomBot(), {cls}(), RandomBot()], seed=seed, max_rounds=2)
            assert outcome.rounds == 2
    finally:
        stop()
    assert [r.describe() for r in replaced] == []
'''


def class_name(name: str) -> str:
    """The class of a bot called `name`: mybot, my_bot and my-bot give MyBot; first, FirstBot."""
    words = [w for w in re.split(r"[^A-Za-z0-9]+", name) if w]
    if words and words[-1].lower().endswith("bot") and words[-1].lower() != "bot":
        words[-1:] = [words[-1][:-3], "bot"]
    cls = "".join(w[:1].upper() + w[1:] for w in words)
    return cls if cls.endswith("Bot") else cls + "Bot"


def module_name(name: str) -> str:
    """The file's module name: lower case, words joined by '_'."""
    return "_".join(w.lower() for w in re.split(r"[^A-Za-z0-9]+", name) if w)


def add_new_bot_arguments(parser: argparse.ArgumentParser) -> None:
    """The arguments of `tichu new-bot`."""
    parser.add_argument(
        "name", metavar="NAME", help="the bot's name, e.g. mybot: writes mybot.py and test_mybot.py"
    )
    parser.add_argument("--dir", type=Path, default=Path(), help="the folder to write them in")


def run_new_bot(args: argparse.Namespace) -> int:
    """Write the two files; 0, or 2 when the name is unusable or a file exists already."""
    module = module_name(args.name)
    if not module or not module.isidentifier() or keyword.iskeyword(module) or module[0].isdigit():
        print(
            f"tichu new-bot: {args.name!r} cannot name a Python module: use letters, digits, _",
            file=sys.stderr,
        )
        return 2
    cls = class_name(args.name)
    files = {
        args.dir / f"{module}.py": BOT.format(cls=cls, module=module, name=module),
        args.dir / f"test_{module}.py": TEST.format(cls=cls, module=module),
    }
    existing = [str(path) for path in files if path.exists()]
    if existing:
        print(f"tichu new-bot: {', '.join(existing)} exists already; nothing written", file=sys.stderr)
        return 2
    args.dir.mkdir(parents=True, exist_ok=True)
    for path, text in files.items():
        path.write_text(text, encoding="utf-8")
    bot = f"{args.dir / module}.py:{cls}" if args.dir != Path() else f"{module}.py:{cls}"
    print(f"Wrote {', '.join(str(p) for p in files)}. Next:")
    print(f"  tichu match {bot}          # a game against two sample bots, over gRPC")
    print(f"  tichu check-bot {bot}      # the conformance kit: is it ready for a tournament?")
    print(f"  pytest {args.dir / f'test_{module}.py'}")
    return 0
