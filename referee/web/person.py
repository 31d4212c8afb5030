"""`tichu play [BOT...]`: a person plays a seat from the browser against bots, in one command.

A referee on a free port of 127.0.0.1 runs in this process with its web face (uvicorn, in the
same event loop); the person takes seat 0 through the seat page, whose link (with the seat token
after '#') is printed and opened in the browser; each bot is its own `tichu bot` process that
connects with its seat token, as on any referee. The person's seat is an ordinary seat: the
referee checks its answers as it checks a bot's, and its clocks apply.

The person's time: one limit per decision (60 s by default, `--limit-s`; `--no-limit` for none).
It is the match's clock (ClockSettings), which applies to every seat: the bots answer in
milliseconds, so a person's limit costs them nothing, and the match core needs no per-seat clock.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import secrets
import sys
import webbrowser
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from referee import log
from referee.match import ClockSettings, MatchResult
from referee.replay import read_replay
from referee.replay.verify import verify
from referee.rules import State
from referee.sdk_commands import sdk_argv
from referee.server.serve import RunningServer, ServerSettings, start_server
from referee.server.table import Table
from referee.visible import visible
from referee.web.app import RunningWeb, parse_address, start_web
from referee.web.relay import SeatRelay, seat_url
from referee.web.seat import NO_LIMIT_MS

# The sample bots by short name.
SAMPLES = {
    "random": "clients.random_bot:RandomBot",
    "heuristic": "clients.heuristic_bot:HeuristicBot",
    "showcase": "clients.showcase_bot:ShowcaseBot",
}
DEFAULT_OPPONENTS = ("heuristic", "showcase")
DEFAULT_PARTNER = "heuristic"
PERSON_SEAT = 0
DEFAULT_HTTP = "127.0.0.1:0"
REPLAY_DIR = Path("replays") / "play"
# A person's time for one decision, by default; tichu play --limit-s changes it.
PERSON_DECISION_MS = 60_000


@dataclass(frozen=True, slots=True)
class PersonClock:
    """The clocks of a table with a person at it: one limit per decision (None = no limit)."""

    decision_ms: int | None = PERSON_DECISION_MS
    # A person who reloads the page, or whose laptop sleeps a minute, keeps the seat this long.
    reconnect_grace_ms: int = 600_000

    def settings(self) -> ClockSettings:
        """The match's ClockSettings: the limit for every decision and every bomb window (the
        bots answer at once; a window only waits for the person when the person holds a bomb),
        no forfeit for time, and no start timeout (the person opens the page when they like).
        "No limit" is a week, which the wire's deadlines carry and the page shows as no limit."""
        limit = NO_LIMIT_MS * 7 if self.decision_ms is None else self.decision_ms
        return ClockSettings(
            decision_ms=limit,
            bank_ms=0,
            window_ms=limit,
            fixed_length_windows=False,
            max_violations=0,
            reconnect_grace_ms=self.reconnect_grace_ms,
            start_timeout_ms=0,
        )


@dataclass(frozen=True, slots=True)
class Seating:
    """Who sits where: the person at PERSON_SEAT, the partner opposite, the opponents between."""

    opponents: tuple[str, str]  # MODULE:CLASS of the seats after and before the person
    partner: str

    @classmethod
    def of(cls, bots: Sequence[str], partner: str | None = None) -> Seating:
        """From `tichu play`'s arguments: no BOT gives the sample bots; one BOT plays both
        opponents; two play the seat after the person and the one before."""
        specs = [SAMPLES.get(b, b) for b in bots] or [SAMPLES[b] for b in DEFAULT_OPPONENTS]
        if len(specs) > 2:
            raise ValueError("give at most two opponents (one BOT plays both); --partner sets the partner")
        for spec in specs:
            module, sep, name = spec.partition(":")
            if not sep or not module or not name:
                raise ValueError(f"a bot is MODULE:CLASS (or random, heuristic, showcase), not {spec!r}")
        first, second = specs[0], specs[-1]
        return cls((first, second), SAMPLES.get(partner or DEFAULT_PARTNER, partner or DEFAULT_PARTNER))

    def seats(self) -> list[str | None]:
        """The bot of each seat, in seat order; None for the person's."""
        right, left = self.opponents
        return [None, right, self.partner, left]

    def names(self, person_name: str) -> list[str]:
        """Each seat's name in the match (the bot class's name, the person's)."""
        return [person_name if spec is None else spec.rpartition(":")[2] for spec in self.seats()]


