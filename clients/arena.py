"""Play in an arena: `tichu bot MODULE:CLASS --arena HOST:PORT --key-file FILE`.

The bot waits in the arena's lobby (tichu.v1.Arena/Lobby) with its key in the call's metadata,
and plays every seat the arena hands it, each with a fresh instance of the Bot class over its
own Play stream (as a tournament worker plays its seats), game after game until it is stopped:
the first Ctrl-C leaves the lobby and finishes the games in progress, the second leaves at once.
A lobby that goes away (an arena restarting) is joined again, waiting a little longer each time.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, TextIO

import grpc

from clients.bot import Bot
from clients.worker import serve_seats
from referee.wire.tichu.v1 import referee_pb2 as pb
from referee.wire.tichu.v1 import referee_pb2_grpc

# A pair is two games at once (the same deals at two tables): what a bot offers by default.
DEFAULT_GAMES = 2
# Lobby calls that fail in a row before the bot gives up (an arena down for good).
RETRIES = 8


class ArenaError(Exception):
    """The arena refused the bot (a wrong or revoked key, a refused or disabled bot)."""


def read_key(path: Path) -> str:
    """The key in a key file (what `tichu arena bot add --key-file` wrote)."""
    text = path.read_text(encoding="utf-8").strip()
    if not text or len(text.split()) != 1:
        raise ArenaError(f"{path} does not hold one key (tichu arena bot add NAME --key-file {path})")
    return text


def referee_address(seated: str, arena: str) -> str:
    """Where a seat's referee is: as the arena said, unless it named no host (it listens on
    every address): then the host the bot reached the arena by, on the referee's port."""
    host, _, port = seated.rpartition(":")
    if host.strip("[]") in ("0.0.0.0", "::", "") and port:
        return f"{arena.rpartition(':')[0]}:{port}"
    return seated


async def play_in_arena(
    bot_class: type[Bot],
    arena: str,
    key: str,
    *,
    games: int = DEFAULT_GAMES,
    insecure: bool = False,
    ca_file: str | None = None,
    out: TextIO = sys.stdout,
    leave: asyncio.Event | None = None,
    retries: int = RETRIES,
) -> int:
    """Wait in the arena's lobby and play the seats it gives until `leave` is set; then finish
    the games in progress. The number of seats played."""
    leave = leave or asyncio.Event()
    lines: asyncio.Queue[str | None] = asyncio.Queue()
    played = 0
    name = bot_class.name
    seats = asyncio.create_task(serve_seats(bot_class, arena, insecure, lines, out, ca_file))
    failures = 0
    try:
        while not leave.is_set():
            try:
                async for message in _lobby(arena, key, games, bot_class.version, insecure, ca_file, leave):
                    failures = 0
                    kind = message.WhichOneof("kind")
                    if kind == "welcome":
                        w = message.welcome
                        print(
                            f"in the lobby as {w.bot} ({w.leaderboard}, {w.state}"
                            + (f": {w.reason}" if w.reason else "")
                            + f"), {w.games} games at once",
                            file=out,
                            flush=True,
                        )
                        name = w.bot
                    elif kind == "seated":
                        s = message.seated
                        where = referee_address(s.address, arena)
                        lines.put_nowait(f"{s.seat_token} {name} {s.rng_seed or '-'} {where}")
                        played += 1
                    elif kind == "notice":
                        n = message.notice
                        print(f"the arena says: {n.state}" + (f": {n.reason}" if n.reason else ""), file=out)
                        if n.state not in ("active", "validating"):
                            raise ArenaError(f"the bot is {n.state}: {n.reason}")
                if leave.is_set():
                    break
                failures += 1  # the arena ended the call: it is stopping; try again
            except grpc.aio.AioRpcError as error:
                code = error.code()
                if code in (
                    grpc.StatusCode.UNAUTHENTICATED,
                    grpc.StatusCode.PERMISSION_DENIED,
                    grpc.StatusCode.FAILED_PRECONDITION,
                    grpc.StatusCode.INVALID_ARGUMENT,
                ):
                    raise ArenaError(error.details() or code.name) from None
                failures += 1
            if failures > retries:
                raise ArenaError(f"lost the arena at {arena}: {retries} attempts in a row failed")
            if failures:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(leave.wait(), min(0.5 * 2 ** (failures - 1), 15.0))
    finally:
        lines.put_nowait(None)  # no more seats: the ones being played are finished
        await seats
    return played


async def _lobby(
    arena: str, key: str, games: int, version: str, insecure: bool, ca_file: str | None, leave: asyncio.Event
) -> AsyncIterator[pb.LobbyMessage]:
    """The lobby call's messages until it ends or `leave` is set (then the call is cancelled)."""
    credentials = None if insecure else _credentials(ca_file)
    channel = (
        grpc.aio.insecure_channel(arena)
        if credentials is None
        else grpc.aio.secure_channel(arena, credentials)
    )
    async with channel:
        stub = referee_pb2_grpc.ArenaStub(channel)  # type: ignore[no-untyped-call]
        call = stub.Lobby(
            pb.LobbyRequest(games=games, bot_version=version), metadata=(("authorization", f"Bearer {key}"),)
        )
        async for message in lobby_messages(call, leave):
            yield message


async def lobby_messages(call: Any, leave: asyncio.Event) -> AsyncIterator[pb.LobbyMessage]:
    """A lobby call's messages until it ends or `leave` is set (then the call is cancelled)."""
    leaving = asyncio.create_task(leave.wait())
    try:
        while True:
            step = asyncio.ensure_future(call.read())
            done, _ = await asyncio.wait({step, leaving}, return_when=asyncio.FIRST_COMPLETED)
            if leaving in done:
                step.cancel()
                call.cancel()
                return
            message = step.result()
            if message is grpc.aio.EOF:
                return
            yield message
    finally:
        leaving.cancel()


def _credentials(ca_file: str | None) -> grpc.ChannelCredentials:
    roots = Path(ca_file).read_bytes() if ca_file else None
    return grpc.ssl_channel_credentials(root_certificates=roots)


def run_in_arena(
    bot_class: type[Bot], arena: str, key: str, *, games: int, insecure: bool, ca_file: str | None
) -> int:
    """`tichu bot --arena`: play until Ctrl-C (twice: at once); the exit code."""

    async def main() -> int:
        leave = asyncio.Event()
        loop = asyncio.get_running_loop()
        current = asyncio.current_task()

        def interrupted() -> None:
            if leave.is_set():
                print("leaving at once", file=sys.stderr, flush=True)
                if current is not None:
                    current.cancel()
                return
            print(
                "leaving the lobby; finishing the games in progress (Ctrl-C again: at once)", file=sys.stderr
            )
            leave.set()

        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError):
                loop.add_signal_handler(sig, interrupted)
        try:
            seats = await play_in_arena(
                bot_class, arena, key, games=games, insecure=insecure, ca_file=ca_file, leave=leave
            )
        except ArenaError as error:
            print(f"tichu bot: {error}", file=sys.stderr)
            return 1
        except asyncio.CancelledError:
            return 130
        print(f"left the arena after {seats} seat(s)", file=sys.stdout, flush=True)
        return 0

    return asyncio.run(main())


__all__ = ["ArenaError", "lobby_messages", "play_in_arena", "read_key", "referee_address", "run_in_arena"]
