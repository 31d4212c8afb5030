"""Bounded input over a real server: oversized and ill-formed Hellos, CreateMatch settings out of
range, refusals logged once with the peer, and failed Hellos throttled per peer."""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import socket
from typing import Any

import grpc
import pytest
import structlog
from structlog.testing import capture_logs

from referee.match import PROTOCOL_VERSION
from referee.scripted import random_policy
from referee.server.input_limits import LIMITS, MAX_RECEIVE_BYTES, RANGES
from referee.server.serve import start_server
from referee.server.throttle import BURST, MAX_BACKOFF_S, HelloThrottle
from referee.wire.tichu.v1 import referee_pb2 as pb
from referee.wire.tichu.v1 import referee_pb2_grpc
from tests.server.support import CALM, ORGANISER, ORGANISER_METADATA, Bot, Referee, join, referee, run

HUGE = 2_500_000
ONE_ROUND = '{"match_mode": "fixed_rounds:1"}'


async def refused(ref: Referee, hello: pb.Hello | None, token: str = "") -> grpc.aio.AioRpcError:
    """Open a Play stream with `hello` (None: close it at once) and return how it ended."""
    bot = Bot(ref, token)
    if hello is None:
        bot.call = ref.stub.Play()
        await bot.call.done_writing()
    else:
        with contextlib.suppress(grpc.aio.AioRpcError):  # a throttled call may end before the write
            await bot.open(hello)
    while await bot.read() is not None:
        pass
    assert bot.error is not None, "the stream ended without a status"
    return bot.error


def test_two_seats_with_huge_names_change_nothing_for_anyone_else() -> None:
    async def scenario() -> None:
        async with referee() as ref:
            response = await ref.create(rules_json=ONE_ROUND, seed="7")  # the organiser gave no names
            tokens = list(response.seat_tokens)
            table = ref.table(response.match_id)
            for seat in (0, 1):
                hello = pb.Hello(token=tokens[seat], bot_name="N" * HUGE, protocol_version=PROTOCOL_VERSION)
                error = await refused(ref, hello, tokens[seat])
                # Past gRPC's receive limit: refused before the referee reads it.
                assert error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED, error
            # Under gRPC's limit but over the field's: refused by the referee, naming the field.
            hello = pb.Hello(token=tokens[0], bot_name="N" * 10_000, protocol_version=PROTOCOL_VERSION)
            error = await refused(ref, hello, tokens[0])
            assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
            assert "Hello.bot_name" in (error.details() or "") and "64" in (error.details() or "")
            assert [s.connected for s in table.seat_info()] == [False] * 4
            others = await join(ref, tokens[2:], [random_policy("b/2"), random_policy("b/3")])
            welcome = next(m.welcome for m in others[1].received if m.HasField("welcome"))
            assert [s.bot_name for s in welcome.seats] == ["", "", "bot0", "bot1"]
            listing = await ref.stub.ListMatches(pb.ListMatchesRequest(), metadata=ORGANISER_METADATA)
            assert [m.match_id for m in listing.matches] == [response.match_id]
            # The refused seats come back with proper names, and the game is played to its end.
            bots = [Bot(ref, tokens[s], random_policy(f"b/{s}"), name=f"proper{s}") for s in (0, 1)]
            for bot in bots:
                await bot.open()
            await asyncio.gather(*(bot.play() for bot in [*bots, *others]))
            assert all(bot.result is not None for bot in [*bots, *others])
            assert table.status == "finished" and table.result is not None
            assert [s.bot_name for s in table.seat_info()] == ["proper0", "proper1", "bot0", "bot1"]
            lines = [json.dumps(record.to_json()) for record in table.records]
            assert len(lines) > 50
            assert not [line for line in lines if "N" * 65 in line]
            assert max(map(len, lines)) < 20_000

    run(scenario(), 120)


def test_hello_fields_out_of_bounds_are_refused_naming_the_field() -> None:
    async def scenario() -> None:
        async with referee() as ref:
            response = await ref.create(seed="8")
            token = response.seat_tokens[0]
            cases: list[tuple[dict[str, Any], str]] = [
                ({"token": "t" * 65}, "Hello.token"),
                ({"bot_name": "x" * 65}, "Hello.bot_name"),
                ({"bot_version": "v" * 65}, "Hello.bot_version"),
                ({"bot_name": "evil\x1b[2Jbot"}, "U+001B"),
                ({"bot_name": "two\nlines"}, "U+000A"),
                ({"bot_name": "abc\u202edcba"}, "RIGHT-TO-LEFT OVERRIDE"),
                ({"bot_version": "1.0\x7f"}, "U+007F"),
                ({"bot_name": "c1\x85"}, "U+0085"),
            ]
            for fields, words in cases:
                hello = pb.Hello(**{"token": token, "protocol_version": PROTOCOL_VERSION, **fields})
                error = await refused(ref, hello)
                assert error.code() == grpc.StatusCode.INVALID_ARGUMENT, fields
                assert words in (error.details() or ""), error.details()
            table = ref.table(response.match_id)
            assert [s.connected for s in table.seat_info()] == [False] * 4
            assert len(table.records) == 1  # the header only: no refused Hello left a line
            # A printable name of every script is fine, at its limit.
            bots = await join(ref, list(response.seat_tokens[1:]), [None] * 3)
            named = Bot(ref, token, name="Ünïcødé 名前 ✓" + "x" * (LIMITS["Hello.bot_name"].most - 13))
            await named.open()
            await named.until(lambda m: m.HasField("welcome"))
            assert table.seat_info()[0].bot_name.startswith("Ünïcødé 名前 ✓")
            del bots

    run(scenario())


