"""A bot process that plays many seats at once: `tichu tournament worker MODULE:CLASS --server ADDR`.

Starting a Python process with grpc costs about half a second of CPU, so a tournament runs one
long-lived worker per local entrant (or a few) rather than a process per seat. The worker reads
seat assignments from standard input, one per line:

    TOKEN [NAME [RNG_SEED [SERVER]]]

and plays each seat with a fresh instance of the Bot class, all on one asyncio loop, each over
its own gRPC stream (clients.connect). A remote entrant runs the same command on its own machine
and feeds it the lines the tournament prints or appends to the entrant's token file (e.g.
`tail -f tokens.txt | tichu tournament worker mybot:MyBot --server HOST:PORT --insecure`).
At the end of its input the worker finishes the seats it holds and exits.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import TextIO

from clients.bot import Bot
from clients.connect import ConnectError, connect
from clients.loading import load_bot
from referee import log as log_setup


async def _play_seat(
    bot_class: type[Bot],
    server: str,
    insecure: bool,
    token: str,
    name: str,
    seed: str,
    out: TextIO,
    ca_file: str | None,
) -> None:
    bot = bot_class()
    if seed:
        bot.rng.seed(seed)
    try:
        result = await connect(
            bot, server, token, insecure=insecure, ca_file=ca_file, name=name or None, retries=3
        )
    except (ConnectError, OSError) as error:
        print(f"failed {name or bot_class.name}: {error}", file=out, flush=True)
        return
    print(f"done {result.match_id} {result.winner} {' '.join(map(str, result.scores))}", file=out, flush=True)


async def serve_seats(
    bot_class: type[Bot],
    server: str,
    insecure: bool,
    lines: asyncio.Queue[str | None],
    out: TextIO,
    ca_file: str | None = None,
) -> None:
    """Play every seat whose line arrives on `lines` (None ends the input); return when all are over.

    A line is `TOKEN [NAME [RNG_SEED [SERVER]]]`, split at white space: a token may begin with
    '-'; SERVER, when given, is the referee to connect to instead of `server`."""
    seats: set[asyncio.Task[None]] = set()
    while (line := await lines.get()) is not None:
        fields = line.split()
        if not fields:
            continue
        # A fourth field names the referee that holds this seat's game (a tournament on Ray).
        token, name, seed, where = (fields + ["", "", ""])[:4]
        task = asyncio.create_task(
            _play_seat(bot_class, where or server, insecure, token, name, seed, out, ca_file)
        )
        seats.add(task)
        task.add_done_callback(seats.discard)
    if seats:
        await asyncio.gather(*seats)


async def _read_stdin(lines: asyncio.Queue[str | None]) -> None:
    while True:
        line = await asyncio.to_thread(sys.stdin.readline)
        if not line:
            lines.put_nowait(None)
            return
        lines.put_nowait(line)


async def _main(bot_class: type[Bot], server: str, insecure: bool, ca_file: str | None) -> None:
    lines: asyncio.Queue[str | None] = asyncio.Queue()
    reader = asyncio.create_task(_read_stdin(lines))
    try:
        await serve_seats(bot_class, server, insecure, lines, sys.stdout, ca_file)
    finally:
        reader.cancel()


def add_worker_arguments(parser: argparse.ArgumentParser) -> None:
    """The arguments of `tichu tournament worker`."""
    parser.add_argument(
        "bot", metavar="MODULE:CLASS", help="the Bot subclass, e.g. clients.random_bot:RandomBot"
    )
    parser.add_argument("--server", required=True, help="the tournament referee's host:port")
    security = parser.add_mutually_exclusive_group()
    security.add_argument("--insecure", action="store_true", help="connect without TLS (a local tournament)")
    security.add_argument("--ca-file", help="PEM root certificates to verify the referee with")


def run_worker(args: argparse.Namespace) -> int:
    """Play the seats given on standard input until it ends; 2 if the bot cannot be loaded."""
    log_setup.configure(level="warning")
    try:
        bot_class = type(load_bot(args.bot))
    except (ImportError, ValueError, OSError) as error:
        print(f"tichu tournament worker: {error}", file=sys.stderr)
        return 2
    asyncio.run(_main(bot_class, args.server, args.insecure, args.ca_file))
    return 0


def main(argv: list[str] | None = None) -> int:
    """`python -m clients.worker`, the same as `tichu tournament worker`."""
    parser = argparse.ArgumentParser(prog="tichu tournament worker", description=__doc__)
    add_worker_arguments(parser)
    return run_worker(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
