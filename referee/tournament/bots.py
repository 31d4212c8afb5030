"""The processes that play a host's local entrants: a worker process per entrant (or a few).

A worker (`python -m clients.worker MODULE:CLASS`) reads seat lines `TOKEN NAME RNG_SEED` on its
standard input and plays each seat on its own stream.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from pathlib import Path

from referee import log
from referee.tournament.config import Entrant

WORKER_STOP_S = 3.0  # every game is over by then: nothing of value is left to wait for
MAX_RESTARTS = 5  # a bot that crashes again and again is not started a sixth time


class Worker:
    """One bot process that plays the seats given on its standard input.

    If it dies while it holds seats, it is started again (at most MAX_RESTARTS times) and handed
    those seats again: their tokens are still good, and the referee lets a seat reconnect within
    its reconnect grace, so the games go on. Past that, its seats get the referee's defaults
    until their games forfeit.
    """

    def __init__(self, entrant: Entrant, index: int, server: str, log_dir: Path) -> None:
        self.entrant = entrant
        self.index = index
        self.server = server
        self.log_path = log_dir / f"worker-{entrant.name}-{index}.log"
        self.process: asyncio.subprocess.Process | None = None
        self.starts = 0
        self.seats: dict[str, list[str]] = {}  # match id -> the lines of the seats it holds there
        self._starting = asyncio.Lock()  # two games handing out seats at once start one process
        self._watcher: asyncio.Task[None] | None = None
        self._stopping = False

    async def give(self, match_id: str, line: str) -> None:
        """Hand the worker one seat (TOKEN NAME SEED) of a match."""
        self.seats.setdefault(match_id, []).append(line)
        async with self._starting:
            process = await self._ensure_running()
        if process is not None:
            await self._write(process, [line])

    def release(self, match_id: str) -> None:
        """The match is over: its seats need no restart."""
        self.seats.pop(match_id, None)

    async def _ensure_running(self) -> asyncio.subprocess.Process | None:
        if self.process is not None and self.process.returncode is None:
            return self.process
        if self.starts > MAX_RESTARTS or self._stopping:
            return None
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        with self.log_path.open("ab") as stderr:
            self.process = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "clients.worker", self.entrant.bot,
                "--server", self.server, "--insecure",
                stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.DEVNULL, stderr=stderr,
            )  # fmt: skip
        self.starts += 1
        self._watcher = asyncio.create_task(self._watch(self.process))
        return self.process

    async def _watch(self, process: asyncio.subprocess.Process) -> None:
        code = await process.wait()
        if self._stopping:
            return
        held = [line for lines in self.seats.values() for line in lines]
        log.get_logger().warning(
            "worker_died", entrant=self.entrant.name, index=self.index, code=code, seats=len(held)
        )
        if not held:
            return  # the next seat starts it again
        async with self._starting:
            restarted = await self._ensure_running()
        if restarted is not None:
            await self._write(restarted, held)

    async def _write(self, process: asyncio.subprocess.Process, lines: list[str]) -> None:
        assert process.stdin is not None
        try:
            process.stdin.write("".join(line + "\n" for line in lines).encode())
            await process.stdin.drain()
        except (BrokenPipeError, ConnectionResetError):
            pass  # it died just now: its watcher hands these seats to the next process

    async def stop(self) -> None:
        """End its input, give it a moment to finish, then kill it."""
        self._stopping = True
        process = self.process
        if process is not None and process.returncode is None:
            if process.stdin is not None:
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    process.stdin.close()
            try:
                await asyncio.wait_for(process.wait(), WORKER_STOP_S)
            except TimeoutError:
                process.kill()
                await process.wait()
        if self._watcher is not None:
            await self._watcher
