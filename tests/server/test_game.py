"""A whole game over gRPC between four random bots, with spectators, standings and logs."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable

from structlog.testing import capture_logs

from referee.match.records import DecisionRecord, EventRecord, Line, WindowRecord
from referee.rules import Event, event_from_json
from referee.scripted import random_policy
from referee.wire.tichu.v1 import referee_pb2 as pb
from tests.server.support import ORGANISER_METADATA, Bot, join, referee, run

PRIVATE = {"cards_dealt", "exchange_submitted", "cards_received"}


async def spectate(stub: object, match_id: str, organiser: bool, into: list[pb.WatchMessage]) -> None:
    """Collect a Watch stream into a list."""
    metadata = ORGANISER_METADATA if organiser else ()
    async for msg in stub.Watch(pb.WatchRequest(match_id=match_id), metadata=metadata):  # type: ignore[attr-defined]
        into.append(msg)


def test_four_random_bots_play_a_game_to_the_end() -> None:
    async def scenario() -> None:
        with capture_logs() as logs:
            async with referee() as ref:
                response = await ref.create(
                    rules_json='{"target_score": 200}',
                    seed="2024",
                    bot_names=["north", "east", "south", "west"],
                    watch_delay_events=5,
                )
                match_id = response.match_id
                public: list[pb.WatchMessage] = []
                full: list[pb.WatchMessage] = []
                watchers = [
                    asyncio.create_task(spectate(ref.stub, match_id, False, public)),
                    asyncio.create_task(spectate(ref.stub, match_id, True, full)),
                ]
                bots = await join(
                    ref, list(response.seat_tokens), [random_policy(f"g/{s}") for s in range(4)]
                )
                await asyncio.sleep(0.2)
                # The deal: one public event and four private ones. The public view is 5 events behind.
                assert [m.event.type for m in full] == ["round_started"] + ["cards_dealt"] * 4
                assert public == []
                await asyncio.gather(*(bot.play() for bot in bots))
                await asyncio.wait_for(asyncio.gather(*watchers), 5)
                table = ref.table(match_id)
                listing = await ref.stub.ListMatches(pb.ListMatchesRequest(), metadata=ORGANISER_METADATA)
                late = Bot(ref, response.seat_tokens[0])
                await late.open()
                while await late.read() is not None:
                    pass

        result = bots[0].result
        assert result is not None and all(bot.result == result for bot in bots)
        assert all(bot.error is None for bot in bots)
        a, b = result.scores
        assert max(a, b) >= 200 and a != b and result.winner == (0 if a > b else 1)
        assert not result.forfeit and result.forfeiting_team == -1

        for bot in bots:
            events = [m.event for m in bot.received if m.HasField("event")]
            assert [e.seq for e in events] == list(range(1, len(events) + 1))
            decoded: list[Event] = [event_from_json(json.loads(e.json)) for e in events]
            assert all(event.visible_to(bot.seat) for event in decoded)
            assert decoded[-1].to_json() == {"type": "game_over", "winner": result.winner, "totals": [a, b]}
            versions = [e.state_version for e in events]
            assert versions == sorted(versions)

        all_events = [r for r in table.records if isinstance(r, EventRecord)]
        assert [m.event.type for m in full[:-1]] == [r.event.type for r in all_events]
        assert full[-1].result == result
        public_events = [m.event for m in public[:-1]]
        assert public[-1].result == result
        assert [e.seq for e in public_events] == list(range(1, len(public_events) + 1))
        assert [e.type for e in public_events] == [r.event.type for r in all_events if r.private_to is None]
        assert not PRIVATE & {e.type for e in public_events}

        summary = json.loads(result.summary_json)
        seats = summary["seats"]
        assert [s["bot_name"] for s in seats] == ["north", "east", "south", "west"]
        assert all(s["decisions"] > 0 and s["timeouts"] == 0 and s["rejections"] == 0 for s in seats)
        assert all(0 <= s["think_ms_p50"] <= s["think_ms_p99"] for s in seats)
        decisions = [r for r in table.records if isinstance(r, DecisionRecord)]
        window_answers = [t for r in table.records if isinstance(r, WindowRecord) for t in r.times_ms]
        assert sum(s["decisions"] for s in seats) == len(decisions) + len(window_answers)
        points = sum(s["points_won"] for s in seats)
        assert points % 5 == 0

        [info] = listing.matches
        assert (info.match_id, info.status, list(info.scores)) == (match_id, "finished", [a, b])
        assert [s.bot_name for s in info.seats] == ["north", "east", "south", "west"]

        # A bot that comes back after the end gets the picture and the result, then the stream ends.
        kinds = [m.WhichOneof("kind") for m in late.received]
        assert kinds == ["welcome", "snapshot", "result"] and late.error is None

        names = [e["event"] for e in logs]
        assert names.count("seat_connected") == 4
        assert "match_started" in names and "match_finished" in names
        finished = next(e for e in logs if e["event"] == "match_finished")
        assert finished["match_id"] == match_id and finished["scores"] == [a, b]

    run(scenario())


def test_the_tournament_preset_plays_its_fixed_rounds() -> None:
    async def scenario() -> None:
        async with referee() as ref:
            response = await ref.create(preset="tournament", seed="17")
            bots = await join(ref, list(response.seat_tokens), [random_policy(f"tp/{s}") for s in range(4)])
            welcome = next(m.welcome for m in bots[0].received if m.HasField("welcome"))
            assert welcome.rules.preset == "tournament" and welcome.team == 0
            await asyncio.gather(*(bot.play() for bot in bots))
            rounds = [m for m in bots[0].received if m.HasField("event") and m.event.type == "round_scored"]
            assert len(rounds) == 4
            assert bots[0].result is not None

    run(scenario())


async def two_rounds(
    seed: str, open_seat: Callable[[int, Bot], Awaitable[None]]
) -> tuple[list[Bot], list[Line]]:
    """A match of two rounds between random seats, each opened by `open_seat`; the bots and the
    table's records."""
    async with referee() as ref:
        response = await ref.create(rules_json='{"match_mode": "fixed_rounds:2"}', seed=seed)
        bots = [
            Bot(ref, token, random_policy(f"{seed}/{seat}"))
            for seat, token in enumerate(response.seat_tokens)
        ]
        for seat, bot in enumerate(bots):
            await open_seat(seat, bot)
        await asyncio.gather(*(bot.play() for bot in bots))
        return bots, ref.table(response.match_id).records


