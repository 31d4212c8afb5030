"""Run a Bot against a referee over gRPC: `tichu bot MODULE:CLASS --server ADDR --token T`.

One bidirectional stream per seat (proto/tichu/v1/referee.proto): Hello, then the referee's
Welcome, Snapshot, events and decision requests. This module is the transport only: the codec
(clients.codec) reads the referee's messages into the match core's values and writes the answers,
and the seat driver (clients.driver) follows the match and asks the bot, as it does in one process.
Two tasks share the stream: a reader answers pings at once and queues everything else (a
Bundle's messages together); a worker hands each batch to the driver, in a worker thread, so that
a slow bot never delays a pong, until a bot that does not say it blocks has answered a few times
within INLINE_BUDGET_S: the driver then runs inline (a thread hop costs more than a quick answer),
and goes back to the thread for good once one call runs past the budget. The Hello asks the
referee to decline the windows the bot could only decline and to pass on the turns it could only
pass (Bot.referee_declines and referee_passes) and, for a bot that does not listen to events, to
hold them until its next request. If the stream drops, the bot reconnects with the same token, a
few times with growing pauses, and carries on from the referee's new Snapshot.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import sys
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import grpc
import structlog

from clients.bot import Bot
from clients.codec import UnreadMessage, bot_message, hello, referee_messages
from clients.driver import SeatDriver
from clients.loading import load_bot
from referee import log as log_setup
from referee.cli import attach_token_values
from referee.match.messages import (
    Cancelled,
    Message,
    OutMessage,
    Ping,
    Pong,
    ResultMessage,
    SeatStatus,
    Welcome,
)
from referee.match.messages import MatchResult as MatchEnd
from referee.match.records import PROTOCOL_VERSION
from referee.wire.tichu.v1 import referee_pb2 as pb
from referee.wire.tichu.v1 import referee_pb2_grpc

__all__ = [
    "ConnectError",
    "MatchResult",
    "add_bot_arguments",
    "connect",
    "run",
    "run_bot",
    "tls_failure",
]

log = structlog.get_logger("tichu.connect")
T = TypeVar("T")
# After this many calls that each returned within INLINE_BUDGET_S (in a thread), a bot's methods
# run inline; one call past the budget moves them to a thread for good.
INLINE_BUDGET_S = 0.02
QUICK_CALLS_INLINE = 3

# Statuses that another attempt with the same token cannot fix.
_FATAL = frozenset(
    {
        grpc.StatusCode.UNAUTHENTICATED,
        grpc.StatusCode.PERMISSION_DENIED,
        grpc.StatusCode.INVALID_ARGUMENT,
        grpc.StatusCode.NOT_FOUND,
        grpc.StatusCode.FAILED_PRECONDITION,
        grpc.StatusCode.UNIMPLEMENTED,
    }
)
# The reader's last word to the worker when the stream ends without a MatchResult.
_LOST = object()
# Messages for the referee; None closes the stream.
_Outbox = asyncio.Queue[pb.BotMessage | None]


class ConnectError(Exception):
    """The referee refused the bot for good (a bad token...) or stayed out of reach."""


@dataclass(frozen=True, slots=True)
class MatchResult:
    """The end of a match as the referee reported it."""

    match_id: str
    winner: int  # 0 = team A, 1 = team B, -1 = a draw
    scores: tuple[int, ...]  # team A, team B
    forfeit: bool
    forfeiting_team: int  # -1 unless forfeit
    reason: str
    summary: dict[str, Any]  # per-seat statistics
    # What the replay's proof rests on (README "Proofs"): the last hash of its chain, the
    # referee's signature of it (hex; "" if it does not sign), and the seed commitment the
    # Welcome showed before the first deal.
    chain_head: str = ""
    signature: str = ""
    seed_commitment: str = ""
    # How it ended: "played_out", "no_show", "withdrawn", "out_of_time" or "referee_error" (from a
    # referee older than the field, read back from the rest); each scored round's points (A, B).
    termination: str = ""
    round_scores: tuple[tuple[int, int], ...] = ()

    @classmethod
    def of(cls, end: MatchEnd, seed_commitment: str = "") -> MatchResult:
        """The result as the match core made it (and the commitment the Welcome showed)."""
        outcome = end.outcome
        return cls(
            match_id=end.match_id,
            winner=-1 if outcome.winner is None else outcome.winner,
            scores=end.scores,
            forfeit=outcome.forfeit,
            forfeiting_team=-1 if outcome.forfeiting_team is None else outcome.forfeiting_team,
            reason=outcome.reason,
            summary=end.statistics(),
            chain_head=end.chain_head,
            signature=end.signature,
            seed_commitment=seed_commitment,
            termination=outcome.termination.value,
            round_scores=tuple(r.points for r in end.round_scores),
        )


class _Session:
    """One bot's connection to one match, across reconnections: the transport around a SeatDriver."""

    def __init__(self, bot: Bot, token: str, name: str, version: str, server: str = "") -> None:
        self.bot = bot
        self.server = server  # host:port, for messages
        self.driver = SeatDriver(bot, name)
        self.hello = hello(token, name, version, PROTOCOL_VERSION, self.driver.options)
        self.quick_calls = 0  # calls that returned within INLINE_BUDGET_S
        self.slow = False  # a call ran past it once
        self.welcomed = False  # on the current stream
        self.ever_welcomed = False  # the token was good once: a refusal now may be a race
        self._log = log.bind(bot=name)

    async def play(self, stub: Any) -> MatchResult | None:
        """One stream: the match result, or None if the stream ended first (ConnectError if fatal)."""
        self.welcomed = False
        self.driver.new_stream()
        outbox: _Outbox = asyncio.Queue()
        inbox: asyncio.Queue[object] = asyncio.Queue()
        outbox.put_nowait(self.hello)

        async def outgoing() -> AsyncIterator[pb.BotMessage]:
            while (message := await outbox.get()) is not None:
                yield message

        call = stub.Play(outgoing())
        worker = asyncio.create_task(self._work(inbox, outbox))
        failure: grpc.aio.AioRpcError | None = None
        try:
            async for envelope in call:
                if self._take(envelope, inbox, outbox):
                    break  # the result: the stream ends after it; no need to wait for that
        except grpc.aio.AioRpcError as error:
            failure = error
        finally:
            inbox.put_nowait(_LOST)
            outbox.put_nowait(None)
        try:
            result = await worker
        finally:
            call.cancel()
        if result is not None:
            return result
        tls = None if failure is None or self.welcomed else tls_failure(failure, self.server)
        if tls is not None:
            raise ConnectError(tls)  # another attempt would fail the same way
        # A referee that has not yet noticed the old stream is gone may refuse the seat as
        # still connected: after a first Welcome, a refused token is worth retrying.
        code = None if failure is None else failure.code()
        race = self.ever_welcomed and code is grpc.StatusCode.UNAUTHENTICATED
        if failure is not None and code in _FATAL and not race:
            raise ConnectError(f"the referee refused the bot: {failure.code().name}: {failure.details()}")
        reason = "stream ended" if failure is None else failure.code().name
        self._log.warning("stream_lost", reason=reason)
        return None

    def _take(self, envelope: pb.RefereeMessage, inbox: asyncio.Queue[object], outbox: _Outbox) -> bool:
        """Queue what the referee sent (a Bundle's messages together); True after the result.
        Pings are answered here at once, and a cancelled request is marked while the bot thinks."""
        batch: list[OutMessage] = []
        done = False
        for message in referee_messages(envelope):
            if isinstance(message, UnreadMessage):
                self._log.warning("message_ignored", kind=message.kind, why=message.why)
                continue
            if isinstance(message, Ping):
                outbox.put_nowait(bot_message(Pong(message.nonce)))
                continue
            if isinstance(message, Cancelled):
                self.driver.cancel(message.request_id)
            elif isinstance(message, Welcome):
                self.welcomed = self.ever_welcomed = True
                self._log = self._log.bind(match_id=message.match_id, seat=message.seat)
                self._log.info("seat_joined", team=message.team)
            elif isinstance(message, SeatStatus):
                self._log.info("seat_status_changed", other_seat=message.seat, connected=message.connected)
                continue
            batch.append(message)
            if isinstance(message, ResultMessage):
                done = True
                break
        if batch:
            inbox.put_nowait(batch)
        return done

    async def _work(self, inbox: asyncio.Queue[object], outbox: _Outbox) -> MatchResult | None:
        """Handle the referee's messages in order until the result or the end of the stream."""
        driver = self.driver
        while True:
            batch = await inbox.get()
            if batch is _LOST:
                return None
            assert isinstance(batch, list)
            for answer in await self._call(self._handle, batch):
                outbox.put_nowait(bot_message(answer))
            if driver.result is not None:
                welcome = driver.welcome
                result = MatchResult.of(driver.result, welcome.seed_commitment if welcome else "")
                self._log.info("match_finished", winner=result.winner, scores=list(result.scores))
                return result

    def _handle(self, batch: list[OutMessage]) -> list[Message]:
        answers: list[Message] = []
        for message in batch:
            try:
                answers.extend(self.driver.handle(message))
            except Exception:
                # One message the SDK cannot follow (a newer referee?) must not end the match:
                # an unanswered request gets the referee's default when its time is up.
                self._log.exception("message_failed", kind=type(message).__name__)
        return answers

    async def _call(self, method: Callable[..., T], *args: Any) -> T:
        """A call that may reach the bot's methods, in a worker thread for the first calls and
        for a bot that blocks or ran past INLINE_BUDGET_S once; inline once it has shown itself
        quick (a thread hop costs more than a quick bot's answer)."""
        inline = not (self.bot.blocking or self.slow) and self.quick_calls >= QUICK_CALLS_INLINE
        started = time.perf_counter()
        result = method(*args) if inline else await asyncio.to_thread(method, *args)
        if time.perf_counter() - started > INLINE_BUDGET_S:
            self.slow = True  # for good: a slow bot thinks in a thread from now on
        else:
            self.quick_calls += 1
        return result


