"""A real match over gRPC, once per test session worker, whose replay the tests read."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from referee.match import MatchResult
from referee.match.records import Line
from referee.scripted import random_policy
from referee.wire.tichu.v1 import referee_pb2 as pb
from tests.server.support import ORGANISER_METADATA, join, referee, run


@dataclass(frozen=True)
class Played:
    """A finished match: its replay file, what the table recorded, its result and listing."""

    path: Path
    records: list[Line]
    hashes: list[str]  # each record's h
    result: MatchResult
    statistics: dict[str, Any]
    listed_path: str
    seed_commitment: str  # as the CreateMatch response gave it
    welcomed: list[str]  # the seed commitment each seat's Welcome gave


NAMES = ("north", "east", "south", "west", "up", "down")


def play_recorded_match(
    directory: Path,
    seed: str = "replay-tests",
    rounds: int = 3,
    players: int = 4,
    match_id: str = "",
    signing_key: Path | None = None,
    names: tuple[str, ...] = NAMES,
) -> Played:
    """Random bots (bombs and calls included) play `rounds` deals with replays on (signed with
    `signing_key` when given)."""

    async def scenario() -> Played:
        async with referee(replay_dir=directory, signing_key=signing_key) as ref:
            response = await ref.create(
                rules_json=json.dumps({"match_mode": f"fixed_rounds:{rounds}", "players": players}),
                seed=seed,
                bot_names=list(names[:players]),
                match_id=match_id,
            )
            policies = [random_policy(f"{seed}/{s}", bomb_rate=0.9, call_rate=0.2) for s in range(players)]
            bots = await join(ref, list(response.seat_tokens), policies)
            await asyncio.gather(*(bot.play() for bot in bots))
            table = ref.table(response.match_id)
            await asyncio.wait_for(table.finished.wait(), 10)
            listing = await ref.stub.ListMatches(pb.ListMatchesRequest(), metadata=ORGANISER_METADATA)
            assert table.result is not None
            return Played(
                path=directory / f"{response.match_id}.jsonl",
                records=list(table.records),
                hashes=list(table.hashes),
                result=table.result,
                statistics=table.statistics(),
                listed_path=listing.matches[0].replay_path,
                seed_commitment=response.seed_commitment,
                welcomed=[
                    m.welcome.seed_commitment
                    for bot in bots
                    for m in bot.received
                    if m.WhichOneof("kind") == "welcome"
                ],
            )

    return run(scenario(), timeout_s=120)


@pytest.fixture(scope="session")
def played(tmp_path_factory: pytest.TempPathFactory) -> Played:
    """One recorded match for the whole session."""
    return play_recorded_match(tmp_path_factory.mktemp("replays"))
