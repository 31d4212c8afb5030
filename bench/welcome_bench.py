"""Welcome under load: how long a new seat waits for its Welcome while a referee runs K tables.

Run `.venv/bin/python bench/welcome_bench.py` (K=200 tables, a burst of M=800 seats, about a
minute a variant on 2 cores); `--tables 500 --burst 4000` is issue 27's case. The referee runs in a
process of its own (bench/referee_bench.py's ServerProcess: `start_server` as `tichu serve` runs
it, writing every replay, with a 200 ms decision clock); two client processes play the K tables
with scripted seats that answer at once (referee_bench's figure-3 seats, SDK Hello). Once the
tables play, a third client process opens M new Play streams at once, each on its own seat of
another match, spread over M / --seats-per-channel channels (one HTTP/2 connection each:
`grpc.use_local_subchannel_pool`, as separate bot processes have), says Hello on each and waits
for the Welcome. A seat's latency runs from opening its stream to its Welcome arriving, client
side. The burst's seats then keep their streams open, unread, until the burst ends (their
matches start once their four seats are in, and their clocks run: the referee does that work too).

Each variant (`--variants`, comma-separated) runs on a fresh referee process, side by side in
one run, in an order that alternates between rounds (`--rounds`):
  loops=N      start_server's accept_loops: N grpc.aio servers on the one port (SO_REUSEPORT)
  yield        the referee's Play stream yields to the event loop (asyncio.sleep(0)) after each
               write: whether the tables' own work starves the accept loop
  switch=MS    the referee process's GIL switch interval (sys.setswitchinterval), Python's 5 ms
               unless set: grpc.aio's poller thread needs the GIL to hand each completion over
  per=N        the burst's seats per connection (default --seats-per-channel): the streams of
               one connection all go to the server that accepted it
A variant may combine them: `loops=4+yield`. Each row also prints the referee's event-loop
iterations per second during the burst (a task that counts its turns), and the Welcome's wait
in stages (accept: gRPC handing the call to the referee; hello: the Hello read; send: the
Welcome's way back). `--tables 0` measures the burst on an idle referee: the client's own floor.

The machine is shared and noisy: compare figures of one run with each other, with the load
average printed beside them.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import grpc

sys.path.insert(0, str(Path(__file__).resolve().parent))

from referee_bench import (
    CONTROL_STATS,
    HELLO_ENV,
    LONG_GAME,
    REFEREE_PLAY,
    TIGHT,
    ServerProcess,
    _spawn,
    _Workers,
    load_average,
)

from referee import log
from referee.match.tally import percentile
from referee.scripted import ScriptedSeat
from referee.wire.tichu.v1 import referee_pb2 as pb

PYTHON = ".venv/bin/python bench/welcome_bench.py"
# The `yield` variant: set while its referee process starts, which imports this module (spawn
# runs the main module's top level) and so patches the Play stream there, and there only.
YIELD_ENV = "TICHU_BENCH_PLAY_YIELDS"
# The `switch=MS` variant, passed the same way: the referee process's sys.setswitchinterval.
SWITCH_ENV = "TICHU_BENCH_SWITCH_MS"
# Where the referee process writes, at exit, when each burst seat's Play handler started and
# when its Hello was read (by seat token): the Welcome's wait, split into its stages.
TRACE_ENV = "TICHU_BENCH_TRACE"
WORKERS = 2
P99_BAR_S = 1.0


# ------------------------------------------------------------------------------ the burst


def _yield_after_each_write() -> None:
    """Make the referee's Play stream give the event loop a turn after each message it writes."""
    from referee.server.service import RefereeService

    play = RefereeService.Play

    async def yielding(self: RefereeService, requests: Any, context: Any) -> Any:
        async for message in play(self, requests, context):
            yield message
            await asyncio.sleep(0)

    RefereeService.Play = yielding  # type: ignore[method-assign,assignment]


def _trace_hellos(path: str) -> None:
    """Record, in the referee process, when each Play handler starts and when its Hello is read."""
    import atexit
    import json

    from referee.server.service import RefereeService

    read_hello = RefereeService._hello
    stages: dict[str, tuple[float, float]] = {}

    async def timed(self: RefereeService, requests: Any, context: Any) -> Any:
        started = time.monotonic()
        table, conn, hello = await read_hello(self, requests, context)
        stages[hello.token] = (started, time.monotonic())
        return table, conn, hello

    RefereeService._hello = timed  # type: ignore[method-assign,assignment]
    atexit.register(lambda: Path(path).write_text(json.dumps(stages)))


if os.environ.get(TRACE_ENV):
    _trace_hellos(os.environ[TRACE_ENV])
