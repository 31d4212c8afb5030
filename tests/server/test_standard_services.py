"""grpc.health.v1 and server reflection, asked by generic clients from public packages only.

The clients here are grpcio-health-checking's and grpcio-reflection's own (what grpcurl, load
balancers and container probes speak), never the referee's stubs: a bot author with nothing but
the server's address finds the services, fetches their descriptors and checks health.
"""

from __future__ import annotations

import asyncio

import grpc
import pytest
from google.protobuf.descriptor_pool import DescriptorPool
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha.proto_reflection_descriptor_database import ProtoReflectionDescriptorDatabase

from referee.server.serve import start_server
from tests.server.support import ORGANISER, run

SERVING = health_pb2.HealthCheckResponse.SERVING
NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING


def test_health_answers_serving_for_the_server_and_the_referee_and_not_found_otherwise() -> None:
    async def scenario() -> None:
        running = await start_server(organiser_token=ORGANISER, insecure=True, resume=False)
        try:
            async with grpc.aio.insecure_channel(running.address) as channel:
                stub = health_pb2_grpc.HealthStub(channel)
                for name in ("", "tichu.v1.Referee"):
                    answer = await stub.Check(health_pb2.HealthCheckRequest(service=name))
                    assert answer.status == SERVING, name
                with pytest.raises(grpc.aio.AioRpcError) as refused:
                    await stub.Check(health_pb2.HealthCheckRequest(service="tichu.v1.Nothing"))
                assert refused.value.code() is grpc.StatusCode.NOT_FOUND
        finally:
            await running.stop()

    run(scenario())


def test_a_health_watch_hears_not_serving_as_soon_as_the_server_drains() -> None:
    async def scenario() -> None:
        running = await start_server(organiser_token=ORGANISER, insecure=True, resume=False)
        async with grpc.aio.insecure_channel(running.address) as channel:
            watch = health_pb2_grpc.HealthStub(channel).Watch(health_pb2.HealthCheckRequest(service=""))
            first = await watch.read()
            assert first.status == SERVING
            stopping = asyncio.ensure_future(running.stop(grace_s=5.0))
            second = await watch.read()
            assert second.status == NOT_SERVING
            await stopping

    run(scenario())


def test_reflection_lists_the_services_and_gives_the_referees_whole_descriptor() -> None:
    async def scenario() -> tuple[list[str], list[str], str]:
        running = await start_server(organiser_token=ORGANISER, insecure=True, resume=False)
        try:
            # The reflection client is synchronous: run it off the event loop that serves.
            return await asyncio.to_thread(reflect, running.address)
        finally:
            await running.stop()

    services, methods, input_type = run(scenario())
    assert {"tichu.v1.Referee", "grpc.health.v1.Health", "grpc.reflection.v1alpha.ServerReflection"} <= set(
        services
    )
    assert {"Play", "Watch", "CreateMatch", "ListMatches"} <= set(methods)
    assert input_type == "tichu.v1.BotMessage"


def reflect(address: str) -> tuple[list[str], list[str], str]:
    """What a generic client learns by reflection alone: services, Referee's methods, Play's input."""
    with grpc.insecure_channel(address) as channel:
        database = ProtoReflectionDescriptorDatabase(channel)
        pool = DescriptorPool(database)
        referee = pool.FindServiceByName("tichu.v1.Referee")
        play = referee.methods_by_name["Play"]
        return list(database.get_services()), [m.name for m in referee.methods], play.input_type.full_name


def test_reflection_can_be_turned_off() -> None:
    async def scenario() -> grpc.StatusCode:
        running = await start_server(
            organiser_token=ORGANISER, insecure=True, resume=False, reflection_enabled=False
        )
        try:
            return await asyncio.to_thread(reflection_status, running.address)
        finally:
            await running.stop()

    assert run(scenario()) is grpc.StatusCode.UNIMPLEMENTED


def reflection_status(address: str) -> grpc.StatusCode:
    """The status a reflection request gets."""
    with grpc.insecure_channel(address) as channel:
        try:
            list(ProtoReflectionDescriptorDatabase(channel).get_services())
        except grpc.RpcError as error:
            return error.code()
    return grpc.StatusCode.OK