def assert_one_result_and_every_event_once(bots: list[Bot], records: list[Line]) -> None:
    """Every seat has the same result, and saw every event it may see, in order, exactly once."""
    assert all(bot.result is not None and bot.result == bots[0].result for bot in bots)
    for seat, bot in enumerate(bots):
        seen = [json.loads(m.event.json) for m in bot.received if m.WhichOneof("kind") == "event"]
        expected = [r.data for r in records if isinstance(r, EventRecord) and r.private_to in (None, seat)]
        assert seen == expected, seat


def test_bundles_only_reach_bots_that_accept_them_and_carry_the_same_messages() -> None:
    async def open_seat(seat: int, bot: Bot) -> None:
        bot.accept_bundles = seat % 2 == 0
        await bot.open()

    bots, records = run(two_rounds("bundles", open_seat))
    # Bot.read asserts that a bot that did not accept Bundles never gets one.
    assert [bot.bundles > 0 for bot in bots] == [True, False, True, False]
    # Unbundled, each seat sees every event it may see, in order, exactly once.
    assert_one_result_and_every_event_once(bots, records)


def test_seats_that_ask_the_referee_to_decline_and_pass_are_not_asked_and_see_every_event() -> None:
    """Hello.referee_declines, referee_passes and defer_events over real gRPC, beside seats that
    ask for none of them (the protocol as it was): the same game for all four."""

    async def open_seat(seat: int, bot: Bot) -> None:
        asks = seat % 2 == 0
        hello = pb.Hello(
            token=bot.token,
            bot_name=f"bot{seat}",
            protocol_version=1,
            accept_bundles=True,
            referee_declines=asks,
            referee_passes=asks,
            defer_events=asks,
        )
        await bot.open(hello)

    bots, records = run(two_rounds("delivery", open_seat))

    def only(request: pb.DecisionRequest, kind: str) -> bool:
        # A Tichu call is not a listed action but the request's can_call_tichu.
        return [a.WhichOneof("kind") for a in request.legal_actions] == [kind] and not request.can_call_tichu

    for seat, bot in enumerate(bots):
        requests = [m.request for m in bot.received if m.WhichOneof("kind") == "request"]
        forced_passes = [r for r in requests if r.kind == pb.DECISION_KIND_PLAY and only(r, "pass_turn")]
        bare_windows = [r for r in requests if r.kind == pb.DECISION_KIND_BOMB_WINDOW and only(r, "decline")]
        assert (not forced_passes and not bare_windows) if seat % 2 == 0 else (forced_passes and bare_windows)
    # Held or not, each seat hears every event it may see, in order, exactly once.
    assert_one_result_and_every_event_once(bots, records)
    by_referee = {r.seat for r in records if isinstance(r, DecisionRecord) and r.by_referee}
    declined_for = {s for r in records if isinstance(r, WindowRecord) for s in r.referee_declined}
    assert by_referee == declined_for == {0, 2}
