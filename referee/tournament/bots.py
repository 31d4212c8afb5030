"""The bot processes that play a host's local entrants' seats.

(Interim: the shared Python workers of today, behind the interface hosts use.)
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections import defaultdict
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


class EntrantProcesses:
    """The processes that play one entrant's seats on one host."""

    def __init__(self, entrant: Entrant, server: str, log_dir: Path) -> None:
        self.entrant = entrant
        self.workers = [Worker(entrant, i, server, log_dir) for i in range(entrant.processes)]
        self._next = 0
        self._held: dict[str, set[Worker]] = defaultdict(set)

    async def give(self, match_id: str, seat: int, token: str, rng_seed: str) -> None:
        """Hand one seat of a match to the next worker."""
        worker = self.workers[self._next % len(self.workers)]
        self._next += 1
        self._held[match_id].add(worker)
        await worker.give(match_id, f"{token} {self.entrant.name} {rng_seed}")

    def release(self, match_id: str) -> dict[int, str]:
        """The match is over: seat -> why its process ended early (none, for shared workers)."""
        for worker in self._held.pop(match_id, ()):
            worker.release(match_id)
        return {}

    async def stop(self) -> None:
        """End every worker."""
        await asyncio.gather(*(worker.stop() for worker in self.workers))
