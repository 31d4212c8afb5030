"""What the sandbox (referee.sandbox) costs a tournament: wall time and CPU per game, with and without.

Run `.venv/bin/python bench/sandbox_bench.py` (about a minute on 2 cores). The same tournament
(RandomBot against RandomBot, one deal per game, duplicate boards) is played with the bots in the
sandbox and with `--no-sandbox`'s setting, alternately (ABBA...), so that the machine's noise hits
both alike. Two ways to run the bots: a process per seat (`per_seat = true`: every game starts
four processes, so each pays bwrap's start-up) and shared workers (one long-lived process per
entrant, the default: the sandbox is made once). CPU is the tournament process's (the referee)
and every process it starts (the bots and bwrap), user and system: see CpuMeter.

Then the two parts of that cost on their own: the round trip of one gRPC call to the referee over
its Unix socket (the sandboxed bots' only way out) and over TCP on loopback (what bots without the
sandbox use), alternately; and the start of a process (Python, doing nothing) in the sandbox and
without it.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import io
import os
import secrets
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))  # its sibling cpu_meter, as `python bench/...` finds it

from cpu_meter import CpuMeter  # noqa: E402

from referee.sandbox import Sandbox, SandboxUnavailableError, check_available, launch  # noqa: E402
from referee.server.serve import start_server  # noqa: E402
from referee.tournament.config import parse_config  # noqa: E402
from referee.tournament.runner import run_tournament  # noqa: E402


def config_text(games: int, per_seat: bool) -> str:
    """A round robin of two RandomBot entrants, `games` games, one deal each."""
    seat = "per_seat = true\n" if per_seat else ""
    return f"""
