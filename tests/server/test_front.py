"""The referee's front door (referee.server.front.Referee, issue 23, part 4): a match made from a
typed RulesConfig, found, awaited and forgotten from Python, while its bots play over gRPC."""

from __future__ import annotations

import asyncio
import dataclasses

import pytest

from referee.rules import OFFICIAL
from referee.server.front import MatchExistsError
from referee.server.input_limits import InputError
from tests.server.support import join, random_policy, referee, run

ONE_DEAL = dataclasses.replace(OFFICIAL, match_mode="fixed_rounds:1")


def test_a_match_from_typed_rules_is_played_awaited_and_forgotten() -> None:
    async def scenario() -> None:
        async with referee() as ref:
            assert ref.server is not None
            front = ref.server.service.referee
            entry = front.create(ONE_DEAL, seed="front", bot_names=["a", "b", "c", "d"], match_id="front-1")
            assert front.table("front-1") is entry.table and front.entry("front-1") is entry
            assert len(entry.tokens) == 4 and [e.table.match_id for e in front] == ["front-1"]
            assert entry.table.match.header.config == ONE_DEAL
            # Nobody has joined: the wait is up before the match ends, and says so with None.
            assert await front.finished("front-1", timeout_s=0.05) is None
            assert not front.forget("front-1")  # still being played
            bots = await join(ref, list(entry.tokens), [random_policy(f"front/{s}") for s in range(4)])
            played = asyncio.gather(*(bot.play() for bot in bots))
            result = await front.finished("front-1")
            await played
            assert result is not None and result == entry.table.result
            assert [bot.result is not None for bot in bots] == [True] * 4
            assert front.forget("front-1")
            assert front.table("front-1") is None and front.seat_for(entry.tokens[0]) is None
            with pytest.raises(KeyError):
                await front.finished("front-1")

    run(scenario())


def test_the_front_door_refuses_what_the_wire_refuses() -> None:
    async def scenario() -> None:
        async with referee() as ref:
            assert ref.server is not None
            front = ref.server.service.referee
            front.create(ONE_DEAL, match_id="taken")
            with pytest.raises(MatchExistsError):
                front.create(ONE_DEAL, match_id="taken")
            with pytest.raises(ValueError, match="match id"):
                front.create(ONE_DEAL, match_id="no spaces")
            with pytest.raises(ValueError, match="one bot name per seat"):
                front.create(ONE_DEAL, bot_names=["solo"])
            with pytest.raises(InputError, match="target_score"):
                front.create(dataclasses.replace(OFFICIAL, target_score=-5))
            assert [e.table.match_id for e in front] == ["taken"]  # nothing else was made

    run(scenario())
