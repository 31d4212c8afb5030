"""What watching costs the referee: its CPU per hand with live-table pages open, against none.

Run `.venv/bin/python bench/web_bench.py` (about 4 minutes on 2 cores) or `--quick` (under a
minute). A real `tichu serve --http` process referees `--tables` matches at once (scripted seats
of bench/referee_bench.py, in a client process, answering at once: the referee is as busy as it
can be); a viewer process opens `--viewers` live-table streams (`/matches/<id>/events`, what a
page reads) spread over the matches, from as many loopback addresses as the per-address page
limit needs, and reads everything they send. Phases without and with the viewers alternate (off,
on, off, on, ...), each measured over the same length after a settling pause: the referee
process's CPU time (from /proc) per hand played (the hands begun across its matches, from
/api/matches). The figure is the ratio of the two, from the phases' totals, measured side by side
in one run so that the machine's noise hits both alike.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import multiprocessing
import os
import secrets
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))  # its sibling referee_bench, as `python bench/...` finds it

import grpc  # noqa: E402
from referee_bench import Samples, TableClient, load_average  # noqa: E402

from referee.web.app import MAX_STREAMS_PER_CLIENT  # noqa: E402
from referee.wire.tichu.v1 import referee_pb2 as pb  # noqa: E402
from referee.wire.tichu.v1 import referee_pb2_grpc  # noqa: E402

RULES = json.dumps({"match_mode": "fixed_rounds:200"})  # no match ends during a run
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def free_port() -> int:
    """A port free now on 127.0.0.1 (the referee binds it a moment later)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def process_cpu_s(pid: int) -> float:
    """User and system CPU seconds of a process so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def hands_begun(http: str) -> int:
    """Hands begun across the referee's matches (round is counted from 0)."""
    with urllib.request.urlopen(f"{http}/api/matches", timeout=60) as response:
        listed = json.load(response)
    return sum(match["round"] + 1 for match in listed["live"] + listed["finished"])


async def _play_tables(conn: Connection, address: str, organiser: str, tables: int) -> None:
    metadata = (("authorization", f"Bearer {organiser}"),)
    async with grpc.aio.insecure_channel(address) as control:
        stub = referee_pb2_grpc.RefereeStub(control)  # type: ignore[no-untyped-call]
        created = [
            await stub.CreateMatch(
                pb.CreateMatchRequest(rules_json=RULES, seed=f"web-{n}"), metadata=metadata
            )
            for n in range(tables)
        ]
    conn.send([match.match_id for match in created])
    channels = [grpc.aio.insecure_channel(address) for _ in created]
    samples = Samples()
    clients = [TableClient(ch, list(m.seat_tokens), samples) for ch, m in zip(channels, created, strict=True)]
    playing = [asyncio.create_task(client.play()) for client in clients]
    await asyncio.get_running_loop().run_in_executor(None, conn.recv)  # the end of the run
    for task in playing:
        task.cancel()
    await asyncio.gather(*playing, return_exceptions=True)
    for channel in channels:
        await channel.close()


def play_tables(conn: Connection, address: str, organiser: str, tables: int) -> None:
    """Entry point of the client process: create the matches, then play them until told to stop."""
    asyncio.run(_play_tables(conn, address, organiser, tables))


async def _watch(host: str, port: int, match_id: str, source: str, opened: list[int]) -> None:
    reader, writer = await asyncio.open_connection(host, port, local_addr=(source, 0))
    writer.write(f"GET /matches/{match_id}/events HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n".encode())
    await writer.drain()
    opened[0] += 1
    try:
        while await reader.read(1 << 16):
            pass
    finally:
        writer.close()


async def _viewers(conn: Connection, host: str, port: int, match_ids: list[str], count: int) -> None:
    loop = asyncio.get_running_loop()
    while True:
        command = await loop.run_in_executor(None, conn.recv)
        if command != "on":
            return
        opened = [0]
        # Loopback is a /8: each viewer address holds at most the per-address page limit.
        watching = [
            asyncio.create_task(
                _watch(
                    host,
                    port,
                    match_ids[n % len(match_ids)],
                    f"127.0.0.{2 + n // MAX_STREAMS_PER_CLIENT}",
                    opened,
                )
            )
            for n in range(count)
        ]
        while opened[0] < count and not all(task.done() for task in watching):
            await asyncio.sleep(0.05)
        conn.send(opened[0])
        await loop.run_in_executor(None, conn.recv)  # "off"
        for task in watching:
            task.cancel()
        await asyncio.gather(*watching, return_exceptions=True)
        conn.send("closed")


def watch_tables(conn: Connection, host: str, port: int, match_ids: list[str], count: int) -> None:
    """Entry point of the viewer process: open the streams on "on", close them on "off"."""
    asyncio.run(_viewers(conn, host, port, match_ids, count))


@dataclass
class Phase:
    """One measured phase."""

    viewers: int
    cpu_s: float
    hands: int
    wall_s: float


