"""The arena's lobby: time from a remote bot being ready to its seat, with 100 remote bots connected.

Run `.venv/bin/python bench/arena_latency_bench.py` (100 remote bots, 50 pairs at once, 60 s), or
with `--bots N --concurrency C --seconds S --deals D --pair-every-s P`. The arena is a child
process (referee.arena.runner's Arena: its referee, lobby, matchmaker and store, no hosted bots);
this process is the 100 remote bots: light lobby clients, each one lobby call
(tichu.v1.Arena/Lobby, with its key) that plays every seat it is handed with the SDK's random
bot (clients.random_bot.RandomBot over clients.connect, as `tichu bot --arena` does).

A bot is ready when its lobby call opens (it has just said how many games it takes) and again
when the last of its pair's seats has ended; it is seated when the lobby's Seated message for
its next pair reaches it. The figures are p50 and p99 of that wait, seen by the bots. The arena
measures where its side of the wait goes: from the bot being ready there (in the lobby, or its
pair written) to the matchmaker's next round (the interval), the round itself (store reads,
choosing, writing the pairs), then opening the games on the referee until the seat is handed
to the lobby; and the event loop's lag (how late a 10 ms sleep wakes: a busy referee).
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import functools
import io
import json
import math
import os
import signal
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import grpc

from clients.arena import lobby_messages, referee_address
from clients.connect import ConnectError, connect
from clients.random_bot import RandomBot
from referee import log
from referee.arena.config import ArenaConfig
from referee.arena.lobby import GAMES_PER_PAIR, Lobby
from referee.arena.runner import Arena
from referee.arena.store import ArenaStore, BotState, PairRow
from referee.rules.config import TOURNAMENT
from referee.wire.tichu.v1 import referee_pb2 as pb
from referee.wire.tichu.v1 import referee_pb2_grpc

ROOT = Path(__file__).resolve().parents[1]
# A pair is two tables, and a bot holds two seats (its team's) at each: four Seated messages.
SEATS_PER_PAIR = 2 * GAMES_PER_PAIR
# How late a sleep of this length wakes tells how busy the arena's event loop is.
LAG_PROBE_S = 0.01


# ---------------------------------------------------------------------------- the remote bots


@dataclasses.dataclass(slots=True)
class Waits:
    """What the bots saw: seconds from ready to seated, on joining and after a pair."""

    on_joining: list[float] = dataclasses.field(default_factory=list)
    after_a_pair: list[float] = dataclasses.field(default_factory=list)
    seats_played: int = 0
    seats_failed: int = 0


@dataclasses.dataclass(slots=True)
class ReadyClock:
    """One bot's: since when it is ready (None while it holds a pair), and whether it just joined."""

    ready_at: float | None
    joining: bool = True


async def remote_bot(address: str, key: str, waits: Waits, leave: asyncio.Event) -> None:
    """One remote bot: wait in the lobby, play every seat it is handed, time ready -> seated."""
    metadata = (("authorization", f"Bearer {key}"),)
    seats: set[asyncio.Task[None]] = set()
    handed: dict[int, int] = defaultdict(int)  # pair id -> seats handed
    open_seats: dict[int, int] = defaultdict(int)  # pair id -> seats not over yet
    clock = ReadyClock(ready_at=time.perf_counter())

    def seat_over(pair_id: int) -> None:
        open_seats[pair_id] -= 1
        if handed[pair_id] == SEATS_PER_PAIR and open_seats[pair_id] == 0:
            del handed[pair_id], open_seats[pair_id]
            if not handed:  # nothing held: ready again, as the arena sees it once the pair is written
                clock.ready_at = time.perf_counter()

    async def play(seated: pb.Seated, name: str) -> None:
        try:
            await connect(
                RandomBot(),
                referee_address(seated.address, address),
                seated.seat_token,
                insecure=True,
                name=name,
                retries=3,
            )
            waits.seats_played += 1
        except (ConnectError, OSError):
            waits.seats_failed += 1
        finally:
            seat_over(seated.pair_id)

    async with grpc.aio.insecure_channel(address) as channel:
        stub = referee_pb2_grpc.ArenaStub(channel)  # type: ignore[no-untyped-call]
        call = stub.Lobby(pb.LobbyRequest(games=GAMES_PER_PAIR), metadata=metadata)
        name = ""
        async for message in lobby_messages(call, leave):
            kind = message.WhichOneof("kind")
            if kind == "welcome":
                name = message.welcome.bot
            elif kind == "seated":
                if clock.ready_at is not None:
                    wait = time.perf_counter() - clock.ready_at
                    (waits.on_joining if clock.joining else waits.after_a_pair).append(wait)
                    clock.ready_at, clock.joining = None, False
                seated = message.seated
                handed[seated.pair_id] += 1
                open_seats[seated.pair_id] += 1
                task = asyncio.create_task(play(seated, name))
                seats.add(task)
                task.add_done_callback(seats.discard)
        if seats:
            await asyncio.gather(*seats)