def test_create_match_settings_out_of_range_are_refused_naming_the_field_and_range() -> None:
    async def scenario() -> None:
        async with referee() as ref:
            clock = pb.ClockSettings
            # Settings CreateMatch must refuse, each just past its bound: no match is made with
            # them and no test waits on them.
            shortest = {name: RANGES[f"clock.{name}"].least - 1 for name in ("decision_ms", "window_ms")}
            cases: list[tuple[dict[str, Any], str]] = [
                ({"rules_json": '{"target_score": 0}'}, "rules.target_score is 0; it must be 1 to 100,000"),
                ({"rules_json": '{"target_score": -5}'}, "rules.target_score is -5"),
                ({"rules_json": '{"target_score": 1000000000}'}, "rules.target_score"),
                ({"rules_json": '{"match_mode": "fixed_rounds:100000"}'}, "rules.fixed_rounds"),
                ({"rules_json": '{"double_victory_points": -1}'}, "rules.double_victory_points"),
                ({"clock": clock(decision_ms=shortest["decision_ms"])}, "decision_ms is 99; it must be"),
                ({"clock": clock(decision_ms=4_000_000_000)}, "100 to 3,600,000"),
                ({"clock": clock(heartbeat_interval_ms=1)}, "0 (no pings) or 500 to"),
                ({"clock": clock(heartbeat_timeout_ms=0)}, "clock.heartbeat_timeout_ms"),
                ({"clock": clock(window_ms=shortest["window_ms"])}, "clock.window_ms is 99"),
                ({"clock": clock(grace_ms=10_000_000)}, "clock.grace_ms"),
                ({"clock": clock(start_timeout_ms=10)}, "clock.start_timeout_ms"),
                ({"watch_delay_events": 4_000_000_000}, "watch_delay_events"),
                ({"seed": "9" * 5_000}, "CreateMatchRequest.seed is 5,000 characters long; the limit is 128"),
                ({"rules_json": "[" * 3_000 + "]" * 3_000}, "rules_json is 6,000 characters"),
                ({"rules_json": "[" * 2_000 + "]" * 2_000}, "nested too deeply"),
                ({"rules_json": '{"target_score": 1' + "0" * 4_000 + "}"}, "rules.target_score"),
                ({"bot_names": ["a", "b\x1b[31m", "c", "d"]}, "bot_names[1] holds the non-printing"),
                ({"bot_names": ["n"] * 7}, "bot_names is 7 entries"),
                ({"bot_names": ["a", "b", "c", "d" * 65]}, "bot_names[3] is 65 characters"),
                ({"match_id": "m" * 65}, "CreateMatchRequest.match_id"),
                ({"preset": "p" * 33}, "CreateMatchRequest.preset"),
            ]
            for fields, words in cases:
                with pytest.raises(grpc.aio.AioRpcError) as bad:
                    await ref.create(**fields)
                assert bad.value.code() == grpc.StatusCode.INVALID_ARGUMENT, fields
                details = bad.value.details() or ""
                assert words in details, (fields, details)
                assert len(details) <= 300 and "sys.set_int_max_str_digits" not in details
            assert ref.server is not None and ref.server.service.tables == {}
            # In range, at the edges, is accepted.
            edges = clock(decision_ms=100, heartbeat_interval_ms=0, start_timeout_ms=0, grace_ms=60_000)
            made = await ref.create(clock=edges, seed="9" * 128, rules_json='{"target_score": 1}')
            assert ref.table(made.match_id).clock.heartbeat_interval_ms == 0

    run(scenario())