_VERIFY_FAILED = re.compile(r"CERTIFICATE_VERIFY_FAILED: ([^:]+)")


def tls_failure(error: grpc.aio.AioRpcError, server: str) -> str | None:
    """What a call that failed in the TLS handshake with `server` tells the bot's author; None
    if it failed otherwise. The handshake fails the same way on every attempt."""
    details = error.details() or ""
    if error.code() is not grpc.StatusCode.UNAVAILABLE or not re.search(
        r"tls|ssl|handshake|certificate|verification", details, re.IGNORECASE
    ):
        return None
    failed = f"TLS handshake with {server} failed"
    host = server.rsplit(":", 1)[0].strip("[]")
    if "Hostname Verification" in details:
        return f"{failed}: the referee's certificate is not for {host!r}: connect by a name it holds"
    if found := _VERIFY_FAILED.search(details):
        return (
            f"{failed}: the referee's certificate is not trusted ({found.group(1).strip()}); pass "
            "--ca-file (connect's ca_file) with the certificate that signed it"
        )
    if "WRONG_VERSION_NUMBER" in details:
        return f"{failed}: the referee does not speak TLS there; for a plaintext referee, pass --insecure"
    return f"{failed}: {details.rsplit('last error: ', 1)[-1]}"


def _channel(server: str, insecure: bool, ca_file: str | None) -> Any:
    if insecure:
        return grpc.aio.insecure_channel(server)
    roots = Path(ca_file).read_bytes() if ca_file else None  # None: the system's root certificates
    return grpc.aio.secure_channel(server, grpc.ssl_channel_credentials(root_certificates=roots))