@dataclass
class PersonTable:
    """A running table with a person's seat: the referee, its web face and the bots' processes."""

    running: RunningServer
    table: Table
    url: str
    web: RunningWeb
    relay: SeatRelay
    tokens: list[str]
    replay_path: Path | None
    processes: list[asyncio.subprocess.Process] = field(default_factory=list)

    @property
    def match_id(self) -> str:
        """The match's id."""
        return self.table.match_id

    async def launch_bots(self, seating: Seating, env: dict[str, str] | None = None) -> None:
        """Start each bot's `tichu bot` process with its seat token."""
        for seat, spec in enumerate(seating.seats()):
            if spec is None:
                continue
            environment = {
                **os.environ,
                **(env or {}),
                "TICHU_TOKEN": self.tokens[seat],
                "TICHU_LOG_LEVEL": os.environ.get("TICHU_LOG_LEVEL", "warning"),
            }
            argv = sdk_argv("bot", spec, "--server", self.running.address, "--insecure")
            argv += ["--name", seating.names("")[seat]]
            self.processes.append(
                await asyncio.create_subprocess_exec(
                    *argv, env=environment, stdout=asyncio.subprocess.DEVNULL
                )
            )

    async def stop(self) -> None:
        """Stop the bots, the web face and the referee."""
        for process in self.processes:
            if process.returncode is None:
                process.kill()
        for process in self.processes:
            with contextlib.suppress(ProcessLookupError):
                await process.wait()
        await self.web.stop()
        await self.running.stop(0.5)


async def open_table(
    names: Sequence[str],
    *,
    http: str = DEFAULT_HTTP,
    clock: PersonClock | None = None,
    seed: str = "",
    replay_dir: Path | None = REPLAY_DIR,
    initial_state: State | None = None,
    person_seats: Sequence[int] = (PERSON_SEAT,),
    match_id: str = "",
    rules_json: str = "",
) -> PersonTable:
    """A referee (on a free loopback port) and its web face on `http`, with one match whose
    `person_seats` a person plays; the bots are started by `launch_bots`."""
    organiser = secrets.token_urlsafe(32)
    settings = (clock or PersonClock()).settings()
    host, port = parse_address(http)
    running = await start_server(
        ServerSettings(
            "127.0.0.1:0", organiser, insecure=True, defaults=settings, replay_dir=replay_dir, resume=False
        )
    )
    try:
        table, tokens = running.service.create_match(
            clock=settings,
            seed=seed,
            bot_names=list(names),
            initial_state=initial_state,
            person_seats=person_seats,
            match_id=match_id,
            rules_json=rules_json,
        )
        relay = SeatRelay(running.plaintext_target)
        web = await start_web(running.service.referee, host, port, seats=relay)
    except BaseException:
        await running.stop(0)
        raise
    path = running.service.replay_paths.get(table.match_id)
    return PersonTable(
        running,
        table,
        seat_url(web.url, tokens[person_seats[0]]) if person_seats else web.url,
        web,
        relay,
        tokens,
        path,
    )


