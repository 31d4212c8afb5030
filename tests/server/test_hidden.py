"""Hidden information: across many games no seat receives a card it may not know (R-INFO-1).

The referee's own records are the ground truth: for each seat, the cards it knows at each state
version of each round are its dealt cards, its exchange, and every card played so far. Every
card named anywhere in any message a seat receives (inside JSON strings too) must be among them.
"""

from __future__ import annotations

import asyncio
import bisect
import json
import multiprocessing
from collections import defaultdict
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import grpc

from referee.match.records import (
    DecisionRecord,
    EventRecord,
    Line,
    RejectionRecord,
    ViolationRecord,
    WindowRecord,
    record_from_json,
)
from referee.scripted import random_policy
from referee.server.codec import result_to_proto
from referee.wire.tichu.v1 import referee_pb2 as pb
from referee.wire.tichu.v1 import referee_pb2_grpc
from tests.server.support import Bot, Referee, cards_in, join, referee, run

GAMES = 200  # "hundreds of games", every message of each checked
# The referee's clock stands still: no decision, window, heartbeat or reconnect deadline can
# fire, however slowly a loaded machine runs the bots, so every game is played to its end by
# the bots' own answers. What this test checks is what the seats are sent, not when.
FROZEN_AT = 1_000.0
# Hang guards only (the test never waits for one of them to pass): a Hello, a Welcome, the whole run.
SLOW_MACHINE_S = 600.0
ROUND = '{"match_mode": "fixed_rounds:1"}'
Known = dict[int, dict[int, tuple[list[int], list[frozenset[str]]]]]  # seat -> round -> (versions, sets)


def known_cards(records: list[Line], players: int = 4) -> Known:
    """Per seat and round, the cards the seat may know after each state version."""
    known: Known = defaultdict(dict)
    current: list[set[str]] = [set() for _ in range(players)]
    round_no = 0
    for record in records:
        if not isinstance(record, EventRecord):
            continue
        event: dict[str, Any] = record.data
        etype = event["type"]
        if etype == "round_started":
            round_no = event["round"]
            current = [set() for _ in range(players)]
        elif etype == "cards_dealt":
            current[event["seat"]] |= set(event["cards"].split())
        elif etype == "exchange_submitted":
            current[event["seat"]] |= {card for _, card in event["gifts"]}
        elif etype == "cards_received":
            current[event["seat"]] |= {card for _, card in event["received"]}
        elif etype == "played":
            for seen in current:
                seen |= set(event["cards"].split())
        for seat in range(players):
            versions, sets = known[seat].setdefault(round_no, ([], []))
            if versions and versions[-1] == record.version:
                sets[-1] = frozenset(current[seat])
            else:
                versions.append(record.version)
                sets.append(frozenset(current[seat]))
    return known


def allowed(known: Known, seat: int, round_no: int, version: int) -> frozenset[str]:
    """What `seat` may know at `version` of `round_no`."""
    versions, sets = known[seat].get(round_no, ([], []))
    index = bisect.bisect_right(versions, version) - 1
    return sets[index] if index >= 0 else frozenset()


def leaks(bot: Bot, known: Known, checked: list[int] | None = None) -> list[str]:
    """Every card in a message to this bot that its seat could not know then (counted into `checked`)."""
    found = []
    round_no = 0
    for msg in bot.received:
        kind = msg.WhichOneof("kind")
        version = -1
        if kind == "event":
            version = msg.event.state_version
            if msg.event.type == "round_started":
                round_no = json.loads(msg.event.json)["round"]
        elif kind == "snapshot":
            version = msg.snapshot.state_version
            round_no = json.loads(msg.snapshot.observation_json)["round"]
        elif kind == "request":
            version = msg.request.state_version
        elif kind == "rejection":
            version = msg.rejection.state_version
        cards = cards_in(msg)
        if checked is not None:
            checked[0] += len(cards)
        permitted = allowed(known, bot.seat, round_no, version) if version >= 0 else frozenset()
        if cards - permitted:
            found.append(f"seat {bot.seat} {kind} v{version}: {sorted(cards - permitted)}")
    return found