async def connect(
    bot: Bot,
    server: str,
    token: str,
    *,
    insecure: bool = False,
    ca_file: str | None = None,
    name: str | None = None,
    retries: int = 5,
    backoff_s: float = 0.5,
    max_backoff_s: float = 8.0,
) -> MatchResult:
    """Play one match on a referee at `server` (host:port) with a seat token; the result.

    TLS by default (with `ca_file`'s root certificates, else the system's); `insecure` for a
    plain connection. A dropped stream is reopened with the same token up to `retries` times in
    a row, waiting backoff_s, then twice as long each time (at most max_backoff_s).
    """
    session = _Session(bot, token, name or bot.name, bot.version, server)
    failures = 0
    async with _channel(server, insecure, ca_file) as channel:
        stub = referee_pb2_grpc.RefereeStub(channel)  # type: ignore[no-untyped-call]
        while True:
            result = await session.play(stub)
            if result is not None:
                return result
            failures = 1 if session.welcomed else failures + 1
            if failures > retries:
                raise ConnectError(f"lost the referee at {server} and {retries} reconnections failed")
            pause_s = min(backoff_s * 2 ** (failures - 1), max_backoff_s)
            log.info("reconnecting", server=server, attempt=failures, pause_s=pause_s)
            await asyncio.sleep(pause_s)