def measure(tables: int, viewers: int, phases: int, phase_s: float, settle_s: float) -> list[Phase]:
    """Alternate phases without and with viewers on one referee; each phase's figures."""
    organiser = secrets.token_urlsafe(32)
    grpc_port, http_port = free_port(), free_port()
    address, http = f"127.0.0.1:{grpc_port}", f"http://127.0.0.1:{http_port}"
    context = multiprocessing.get_context("spawn")
    with tempfile.TemporaryDirectory(prefix="tichu-web-bench-") as folder:
        env = {**os.environ, "TICHU_LOG_LEVEL": "warning"}
        referee = subprocess.Popen(
            [sys.executable, "-m", "referee.cli", "serve", "--listen", address, "--insecure",
             "--organiser-token", organiser, "--http", f"127.0.0.1:{http_port}",
             "--replay-dir", str(Path(folder) / "replays"), "--no-resume"],
            cwd=ROOT, env=env, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        players = viewers_process = None
        try:
            deadline = time.monotonic() + 60
            while True:
                with contextlib.suppress(OSError):
                    hands_begun(http)
                    break
                if time.monotonic() > deadline or referee.poll() is not None:
                    raise RuntimeError("the referee did not start")
                time.sleep(0.2)
            play_pipe, child = context.Pipe()
            players = context.Process(
                target=play_tables, args=(child, address, organiser, tables), daemon=True
            )
            players.start()
            match_ids = play_pipe.recv()
            watch_pipe, child = context.Pipe()
            viewers_process = context.Process(
                target=watch_tables, args=(child, "127.0.0.1", http_port, match_ids, viewers), daemon=True
            )
            viewers_process.start()
            results = []
            for index in range(phases):
                watching = index % 2 == 1
                if watching:
                    watch_pipe.send("on")
                    opened = watch_pipe.recv()
                    if opened < viewers:
                        raise RuntimeError(f"only {opened} of {viewers} viewers connected")
                time.sleep(settle_s)
                cpu, hands, began = process_cpu_s(referee.pid), hands_begun(http), time.monotonic()
                time.sleep(phase_s)
                cpu_after, hands_after = process_cpu_s(referee.pid), hands_begun(http)
                results.append(
                    Phase(
                        viewers if watching else 0,
                        cpu_after - cpu,
                        hands_after - hands,
                        time.monotonic() - began,
                    )
                )
                if watching:
                    watch_pipe.send("off")
                    watch_pipe.recv()
            play_pipe.send("stop")
            watch_pipe.send("stop")
            return results
        finally:
            for process in (players, viewers_process):
                if process is not None:
                    process.join(10)
                    if process.is_alive():
                        process.kill()
            referee.terminate()
            try:
                referee.wait(30)
            except subprocess.TimeoutExpired:
                referee.kill()


def main(argv: list[str] | None = None) -> int:
    """Print the referee's CPU per hand without and with viewers, and their ratio."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--tables", type=int, default=200)
    parser.add_argument("--viewers", type=int, default=500)
    parser.add_argument("--phases", type=int, default=6, help="alternating, starting without viewers")
    parser.add_argument("--phase-s", type=float, default=30.0)
    parser.add_argument("--settle-s", type=float, default=5.0)
    parser.add_argument("--quick", action="store_true", help="--tables 8 --viewers 40 --phases 2 --phase-s 8")
    args = parser.parse_args(argv)
    if args.quick:
        args.tables, args.viewers, args.phases, args.phase_s, args.settle_s = 8, 40, 2, 8.0, 2.0
    results = measure(args.tables, args.viewers, args.phases, args.phase_s, args.settle_s)
    print(f"Referee CPU per hand, {args.tables} tables at once, load average {load_average()}")
    print(f"  {'phase':>5} {'viewers':>7} {'hands':>6} {'cpu s':>7} {'ms/hand':>8}")
    for index, phase in enumerate(results):
        per_hand = 1000 * phase.cpu_s / phase.hands if phase.hands else float("nan")
        print(f"  {index + 1:>5} {phase.viewers:>7} {phase.hands:>6} {phase.cpu_s:>7.2f} {per_hand:>8.2f}")
    totals: dict[bool, list[float]] = {False: [0.0, 0.0], True: [0.0, 0.0]}
    for phase in results:
        totals[phase.viewers > 0][0] += phase.cpu_s
        totals[phase.viewers > 0][1] += phase.hands
    without = 1000 * totals[False][0] / max(1.0, totals[False][1])
    with_viewers = 1000 * totals[True][0] / max(1.0, totals[True][1])
    print(f"  without viewers {without:.2f} ms CPU per hand; with {args.viewers}: {with_viewers:.2f}")
    print(f"  ratio {with_viewers / without:.3f} (the target: at most 1.10)")
    command = (
        f"Reproduce: .venv/bin/python bench/web_bench.py --tables {args.tables} --viewers {args.viewers} "
        f"--phases {args.phases} --phase-s {args.phase_s:g} --settle-s {args.settle_s:g}"
    )
    print(command)
    return 0


if __name__ == "__main__":
    sys.exit(main())
