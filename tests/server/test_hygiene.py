"""Connection hygiene: sockets that never send a Hello, or only HTTP/2's preface, are closed by the
referee after its Hello timeout (gRPC's handshake and idle timeouts), while an honest match plays."""

from __future__ import annotations

import asyncio
import resource

import grpc
import pytest
from grpc_health.v1 import health_pb2

from referee.scripted import random_policy
from referee.server.serve import (
    ServerSettings,
    connection_capacity,
    raise_file_limit,
    server_options,
    start_server,
)
from tests.server.support import ORGANISER, join, referee, run

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"  # and empty SETTINGS
HALF_OPEN = 200


async def closed_by_the_server(reader: asyncio.StreamReader) -> bool:
    """Read until the server closes the socket (a hang guard of minutes: the test never waits on it)."""
    async with asyncio.timeout(300):
        while await reader.read(1 << 16):
            pass
    return True


def test_half_open_sockets_are_closed_while_an_honest_match_plays() -> None:
    async def scenario() -> None:
        async with referee(hello_timeout_s=2.0) as ref:
            assert ref.server is not None
            port = ref.server.port
            sockets = []
            for number in range(HALF_OPEN):
                reader, writer = await asyncio.open_connection("127.0.0.1", port)
                if number % 2:
                    writer.write(PREFACE)  # a preface and then nothing: no call, ever
                    await writer.drain()
                sockets.append((reader, writer))
            response = await ref.create(seed="hygiene", rules_json='{"match_mode": "fixed_rounds:1"}')
            bots = await join(ref, list(response.seat_tokens), [random_policy(f"h/{s}") for s in range(4)])
            played = asyncio.gather(*(bot.play() for bot in bots))
            closed = await asyncio.gather(*(closed_by_the_server(reader) for reader, _ in sockets))
            await played
            assert all(closed) and len(closed) == HALF_OPEN
            assert all(bot.result is not None for bot in bots)
            assert ref.table(response.match_id).status == "finished"
            for _, writer in sockets:
                writer.close()

    run(scenario(), timeout_s=600)


def test_connections_over_the_cap_are_closed_at_once_and_a_seat_gets_in_when_idle_ones_are_gone() -> None:
    """Issue 29, part 3: a cap on connections in all, refused clearly, that idle sockets cannot keep full."""
    cap = 6

    async def scenario() -> None:
        # A Hello timeout long enough that no socket is closed as idle before all are open.
        async with referee(hello_timeout_s=8.0, max_connections=cap) as ref:
            assert ref.server is not None
            response = await ref.create(seed="cap", rules_json='{"match_mode": "fixed_rounds:1"}')
            sockets = []
            for _ in range(cap + 4):
                reader, writer = await asyncio.open_connection("127.0.0.1", ref.server.port)
                writer.write(PREFACE)
                await writer.drain()
                sockets.append((reader, writer))
            answers = [await reader.read(1 << 16) for reader, _ in sockets]
            # The organiser's channel holds one connection: the first cap - 1 sockets get the
            # server's SETTINGS; the rest are closed as they arrive, with no byte.
            assert [bool(answer) for answer in answers] == [True] * (cap - 1) + [False] * 5, answers
            # A newcomer's channel is refused while the idle sockets hold the places, retries, and
            # gets in once the Hello timeout has closed them; the match on the organiser's
            # connection plays on meanwhile.
            bots = await join(ref, list(response.seat_tokens), [random_policy(f"c/{s}") for s in range(4)])
            played = asyncio.gather(*(bot.play() for bot in bots))
            async with grpc.aio.insecure_channel(f"127.0.0.1:{ref.server.port}") as newcomer:
                check = newcomer.unary_unary(
                    "/grpc.health.v1.Health/Check",
                    request_serializer=health_pb2.HealthCheckRequest.SerializeToString,
                    response_deserializer=health_pb2.HealthCheckResponse.FromString,
                )
                answer = await check(health_pb2.HealthCheckRequest(), wait_for_ready=True)
                assert answer.status == health_pb2.HealthCheckResponse.SERVING
            await played
            assert all(bot.result is not None for bot in bots)
            assert ref.table(response.match_id).status == "finished"
            assert all(await asyncio.gather(*(closed_by_the_server(reader) for reader, _ in sockets)))
            for _, writer in sockets:
                writer.close()

    run(scenario(), timeout_s=600)


def test_the_options_close_idle_connections_after_the_hello_timeout_and_files_are_raised() -> None:
    options = dict(server_options(7.5))
    assert options["grpc.server_handshake_timeout_ms"] == 7_500
    assert options["grpc.max_connection_idle_ms"] == 7_500
    files = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    assert options["grpc.max_allowed_incoming_connections"] == connection_capacity(files)
    assert dict(server_options(7.5, 50))["grpc.max_allowed_incoming_connections"] == 50
    soft, hard = raise_file_limit()
    assert (soft, hard) == resource.getrlimit(resource.RLIMIT_NOFILE)
    assert hard in (soft, resource.RLIM_INFINITY)


def test_a_server_starts_from_one_settings_value_or_from_the_older_keywords() -> None:
    async def scenario() -> None:
        settings = ServerSettings(
            "127.0.0.1:0", ORGANISER, insecure=True, resume=False, reflection_enabled=False
        )
        running = await start_server(settings)
        try:
            assert running.port > 0 and not running.secure
            assert running.service.referee.organiser_token == ORGANISER.encode()
        finally:
            await running.stop()
        older = await start_server("127.0.0.1:0", ORGANISER, insecure=True, resume=False)
        await older.stop()
        with pytest.raises(TypeError, match="not both"):
            await start_server(settings, insecure=True)

    run(scenario())