if os.environ.get(YIELD_ENV) == "1":
    _yield_after_each_write()
if os.environ.get(SWITCH_ENV):
    # grpc.aio's poller thread hands each completion to the event loop, and takes the GIL to do
    # so: from a busy main thread, only after the switch interval (5 ms unless set).
    sys.setswitchinterval(float(os.environ[SWITCH_ENV]) / 1000)


async def _welcome(
    channel: Any, token: str, index: int, opened: list[ScriptedSeat]
) -> tuple[str, float, float]:
    """Open one seat's stream, say Hello, and wait for the Welcome; (token, opened, welcomed)
    on the monotonic clock, which every process of the machine shares."""
    open_call = channel.stream_stream(
        REFEREE_PLAY,
        request_serializer=pb.BotMessage.SerializeToString,
        response_deserializer=pb.RefereeMessage.FromString,
    )
    seat = ScriptedSeat(open_call, token, name=f"burst-{index}", bot_version="bench")
    seat.keep_received = False
    began = time.monotonic()
    await seat.open()
    opened.append(seat)
    msg = await seat.read()
    if msg is None and seat.error is not None:
        raise seat.error
    if msg is None or msg.WhichOneof("kind") != "welcome":
        raise RuntimeError(f"the seat's first message was {msg and msg.WhichOneof('kind')}, not a Welcome")
    return token, began, seat.last_arrived


