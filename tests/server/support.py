"""Test support for the gRPC referee: a real server on 127.0.0.1:0 and scripted bots over real streams."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator, Callable, Coroutine, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import grpc
from google.protobuf.message import Message

from referee.match import ClockSettings
from referee.scripted import K, Policy, ScriptedSeat, exchange_lowest, first_policy, random_policy
from referee.server.serve import RunningServer, start_server
from referee.server.table import Table
from referee.wire.tichu.v1 import referee_pb2 as pb
from referee.wire.tichu.v1 import referee_pb2_grpc

T = TypeVar("T")
__all__ = [
    "CALM",
    "ORGANISER",
    "ORGANISER_METADATA",
    "Bot",
    "K",
    "Policy",
    "Referee",
    "cards_in",
    "exchange_lowest",
    "first_policy",
    "join",
    "random_policy",
    "referee",
    "run",
    "strings_in",
]
ORGANISER = "organiser-secret-for-tests"
ORGANISER_METADATA = (("authorization", f"Bearer {ORGANISER}"),)
# Clocks long enough never to fire by accident in tests that are not about time.
CALM = ClockSettings(
    decision_ms=20_000,
    bank_ms=0,
    grace_ms=200,
    window_ms=20_000,
    heartbeat_interval_ms=30_000,
    heartbeat_timeout_ms=30_000,
    reconnect_grace_ms=30_000,
)
CARD = re.compile(
    r"(?<![A-Za-z0-9])(?:10|[2-9JQKA])[jspt](?![A-Za-z0-9])|(?<![A-Za-z])(?:MJ|DOG|PHX|DRG)(?![A-Za-z])"
)


def run(coro: Coroutine[Any, Any, T], timeout_s: float = 60.0) -> T:
    """Run a test scenario in a fresh event loop, with a time limit so a hang fails instead."""

    async def limited() -> T:
        async with asyncio.timeout(timeout_s):
            return await coro

    return asyncio.run(limited())


@dataclass
class Referee:
    """A running referee and a client channel to it."""

    server: RunningServer | None  # None in a process that only runs bots
    channel: grpc.aio.Channel
    stub: referee_pb2_grpc.RefereeStub

    def table(self, match_id: str) -> Table:
        """The Table behind a match (the test runs in the server's process)."""
        assert self.server is not None
        table = self.server.service.referee.table(match_id)
        assert table is not None, f"no match {match_id!r}"
        return table

    def create_here(self, **fields: Any) -> tuple[Table, list[str]]:
        """Create a match through the service's Python API."""
        assert self.server is not None
        return self.server.service.create_match(**fields)

    async def create(self, **fields: Any) -> pb.CreateMatchResponse:
        """CreateMatch with the organiser token."""
        response: pb.CreateMatchResponse = await self.stub.CreateMatch(
            pb.CreateMatchRequest(**fields), metadata=ORGANISER_METADATA
        )
        return response


@asynccontextmanager
async def referee(
    defaults: ClockSettings = CALM,
    now: Callable[[], float] | None = None,
    replay_dir: Path | None = None,
    signing_key: Path | None = None,
    hello_timeout_s: float | None = None,
    max_connections: int | None = None,
) -> AsyncIterator[Referee]:
    """A referee on a free local port, plaintext, and a channel to it (writing replays to
    `replay_dir` and signing them with `signing_key` when given)."""
    extra: dict[str, Any] = {} if now is None else {"now": now}
    if hello_timeout_s is not None:
        extra["hello_timeout_s"] = hello_timeout_s
    if replay_dir is not None:
        extra["replay_dir"] = replay_dir
    if max_connections is not None:
        extra["max_connections"] = max_connections
    if signing_key is not None:
        extra["signing_key"] = signing_key
    server = await start_server(
        "127.0.0.1:0", ORGANISER, insecure=True, defaults=defaults, keep_records=True, **extra
    )
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{server.port}")
    try:
        yield Referee(server, channel, referee_pb2_grpc.RefereeStub(channel))  # type: ignore[no-untyped-call]
    finally:
        await channel.close()
        await server.stop(0)


# Digests and signatures are not text: base64url can hold "-9s_" or "4MJ5" by chance.
PROOF_FIELDS = frozenset({"chain_head", "signature", "seed_commitment"})


def strings_in(msg: Message) -> list[str]:
    """Every string field in a protobuf message, nested messages included (proofs left out)."""
    out: list[str] = []
    for descriptor, value in msg.ListFields():
        if descriptor.name in PROOF_FIELDS:
            continue
        values = value if descriptor.is_repeated else [value]
        for item in values:
            if isinstance(item, Message):
                out.extend(strings_in(item))
            elif isinstance(item, str):
                out.append(item)
    return out


def cards_in(msg: Message) -> set[str]:
    """Every card named anywhere in a message (inside JSON strings too)."""
    found: set[str] = set()
    for text in strings_in(msg):
        found.update(CARD.findall(text))
    return found


class Bot(ScriptedSeat):
    """A scripted seat on one real Play stream of the test's referee."""

    def __init__(
        self, ref: Referee, token: str, policy: Policy | None = None, name: str = "scripted"
    ) -> None:
        super().__init__(ref.stub.Play, token, policy, name)
        self.ref = ref


async def join(
    ref: Referee, tokens: Sequence[str], policies: Sequence[Policy | None], timeout_s: float = 30.0
) -> list[Bot]:
    """Connect one bot per seat (in seat order) and wait until each has its Welcome."""
    bots = [
        Bot(ref, token, policy, name=f"bot{seat}")
        for seat, (token, policy) in enumerate(zip(tokens, policies, strict=True))
    ]
    for bot in bots:
        await bot.open()
        await bot.until(lambda m: m.WhichOneof("kind") == "welcome", timeout_s)
    return bots