# ---------------------------------------------------------------------------- the arena (a child)


class Phases:
    """Where the arena's side of the wait goes: durations by name, and each seat's breakdown."""

    def __init__(self) -> None:
        self.durations: dict[str, list[float]] = defaultdict(list)
        self.ready_at: dict[str, tuple[float, bool]] = {}  # bot -> when the arena saw it ready, joining
        self.seen_ready_in_round: dict[str, float] = {}  # bot -> start of the round that seated it
        # (until the round, from it to the seat, whether the bot had just joined)
        self.seat_waits: list[tuple[float, float, bool]] = []
        self.lag: list[float] = []

    def timed(self, name: str, function: Callable[..., Any]) -> Callable[..., Any]:
        """`function` (sync or async), its calls timed under `name`."""
        if asyncio.iscoroutinefunction(function):

            @functools.wraps(function)
            async def timed_async(*args: Any, **kwargs: Any) -> Any:
                start = time.perf_counter()
                try:
                    return await function(*args, **kwargs)
                finally:
                    self.durations[name].append(time.perf_counter() - start)

            return timed_async

        @functools.wraps(function)
        def timed_sync(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                self.durations[name].append(time.perf_counter() - start)

        return timed_sync


class TimedLobby(Lobby):
    """The arena's lobby, noting when a bot joins and when its seat is handed over."""

    phases: Phases

    async def Lobby(  # noqa: N802 (the RPC's name)
        self, request: pb.LobbyRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[pb.LobbyMessage]:
        """The lobby call, noting the moment the bot is present (ready)."""
        async for message in super().Lobby(request, context):
            if message.WhichOneof("kind") == "welcome":
                self.phases.ready_at[message.welcome.bot] = (time.perf_counter(), True)
            yield message

    def seat(self, bot: str, seated: pb.Seated) -> bool:
        """Hand a seat over, noting the wait's parts for a bot's first seat of a pair."""
        phases = self.phases
        ready = phases.ready_at.pop(bot, None)
        round_at = phases.seen_ready_in_round.pop(bot, None)
        if ready is not None and round_at is not None:
            ready_at, joining = ready
            phases.seat_waits.append((round_at - ready_at, time.perf_counter() - round_at, joining))
        return super().seat(bot, seated)


def instrument(arena: Arena, phases: Phases, *, at_the_interval_only: bool) -> None:
    """Time the arena's steps between a bot being ready and its seat, without changing them
    (but for `at_the_interval_only`: the arena as it was, seating bots at its rounds only)."""
    if at_the_interval_only:
        arena.wake = lambda: None  # type: ignore[method-assign]
    lobby = TimedLobby(arena.store, arena.config.leaderboard, on_join=arena.wake)
    lobby.phases = phases
    arena.lobby = lobby
    store = arena.store
    for method in ("authenticate", "bots", "rating", "pairs", "start_pair", "finish_pair", "void_pair"):
        setattr(store, method, phases.timed(f"store.{method}", getattr(store, method)))
    arena._last_opponents = phases.timed("round: last opponents", arena._last_opponents)  # type: ignore[method-assign]
    arena._admit_new = phases.timed("round: admit hosted bots", arena._admit_new)  # type: ignore[method-assign]
    original_round = arena.round
    original_end = arena._end

    async def round_noting_the_ready(*, rematch: bool = True) -> Any:
        start = time.perf_counter()
        matches = await original_round(rematch=rematch)
        which = "round (at the interval)" if rematch else "round (a bot became ready)"
        phases.durations[which].append(time.perf_counter() - start)
        for match in matches:
            for bot in (match.a, match.b):
                phases.seen_ready_in_round[bot] = start
        return matches

    def end_noting_the_ready(pair_id: int, match: Any, verdict: Any, failure: str) -> None:
        start = time.perf_counter()
        original_end(pair_id, match, verdict, failure)
        now = time.perf_counter()
        phases.durations["pair written (finish, rate)"].append(now - start)
        for bot in (match.a, match.b):
            if bot in arena.lobby.present:
                phases.ready_at[bot] = (now, False)

    arena.round = round_noting_the_ready  # type: ignore[method-assign]
    arena._end = end_noting_the_ready  # type: ignore[method-assign]
    assert arena.host is None, "instrument before start(): the host's open is timed once it runs"


async def _probe_lag(phases: Phases, stop: asyncio.Event) -> None:
    while not stop.is_set():
        start = time.perf_counter()
        await asyncio.sleep(LAG_PROBE_S)
        phases.lag.append(time.perf_counter() - start - LAG_PROBE_S)


async def serve_child(folder: Path) -> None:
    """The arena of the bench, in this (child) process: its address on stdout, its phases in
    `folder/phases.json` when SIGTERM stops it."""
    settings = json.loads((folder / "settings.json").read_text(encoding="utf-8"))
    at_the_interval_only = settings.pop("at_the_interval_only")
    config = arena_config(folder, **settings)
    store = ArenaStore(config.store)
    arena = Arena(config, store, io.StringIO())
    phases = Phases()
    instrument(arena, phases, at_the_interval_only=at_the_interval_only)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGTERM, stop.set)
    address = await arena.start()
    assert arena.host is not None
    arena.host.open = phases.timed("open a game on the referee", arena.host.open)  # type: ignore[method-assign]
    print(address, flush=True)
    cpu0 = time.process_time()
    lag = asyncio.create_task(_probe_lag(phases, stop))
    try:
        await arena.run(stop)
    finally:
        cpu = time.process_time() - cpu0
        await lag
        await arena.stop()
        store.close()
    (folder / "phases.json").write_text(
        json.dumps(
            {
                "durations": phases.durations,
                "seat_waits": phases.seat_waits,
                "lag": phases.lag,
                "cpu_s": cpu,
            }
        ),
        encoding="utf-8",
    )


def arena_config(
    folder: Path, *, concurrency: int, deals: int, pair_every_s: float, start_timeout_s: float
) -> ArenaConfig:
    """The bench's arena: no hosted bots, short games, every bot's pairs on one leaderboard."""
    return ArenaConfig(
        name="latency",
        store=folder / "arena.sqlite",
        output_dir=folder / "out",
        pair_every_s=pair_every_s,
        concurrency=concurrency,
        rules=dataclasses.replace(TOURNAMENT, match_mode=f"fixed_rounds:{deals}"),
        house=(),
        sandbox=False,
        start_timeout_s=start_timeout_s,
        source=folder / "arena.toml",
    )


# ---------------------------------------------------------------------------- the measurement


async def measure(folder: Path, bots: int, seconds: float, settings: dict[str, Any]) -> dict[str, Any]:
    """Start the arena's child process, connect the bots, let them play `seconds`; what was seen."""
    (folder / "settings.json").write_text(json.dumps(settings), encoding="utf-8")
    store = ArenaStore(folder / "arena.sqlite")
    # Registered active: a remote bot's validation pair needs a house bot, and is not the figure.
    keys = [store.add_bot(f"remote{index:03d}", state=BotState.ACTIVE) for index in range(bots)]
    store.close()
    child = await asyncio.create_subprocess_exec(
        sys.executable,
        str(Path(__file__).resolve()),
        "--arena-child",
        str(folder),
        cwd=ROOT,
        stdout=asyncio.subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert child.stdout is not None
    address = (await child.stdout.readline()).decode().strip()
    if not address:
        await child.wait()
        raise RuntimeError(f"the arena's process ended ({child.returncode}) before it listened")
    waits = Waits()
    leave = asyncio.Event()
    cpu0 = time.process_time()
    players = [asyncio.create_task(remote_bot(address, key, waits, leave)) for key in keys]
    try:
        # Every bot seated once (no deadline: a loaded machine only makes it slower), then the window.
        while len(waits.on_joining) < bots and not any(p.done() for p in players):
            await asyncio.sleep(0.05)
        await asyncio.sleep(seconds)
    finally:
        # The bots leave and finish the seats they hold; then the arena stops (and voids a pair
        # whose seats were on their way as the bots left).
        leave.set()
        results = await asyncio.gather(*players, return_exceptions=True)
        child.send_signal(signal.SIGTERM)
        await child.wait()
    cpu = time.process_time() - cpu0
    errors = [r for r in results if isinstance(r, BaseException)]
    phases = json.loads((folder / "phases.json").read_text(encoding="utf-8"))
    reader = ArenaStore(folder / "arena.sqlite")
    finished, voided = len(reader.pairs(state="finished")), len(reader.pairs(state="voided"))
    started = reader.pairs()
    reader.close()
    return {
        "waits": waits,
        "phases": phases,
        "finished": finished,
        "voided": voided,
        "started": len(started),
        "rematches": rematches(started),
        "bots_cpu_s": cpu,
        "errors": errors,
    }


def rematches(pairs: list[PairRow]) -> int:
    """Pairs (in the order they started) whose two bots had met each other in their last pair:
    what seating bots as soon as they are ready must not make more of."""
    last: dict[str, str] = {}
    count = 0
    for pair in pairs:
        count += last.get(pair.bot_a) == pair.bot_b or last.get(pair.bot_b) == pair.bot_a
        last[pair.bot_a], last[pair.bot_b] = pair.bot_b, pair.bot_a
    return count


def percentile(values: list[float], q: float) -> float:
    """The q-th percentile (0-100) of `values`, nearest rank; 0 when there are none."""
    if not values:
        return 0.0
    ranked = sorted(values)
    return ranked[min(len(ranked) - 1, max(0, math.ceil(q / 100 * len(ranked)) - 1))]


def _ms(values: list[float]) -> str:
    return f"p50 {percentile(values, 50) * 1000:7.1f} ms, p99 {percentile(values, 99) * 1000:7.1f} ms"


def report(figures: dict[str, Any]) -> list[str]:
    """The figures in words."""
    waits: Waits = figures["waits"]
    phases = figures["phases"]
    both = waits.on_joining + waits.after_a_pair
    lines = [
        f"  ready -> seated, as the bots saw it ({len(both)} waits): {_ms(both)}",
        f"    on joining the lobby ({len(waits.on_joining)}): {_ms(waits.on_joining)}",
        f"    after a pair ({len(waits.after_a_pair)}):     {_ms(waits.after_a_pair)}",
        f"  {figures['finished']} pairs finished from the first join until the bots left "
        f"({figures['voided']} voided at the stop); "
        f"{waits.seats_played} seats played, {waits.seats_failed} failed",
        f"  {figures['rematches']} of {figures['started']} pairs met the opponent one of them had just met",
    ]
    seat_waits = phases["seat_waits"]
    if seat_waits:
        to_round_joining = [w[0] for w in seat_waits if w[2]]
        to_round_after = [w[0] for w in seat_waits if not w[2]]
        to_seat = [w[1] for w in seat_waits]
        lines += [
            "  where the arena's side of it goes (its own clock, from the bot ready there):",
            f"    until the matchmaker's round that seated it, on joining: {_ms(to_round_joining)}",
            f"    until the matchmaker's round that seated it, after a pair: {_ms(to_round_after)}",
            f"    that round and opening the games until the seat is handed: {_ms(to_seat)}",
        ]
    lines.append("  the arena's steps (count, p50, p99, total):")
    for name, durations in sorted(phases["durations"].items()):
        lines.append(f"    {name:34} {len(durations):6} {_ms(durations)}, total {sum(durations):6.2f} s")
    lag = phases["lag"]
    lines.append(f"  the arena's event loop, how late a {LAG_PROBE_S * 1000:.0f} ms sleep woke: {_ms(lag)}")
    lines.append(
        f"  CPU: the arena's process {phases['cpu_s']:.1f} s, the bots' process {figures['bots_cpu_s']:.1f} s"
    )
    if figures["errors"]:
        lines.append(f"  {len(figures['errors'])} bots failed: {figures['errors'][0]!r}")
    return lines


def main(argv: list[str] | None = None) -> int:
    """Measure and print the figures, with the command that reproduces them."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--bots", type=int, default=100, help="remote bots in the lobby")
    parser.add_argument(
        "--concurrency", type=int, default=0, help="pairs at once (default: bots / 2, room for every bot)"
    )
    parser.add_argument(
        "--seconds", type=float, default=60.0, help="how long the bots play once each has been seated"
    )
    parser.add_argument("--deals", type=int, default=1, help="deals a game (default 1: the shortest)")
    parser.add_argument(
        "--pair-every-s", type=float, default=ArenaConfig().pair_every_s, help="the matchmaker's interval"
    )
    parser.add_argument(
        "--matchmaker",
        choices=("both", "interval", "on-ready"),
        default="both",
        help="the arena as it was (seating at its interval only), as it is (also as soon as a bot "
        "is ready), or both one after the other (default)",
    )
    parser.add_argument("--arena-child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    log.configure(level="error")  # the seats cut at the stop are not the figure
    if args.arena_child is not None:
        asyncio.run(serve_child(args.arena_child))
        return 0
    concurrency = args.concurrency or max(1, args.bots // 2)
    print(
        f"{args.bots} remote bots (light lobby clients in one process, each seat played by the SDK's "
        f"RandomBot), one arena in another, {concurrency} pairs at once, {args.deals} deal(s) a game, "
        f"the matchmaker every {args.pair_every_s:g} s, {os.cpu_count()} CPUs, {args.seconds:g} s each:"
    )
    variants = {
        "interval": ("the arena as it was: bots seated at the matchmaker's interval only", True),
        "on-ready": ("the arena as it is: also seated as soon as they are ready", False),
    }
    chosen = list(variants) if args.matchmaker == "both" else [args.matchmaker]
    seen: dict[str, list[float]] = {}
    for variant in chosen:
        title, interval_only = variants[variant]
        settings = {
            "concurrency": concurrency,
            "deals": args.deals,
            "pair_every_s": args.pair_every_s,
            "start_timeout_s": 60.0,
            "at_the_interval_only": interval_only,
        }
        with tempfile.TemporaryDirectory(prefix="arena-latency-") as folder:
            figures = asyncio.run(measure(Path(folder), args.bots, args.seconds, settings))
        print(f"{title}:")
        for line in report(figures):
            print(line)
        seen[variant] = figures["waits"].on_joining + figures["waits"].after_a_pair
    if len(seen) == 2 and all(seen.values()):
        before, after = seen["interval"], seen["on-ready"]
        p50 = percentile(before, 50) / percentile(after, 50)
        p99 = percentile(before, 99) / percentile(after, 99)
        print(f"ready -> seated, as it was / as it is: p50 x{p50:.1f}, p99 x{p99:.1f}")
    command = " ".join(["bench/arena_latency_bench.py", *(argv if argv is not None else sys.argv[1:])])
    print(f"reproduce: .venv/bin/python {command}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