def test_every_refusal_is_logged_once_with_the_peer_and_the_reason() -> None:
    async def scenario() -> None:
        async with referee() as ref:
            assert ref.server is not None
            ref.server.service.hello_timeout_s = 0.2
            response = await ref.create(seed="9")
            with capture_logs() as logs:
                await refused(ref, None)  # closed before a Hello
                silent = ref.stub.Play()  # never says anything: ended when its Hello is late
                with pytest.raises(grpc.aio.AioRpcError) as late:
                    await silent.read()
                assert late.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
                old = pb.Hello(token=response.seat_tokens[0], protocol_version=99)
                assert (await refused(ref, old)).code() == grpc.StatusCode.FAILED_PRECONDITION
                with pytest.raises(grpc.aio.AioRpcError):
                    await ref.stub.ListMatches(pb.ListMatchesRequest())
                with pytest.raises(grpc.aio.AioRpcError):
                    await ref.stub.CreateMatch(
                        pb.CreateMatchRequest(), metadata=(("authorization", "Bearer wrong"),)
                    )
                with pytest.raises(grpc.aio.AioRpcError):
                    await ref.create(seed="1" * 200)
            refusals = [e for e in logs if e["log_level"] == "warning"]
            whys = [(e["event"], e["why"]) for e in refusals]
            assert whys == [
                ("hello_refused", refusals[0]["why"]),
                ("hello_refused", "no Hello within 0.2 s: send a Hello with your seat token first"),
                ("hello_refused", "protocol_version 99 is not supported; this referee speaks 1"),
                ("organiser_refused", 'organisers send "authorization: Bearer <token>"'),
                ("organiser_refused", "wrong organiser token"),
                ("request_refused", refusals[-1]["why"]),
            ], whys
            assert refusals[0]["why"].startswith("the stream ended before a Hello")
            assert "CreateMatchRequest.seed" in refusals[-1]["why"]
            assert all(e["peer"].startswith("ipv4:127.0.0.1:") for e in refusals)

    run(scenario())


def test_a_thousand_failed_hellos_are_throttled_with_a_bounded_log_and_lock_nobody_out() -> None:
    clock = [1000.0]

    async def scenario() -> None:
        async with referee(now=lambda: clock[0]) as ref:
            response = await ref.create(seed="10")
            errors = []
            with capture_logs() as logs:
                for _ in range(1_000):
                    errors.append(await refused(ref, pb.Hello(token="guess")))
                # The flooder shares 127.0.0.1 with the honest seats (as every bot of a tournament
                # does): a Hello with a good token is let in at once, however throttled the address.
                bots = await join(ref, list(response.seat_tokens), [None] * 4)
                assert [b.seat for b in bots] == [0, 1, 2, 3]
                assert ref.server is not None and ref.server.service.hello_throttle.throttled == 1_000 - BURST
                # The flooder kept trying while told to wait: it waits the longest backoff, then
                # its next failure is refused for what it is, and logged again.
                clock[0] += MAX_BACKOFF_S - 1
                still = await refused(ref, pb.Hello(token="guess"))
                assert still.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
                clock[0] += MAX_BACKOFF_S
                again = await refused(ref, pb.Hello(token="guess"))
                assert again.code() == grpc.StatusCode.UNAUTHENTICATED
            codes = [e.code() for e in errors]
            assert codes[:BURST] == [grpc.StatusCode.UNAUTHENTICATED] * BURST
            odd = [(i, e.details()) for i, e in enumerate(errors[BURST:]) if e.code() != codes[-1]]
            assert codes[-1] == grpc.StatusCode.RESOURCE_EXHAUSTED and odd == []
            # Each try made while told to wait doubles the wait, up to MAX_BACKOFF_S.
            told = [e.details() or "" for e in errors[BURST : BURST + 8]]
            waits = [float(re.findall(r"wait ([0-9.]+) s", details)[0]) for details in told]
            assert waits == [1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 60.0, 60.0], waits
            assert f"wait {MAX_BACKOFF_S:.1f} s before trying again" in (errors[-1].details() or "")
            events = [e["event"] for e in logs if e["event"].startswith("hello_")]
            assert events == ["hello_refused"] * BURST + [
                "hello_throttled",
                "hello_throttle_lifted",
                "hello_refused",
            ]
            lifted = next(e for e in logs if e["event"] == "hello_throttle_lifted")
            assert lifted["refused"] == 1_000 - BURST + 1

    run(scenario(), 240)


def _ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6) as probe:
            probe.bind(("::1", 0))
        return True
    except OSError:
        return False


@pytest.mark.skipif(not _ipv6_loopback(), reason="needs an IPv6 loopback for a second peer address")
def test_a_throttled_peer_does_not_disturb_another_peer() -> None:
    async def scenario() -> None:
        server = await start_server("[::]:0", ORGANISER, insecure=True, defaults=CALM, now=lambda: 0.0)
        v4 = grpc.aio.insecure_channel(f"127.0.0.1:{server.port}")
        v6 = grpc.aio.insecure_channel(f"[::1]:{server.port}")
        try:
            attacker = Referee(server, v4, referee_pb2_grpc.RefereeStub(v4))  # type: ignore[no-untyped-call]
            honest = Referee(server, v6, referee_pb2_grpc.RefereeStub(v6))  # type: ignore[no-untyped-call]
            response = await honest.create(seed="11")
            for _ in range(BURST + 30):
                await refused(attacker, pb.Hello(token="guess"))
            blocked = await refused(attacker, pb.Hello(token="guess"))
            assert blocked.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            bots = await join(honest, list(response.seat_tokens), [None] * 4)
            assert all(b.seat == s for s, b in enumerate(bots))
        finally:
            await v4.close()
            await v6.close()
            await server.stop(0)

    run(scenario())


