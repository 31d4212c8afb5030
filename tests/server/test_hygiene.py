"""Connection hygiene: sockets that never send a Hello, or only HTTP/2's preface, are closed by the
referee after its Hello timeout (gRPC's handshake and idle timeouts), while an honest match plays."""

from __future__ import annotations

import asyncio
import resource

from clients.scripted import random_policy
from referee.server.serve import raise_file_limit, server_options
from tests.server.support import join, referee, run

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


def test_the_options_close_idle_connections_after_the_hello_timeout_and_files_are_raised() -> None:
    options = dict(server_options(7.5))
    assert options["grpc.server_handshake_timeout_ms"] == 7_500
    assert options["grpc.max_connection_idle_ms"] == 7_500
    soft, hard = raise_file_limit()
    assert (soft, hard) == resource.getrlimit(resource.RLIMIT_NOFILE)
    assert hard in (soft, resource.RLIM_INFINITY)
