"""`tichu match`: play your bot on a local referee in one command.

A referee on a free port of 127.0.0.1 (plaintext) runs in this process; each seat's bot is its
own process that connects over gRPC with its seat token, as on any referee: a Bot subclass
(MODULE:CLASS or FILE.py:CLASS) runs with the SDK's connector as `tichu bot` runs it, a command
(after `--`) gets the placeholders and TICHU_* variables of referee.bot_commands and
TICHU_INSECURE=1. Seats the bots given do not fill are taken by a sample bot. Several games play
the same deals twice, the teams swapping seats, as duplicate tournaments do.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import secrets
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from referee import log
from referee.bot_commands import SDK_REPORT_ENV, filled, placeholder_env
from referee.match import ClockSettings, MatchResult
from referee.replay.text import summary_table
from referee.rules import OFFICIAL
from referee.sdk_commands import sdk_argv
from referee.server.serve import RunningServer, ServerSettings, start_server
from referee.visible import visible

if TYPE_CHECKING:
    from referee.web.app import RunningWeb

# The sample bots by short name; a seat no bot was given for gets FILLER.
SAMPLES = {
    "random": "clients.random_bot:RandomBot",
    "heuristic": "clients.heuristic_bot:HeuristicBot",
    "showcase": "clients.showcase_bot:ShowcaseBot",
}
FILLER = "heuristic"
REPLAY_DIR = Path("replays") / "out"
# A game that has not ended by then is stopped (a bot that stalls without timing out).
GAME_TIMEOUT_S = 1_800.0
# What a bot under development gets: the referee's clocks, more time a decision, no forfeits.
CLOCK = ClockSettings(decision_ms=10_000, max_violations=0)


@dataclass(frozen=True, slots=True)
class Entrant:
    """One bot of the match: how it runs, and its name in the table."""

    name: str
    spec: str = ""  # MODULE:CLASS, for the SDK's connector
    command: tuple[str, ...] = ()  # or a command in any language

    def argv(self, address: str, token: str, seat: int) -> tuple[list[str], dict[str, str]]:
        """Its process's arguments and the variables it adds to the environment."""
        values = {"server": address, "token": token, "seat": str(seat), "ca_file": "", "name": self.name}
        env = {**placeholder_env(values), "TICHU_INSECURE": "1", SDK_REPORT_ENV: "stderr"}
        if self.command:
            return filled(self.command, values), env
        argv = [*sdk_argv("bot"), self.spec, "--server", address, "--insecure"]
        return [*argv, "--name", self.name], env


@dataclass(frozen=True, slots=True)
class Game:
    """One game's end: the result (None if it did not finish), the seats' bots, its replay."""

    number: int
    seats: tuple[Entrant, ...]
    result: MatchResult | None
    replay: Path
    seconds: float
    failure: str = ""  # why it did not finish


class MatchError(Exception):
    """A bot could not play: the message names it and says why."""


def entrants(bots: Sequence[str], commands: Sequence[Sequence[str]]) -> list[Entrant]:
    """The bots given, in order: MODULE:CLASS, FILE.py:CLASS or a sample's name, then the commands."""
    found = []
    for bot in bots:
        spec = SAMPLES.get(bot, bot)
        module, sep, cls = spec.partition(":")
        if not sep or not module or not cls:
            raise MatchError(
                f"{bot!r}: give a bot as FILE.py:CLASS or MODULE:CLASS (e.g. mybot.py:MyBot), "
                f"a sample ({', '.join(SAMPLES)}), or a command after --"
            )
        if module.endswith(".py") and not Path(module).is_file():
            raise MatchError(f"{bot!r}: no file {module} here ({Path.cwd()})")
        found.append(Entrant(cls.lower(), spec=spec))
    for command in commands:
        found.append(Entrant(Path(command[0]).name, command=tuple(command)))
    if not found:
        raise MatchError("give a bot: FILE.py:CLASS, MODULE:CLASS, a sample's name, or a command after --")
    if len(found) > 4:
        raise MatchError(f"{len(found)} bots for four seats")
    return found


def seating(given: Sequence[Entrant]) -> tuple[Entrant, ...]:
    """Four seats: one bot is a team (seats 0 and 2) against the filler; two bots are two teams;
    three take seats 0-2 and the filler seat 3; four take a seat each."""
    filler = Entrant(FILLER, spec=SAMPLES[FILLER])
    if len(given) == 1:
        return (given[0], filler, given[0], filler)
    if len(given) == 2:
        return (given[0], given[1], given[0], given[1])
    return (*given, *([filler] * (4 - len(given))))


def _named(seats: Sequence[Entrant]) -> list[str]:
    """One name a seat: the bot's, with the seat's number when it holds more than one seat."""
    names = []
    for seat, entrant in enumerate(seats):
        twice = sum(e.name == entrant.name for e in seats) > 1
        names.append(f"{entrant.name}-{seat}" if twice else entrant.name)
    return names