def test_the_largest_legitimate_client_message_fits_the_receive_limit() -> None:
    names = ["\U0001f600" * LIMITS["CreateMatchRequest.bot_names[]"].most] * 6
    largest = pb.CreateMatchRequest(
        preset="p" * LIMITS["CreateMatchRequest.preset"].most,
        rules_json="\U0001f600" * LIMITS["CreateMatchRequest.rules_json"].most,
        # The largest numbers the wire can carry (only the message's size is measured here).
        clock=pb.ClockSettings(decision_ms=2**32 - 1, bank_ms=2**32 - 1, start_timeout_ms=2**32 - 1),
        seed="\U0001f600" * LIMITS["CreateMatchRequest.seed"].most,
        bot_names=names,
        watch_delay_events=4_000_000_000,
        match_id="m" * 64,
    )
    assert largest.ByteSize() < MAX_RECEIVE_BYTES / 2


def test_malformed_protobuf_is_invalid_argument_after_the_token_and_names_no_python_class() -> None:
    garbage = b"\xff\xff\xff\xff\x0f"  # a field number past the largest: no message parses it

    async def scenario() -> None:
        async with referee() as ref:
            channel = ref.channel
            create = channel.unary_unary("/tichu.v1.Referee/CreateMatch")
            with capture_logs() as logs:
                with pytest.raises(grpc.aio.AioRpcError) as anonymous:
                    await create(garbage)
                # The token is checked first: a stranger learns nothing of how the bytes were read.
                assert anonymous.value.code() == grpc.StatusCode.UNAUTHENTICATED
                with pytest.raises(grpc.aio.AioRpcError) as organiser:
                    await create(garbage, metadata=ORGANISER_METADATA)
                listing = channel.unary_unary("/tichu.v1.Referee/ListMatches")
                with pytest.raises(grpc.aio.AioRpcError) as listed:
                    await listing(garbage, metadata=ORGANISER_METADATA)
                watch = channel.unary_stream("/tichu.v1.Referee/Watch")
                with pytest.raises(grpc.aio.AioRpcError) as watched:
                    async for _ in watch(garbage):
                        pass
                play = channel.stream_stream("/tichu.v1.Referee/Play")
                call = play()
                await call.write(garbage)
                with pytest.raises(grpc.aio.AioRpcError) as played:
                    async for _ in call:
                        pass
            for error, message in (
                (organiser.value, "tichu.v1.CreateMatchRequest"),
                (listed.value, "tichu.v1.ListMatchesRequest"),
                (watched.value, "tichu.v1.WatchRequest"),
                (played.value, "tichu.v1.BotMessage"),
            ):
                assert error.code() == grpc.StatusCode.INVALID_ARGUMENT, error
                details = error.details() or ""
                assert f"not a valid {message} message" in details
                assert "class" not in details and "DecodeError" not in details
            refused = [e for e in logs if e["event"] in ("request_refused", "hello_refused")]
            assert len(refused) == 4 and all("malformed protobuf" in e["why"] for e in refused)
            # And the referee still serves: a well-formed call after them is answered.
            listing_ok = await ref.stub.ListMatches(pb.ListMatchesRequest(), metadata=ORGANISER_METADATA)
            assert list(listing_ok.matches) == []

    run(scenario())


def test_failed_hellos_claiming_one_match_are_throttled_across_addresses() -> None:
    """Issue 29, part 2: many addresses cannot take turns at one match's seats."""
    clock = [0.0]
    throttle = HelloThrottle(lambda: clock[0], structlog.get_logger())
    waits = [throttle.failed(f"ipv4:10.0.0.{n}:5000", "seat taken", match_id="m1") for n in range(BURST + 2)]
    assert waits[:BURST] == [None] * BURST and waits[BURST:] == [1.0, 2.0]
    # Another match, or no match, from a fresh address: its own buckets.
    assert throttle.failed("ipv4:10.0.1.1:5000", "seat taken", match_id="m2") is None
    assert throttle.failed("ipv4:10.0.1.2:5000", "unknown seat token") is None
    # Waiting as told is enough: the match's bucket refilled, and the wait did not grow.
    clock[0] += 2.0
    assert throttle.failed("ipv4:10.0.0.99:5000", "seat taken", match_id="m1") is None
