"""The lobby: keys (wrong, rotated, revoked), a hosted bot's key refused, bad requests; remote bots
that wait, get seated, play, are validated and rated on their own leaderboard beside hosted ones,
join again when the lobby goes, and leave finishing what they play."""

from __future__ import annotations

import asyncio
import dataclasses
import io
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path

import grpc
import pytest

from clients.arena import play_in_arena, referee_address
from clients.heuristic_bot import HeuristicBot
from clients.random_bot import RandomBot
from referee.arena.lobby import Presence
from referee.arena.matchmaker import Match
from referee.arena.runner import Arena
from referee.arena.store import ArenaStore, BotState
from referee.wire.tichu.v1 import referee_pb2 as pb
from referee.wire.tichu.v1 import referee_pb2_grpc
from tests.arena.test_arena import config_in, settle


async def lobby_call(address: str, key: str, games: int = 2) -> AsyncIterator[pb.LobbyMessage]:
    async with grpc.aio.insecure_channel(address) as channel:
        stub = referee_pb2_grpc.ArenaStub(channel)  # type: ignore[no-untyped-call]
        metadata = (("authorization", f"Bearer {key}"),) if key else ()
        async for message in stub.Lobby(pb.LobbyRequest(games=games), metadata=metadata):
            yield message


async def first(address: str, key: str, games: int = 2) -> pb.LobbyMessage:
    async for message in lobby_call(address, key, games):
        return message
    raise AssertionError("the lobby sent nothing")


def test_the_lobby_checks_keys_and_requests(tmp_path: Path) -> None:
    config = config_in(tmp_path)
    store = ArenaStore(config.store)
    old = store.add_bot("remote1")
    key = store.rotate_key("remote1")
    hosted = store.add_bot("hosted1", bot="clients.random_bot:RandomBot")
    refused = store.add_bot("refused1")
    store.set_state("refused1", BotState.REFUSED, "validation: 3 timeouts")
    arena = Arena(config, store, io.StringIO())

    async def body() -> None:
        address = await arena.start()
        try:
            welcome = await first(address, key)
            assert welcome.welcome.bot == "remote1" and welcome.welcome.leaderboard == "remote"
            assert welcome.welcome.state == "validating" and welcome.welcome.games == 2
            for who, games, code, words in (
                (old, 2, grpc.StatusCode.UNAUTHENTICATED, "not a key of this arena"),
                ("", 2, grpc.StatusCode.UNAUTHENTICATED, "authorization: Bearer KEY"),
                ("tka_" + "x" * 200, 2, grpc.StatusCode.UNAUTHENTICATED, "authorization"),
                (hosted, 2, grpc.StatusCode.FAILED_PRECONDITION, "is hosted"),
                (refused, 2, grpc.StatusCode.PERMISSION_DENIED, "3 timeouts"),
                (key, 1, grpc.StatusCode.INVALID_ARGUMENT, "a pair is two games"),
                (key, 65, grpc.StatusCode.INVALID_ARGUMENT, "2 to 64"),
            ):
                with pytest.raises(grpc.aio.AioRpcError) as error:
                    await first(address, who, games)
                assert error.value.code() is code and words in (error.value.details() or ""), error.value
            store.set_state("remote1", BotState.DISABLED, "by its owner")
            with pytest.raises(grpc.aio.AioRpcError) as error:
                await first(address, key)
            assert error.value.code() is grpc.StatusCode.UNAUTHENTICATED
        finally:
            await arena.stop()

    asyncio.run(body())
    store.close()