async def _play(args: argparse.Namespace, out: TextIO) -> int:
    seating = Seating.of(args.bots, args.partner)
    clock = PersonClock(None if args.no_limit else int(args.limit_s * 1000))
    person = await open_table(
        seating.names(args.name),
        http=args.http,
        clock=clock,
        seed=args.seed or "",
        replay_dir=args.replay_dir,
    )
    try:
        await person.launch_bots(seating)
        limit = "no time limit" if clock.decision_ms is None else f"{clock.decision_ms / 1000:g} s a decision"
        print(f"Your seat (seat {PERSON_SEAT}, team A; {limit}):\n  {person.url}", file=out, flush=True)
        right, left = seating.opponents
        print(f"Opponents: {right} (seat 1), {left} (seat 3); partner: {seating.partner} (seat 2)", file=out)
        if not args.no_open:
            with contextlib.suppress(Exception):  # no browser here: the link is printed
                webbrowser.open(person.url)
        result = await person.table.wait()
        return _report(result, person.replay_path, out)
    finally:
        await person.stop()


def _report(result: MatchResult | None, path: Path | None, out: TextIO) -> int:
    if result is None:
        print("The match did not finish.", file=out)
        return 1
    a, b = result.scores
    rounds = len(result.round_scores)
    if result.winner is None:
        print(f"Final score: A {a}, B {b}; a draw after {rounds} rounds", file=out)
    else:
        winner = "team A (yours)" if result.winner == 0 else "team B"
        print(f"Final score: A {a}, B {b}; {winner} wins after {rounds} rounds", file=out)
    if result.forfeit:
        print(f"Forfeit: {visible(result.reason)}", file=out)
    if path is not None:
        run = verify(read_replay(path)).run
        moves = 0 if run is None else run.moves
        print(f"Replay: {path} (verified: {moves} moves)", file=out)
    return 0


def add_play_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of `tichu play`."""
    parser.add_argument(
        "bots",
        nargs="*",
        metavar="BOT",
        help="the opponents: MODULE:CLASS (one plays both; two play seats 1 and 3), or random, "
        f"heuristic, showcase (default: {' and '.join(DEFAULT_OPPONENTS)})",
    )
    parser.add_argument(
        "--partner",
        metavar="BOT",
        help=f"your partner, MODULE:CLASS or a sample's name (default {DEFAULT_PARTNER})",
    )
    parser.add_argument(
        "--http",
        default=DEFAULT_HTTP,
        metavar="HOST:PORT",
        help="where the web face listens (default: a free port of 127.0.0.1)",
    )
    parser.add_argument(
        "--no-open", action="store_true", help="print your seat's link; do not open a browser"
    )
    limit = parser.add_mutually_exclusive_group()
    limit.add_argument(
        "--limit-s",
        type=float,
        default=PERSON_DECISION_MS / 1000,
        metavar="S",
        help=f"your time for one decision (default {PERSON_DECISION_MS // 1000} s)",
    )
    limit.add_argument("--no-limit", action="store_true", help="no time limit for your decisions")
    parser.add_argument("--seed", help="the deal's seed (default: random)")
    parser.add_argument("--name", default="you", help="your name in the match and its replay (default: you)")
    parser.add_argument(
        "--replay-dir",
        type=Path,
        default=REPLAY_DIR,
        help=f"where the replay is written (default {REPLAY_DIR})",
    )


def run_play(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """Run `tichu play`; the exit code."""
    log.configure(level=os.environ.get("TICHU_LOG_LEVEL", "warning"))
    if not args.no_limit and not 1 <= args.limit_s <= 86_400:
        print("tichu play: --limit-s is 1 to 86400 seconds (or --no-limit)", file=sys.stderr)
        return 2
    try:
        return asyncio.run(_play(args, out or sys.stdout))
    except ValueError as error:
        print(f"tichu play: {error}", file=sys.stderr)
        return 2
    except OSError as error:
        print(f"tichu play: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


__all__ = [
    "PERSON_DECISION_MS",
    "PersonClock",
    "PersonTable",
    "Seating",
    "add_play_arguments",
    "open_table",
    "run_play",
]
