"""Clocks owned by the referee: limits, the bank, defaults on timeout, forfeits, heartbeats, reconnection."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from pathlib import Path

import grpc
from structlog.testing import capture_logs

from referee.codec import pb
from referee.replay import read_replay
from referee.replay.rerun import rerun
from referee.rules import Phase
from tests.server.support import CALM, Bot, K, Policy, first_policy, join, random_policy, referee, run

FAST = dataclasses.replace(CALM, decision_ms=40, window_ms=40, grace_ms=10, bank_ms=0)
ROUND = '{"match_mode": "fixed_rounds:1"}'


class FakeClock:
    """A monotonic clock that moves only when told to."""

    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def test_timeouts_take_the_engines_default_and_count_violations() -> None:
    async def scenario() -> None:
        with capture_logs() as logs:
            async with referee(FAST) as ref:
                response = await ref.create(rules_json=ROUND, seed="11")
                policies = [random_policy(f"t/{s}") for s in range(3)] + [None]
                bots = await join(ref, list(response.seat_tokens), policies)
                table = ref.table(response.match_id)
                tasks = [asyncio.create_task(bot.play()) for bot in bots]
                # The silent seat 3 reads but never answers: wait for the defaults to pile up.
                async with asyncio.timeout(20):
                    while sum(r["kind"] == "violation" for r in table.records) < 8:
                        await asyncio.sleep(0.02)
                assert table.status == "running"  # max_violations = 0: never a forfeit
                for task in tasks:
                    task.cancel()
        violations = [r for r in table.records if r["kind"] == "violation"]
        assert {r["seat"] for r in violations} == {3}
        # The first defaults (R-DEF-1): no Grand Tichu, no Tichu, the three lowest cards.
        assert [r["default"] for r in violations[:2]] == ["no_grand_tichu", "no_tichu"]
        assert violations[2]["default"].startswith("exchange 0:")
        assert all(
            r["default"] in ("decline", "pass") or r["default"].startswith("play") for r in violations[3:]
        )
        stats = table.statistics()["seats"]
        assert stats[3]["timeouts"] >= 8 and stats[3]["decisions"] == 0
        timed_out = [e for e in logs if e["event"] == "decision_timed_out"]
        assert len(timed_out) >= 8
        assert all(e["seat"] == 3 and e["match_id"] == response.match_id for e in timed_out)
        assert timed_out[0]["kind"] == "grand_tichu" and timed_out[0]["default"] == "no_grand_tichu"

    run(scenario())


def test_a_team_forfeits_after_too_many_violations() -> None:
    async def scenario() -> None:
        clock = dataclasses.replace(FAST, max_violations=2)
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
            violations = [r for r in ref.table(response.match_id).records if r["kind"] == "violation"]
            assert len(violations) == 3

    run(scenario())


def test_late_answers_are_rejected_as_late() -> None:
    async def scenario() -> None:
        async with referee(FAST) as ref:
            response = await ref.create(seed="3")
            bots = await join(ref, list(response.seat_tokens), [None] * 4)
            request = await bots[0].request(K.DECISION_KIND_GRAND_TICHU)
            await bots[0].request(K.DECISION_KIND_TICHU_STEP)  # everyone timed out meanwhile
            await bots[0].decide(request, request.legal_actions[1], request.state_version)
            rejection = await bots[0].rejection()
            assert rejection.reason == pb.REJECTION_REASON_LATE
            assert rejection.request_id == request.request_id

    run(scenario())


def test_the_bank_pays_for_overruns_and_requests_show_what_is_left() -> None:
    async def scenario() -> None:
        clock = FakeClock()
        settings = dataclasses.replace(CALM, decision_ms=1000, bank_ms=3000, grace_ms=0)
        async with referee(settings, now=clock) as ref:
            table, tokens = ref.create_here(seed="9")
            bots = await join(ref, tokens, [None] * 4)
            requests = [await bot.request(K.DECISION_KIND_GRAND_TICHU) for bot in bots]
            assert {(r.deadline_ms, r.bank_left_ms) for r in requests} == {(4000, 3000)}
            clock.t += 2.5  # seat 0 thinks 2.5 s: 1.5 s over its limit comes out of its bank
            await bots[0].decide(requests[0], requests[0].legal_actions[1])
            for bot, request in zip(bots[1:], requests[1:], strict=True):
                await bot.decide(request, request.legal_actions[1])
            step = await bots[0].request(K.DECISION_KIND_TICHU_STEP)
            assert (step.deadline_ms, step.bank_left_ms) == (2500, 1500)
            assert table.statistics()["seats"][0]["bank_left_ms"] == 1500
            # Nobody answers the Tichu question: past limit + bank every seat gets the default.
            clock.t += 4.0
            table.tick()
            exchange = await bots[0].request(K.DECISION_KIND_EXCHANGE)
            assert exchange.bank_left_ms == 0 and exchange.deadline_ms == 1000
            assert list(exchange.exchange_to) == [1, 2, 3] and exchange.exchange_give == 3
            assert not exchange.legal_actions
            assert table.state.phase is Phase.EXCHANGE
            assert [r["seat"] for r in table.records if r["kind"] == "violation"] == [0, 1, 2, 3]

    run(scenario())


def test_a_stalled_stream_is_dropped_and_the_others_are_told() -> None:
    async def scenario() -> None:
        settings = dataclasses.replace(CALM, heartbeat_interval_ms=200, heartbeat_timeout_ms=1_500)
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

            async with asyncio.timeout(5):
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
            records = ref.table(response.match_id).records
            connections = [(r["seat"], r["connected"]) for r in records if r["kind"] == "connection"]
            assert connections[-2:] == [(2, False), (2, True)]
            assert ref.table(response.match_id).statistics()["seats"][2]["reconnections"] == 1

    run(scenario())


def test_no_reconnection_after_the_grace_period() -> None:
    async def scenario() -> None:
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

    run(scenario())


def test_a_request_clock_starts_when_it_leaves_the_referee_not_when_it_is_made() -> None:
    """Time a request waits in the referee's own outbox is not charged to the bot."""

    async def scenario() -> None:
        clock = FakeClock()
        settings = dataclasses.replace(CALM, decision_ms=1000, bank_ms=0, grace_ms=0)
        async with referee(settings, now=clock) as ref:
            table, tokens = ref.create_here(seed="9")
            bots = await join(ref, tokens, [None] * 4)
            await bots[0].request(K.DECISION_KIND_GRAND_TICHU)
            open_request = table._pending[0]
            made_at = open_request.sent_at
            # As if the request had waited 0.8 s behind the referee's queue before gRPC took it.
            table.delivered(0, open_request.request_id, made_at + 0.8)
            assert open_request.sent_at == made_at + 0.8
            clock.t = made_at + 1.5  # 1.5 s after it was made, 0.7 s after it left: not late
            table.tick()
            await asyncio.sleep(0.1)

            def late() -> list[int]:
                return sorted(r["seat"] for r in table.records if r["kind"] == "violation")

            assert late() == [1, 2, 3]  # the others' clocks started when their requests were made
            clock.t = made_at + 1.9  # 1.1 s after it left: late, the default is taken
            table.tick()
            await asyncio.sleep(0.1)
            assert late() == [0, 1, 2, 3]

    run(scenario())