[tournament]
seed = "sandbox-bench"
games_per_pairing = {games}
concurrency = 2
database = "out/results.sqlite"
replay_dir = "out/replays"
output_dir = "out"
[rules]
match_mode = "fixed_rounds:1"
[sprt]
stop_early = false
[[entrants]]
name = "a"
bot = "clients.random_bot:RandomBot"
{seat}
[[entrants]]
name = "b"
bot = "clients.random_bot:RandomBot"
{seat}
"""


def play(meter: CpuMeter, games: int, per_seat: bool, sandbox: bool) -> tuple[float, float]:
    """One tournament in a fresh folder: (wall seconds, CPU seconds)."""
    with tempfile.TemporaryDirectory(prefix="tichu-sandbox-bench-") as folder:
        config = parse_config(config_text(games, per_seat), Path(folder) / "t.toml")
        config = dataclasses.replace(config, sandbox=sandbox)
        out = io.StringIO()
        cpu, wall = meter.seconds(), time.perf_counter()
        code = run_tournament(config, resume=False, out=out, live=False)
        wall, cpu = time.perf_counter() - wall, meter.seconds() - cpu
        if code != 0:
            raise SystemExit(f"the tournament failed:\n{out.getvalue()}")
    return wall, cpu


async def round_trips(calls: int) -> dict[str, float]:
    """Microseconds per unary call (health Check) to one referee, over TCP on loopback and over
    its Unix socket, in alternating batches."""
    with tempfile.TemporaryDirectory(prefix="tichu-sandbox-bench-") as folder:
        socket_path = Path(folder) / "referee.sock"
        server = await start_server(
            "127.0.0.1:0", secrets.token_urlsafe(16), insecure=True, unix_socket=socket_path
        )
        targets = {"TCP on loopback": f"127.0.0.1:{server.port}", "Unix socket": f"unix:{socket_path}"}
        spent = dict.fromkeys(targets, 0.0)
        try:
            channels = {name: grpc.aio.insecure_channel(address) for name, address in targets.items()}
            stubs = {name: health_pb2_grpc.HealthStub(channel) for name, channel in channels.items()}
            request = health_pb2.HealthCheckRequest()
            for stub in stubs.values():  # connect first: the figures are of calls, not of set-up
                await stub.Check(request)
            batch = 100
            for index in range(max(1, calls // batch)):
                names = list(stubs) if index % 2 == 0 else list(reversed(stubs))
                for name in names:
                    start = time.perf_counter()
                    for _ in range(batch):
                        await stubs[name].Check(request)
                    spent[name] += time.perf_counter() - start
            for channel in channels.values():
                await channel.close()
        finally:
            await server.stop(0)
    made = max(1, calls // 100) * 100
    return {name: 1e6 * seconds / made for name, seconds in spent.items()}


def process_starts(count: int) -> dict[str, float]:
    """Milliseconds of wall time to start and end `python -c pass`, without and in the sandbox."""
    argv = [sys.executable, "-c", "pass"]
    spent = {"no": 0.0, "yes": 0.0}
    with tempfile.TemporaryDirectory(prefix="tichu-sandbox-bench-") as folder:
        sandbox = Sandbox(socket=Path(folder) / "unused.sock")
        (Path(folder) / "unused.sock").touch()
        for index in range(count):
            for boxed in ("no", "yes") if index % 2 == 0 else ("yes", "no"):
                start = time.perf_counter()
                chosen = sandbox if boxed == "yes" else None
                with launch(chosen, argv, cwd=Path(folder), env={"PATH": os.defpath}) as how:
                    subprocess.run(how.argv, env=how.env, pass_fds=how.pass_fds, check=True)
                spent[boxed] += time.perf_counter() - start
    return {boxed: 1000 * seconds / count for boxed, seconds in spent.items()}


def main() -> int:
    """Print the figures and the command that reproduces them."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=16, help="games per tournament (even: duplicate boards)")
    parser.add_argument("--rounds", type=int, default=2, help="tournaments of each kind, alternated")
    parser.add_argument("--calls", type=int, default=4000, help="gRPC calls over each transport")
    parser.add_argument("--starts", type=int, default=20, help="process starts with and without the sandbox")
    args = parser.parse_args()
    try:
        isolation = check_available()
    except SandboxUnavailableError as error:
        print(f"sandbox bench: {error}", file=sys.stderr)
        return 2
    meter = CpuMeter()  # before any bot's cgroup is made: theirs are made inside it
    print(
        f"Sandbox bench: {args.games} games a tournament, {args.rounds} tournaments of each kind, "
        f"alternated; user namespace: {'yes' if isolation.user_namespace else 'no'}"
    )
    print(f"  load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}; CPU from {meter.source}")
    print(f"  {'bots':<22} {'sandbox':>8} {'wall ms/game':>13} {'CPU ms/game':>12}")
    for per_seat in (True, False):
        totals = {True: [0.0, 0.0], False: [0.0, 0.0]}
        for index in range(args.rounds):
            order = (True, False) if index % 2 == 0 else (False, True)
            for sandbox in order:
                wall, cpu = play(meter, args.games, per_seat, sandbox)
                totals[sandbox][0] += wall
                totals[sandbox][1] += cpu
        played = args.games * args.rounds
        kind = "a process per seat" if per_seat else "shared workers"
        for sandbox in (False, True):
            wall, cpu = totals[sandbox]
            print(
                f"  {kind:<22} {'yes' if sandbox else 'no':>8} {1000 * wall / played:>13.1f} "
                f"{1000 * cpu / played:>12.1f}"
            )
        base, boxed = totals[False], totals[True]
        print(f"  {'':<22} {'ratio':>8} {boxed[0] / base[0]:>13.2f} {boxed[1] / base[1]:>12.2f}")
    trips = asyncio.run(round_trips(args.calls))
    print(f"  one gRPC call to the referee, {args.calls} of each, alternated:")
    for name, micros in trips.items():
        print(f"    {name:<20} {micros:>8.1f} us")
    starts = process_starts(args.starts)
    print(f"  starting and ending `python -c pass`, {args.starts} of each, alternated:")
    for kind, millis in starts.items():
        print(f"    {'sandbox ' + kind:<20} {millis:>8.1f} ms")
    print(f"  load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(
        f"Reproduce: .venv/bin/python bench/sandbox_bench.py --games {args.games} --rounds {args.rounds} "
        f"--calls {args.calls} --starts {args.starts}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