async def _game(
    running: RunningServer,
    number: int,
    seats: tuple[Entrant, ...],
    seed: str,
    logs: Path,
    watch: Callable[[str], None] = lambda match_id: None,
) -> Game:
    match_id = f"match-{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(2)}-g{number}"
    names = _named(seats)
    entry = running.service.referee.create(
        OFFICIAL, clock=CLOCK, seed=seed, bot_names=names, match_id=match_id
    )
    table, tokens, replay = entry.table, entry.tokens, entry.replay_path
    assert replay is not None, "the match referee writes every replay (replay_dir)"
    watch(match_id)
    processes: list[tuple[asyncio.subprocess.Process, Path]] = []
    started = time.monotonic()
    failure = ""
    try:
        for seat, (entrant, token) in enumerate(zip(seats, tokens, strict=True)):
            argv, env = entrant.argv(running.address, token, seat)
            log_path = logs / f"{match_id}-seat{seat}.log"
            with log_path.open("wb") as stderr:
                try:
                    process = await asyncio.create_subprocess_exec(
                        *argv, env={**os.environ, **env, "TICHU_NAME": names[seat]},
                        stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.DEVNULL, stderr=stderr,
                    )  # fmt: skip
                except OSError as error:
                    raise MatchError(f"seat {seat} ({' '.join(argv)}): cannot start: {error}") from None
            processes.append((process, log_path))
        failure = await _until_over(table.finished, processes, seats)
    finally:
        for process, _ in processes:
            if process.returncode is None:
                process.terminate()
        await asyncio.gather(*(p.wait() for p, _ in processes))
        if table.result is None:
            await table.stop(failure or "tichu match stopped")
    if failure:
        raise MatchError(failure)
    return Game(number, seats, table.result, replay, time.monotonic() - started)


async def _until_over(
    finished: asyncio.Event,
    processes: list[tuple[asyncio.subprocess.Process, Path]],
    seats: Sequence[Entrant],
) -> str:
    """Wait for the game's end; why not, if a bot's process ended with an error first."""
    deadline = time.monotonic() + GAME_TIMEOUT_S
    while not finished.is_set():
        for seat, (process, log_path) in enumerate(processes):
            if process.returncode not in (None, 0):
                return f"the bot of seat {seat} ({_shown(seats[seat])}) ended with exit code " + (
                    f"{process.returncode}: {_tail(log_path)}"
                )
        if time.monotonic() > deadline:
            return f"the game did not end within {GAME_TIMEOUT_S:g} s"
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(finished.wait(), 0.2)
    return ""


def _shown(entrant: Entrant) -> str:
    return entrant.spec or " ".join(entrant.command)


def _tail(path: Path, lines: int = 4) -> str:
    """The last lines a bot wrote to its standard error (its own words, not the SDK's reports)."""
    text = path.read_text(encoding="utf-8", errors="replace").strip().splitlines()
    return "\n    ".join(visible(line) for line in text[-lines:]) or "(it printed nothing)"


def _replaced(logs: Path, game: Game) -> list[int]:
    """How many answers the SDK replaced for each seat's bot (exceptions, illegal answers)."""
    from referee.bot_commands import SDK_REPORT_PREFIX

    counts = []
    for seat in range(len(game.seats)):
        path = logs / f"{game.replay.stem}-seat{seat}.log"
        text = path.read_text(encoding="utf-8", errors="replace") if path.is_file() else ""
        counts.append(sum(line.startswith(SDK_REPORT_PREFIX) for line in text.splitlines()))
    return counts


def report(games: Sequence[Game], out: TextIO) -> None:
    """The totals of every bot over the games."""
    wins: dict[str, list[int]] = {}
    for game in games:
        assert game.result is not None
        for team in (0, 1):
            name = " + ".join(dict.fromkeys(e.name for e in game.seats[team::2]))
            row = wins.setdefault(name, [0, 0, 0])
            row[0] += game.result.winner == team
            row[1] += game.result.scores[team]
            row[2] += 1
    if len(games) > 1:
        print(f"\nAfter {len(games)} games:", file=out)
        print(f"  {'team':<30} {'wins':>5} {'points':>8}", file=out)
        for name, (won, points, _) in sorted(wins.items(), key=lambda kv: (-kv[1][0], -kv[1][1])):
            print(f"  {visible(name):<30} {won:>5} {points:>8}", file=out)