def test_a_match_whose_seats_do_not_all_come_ends_at_the_start_timeout(tmp_path: Path) -> None:
    clock = dataclasses.replace(CALM, start_timeout_ms=300)

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
                await bot.until(lambda m: m.WhichOneof("kind") == "result", timeout_s=5)
            for match_id, winner, forfeiting, absent in (
                (present.match_id, 0, 1, [1, 3]),
                (empty.match_id, -1, -1, [0, 1, 2, 3]),
            ):
                table = ref.table(match_id)
                async with asyncio.timeout(5):
                    await table.finished.wait()
                assert table.result is not None
                assert (table.result.winner, table.result.forfeiting_team) == (winner, forfeiting)
                assert table.result.forfeit == (forfeiting >= 0)
                assert table.state_version == 0  # no card was dealt to a decision
                replay = read_replay(tmp_path / f"{match_id}.jsonl")
                assert replay.result is not None and replay.result["absent"] == absent
                rerun(replay)  # and the replay verifies
            seats = ", ".join(str(s) for s in [1, 3])
            assert bots[0].result is not None
            assert bots[0].result.reason == f"seat {seats} did not connect within 0.3 s: team B forfeits"
            # A late bot is told the result, and the seat is not taken any more.
            late = Bot(ref, tokens[3])
            await late.open()
            await late.until(lambda m: m.WhichOneof("kind") == "result", timeout_s=5)

    run(scenario())


def test_the_start_timeout_can_be_off_and_a_match_then_waits() -> None:
    clock = dataclasses.replace(CALM, start_timeout_ms=0)

    async def scenario() -> None:
        async with referee(clock) as ref:
            response = await ref.create(seed="patient")
            table = ref.table(response.match_id)
            await asyncio.sleep(0.5)
            assert table.status == "waiting" and table.result is None

    run(scenario())
