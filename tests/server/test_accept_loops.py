"""Several accept loops on one port (issue 27, part 1): grpc.aio servers sharing the referee's port,
each taking new calls, so that a busy referee welcomes a burst of bots sooner."""

from __future__ import annotations

import asyncio
from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from referee.sandbox import socket_paths
from referee.scripted import ScriptedSeat, random_policy
from referee.server.serve import MIN_CONNECTIONS_PER_LOOP, accept_loop_count, start_server
from referee.wire.tichu.v1 import referee_pb2 as pb
from referee.wire.tichu.v1 import referee_pb2_grpc
from tests.server.support import ORGANISER, ORGANISER_METADATA, run

LOOPS = 8
# Separate connections (channels with their own subchannel pool): the kernel hands each to one of
# the LOOPS servers, so that with this many, all landing on the first has odds of 8**-23.
CONNECTIONS = 24
EXTRA_SERVICE = "tests.Extra"


def _own_connection(address: str) -> grpc.aio.Channel:
    return grpc.aio.insecure_channel(address, options=[("grpc.use_local_subchannel_pool", 1)])


def _register_extra(server: grpc.aio.Server) -> None:
    """A service beside the referee's, as the arena's lobby is: it answers with what it was sent."""

    async def echo(request: bytes, context: grpc.aio.ServicerContext) -> bytes:
        return request

    handlers = {"Echo": grpc.unary_unary_rpc_method_handler(echo)}
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(EXTRA_SERVICE, handlers),))


def test_every_server_on_the_port_serves_play_health_and_the_extra_services() -> None:
    async def scenario() -> None:
        running = await start_server(
            "127.0.0.1:0",
            ORGANISER,
            insecure=True,
            resume=False,
            accept_loops=LOOPS,
            services=((EXTRA_SERVICE, _register_extra),),
        )
        channels = [_own_connection(running.address) for _ in range(CONNECTIONS)]
        try:
            assert len(running.more_servers) == LOOPS - 1
            for n, channel in enumerate(channels):
                health = await health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest())
                assert health.status == health_pb2.HealthCheckResponse.SERVING
                echo = channel.unary_unary(f"/{EXTRA_SERVICE}/Echo")
                assert await echo(f"call {n}".encode()) == f"call {n}".encode()
            organiser = referee_pb2_grpc.RefereeStub(channels[0])  # type: ignore[no-untyped-call]
            matches = [
                await organiser.CreateMatch(
                    pb.CreateMatchRequest(seed=f"loops/{m}", rules_json='{"match_mode": "fixed_rounds:1"}'),
                    metadata=ORGANISER_METADATA,
                )
                for m in range(CONNECTIONS // 4)
            ]
            # Each seat on its own connection: the matches' seats sit on different servers.
            seats = [
                ScriptedSeat(
                    referee_pb2_grpc.RefereeStub(channels[4 * m + s]).Play,  # type: ignore[no-untyped-call]
                    token,
                    random_policy(f"loops/{m}/{s}"),
                    name=f"seat{s}",
                )
                for m, match in enumerate(matches)
                for s, token in enumerate(match.seat_tokens)
            ]
            for seat in seats:
                seat.start()
            await asyncio.gather(*(seat.task for seat in seats if seat.task is not None))
            assert all(seat.result is not None for seat in seats), [seat.error for seat in seats]
            assert all(running.service.tables[m.match_id].status == "finished" for m in matches)
        finally:
            for channel in channels:
                await channel.close()
            await running.stop(0)

    run(scenario(), timeout_s=300)


def test_a_small_connection_cap_gets_fewer_loops_so_that_each_has_room() -> None:
    assert accept_loop_count(64, 6) == 1  # a cap of 6 stays exactly 6: one server holds them
    assert accept_loop_count(64, 4 * MIN_CONNECTIONS_PER_LOOP) == 4
    assert accept_loop_count(64, 1_000 * MIN_CONNECTIONS_PER_LOOP) == 64
    assert accept_loop_count(0, 1_000_000) == 1


def test_every_unix_socket_given_is_served(tmp_path: Path) -> None:
    """A sandbox's bots reach the referee only by Unix sockets, which no two servers can share:
    the first is the first loop's, each further one the next loop's; all answer."""
    first = tmp_path / "referee.sock"
    more = tuple(socket_paths(first, 3)[1:])

    async def scenario() -> None:
        running = await start_server(
            "127.0.0.1:0",
            ORGANISER,
            insecure=True,
            resume=False,
            accept_loops=LOOPS,
            unix_socket=first,
            more_unix_sockets=more,
        )
        try:
            for path in (first, *more):
                async with grpc.aio.insecure_channel(f"unix:{path}") as channel:
                    health = await health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest())
                    assert health.status == health_pb2.HealthCheckResponse.SERVING, path
        finally:
            await running.stop(0)

    run(scenario(), timeout_s=120)
    assert [path.name for path in more] == ["referee.sock.1", "referee.sock.2"]
