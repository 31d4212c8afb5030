"""Clocks over the wire: timeouts and their defaults, forfeits, late answers, heartbeats,
reconnection and the start timeout, end to end through a real server and real streams.

The exact timing (deadlines to the millisecond, the bank, a request's delivery lag, window ends)
is tested on the match core with explicit times in tests/match/. Here a seat that must answer
in time has at least a second of limit and a second of grace, and a timeout that must happen
comes from a seat that says nothing, so a loaded machine can neither miss one nor cause one.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
from pathlib import Path

import grpc
from structlog.testing import capture_logs

from referee.match.moves import rerun
from referee.match.outcome import Termination
from referee.match.records import Connected, Disconnected, Header, Record, ViolationRecord
from referee.replay import read_replay
from referee.rules import DecisionKind
from referee.scripted import K, Policy, first_policy, random_policy
from referee.server.table import Table
from referee.wire.tichu.v1 import referee_pb2 as pb
from tests.server.support import CALM, Bot, join, referee, run

# Answers that must arrive in time get limit + grace = 2 s; a silent seat times out every 2 s.
PROMPT = dataclasses.replace(CALM, decision_ms=1_000, bank_ms=0, grace_ms=1_000, window_ms=1_000)
ROUND = '{"match_mode": "fixed_rounds:1"}'


def records_of(table: Table) -> tuple[Header, list[Record]]:
    """A table's header and records so far (the test's referee keeps them)."""
    header, *records = table.records
    assert isinstance(header, Header)
    return header, [r for r in records if not isinstance(r, Header)]


def violations_of(table: Table) -> list[ViolationRecord]:
    """The timeouts a table has recorded."""
    return [r for r in table.records if isinstance(r, ViolationRecord)]


def test_a_silent_seats_timeouts_take_the_engines_default_and_are_counted() -> None:
    async def scenario() -> None:
        with capture_logs() as logs:
            async with referee(PROMPT) as ref:
                response = await ref.create(rules_json=ROUND, seed="11")
                policies = [random_policy(f"t/{s}") for s in range(3)] + [None]
                bots = await join(ref, list(response.seat_tokens), policies)
                table = ref.table(response.match_id)
                tasks = [asyncio.create_task(bot.play()) for bot in bots]
                # The silent seat 3 reads but never answers: the first three defaults are the
                # Grand Tichu, the pre-step and the exchange.
                async with asyncio.timeout(60):
                    while len(violations_of(table)) < 3:
                        await asyncio.sleep(0.05)
                assert table.status == "running"  # max_violations = 0: never a forfeit
                for task in tasks:
                    task.cancel()
                header, records = records_of(table)
        violations = violations_of(table)
        assert {r.seat for r in violations} == {3}
        # R-DEF-1: no Grand Tichu, no Tichu, the three lowest cards.
        assert [r.decision for r in violations[:3]] == [
            DecisionKind.GRAND_TICHU,
            DecisionKind.TICHU_STEP,
            DecisionKind.EXCHANGE,
        ]
        assert [str(r.default) for r in violations[:2]] == ["no_grand_tichu", "no_tichu"]
        assert str(violations[2].default).startswith("exchange 0:")
        # And they are the engine's defaults: the replay so far re-runs, defaults checked.
        assert table.match.secret is not None  # the seed is revealed only at the end
        rerun(header, records, check_result=False, seed=table.match.secret.seed)
        stats = table.statistics()["seats"]
        assert stats[3]["timeouts"] >= 3 and stats[3]["decisions"] == 0
        timed_out = [e for e in logs if e["event"] == "decision_timed_out"]
        assert len(timed_out) >= 3
        assert all(e["seat"] == 3 and e["match_id"] == response.match_id for e in timed_out)
        assert timed_out[0]["kind"] == "grand_tichu" and timed_out[0]["default"] == "no_grand_tichu"

    run(scenario())


def test_a_team_forfeits_after_too_many_violations() -> None:
    async def scenario() -> None:
        clock = dataclasses.replace(PROMPT, max_violations=2)
        async with referee(clock) as ref:
            response = await ref.create(seed="5")
            policies: list[Policy | None] = [random_policy(f"f/{s}") for s in range(4)]
            policies[1] = None
            bots = await join(ref, list(response.seat_tokens), policies)
            await asyncio.gather(*(bot.play() for bot in bots))
            result = bots[0].result
            assert result is not None
            assert result.forfeit and result.forfeiting_team == 1 and result.winner == 0
            assert "seat 1" in result.reason
            # Every seat hears the result, and then its stream ends normally.
            assert all(bot.result == result for bot in bots)
            assert all(bot.error is None for bot in bots)
            violations = violations_of(ref.table(response.match_id))
            assert [(v.seat, v.count) for v in violations] == [(1, 1), (1, 2), (1, 3)]

    run(scenario())


def test_late_answers_are_rejected_as_late_and_requests_show_their_clocks() -> None:
    async def scenario() -> None:
        # Nobody answers in time on purpose: a small limit, which no machine can miss.
        clock = dataclasses.replace(CALM, decision_ms=200, bank_ms=300, grace_ms=1_000)
        async with referee(clock) as ref:
            response = await ref.create(seed="3")
            bots = await join(ref, list(response.seat_tokens), [None] * 4)
            request = await bots[0].request(K.DECISION_KIND_GRAND_TICHU)
            assert (request.deadline_ms, request.bank_left_ms) == (500, 300)
            step = await bots[0].request(K.DECISION_KIND_TICHU_STEP)  # everyone timed out meanwhile
            assert (step.deadline_ms, step.bank_left_ms) == (200, 0)  # a timeout empties the bank
            await bots[0].decide(request, request.legal_actions[1], request.state_version)
            rejection = await bots[0].rejection()
            assert rejection.reason == pb.REJECTION_REASON_LATE
            assert rejection.request_id == request.request_id

    run(scenario())


def test_a_stalled_stream_is_dropped_and_the_others_are_told() -> None:
    async def scenario() -> None:
        settings = dataclasses.replace(CALM, heartbeat_interval_ms=500, heartbeat_timeout_ms=2_000)
        async with referee(settings) as ref:
            response = await ref.create(seed="4")
            bots = await join(ref, list(response.seat_tokens), [None] * 4)
            # Seats 0-2 read (and so answer pings); seat 3 reads nothing, so it never answers.
            readers = [
                asyncio.create_task(
                    bot.until(lambda m: m.HasField("seat_status") and not m.seat_status.connected)
                )
                for bot in bots[:3]
            ]
            statuses = await asyncio.gather(*readers)
            assert all((m.seat_status.seat, m.seat_status.connected) == (3, False) for m in statuses)
            bots[3].answer_pings = False
            while await bots[3].read() is not None:
                pass
            assert bots[3].error is not None and bots[3].error.code() == grpc.StatusCode.UNAVAILABLE
            assert "Pong" in (bots[3].error.details() or "")
            gone = [r for r in ref.table(response.match_id).records if isinstance(r, Disconnected)]
            assert [(r.seat, r.why, r.status) for r in gone] == [(3, "stalled", "UNAVAILABLE")]

    run(scenario())


def test_reconnecting_with_the_same_token_restores_the_seat() -> None:
    async def scenario() -> None:
        async with referee() as ref:
            response = await ref.create(rules_json=ROUND, seed="21")
            tokens = list(response.seat_tokens)
            bots = await join(ref, tokens, [random_policy(f"r/{s}") for s in range(4)])
            others = [bots[0], bots[1], bots[3]]
            playing = [asyncio.create_task(bot.play()) for bot in others]
            request = await bots[2].request(K.DECISION_KIND_GRAND_TICHU)
            await bots[2].close()

            def statuses(bot: Bot) -> list[tuple[int, bool]]:
                return [
                    (m.seat_status.seat, m.seat_status.connected)
                    for m in bot.received
                    if m.HasField("seat_status")
                ]

            async with asyncio.timeout(30):
                while not all((2, False) in statuses(bot) for bot in others):
                    await asyncio.sleep(0.01)
            back = Bot(ref, tokens[2], random_policy("r/2b"), name="bot2")
            await back.open()
            welcome = await back.until(lambda m: m.HasField("welcome"))
            assert welcome.welcome.seat == 2 and welcome.welcome.match_id == response.match_id
            snapshot = await back.until(lambda m: m.HasField("snapshot"))
            obs = json.loads(snapshot.snapshot.observation_json)
            assert obs["seat"] == 2 and len(obs["hand"].split()) == 8
            # The open request comes back with the snapshot, its clock still running.
            assert [p.request_id for p in snapshot.snapshot.pending] == [request.request_id]
            assert snapshot.snapshot.pending[0].deadline_ms <= request.deadline_ms
            await back.decide(snapshot.snapshot.pending[0], snapshot.snapshot.pending[0].legal_actions[1])
            await asyncio.gather(back.play(), *playing)
            assert back.result is not None and back.result == bots[0].result
            for bot in others:
                assert statuses(bot)[-2:] == [(2, False), (2, True)]
            table = ref.table(response.match_id)
            connections = [
                (r.seat, isinstance(r, Connected))
                for r in table.records
                if isinstance(r, Connected | Disconnected)
            ]
            assert connections[-2:] == [(2, False), (2, True)]
            assert table.statistics()["seats"][2]["reconnections"] == 1

    run(scenario())


def test_no_reconnection_after_the_grace_period() -> None:
    async def scenario() -> None:
        # The seat stays away on purpose: a small grace, which no machine can miss (a Hello that
        # comes late finds the grace over, whether or not the referee's timer has fired).
        settings = dataclasses.replace(CALM, reconnect_grace_ms=100)
        async with referee(settings) as ref:
            response = await ref.create(seed="8")
            bots = await join(ref, list(response.seat_tokens), [None] * 4)
            await bots[1].close()
            await bots[0].until(lambda m: m.HasField("seat_status") and not m.seat_status.connected)
            await asyncio.sleep(0.3)
            late = Bot(ref, response.seat_tokens[1])
            await late.open()
            assert await late.read() is None
            assert late.error is not None and late.error.code() == grpc.StatusCode.UNAUTHENTICATED
            assert "grace" in (late.error.details() or "")

    run(scenario())


def test_a_match_whose_seats_do_not_all_come_ends_at_the_start_timeout(tmp_path: Path) -> None:
    # Three seconds for the seats that do come to say Hello.
    clock = dataclasses.replace(CALM, start_timeout_ms=3_000)

    async def scenario() -> None:
        async with referee(clock, replay_dir=tmp_path) as ref:
            # Team A's seats come; seat 1 comes and goes; seat 3 never comes.
            present = await ref.create(seed="absent-b")
            tokens = list(present.seat_tokens)
            bots = [Bot(ref, tokens[0], first_policy), Bot(ref, tokens[2], first_policy)]
            leaver = Bot(ref, tokens[1])
            for bot in (*bots, leaver):
                await bot.open()
                await bot.until(lambda m: m.WhichOneof("kind") == "welcome")
            await leaver.close()
            # Nobody comes at all.
            empty = await ref.create(seed="absent-all")
            for bot in bots:
                await bot.until(lambda m: m.WhichOneof("kind") == "result", timeout_s=30)
            for match_id, winner, forfeiting, absent in (
                (present.match_id, 0, 1, (1, 3)),
                (empty.match_id, None, None, (0, 1, 2, 3)),
            ):
                table = ref.table(match_id)
                async with asyncio.timeout(30):
                    await table.finished.wait()
                assert table.result is not None
                assert (table.result.winner, table.result.forfeiting_team) == (winner, forfeiting)
                assert table.result.forfeit == (forfeiting is not None)
                assert table.result.outcome.termination is Termination.NO_SHOW
                assert table.state_version == 0  # no card was dealt to a decision
                replay = read_replay(tmp_path / f"{match_id}.jsonl")
                assert replay.result is not None and replay.result.absent == absent
                rerun(replay.header, replay.records)  # and the replay verifies
            assert bots[0].result is not None
            assert bots[0].result.reason == "seat 1, 3 did not connect within 3 s: team B forfeits"
            # A late bot is told the result, and the seat is not taken any more.
            late = Bot(ref, tokens[3])
            await late.open()
            await late.until(lambda m: m.WhichOneof("kind") == "result", timeout_s=30)

    run(scenario())


def test_the_start_timeout_can_be_off_and_a_match_then_waits() -> None:
    clock = dataclasses.replace(CALM, start_timeout_ms=0)

    async def scenario() -> None:
        async with referee(clock) as ref:
            response = await ref.create(seed="patient")
            table = ref.table(response.match_id)
            await asyncio.sleep(0.5)
            assert table.status == "waiting" and table.result is None
            assert table.match.next_deadline() is None

    run(scenario())