def test_remote_bots_wait_play_get_rated_and_leave(tmp_path: Path) -> None:
    config = config_in(tmp_path)
    store = ArenaStore(config.store)
    keys = {name: store.add_bot(name) for name in ("rem-a", "rem-b")}
    out = io.StringIO()
    arena = Arena(config, store, out)

    async def body() -> tuple[int, int]:
        address = await arena.start()
        leave = asyncio.Event()
        bots = [
            asyncio.create_task(
                play_in_arena(cls, address, keys[name], insecure=True, out=io.StringIO(), leave=leave)
            )
            for name, cls in (("rem-a", RandomBot), ("rem-b", HeuristicBot))
        ]
        try:
            while arena.lobby.ready() != {"rem-a", "rem-b"}:
                await asyncio.sleep(0.05)
            # Validation against the house, then the remote leaderboard: each other only.
            await settle(arena, 3)
            assert {store.bot(n).state for n in keys} == {BotState.ACTIVE}, out.getvalue()
            # The lobby goes away (as when an arena restarts): both join again by themselves.
            await arena.lobby.close()
            while arena.lobby.ready() != {"rem-a", "rem-b"}:
                await asyncio.sleep(0.05)
            await settle(arena, 2)
        finally:
            leave.set()
            played = await asyncio.gather(*bots)
            await arena.stop()
        return played[0], played[1]

    seats_a, seats_b = asyncio.run(body())
    assert seats_a > 0 and seats_b > 0
    remote = [r for r in store.ratings() if r.leaderboard == "remote"]
    assert {r.bot for r in remote} == {"rem-a", "rem-b"}
    ladder = [p for p in store.pairs(state="finished") if not p.validation and "rem-a" in (p.bot_a, p.bot_b)]
    assert ladder and all({p.bot_a, p.bot_b} == {"rem-a", "rem-b"} for p in ladder)
    validations = [p for p in store.pairs(state="finished") if p.validation]
    assert {p.bot_a for p in validations} == {"rem-a", "rem-b"}
    assert all(store.bot(p.bot_b).hosted for p in validations)  # a remote bot beside hosted ones
    store.close()


def test_a_bot_that_joins_is_seated_at_once_not_at_the_next_round(tmp_path: Path) -> None:
    # An hour between rounds: the round at the start finds nobody, so only a bot's joining can
    # seat these two.
    config = dataclasses.replace(config_in(tmp_path), pair_every_s=3600.0, house=())
    store = ArenaStore(config.store)
    keys = [store.add_bot(name, state=BotState.ACTIVE) for name in ("rem-a", "rem-b")]
    arena = Arena(config, store, io.StringIO())
    rounds: list[bool] = []  # each round the matchmaker ran: whether it let bots meet again
    a_round = arena.round

    async def counted_round(*, rematch: bool = True) -> list[Match]:
        rounds.append(rematch)
        return await a_round(rematch=rematch)

    arena.round = counted_round  # type: ignore[method-assign]

    async def seated(address: str, key: str) -> pb.Seated:
        async for message in lobby_call(address, key):
            if message.WhichOneof("kind") == "seated":
                return message.seated
        raise AssertionError("the lobby ended without a seat")

    async def body() -> list[pb.Seated]:
        address = await arena.start()
        stop = asyncio.Event()
        runner = asyncio.create_task(arena.run(stop))
        try:
            while not rounds:
                await asyncio.sleep(0.05)  # the round at the start has run, with nobody in the lobby
            # Far longer than a seat takes, far shorter than the hour: fails, rather than hangs.
            return await asyncio.wait_for(asyncio.gather(*(seated(address, k) for k in keys)), 120)
        finally:
            stop.set()
            await runner
            await arena.stop()

    seats = asyncio.run(body())
    assert rounds[0] and not rounds[-1]  # seated by a round between the hourly ones
    assert {s.pair_id for s in seats} == {store.pairs()[0].id}
    assert [p.state for p in store.pairs()] == ["voided"]  # stopped before its seats were taken
    store.close()