def run(bot: Bot, server: str, token: str, **options: Any) -> MatchResult:
    """connect() for synchronous code: play one match and return its result."""
    return asyncio.run(connect(bot, server, token, **options))


# ----------------------------------------------------------------------------- command line


def add_bot_arguments(parser: argparse.ArgumentParser) -> None:
    """The arguments of `tichu bot`."""
    parser.add_argument(
        "bot", metavar="MODULE:CLASS", help="the Bot subclass, e.g. clients.random_bot:RandomBot"
    )
    parser.add_argument("--server", default="localhost:50051", help="the referee's host:port")
    parser.add_argument(
        "--token",
        default=os.environ.get("TICHU_TOKEN"),
        help="the seat token (default: $TICHU_TOKEN, which keeps it out of process listings)",
    )
    security = parser.add_mutually_exclusive_group()
    security.add_argument("--insecure", action="store_true", help="connect without TLS")
    security.add_argument("--ca-file", help="PEM root certificates to verify the referee with")
    parser.add_argument("--name", help="the bot's name in replays and standings (default: its class's)")
    parser.add_argument("--retries", type=int, default=5, help="reconnections in a row before giving up")
    arena = parser.add_argument_group("an arena (tichu arena serve): game after game until Ctrl-C")
    arena.add_argument("--arena", metavar="HOST:PORT", help="wait in this arena's lobby instead of one seat")
    arena.add_argument(
        "--key-file", type=Path, help="the bot's key (tichu arena bot add NAME --key-file FILE)"
    )
    arena.add_argument("--games", type=int, default=2, help="games at once (a pair is two; default 2)")


def run_bot(args: argparse.Namespace) -> int:
    """`tichu bot`: play one match; exit code 0 once it is over, 1 if it could not be played."""
    log_setup.configure()  # logs to stderr: stdout carries only the result line
    if args.arena:
        return _run_arena(args)
    if not args.token:
        print("tichu bot: a seat token is needed: --token or $TICHU_TOKEN", file=sys.stderr)
        return 2
    try:
        bot = load_bot(args.bot)
    except (ImportError, ValueError, OSError) as error:
        print(f"tichu bot: {error}", file=sys.stderr)
        return 2
    try:
        result = run(
            bot,
            args.server,
            args.token,
            insecure=args.insecure,
            ca_file=args.ca_file,
            name=args.name,
            retries=args.retries,
        )
    except (ConnectError, OSError) as error:
        print(f"tichu bot: {error}", file=sys.stderr)
        return 1
    outcome = "a draw" if result.winner < 0 else f"team {'AB'[result.winner]} won"
    scores = " - ".join(str(s) for s in result.scores)
    print(f"match {result.match_id}: {outcome}, {scores}" + (f" ({result.reason})" if result.reason else ""))
    return 0


def _run_arena(args: argparse.Namespace) -> int:
    """`tichu bot MODULE:CLASS --arena HOST:PORT --key-file FILE`."""
    from clients.arena import ArenaError, read_key, run_in_arena

    # A bot that plays for hours logs what goes wrong, not every seat it takes.
    log_setup.configure(level=os.environ.get("TICHU_LOG_LEVEL", "warning"))
    if args.key_file is None:
        print("tichu bot: --arena needs --key-file (the key tichu arena bot add gave)", file=sys.stderr)
        return 2
    try:
        key = read_key(args.key_file)
        bot_class = type(load_bot(args.bot))
    except (ArenaError, ImportError, ValueError, OSError) as error:
        print(f"tichu bot: {error}", file=sys.stderr)
        return 2
    return run_in_arena(
        bot_class, args.arena, key, games=args.games, insecure=args.insecure, ca_file=args.ca_file
    )


def main(argv: list[str] | None = None) -> int:
    """`python -m clients.connect MODULE:CLASS ...`, the same as `tichu bot`."""
    parser = argparse.ArgumentParser(prog="tichu bot", description="Play a bot on a Tichu referee.")
    add_bot_arguments(parser)
    return run_bot(parser.parse_args(attach_token_values(sys.argv[1:] if argv is None else argv)))


if __name__ == "__main__":
    sys.exit(main())
