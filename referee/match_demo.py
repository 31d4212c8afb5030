"""`tichu demo`: a referee on localhost, four sample bots in their own processes, one full game.

The referee runs in this process; the match is created through the organiser API over gRPC;
each bot is a separate `tichu bot` process that connects with its seat token. The replay (every
record the table makes, one JSON object per line) is written and flushed as the match runs.
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import sys
import time
from pathlib import Path
from typing import Any, TextIO

import grpc

from referee import log
from referee.codec import pb
from referee.server import start_server
from referee.table import ClockSettings
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


class ReplayWriter:
    """Appends each record as one JSON line and flushes it, so a crash loses nothing written."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._file = path.open("w", encoding="utf-8")

    def write(self, record: dict[str, Any]) -> None:
        """Write one record."""
        self._file.write(json.dumps(record, separators=(",", ":"), default=str) + "\n")
        self._file.flush()

    def close(self) -> None:
        """Close the file."""
        self._file.close()


async def _play(seed: str, out: TextIO) -> int:
    organiser = secrets.token_urlsafe(24)
    match_id = f"demo-{int(time.time())}-{secrets.token_hex(3)}"
    writer = ReplayWriter(REPLAY_DIR / f"{match_id}.jsonl")

    def on_record(record_match: str, record: dict[str, Any]) -> None:
        if record_match == match_id:
            writer.write(record)

    clock = ClockSettings(decision_ms=5_000, bank_ms=60_000, window_ms=1_000, max_violations=20)
    running = await start_server("127.0.0.1:0", organiser, insecure=True, defaults=clock, on_record=on_record)
    processes: list[asyncio.subprocess.Process] = []
    try:
        async with grpc.aio.insecure_channel(running.address) as channel:
            stub = referee_pb2_grpc.RefereeStub(channel)  # type: ignore[no-untyped-call]
            created = await stub.CreateMatch(
                pb.CreateMatchRequest(
                    preset="official", seed=seed, bot_names=[name for _, name in BOTS], match_id=match_id
                ),
                metadata=(("authorization", f"Bearer {organiser}"),),
            )
        print(f"Referee on {running.address}; match {created.match_id}, seed {seed}", file=out)
        print(f"Replay: {writer.path}", file=out)
        for seat, ((spec, name), token) in enumerate(zip(BOTS, created.seat_tokens, strict=True)):
            env = {
                **os.environ,
                "TICHU_TOKEN": token,
                "TICHU_LOG_LEVEL": os.environ.get("TICHU_LOG_LEVEL", "warning"),
            }
            processes.append(
                await asyncio.create_subprocess_exec(
                    sys.executable, "-m", "referee.cli", "bot", spec, "--server", running.address,
                    "--insecure", "--name", name,
                    env=env, stdout=asyncio.subprocess.DEVNULL,
                )
            )  # fmt: skip
            print(
                f"  seat {seat} (team {'AB'[seat % 2]}): {name} ({spec}), pid {processes[-1].pid}", file=out
            )
        table = running.service.tables[created.match_id]
        started = time.monotonic()
        await asyncio.wait_for(table.finished.wait(), MATCH_TIMEOUT_S)
        elapsed = time.monotonic() - started
        codes = await asyncio.wait_for(asyncio.gather(*(p.wait() for p in processes)), 60)
        return _report(table.result, table.statistics(), table.state.round + 1, elapsed, codes, out)
    finally:
        for process in processes:
            if process.returncode is None:
                process.kill()
        await running.stop()
        writer.close()


def _report(
    result: pb.MatchResult | None,
    stats: dict[str, Any],
    rounds: int,
    elapsed_s: float,
    codes: list[int],
    out: TextIO,
) -> int:
    if result is None:
        print("The match did not finish.", file=out)
        return 1
    a, b = result.scores
    winner = {0: "team A", 1: "team B"}.get(result.winner, "nobody (a draw)")
    print(f"\nFinal score: A {a}, B {b}; {winner} wins after {rounds} rounds in {elapsed_s:.1f} s", file=out)
    if result.forfeit:
        print(f"Forfeit by team {'AB'[result.forfeiting_team]}: {result.reason}", file=out)
    header = f"{'seat':<5}{'bot':<14}{'decisions':>10}{'p50 ms':>8}{'p99 ms':>8}{'timeouts':>9}"
    header += f"{'rejected':>9}{'calls':>7}{'won':>5}{'bombs':>6}{'points':>7}"
    print(header, file=out)
    for seat in stats["seats"]:
        print(
            f"{seat['seat']:<5}{seat['bot_name']:<14}{seat['decisions']:>10}{seat['think_ms_p50']:>8.1f}"
            f"{seat['think_ms_p99']:>8.1f}{seat['timeouts']:>9}{seat['rejections']:>9}{seat['calls_made']:>7}"
            f"{seat['calls_won']:>5}{seat['bombs_played']:>6}{seat['points_won']:>7}",
            file=out,
        )
    if any(codes):
        print(f"A bot process exited with an error: exit codes {codes}", file=out)
        return 1
    return 0


def run_match_demo(seed: str | None = None, out: TextIO | None = None) -> int:
    """Play the demo match; 0 when it finished with a result and every bot exited cleanly."""
    # Per-decision logs would drown the report; TICHU_LOG_LEVEL=info shows them.
    log.configure(level=os.environ.get(log.LEVEL_ENV, "warning"))
    chosen = seed or os.environ.get(SEED_ENV) or DEFAULT_SEED
    return asyncio.run(_play(chosen, out or sys.stdout))