def test_a_remote_bot_that_offers_four_games_plays_two_pairs_at_once(tmp_path: Path) -> None:
    config = dataclasses.replace(config_in(tmp_path), house=(), concurrency=4)
    store = ArenaStore(config.store)
    offers = {"many": 5, "one": 2, "two": 2}  # an odd offer rounds down to whole pairs
    keys = {name: store.add_bot(name, state=BotState.ACTIVE) for name in offers}
    # "one" and "two" have just met: each would rather meet "many", which has room for both.
    store.finish_pair(store.start_pair("one", "two", "remote", "s", validation=False), [])
    arena = Arena(config, store, io.StringIO())
    heard: dict[str, list[pb.LobbyMessage]] = {name: [] for name in offers}

    def seats(name: str) -> list[pb.Seated]:
        return [m.seated for m in heard[name] if m.WhichOneof("kind") == "seated"]

    async def listen(address: str, name: str) -> None:
        async for message in lobby_call(address, keys[name], offers[name]):
            heard[name].append(message)

    async def body() -> list[Match]:
        address = await arena.start()
        listeners = [asyncio.create_task(listen(address, name)) for name in offers]
        try:
            while arena.lobby.ready() != set(offers):
                await asyncio.sleep(0.05)
            matches = await arena.round()

            async def all_seated() -> None:  # two tables a pair, two seats a table
                while len(seats("many")) < 8 or len(seats("one")) < 4 or len(seats("two")) < 4:
                    await asyncio.sleep(0.05)

            await asyncio.wait_for(all_seated(), 120)  # fails rather than hangs
            return matches
        finally:
            await arena.stop()
            await asyncio.gather(*listeners)

    matches = asyncio.run(body())
    assert heard["many"][0].welcome.games == 4 and heard["one"][0].welcome.games == 2
    assert len(matches) == 2
    assert {frozenset((m.a, m.b)) for m in matches} == {
        frozenset(("many", "one")),
        frozenset(("many", "two")),
    }
    assert len({s.pair_id for s in seats("many")}) == 2  # both at once, on four tables
    assert len({s.match_id for s in seats("many")}) == 4
    assert {s.pair_id for s in seats("one")} | {s.pair_id for s in seats("two")} == {
        s.pair_id for s in seats("many")
    }
    store.close()


def test_a_seat_on_a_referee_that_listens_everywhere_is_reached_by_the_arena_s_host() -> None:
    assert referee_address("0.0.0.0:5000", "arena.example:5000") == "arena.example:5000"
    assert referee_address("[::]:5000", "10.0.0.2:5000") == "10.0.0.2:5000"
    assert referee_address("ref.example:7000", "arena.example:5000") == "ref.example:7000"


def test_a_bot_is_ready_while_it_holds_fewer_pairs_than_its_games_allow(tmp_path: Path) -> None:
    config = config_in(tmp_path)
    store = ArenaStore(config.store)
    for name in ("many", "one", "x", "y"):
        store.add_bot(name, state=BotState.ACTIVE)
    store.add_bot("new")  # validating
    store.add_bot("hosted1", bot="clients.random_bot:RandomBot", state=BotState.ACTIVE)
    arena = Arena(config, store, io.StringIO())
    for name, games in (("many", 6), ("one", 2), ("new", 8)):
        arena.lobby.present[name] = Presence(name, games, "1")
    arena.admitted["hosted1"] = store.bot("hosted1").version

    def free_slots() -> dict[str, int]:
        busy = Counter(name for pair in arena.playing.values() for name in pair)
        bots = [bot for bot in store.bots() if arena._ready(bot, busy)]
        return {bot.name: arena._candidate(bot, busy).slots for bot in bots}

    # A newcomer offering 8 games still has one slot: its validation pair comes first.
    assert free_slots() == {"many": 3, "one": 1, "new": 1, "hosted1": 1}
    arena.playing = {1: ("many", "x"), 2: ("many", "y"), 3: ("new", "hosted1")}
    # Two pairs held of three: one more; a newcomer on its validation pair waits for its end,
    # and a hosted bot plays one pair at a time.
    assert free_slots() == {"many": 1, "one": 1}
    arena.playing[4] = ("many", "one")
    assert free_slots() == {}
    store.close()