def test_the_checker_catches_a_leak() -> None:
    lines = [
        {"kind": "event", "version": 0, "event": {"type": "round_started", "round": 0, "dealer": 0}},
        {
            "kind": "event",
            "version": 0,
            "event": {"type": "cards_dealt", "seat": 0, "cards": "2j 3j", "stage": "first"},
        },
        {
            "kind": "event",
            "version": 0,
            "event": {"type": "cards_dealt", "seat": 1, "cards": "4j 5j", "stage": "first"},
        },
    ]
    known = known_cards([record_from_json(line) for line in lines])
    bot = Bot.__new__(Bot)
    bot.seat = 0
    ok = pb.RefereeMessage(event=pb.GameEvent(seq=1, state_version=0, type="x", json='{"cards": "2j 3j"}'))
    bad = pb.RefereeMessage(event=pb.GameEvent(seq=2, state_version=0, type="x", json='{"hand": "3j 5j"}'))
    bot.received = [ok]
    assert leaks(bot, known) == []
    bot.received = [ok, bad]
    assert leaks(bot, known) == ["seat 0 event v0: ['5j']"]
    # A chain head is base64url: "-9s_" in it is chance, not a card (CI once read one as a leak).
    proof = pb.RefereeMessage(result=pb.MatchResult(chain_head="Zx-9s_4MJ5", summary_json='{"hand": "5j"}'))
    bot.received = [proof]
    assert leaks(bot, known) == ["seat 0 result v-1: ['5j']"]


def play_games(port: int, games: list[tuple[str, list[str]]]) -> list[list[tuple[int, list[bytes]]]]:
    """In a child process: random bots play the games; what each bot received, serialized."""

    async def main() -> list[list[tuple[int, list[bytes]]]]:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            ref = Referee(None, channel, referee_pb2_grpc.RefereeStub(channel))  # type: ignore[no-untyped-call]

            async def game(name: str, tokens: list[str]) -> list[tuple[int, list[bytes]]]:
                # 400 streams open at once: on a loaded machine a Welcome can take long.
                policies = [random_policy(f"{name}/{s}") for s in range(len(tokens))]
                bots = await join(ref, tokens, policies, timeout_s=SLOW_MACHINE_S)
                await asyncio.gather(*(bot.play() for bot in bots))
                return [(bot.seat, [m.SerializeToString() for m in bot.received]) for bot in bots]

            return await asyncio.gather(*(game(name, tokens) for name, tokens in games))

    return asyncio.run(main())


def test_no_seat_ever_receives_a_card_it_may_not_know() -> None:
    async def scenario() -> None:
        async with referee(now=lambda: FROZEN_AT, hello_timeout_s=SLOW_MACHINE_S) as ref:
            assert ref.server is not None
            games = []
            for number in range(GAMES):
                table, tokens = ref.create_here(rules_json=ROUND, seed=f"hidden-{number}")
                games.append((table.match_id, tokens))
            # The bots run in a second process, so that both cores work (the server is this one).
            # In batches of 100 concurrent games, so that joining never waits on 800 streams.
            played: list[list[tuple[int, list[bytes]]]] = []
            with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
                for start in range(0, len(games), 100):
                    played += await asyncio.get_running_loop().run_in_executor(
                        pool, play_games, ref.server.port, games[start : start + 100]
                    )
            problems: list[str] = []
            checked = [0]
            windows = 0
            kinds: set[str] = set()
            bombs = 0
            for (match_id, _), seats in zip(games, played, strict=True):
                table = ref.table(match_id)
                assert table.status == "finished" and table.result is not None, match_id
                records = table.records
                # Random bots pick from the legal actions they are sent: the referee accepts them all.
                assert not any(isinstance(r, RejectionRecord | ViolationRecord) for r in records), match_id
                kinds |= {r.decision.value for r in records if isinstance(r, DecisionRecord)}
                kinds |= {"bomb_window" for r in records if isinstance(r, WindowRecord)}
                bombs += sum(isinstance(r, WindowRecord) and r.bomb is not None for r in records)
                known = known_cards(records)
                for seat, received in seats:
                    bot = Bot.__new__(Bot)
                    bot.seat = seat
                    bot.received = [pb.RefereeMessage.FromString(data) for data in received]
                    assert bot.received[-1].result == result_to_proto(table.result)
                    problems += [f"{match_id} {p}" for p in leaks(bot, known, checked)]
                # Every bomb window went to all of its seats at once, in window order (R-BOMB-5):
                # request ids are handed out in the order the requests are made.
                issued: dict[int, list[tuple[int, int]]] = defaultdict(list)
                for seat, received in seats:
                    for data in received:
                        message = pb.RefereeMessage.FromString(data)
                        request = message.request
                        if message.HasField("request") and request.kind == pb.DECISION_KIND_BOMB_WINDOW:
                            issued[request.state_version].append((request.request_id, seat))
                for r in records:
                    if isinstance(r, WindowRecord) and r.version in issued:
                        assert tuple(seat for _, seat in sorted(issued[r.version])) == r.order, (match_id, r)
                        windows += 1
            assert problems == [], problems[:10]
            assert checked[0] > GAMES * 300 and windows > GAMES * 20 and bombs > 0
            assert kinds == {"grand_tichu", "tichu_step", "exchange", "play", "bomb_window", "dragon_gift"}

    run(scenario(), timeout_s=3 * SLOW_MACHINE_S)