async def _burst(address: str, tokens: Sequence[str], per_channel: int, timeout_s: float) -> dict[str, Any]:
    channels = [
        grpc.aio.insecure_channel(address, options=[("grpc.use_local_subchannel_pool", 1)])
        for _ in range(math.ceil(len(tokens) / per_channel))
    ]
    opened: list[ScriptedSeat] = []
    began = time.monotonic()
    tasks = [
        asyncio.create_task(_welcome(channels[n // per_channel], token, n, opened))
        for n, token in enumerate(tokens)
    ]
    if tasks:
        done, pending = await asyncio.wait(tasks, timeout=timeout_s)
    else:  # --burst 0: the K tables alone, for what the variant costs them
        await asyncio.sleep(timeout_s)
        done, pending = set(), set()
    span_s = time.monotonic() - began
    for task in pending:
        task.cancel()
    welcomed = [t.result() for t in done if t.exception() is None]
    errors: dict[str, int] = {}
    for task in done:
        if (error := task.exception()) is not None:
            name = (
                f"{error.code().name}: {error.details()}"
                if isinstance(error, grpc.aio.AioRpcError)
                else f"{type(error).__name__}: {error}"
            )
            errors[name] = errors.get(name, 0) + 1
    for seat in opened:
        seat.call.cancel()
    await asyncio.gather(*pending, return_exceptions=True)
    for channel in channels:
        await channel.close()
    return {"welcomed": welcomed, "errors": errors, "span_s": span_s, "cpu_s": time.process_time()}


def burst_in_process(conn: Connection) -> None:
    """Entry point of the burst's client process: waits for its orders, runs the burst, reports."""
    log.configure(level="error", force=True)
    _, address, tokens, per_channel, timeout_s = conn.recv()
    conn.send(asyncio.run(_burst(address, tokens, per_channel, timeout_s)))


# ------------------------------------------------------------------------------ the referee side


@dataclass(frozen=True, slots=True)
class Variant:
    """How the referee process runs: its accept loops, and whether Play yields after each write."""

    name: str
    accept_loops: int = 1
    yield_after_write: bool = False
    switch_ms: float = 0.0  # the referee process's GIL switch interval; 0: Python's own (5 ms)
    seats_per_channel: int = 0  # the burst's seats per connection; 0: --seats-per-channel

    @classmethod
    def parse(cls, name: str) -> Variant:
        """`loops=N`, `yield`, `switch=MS`, or several joined by +."""
        loops, yields, switch_ms, per_channel = 1, False, 0.0, 0
        for part in name.split("+"):
            if part == "yield":
                yields = True
            elif part.startswith("loops="):
                loops = int(part.removeprefix("loops="))
            elif part.startswith("per="):
                per_channel = int(part.removeprefix("per="))
            elif part.startswith("switch="):
                switch_ms = float(part.removeprefix("switch="))
            else:
                raise ValueError(f"no variant part {part!r} (loops=N, yield, switch=MS, per=N)")
        return cls(name, loops, yields, switch_ms, per_channel)

    def settings(self) -> dict[str, Any]:
        """start_server's keywords for this variant (through referee_bench's server process)."""
        return {"accept_loops": self.accept_loops}


@dataclass(frozen=True, slots=True)
class Burst:
    """One variant's figures."""

    variant: str
    tables: int
    seats: int
    playing: int  # seats of the K tables that had their Welcome before the burst
    welcomed: int  # of the burst's seats, within the timeout
    errors: dict[str, int]
    p50_s: float
    p99_s: float
    max_s: float
    span_s: float  # from the burst's first open to its last Welcome (or the timeout)
    stages: dict[str, float]  # p50 and p99 of each stage of the wait, in seconds (see `_stages`)
    decisions_per_s: float  # the K tables' decisions during the burst, at the referee
    turns_per_s: float  # the referee's event-loop iterations per second during the burst
    server_cpu: float  # cores the referee process used during the burst
    load: str

    def row(self) -> str:
        """The figures as one table row."""
        return (
            f"| {self.variant:<14} | {self.tables:>4} | {self.welcomed:>5}/{self.seats:<5} | "
            f"{self.p50_s:6.2f} | {self.p99_s:6.2f} | {self.max_s:6.2f} | {self.span_s:6.1f} | "
            f"{self.decisions_per_s:8.0f} | {self.turns_per_s:7.0f} | "
            f"{self.server_cpu:4.2f} | {self.load} |"
            + (f" errors {self.errors}" if self.errors else "")
            + f"\n    {self.playing}/{4 * self.tables} seats of the K tables in; stages p50/p99 s: "
            + ", ".join(
                f"{name} {self.stages[name + '_p50']:.2f}/{self.stages[name + '_p99']:.2f}"
                for name in ("accept", "hello", "send")
            )
        )


HEADER = (
    "| variant        |    K | welcomed    | p50 s  | p99 s  | max s  | span s | dec/s    | turns/s | cpu  "
    "| load (1/5/15) |\n"
    "|----------------|------|-------------|--------|--------|--------|--------|----------|---------|------"
    "|---------------|"
)


def _stages(welcomed: Sequence[Sequence[Any]], server: dict[str, Sequence[float]]) -> dict[str, float]:
    """The welcomed seats' wait in three stages, p50 and p99 of each: `accept` from opening the
    stream to the referee's Play handler starting (gRPC taking the call), `hello` from there to
    the Hello read and the seat taken, `send` from there to the Welcome arriving."""
    parts: dict[str, list[float]] = {"accept": [], "hello": [], "send": []}
    for token, opened, arrived in welcomed:
        if token in server:
            started, hello = server[token]
            parts["accept"].append(started - opened)
            parts["hello"].append(hello - started)
            parts["send"].append(arrived - hello)
    figures: dict[str, float] = {}
    for name, values in parts.items():
        values.sort()
        figures[f"{name}_p50"] = percentile(values, 0.50) if values else 0.0
        figures[f"{name}_p99"] = percentile(values, 0.99) if values else 0.0
    return figures


def run_burst(
    workers: _Workers,
    variant: Variant,
    tables: int,
    seats: int,
    per_channel: int,
    warmup_s: float,
    timeout_s: float,
) -> Burst:
    """K tables playing on a fresh referee process, then the burst of `seats` new streams."""
    os.environ[YIELD_ENV] = "1" if variant.yield_after_write else "0"
    os.environ[SWITCH_ENV] = f"{variant.switch_ms:g}" if variant.switch_ms else ""
    trace = Path(tempfile.mkdtemp(prefix="tichu-welcome-")) / "trace.json"
    os.environ[TRACE_ENV] = str(trace)
    try:
        server = ServerProcess(TIGHT, f"welcome-{variant.name}", settings=variant.settings())
    finally:
        os.environ[YIELD_ENV] = os.environ[SWITCH_ENV] = os.environ[TRACE_ENV] = ""
    burst = _spawn().Pipe()
    burster = _spawn().Process(target=burst_in_process, args=(burst[1],), daemon=True)
    burster.start()  # now: its imports take a second, which must not count in the burst
    count = len(workers.pipes)
    connect_s = 20.0 + tables * 0.1
    stepped = windowed = False
    playing = 0
    try:
        playing_tokens = [list(c.seat_tokens) for c in server.create_matches(tables, LONG_GAME, "welcome/k")]
        burst_tokens = [
            t
            for c in server.create_matches(math.ceil(seats / 4), LONG_GAME, "welcome/m")
            for t in c.seat_tokens
        ][:seats]
        if tables:
            limit_s = connect_s + warmup_s + timeout_s + 60
            workers.send(
                [
                    ("step", server.address, playing_tokens[i::count], 0.0, limit_s, connect_s)
                    for i in range(count)
                ]
            )
            stepped = True
            workers.expect("almost", connect_s + 30)
            workers.send([("go",)] * count)
            playing = sum(welcomed for welcomed, _ in workers.expect("ready", connect_s + 30))
            # Round trips are not this bench's figure: a one-second window nobody reads.
            now = time.monotonic()
            workers.send([(now, now + 1.0)] * count)
            windowed = True
        time.sleep(warmup_s)
        before = server.control(CONTROL_STATS)
        per_channel = variant.seats_per_channel or per_channel
        burst[0].send(("go", server.address, burst_tokens, per_channel, timeout_s))
        if not burst[0].poll(timeout_s + 60):
            raise RuntimeError("the burst's process did not report")
        result = burst[0].recv()
        after = server.control(CONTROL_STATS)
        load = load_average()
    finally:
        if stepped and not windowed:
            with contextlib.suppress(OSError):
                workers.send([("go",)] * count)
                workers.send([(0.0, 0.0)] * count)
        server.stop()
        burster.join(10)
        if burster.is_alive():
            burster.kill()
    if stepped:
        workers.expect("done", 90)
    latencies = sorted(welcomed - opened for _, opened, welcomed in result["welcomed"])
    stages = _stages(result["welcomed"], json.loads(trace.read_text()) if trace.exists() else {})
    shutil.rmtree(trace.parent, ignore_errors=True)
    missing = seats - len(latencies)
    # A seat never welcomed counts as the timeout: the percentiles then do not flatter.
    padded = latencies + [timeout_s] * missing
    elapsed = max(1e-9, after["at"] - before["at"])
    return Burst(
        variant=variant.name,
        tables=tables,
        seats=seats,
        playing=playing,
        welcomed=len(latencies),
        errors=result["errors"],
        stages=stages,
        p50_s=percentile(padded, 0.50) if padded else 0.0,
        p99_s=percentile(padded, 0.99) if padded else 0.0,
        max_s=padded[-1] if padded else 0.0,
        span_s=result["span_s"],
        decisions_per_s=(after["decisions"] - before["decisions"]) / elapsed,
        turns_per_s=(after["loop_turns"] - before["loop_turns"]) / elapsed,
        server_cpu=(after["cpu_s"] - before["cpu_s"]) / elapsed,
        load=load,
    )


def main(argv: list[str] | None = None) -> int:
    """Measure each variant's Welcome latency side by side; print the table and the command."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--tables", type=int, default=200, help="K tables playing (default 200)")
    parser.add_argument("--burst", type=int, default=800, help="M new seats at once (default 800)")
    parser.add_argument("--seats-per-channel", type=int, default=4, help="the burst's seats per connection")
    parser.add_argument("--variants", default="loops=1,loops=4", help="comma-separated (see the docstring)")
    parser.add_argument(
        "--rounds", type=int, default=1, help="each variant this many times, order alternating"
    )
    parser.add_argument("--warmup-s", type=float, default=3.0, help="tables playing before the burst")
    parser.add_argument("--timeout-s", type=float, default=60.0, help="how long the burst waits for Welcomes")
    args = parser.parse_args(argv)
    variants = [Variant.parse(name) for name in args.variants.split(",")]
    os.environ[HELLO_ENV] = "sdk"
    log.configure(level="warning")
    command = (
        f"{PYTHON} --tables {args.tables} --burst {args.burst} --seats-per-channel {args.seats_per_channel} "
        f"--variants {args.variants} --rounds {args.rounds} --warmup-s {args.warmup_s:g} "
        f"--timeout-s {args.timeout_s:g}"
    )
    print(
        f"Python {sys.version.split()[0]}, {os.cpu_count()} cores, load average {load_average()} (1/5/15 min)"
    )
    print(
        f"K={args.tables} tables playing (scripted seats, 200 ms clock), then M={args.burst} new streams "
        f"at once over {math.ceil(args.burst / args.seats_per_channel)} connections; "
        "Welcome latency, client side"
    )
    print(HEADER, flush=True)
    results: list[Burst] = []
    workers = _Workers(WORKERS)
    try:
        for round_ in range(args.rounds):
            for variant in variants if round_ % 2 == 0 else reversed(variants):
                done = run_burst(
                    workers,
                    variant,
                    args.tables,
                    args.burst,
                    args.seats_per_channel,
                    args.warmup_s,
                    args.timeout_s,
                )
                results.append(done)
                print(done.row(), flush=True)
    finally:
        workers.close()
    print(f"Welcome p99 bar: {P99_BAR_S:g} s, every seat welcomed. Reproduce: {command}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
