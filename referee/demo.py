"""`tichu demo`: a referee on localhost, four sample bots in their own processes, one full game.

The referee runs in this process; the match is created through the organiser API over gRPC;
each bot is a separate `tichu bot` process that connects with its seat token. The replay (every
record the table makes, one JSON object per line) is written and flushed as the match runs.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import signal
import sys
import tempfile
import time
from pathlib import Path
from typing import TextIO

import grpc
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from referee import log
from referee.match import ClockSettings, MatchResult
from referee.match.moves import ReplayMismatchError
from referee.replay import ReplayFormatError, read_replay
from referee.replay.signing import fingerprint, load_public_key, write_key_pair
from referee.replay.text import summary_table
from referee.replay.verify import verify
from referee.sdk_commands import sdk_argv
from referee.server.serve import ServerSettings, start_server
from referee.visible import visible
from referee.wire.tichu.v1 import referee_pb2 as pb
from referee.wire.tichu.v1 import referee_pb2_grpc

BOTS = (
    ("clients.heuristic_bot:HeuristicBot", "heuristic-a"),
    ("clients.showcase_bot:ShowcaseBot", "showcase-b"),
    ("clients.heuristic_bot:HeuristicBot", "heuristic-a2"),
    ("clients.showcase_bot:ShowcaseBot", "showcase-b2"),
)
DEFAULT_SEED = "2024"
SEED_ENV = "TICHU_DEMO_SEED"
REPLAY_DIR = Path("replays") / "out"
MATCH_TIMEOUT_S = 900.0
# Bomb windows get the default 2 s: on a busy machine 1 s made sample bots miss some.
DEMO_CLOCK = ClockSettings(decision_ms=5_000, bank_ms=60_000, window_ms=2_000, max_violations=20)


async def _play(seed: str, out: TextIO, keys: Path, http: str = "") -> int:
    organiser = secrets.token_urlsafe(24)
    match_id = f"demo-{int(time.time())}-{secrets.token_hex(3)}"
    clock = DEMO_CLOCK
    # A key for this demo alone: the referee signs the replay with it, and the check below
    # verifies the signature with its public half.
    key = keys / "demo-key"
    public_key = load_public_key(write_key_pair(key))
    # The demo's referee writes its replay but resumes nothing: each demo is one fresh match.
    settings = ServerSettings(
        "127.0.0.1:0",
        organiser,
        insecure=True,
        defaults=clock,
        replay_dir=REPLAY_DIR,
        resume=False,
        signing_key=key,
    )
    running = await start_server(settings)
    processes: list[asyncio.subprocess.Process] = []
    web = None
    try:
        if http:
            from referee.web.app import start_web

            host, _, port = http.rpartition(":")
            web = await start_web(running.service.referee, host.strip("[]") or "127.0.0.1", int(port))
        async with grpc.aio.insecure_channel(running.address) as channel:
            stub = referee_pb2_grpc.RefereeStub(channel)  # type: ignore[no-untyped-call]
            created = await stub.CreateMatch(
                pb.CreateMatchRequest(
                    preset="official", seed=seed, bot_names=[name for _, name in BOTS], match_id=match_id
                ),
                metadata=(("authorization", f"Bearer {organiser}"),),
            )
        commitment = created.seed_commitment[:16]
        print(
            f"Referee on {running.address}; match {created.match_id}, seed {visible(seed)} "
            f"(committed: {commitment})",
            file=out,
        )
        replay_path = running.service.replay_paths[created.match_id]
        print(f"Replay: {replay_path}", file=out)
        if web is not None:
            print(f"Watch it live: {web.url}/matches/{created.match_id}", file=out, flush=True)
        for seat, ((spec, name), token) in enumerate(zip(BOTS, created.seat_tokens, strict=True)):
            env = {
                **os.environ,
                "TICHU_TOKEN": token,
                "TICHU_LOG_LEVEL": os.environ.get("TICHU_LOG_LEVEL", "warning"),
            }
            processes.append(
                await asyncio.create_subprocess_exec(
                    *sdk_argv("bot"), spec, "--server", running.address,
                    "--insecure", "--name", name,
                    env=env, stdout=asyncio.subprocess.DEVNULL,
                )
            )  # fmt: skip
            print(
                f"  seat {seat} (team {'AB'[seat % 2]}): {name} ({spec}), pid {processes[-1].pid}", file=out
            )
        front = running.service.referee
        started = time.monotonic()
        await front.finished(created.match_id, MATCH_TIMEOUT_S)
        table = front.table(created.match_id)
        assert table is not None
        if not table.finished.is_set():
            raise TimeoutError(f"the match did not end within {MATCH_TIMEOUT_S:g} s")
        elapsed = time.monotonic() - started
        codes = await asyncio.wait_for(asyncio.gather(*(p.wait() for p in processes)), 60)
        status = _report(table.result, elapsed, codes, out)
        status = max(status, _verify(replay_path, public_key, out))
        if web is not None:
            print(f"The page stays up at {web.url}/ until Ctrl-C.", file=out, flush=True)
            await _until_interrupted()
        return status
    finally:
        for process in processes:
            if process.returncode is None:
                process.kill()
        if web is not None:
            await web.stop()
        await running.stop()


async def _until_interrupted() -> None:
    """Wait for SIGINT or SIGTERM."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:
        await stop.wait()
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)


def _verify(path: Path, public_key: Ed25519PublicKey, out: TextIO) -> int:
    """Check the replay just written as `tichu replay verify --public-key` does: its chain, the
    signature, the seed against its commitment, and every move through the engine."""
    try:
        run = verify(read_replay(path), public_key).run
    except (ReplayFormatError, ReplayMismatchError) as error:
        print(f"Replay {path} does NOT verify: {error}", file=out)
        return 1
    assert run is not None  # a finished match's replay, whole
    size_kb = path.stat().st_size / 1024
    moves, events = run.moves, len(run.events)
    signed = f"signed by key {fingerprint(public_key)}"
    print(f"Replay verified: {moves} moves, {events} events, {signed}, {size_kb:.0f} KB ({path})", file=out)
    return 0


def _report(result: MatchResult | None, elapsed_s: float, codes: list[int], out: TextIO) -> int:
    if result is None:
        print("The match did not finish.", file=out)
        return 1
    a, b = result.scores
    winner = "nobody (a draw)" if result.winner is None else f"team {'AB'[result.winner]}"
    rounds = result.hands
    print(f"\nFinal score: A {a}, B {b}; {winner} wins after {rounds} rounds in {elapsed_s:.1f} s", file=out)
    if result.forfeiting_team is not None:
        print(f"Forfeit by team {'AB'[result.forfeiting_team]}: {visible(result.reason)}", file=out)
    for line in summary_table(result.summary):
        print(line, file=out)
    if any(codes):
        print(f"A bot process exited with an error: exit codes {codes}", file=out)
        return 1
    return 0


def run_match_demo(seed: str | None = None, out: TextIO | None = None, http: str = "") -> int:
    """Play the demo match; 0 when it finished with a result and every bot exited cleanly."""
    # Per-decision logs would drown the report; TICHU_LOG_LEVEL=info shows them.
    log.configure(level=os.environ.get(log.LEVEL_ENV, "warning"))
    chosen = seed or os.environ.get(SEED_ENV) or DEFAULT_SEED
    with tempfile.TemporaryDirectory(prefix="tichu-demo-key-") as keys:
        return asyncio.run(_play(chosen, out or sys.stdout, Path(keys), http))