async def play(
    seats: tuple[Entrant, ...], games: int, seed: str, replay_dir: Path, out: TextIO, http: str = ""
) -> list[Game]:
    """Play the games on a referee of this process; each game's end, printed as it comes. With
    `http` (HOST:PORT), the web face serves them live there while they play."""
    settings = ServerSettings(
        "127.0.0.1:0", secrets.token_urlsafe(24), insecure=True, replay_dir=replay_dir, resume=False
    )
    running = await start_server(settings)
    web: RunningWeb | None = None
    played: list[Game] = []

    def watch(match_id: str) -> None:
        if web is not None:
            print(f"Watch it live: {web.url}/matches/{match_id}", file=out, flush=True)

    try:
        if http:
            from referee.web.app import parse_address, start_web

            try:
                web = await start_web(running.service.referee, *parse_address(http))
            except (OSError, ValueError) as error:
                raise MatchError(f"--http {http}: {error}") from None
        with tempfile.TemporaryDirectory(prefix="tichu-match-") as folder:
            logs = Path(folder)
            for number in range(1, games + 1):
                # Games in pairs on one deal, the teams swapping seats (duplicate).
                order = seats if number % 2 else (*seats[1:], seats[0])
                game = await _game(running, number, order, f"{seed}-{(number - 1) // 2}", logs, watch)
                played.append(game)
                _print_game(game, _replaced(logs, game), out)
    finally:
        if web is not None:
            await web.stop()
        await running.stop()
    return played


def _print_game(game: Game, replaced: list[int], out: TextIO) -> None:
    result = game.result
    assert result is not None
    names = _named(game.seats)
    a, b = result.scores
    team = {0: f"team A ({names[0]}, {names[2]})", 1: f"team B ({names[1]}, {names[3]})"}
    winner = "nobody (a draw)" if result.winner is None else team[result.winner]
    print(
        f"Game {game.number}: A {a}, B {b}: {visible(winner)} wins after {result.hands} rounds "
        f"({game.seconds:.1f} s)",
        file=out,
    )
    if result.forfeiting_team is not None:
        print(f"  forfeit by team {'AB'[result.forfeiting_team]}: {visible(result.reason)}", file=out)
    for line in summary_table(result.summary):
        print("  " + line, file=out)
    for seat, count in enumerate(replaced):
        if count:
            print(
                f"  seat {seat} ({names[seat]}): the SDK replaced {count} of its answers (exceptions or "
                "illegal answers); `tichu check-bot` names them",
                file=out,
            )
    print(f"  replay: {game.replay}  (tichu replay show {game.replay})", file=out)


# ----------------------------------------------------------------------------- command line


def add_match_arguments(parser: argparse.ArgumentParser) -> None:
    """The arguments of `tichu match`."""
    parser.add_argument(
        "bots",
        nargs="*",
        metavar="BOT",
        help="up to four bots: FILE.py:CLASS, MODULE:CLASS or a sample's name "
        f"({', '.join(SAMPLES)}); commands in any language after --, each -- starting one. "
        f"One bot plays seats 0 and 2 against two {FILLER} bots; two bots are two teams; "
        f"three take seats 0-2 and a {FILLER} bot seat 3",
    )
    parser.add_argument("--games", type=int, default=1, help="games to play (in pairs on the same deals)")
    parser.add_argument("--seed", help="the deals' seed (default: a new one, printed)")
    parser.add_argument("--out", type=Path, default=REPLAY_DIR, help="the folder of the replays")
    parser.add_argument(
        "--http",
        metavar="HOST:PORT",
        default="",
        help="watch the games in a browser: serve the web face there while they play (e.g. 127.0.0.1:8080)",
    )


def split_commands(argv: list[str]) -> tuple[list[str], list[list[str]]]:
    """`tichu match [OPTIONS] [BOT...] [-- CMD... [-- CMD...]]`: tichu's arguments, the commands."""
    if "--" not in argv:
        return argv, []
    cut = argv.index("--")
    commands: list[list[str]] = [[]]
    for word in argv[cut + 1 :]:
        if word == "--":
            commands.append([])
        else:
            commands[-1].append(word)
    return argv[:cut], [c for c in commands if c]


def run_match(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """`tichu match`: 0 when every game finished, 1 when a bot could not play, 2 on bad usage."""
    out = out or sys.stdout
    try:
        given = entrants(args.bots, getattr(args, "bot_commands", []))
    except MatchError as error:
        print(f"tichu match: {error}", file=sys.stderr)
        return 2
    if args.games < 1:
        print("tichu match: --games must be 1 or more", file=sys.stderr)
        return 2
    seats = seating(given)
    seed = args.seed or secrets.token_hex(4)
    log.configure(level=os.environ.get(log.LEVEL_ENV, "ERROR"))
    names = _named(seats)
    print(
        f"tichu match: {args.games} game(s), seed {visible(seed)}; team A: {names[0]}, {names[2]}; "
        f"team B: {names[1]}, {names[3]}",
        file=out,
    )
    try:
        games = asyncio.run(play(seats, args.games, seed, args.out, out, http=args.http))
    except MatchError as error:
        print(f"tichu match: {error}", file=sys.stderr)
        return 1
    report(games, out)
    return 0
