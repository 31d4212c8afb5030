"""Who may do what: seat tokens on Play, the organiser token, malformed envelopes, TLS."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import grpc
import pytest

from referee.server.serve import start_server
from referee.wire.tichu.v1 import referee_pb2 as pb
from referee.wire.tichu.v1 import referee_pb2_grpc
from tests.server.support import ORGANISER, ORGANISER_METADATA, Bot, Referee, join, referee, run


async def refused(ref: Referee, *messages: pb.BotMessage) -> grpc.aio.AioRpcError:
    """Open a Play stream, send `messages`, and return the error that ends it."""
    call = ref.stub.Play()
    for msg in messages:
        await call.write(msg)
    await call.done_writing()
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        while await call.read() is not grpc.aio.EOF:
            pass
    return caught.value


def hello(token: str, version: int = 1) -> pb.BotMessage:
    """A Hello envelope."""
    return pb.BotMessage(hello=pb.Hello(token=token, bot_name="x", protocol_version=version))


def test_bad_seat_tokens_are_unauthenticated_and_change_nothing() -> None:
    async def scenario() -> None:
        async with referee() as ref:
            response = await ref.create(seed="1")
            table = ref.table(response.match_id)
            cases = [
                (hello("not-a-token"), grpc.StatusCode.UNAUTHENTICATED),
                (hello(""), grpc.StatusCode.UNAUTHENTICATED),
                (pb.BotMessage(ping=pb.Ping(nonce=1)), grpc.StatusCode.UNAUTHENTICATED),
                (pb.BotMessage(), grpc.StatusCode.INVALID_ARGUMENT),
                (hello(response.seat_tokens[0], version=2), grpc.StatusCode.FAILED_PRECONDITION),
            ]
            for message, code in cases:
                error = await refused(ref, message)
                assert error.code() == code, (message, error)
            assert (await refused(ref)).code() == grpc.StatusCode.UNAUTHENTICATED  # no message at all
            assert [r.kind for r in table.records] == ["header"] and table.status == "waiting"
            assert not any(info.connected for info in table.seat_info())

    run(scenario())


def test_a_token_in_use_cannot_be_used_again() -> None:
    async def scenario() -> None:
        async with referee() as ref:
            response = await ref.create(seed="2")
            first = Bot(ref, response.seat_tokens[0])
            await first.open()
            await first.until(lambda m: m.HasField("snapshot"))
            error = await refused(ref, hello(response.seat_tokens[0]))
            assert error.code() == grpc.StatusCode.UNAUTHENTICATED
            assert "already connected" in (error.details() or "")
            # The first stream is unaffected.
            await first.send(ping=pb.Ping(nonce=7))
            pong = await first.until(lambda m: m.HasField("pong"))
            assert pong.pong.nonce == 7

    run(scenario())


def test_an_empty_envelope_mid_stream_ends_it_with_invalid_argument() -> None:
    async def scenario() -> None:
        async with referee() as ref:
            response = await ref.create(seed="3")
            bots = await join(ref, list(response.seat_tokens), [None] * 4)
            await bots[1].send()
            while await bots[1].read() is not None:
                pass
            assert bots[1].error is not None and bots[1].error.code() == grpc.StatusCode.INVALID_ARGUMENT
            status = await bots[0].until(lambda m: m.HasField("seat_status") and not m.seat_status.connected)
            assert status.seat_status.seat == 1
            # The match goes on: the seat may come back with its token.
            back = Bot(ref, response.seat_tokens[1])
            await back.open()
            await back.until(lambda m: m.HasField("snapshot"))

    run(scenario())


def test_organiser_calls_need_the_organiser_token() -> None:
    async def scenario() -> None:
        async with referee() as ref:
            for metadata, code in [
                ((), grpc.StatusCode.UNAUTHENTICATED),
                ((("authorization", "Basic abc"),), grpc.StatusCode.UNAUTHENTICATED),
                ((("authorization", "Bearer wrong"),), grpc.StatusCode.PERMISSION_DENIED),
            ]:
                with pytest.raises(grpc.aio.AioRpcError) as create:
                    await ref.stub.CreateMatch(pb.CreateMatchRequest(), metadata=metadata)
                assert create.value.code() == code
                with pytest.raises(grpc.aio.AioRpcError) as listing:
                    await ref.stub.ListMatches(pb.ListMatchesRequest(), metadata=metadata)
                assert listing.value.code() == code
            assert ref.server is not None and ref.server.service.tables == {}
            response = await ref.create(match_id="final-1", bot_names=["a", "b", "c", "d"])
            assert response.match_id == "final-1" and len(set(response.seat_tokens)) == 4
            cases: list[tuple[dict[str, Any], grpc.StatusCode]] = [
                ({"match_id": "final-1"}, grpc.StatusCode.ALREADY_EXISTS),
                ({"rules_json": "{not json"}, grpc.StatusCode.INVALID_ARGUMENT),
                ({"rules_json": '{"players": 5}'}, grpc.StatusCode.INVALID_ARGUMENT),
                ({"preset": "casual"}, grpc.StatusCode.INVALID_ARGUMENT),
                ({"bot_names": ["only-one"]}, grpc.StatusCode.INVALID_ARGUMENT),
                ({"match_id": "bad id!"}, grpc.StatusCode.INVALID_ARGUMENT),
            ]
            for fields, code in cases:
                with pytest.raises(grpc.aio.AioRpcError) as bad:
                    await ref.create(**fields)
                assert bad.value.code() == code, fields
            listing = await ref.stub.ListMatches(pb.ListMatchesRequest(), metadata=ORGANISER_METADATA)
            assert [(m.match_id, m.status) for m in listing.matches] == [("final-1", "waiting")]
            assert [s.bot_name for s in listing.matches[0].seats] == ["a", "b", "c", "d"]
            with pytest.raises(grpc.aio.AioRpcError) as watch:
                async for _ in ref.stub.Watch(
                    pb.WatchRequest(match_id="final-1"), metadata=(("authorization", "Bearer wrong"),)
                ):
                    pass
            assert watch.value.code() == grpc.StatusCode.PERMISSION_DENIED
            with pytest.raises(grpc.aio.AioRpcError) as missing:
                async for _ in ref.stub.Watch(pb.WatchRequest(match_id="nope")):
                    pass
            assert missing.value.code() == grpc.StatusCode.NOT_FOUND

    run(scenario())


def test_the_server_needs_tls_or_an_explicit_insecure() -> None:
    async def scenario() -> None:
        with pytest.raises(ValueError, match="insecure"):
            await start_server("127.0.0.1:0", ORGANISER)
        with pytest.raises(ValueError, match="both"):
            await start_server("127.0.0.1:0", ORGANISER, tls_cert=b"x")
        with pytest.raises(ValueError, match="organiser token"):
            await start_server("127.0.0.1:0", "", insecure=True)

    run(scenario())


@pytest.mark.skipif(shutil.which("openssl") is None, reason="needs openssl to make a test certificate")
def test_tls_serves_clients_that_trust_the_certificate(tmp_path: Path) -> None:
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    command = [
        "openssl",
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-days",
        "1",
        "-subj",
        "/CN=localhost",
    ]
    command += [
        "-addext",
        "subjectAltName=DNS:localhost,IP:127.0.0.1",
        "-keyout",
        str(key),
        "-out",
        str(cert),
    ]
    subprocess.run(command, check=True, capture_output=True)

    async def scenario() -> None:
        server = await start_server("127.0.0.1:0", ORGANISER, tls_cert=cert, tls_key=key)
        try:
            assert server.secure
            credentials = grpc.ssl_channel_credentials(root_certificates=cert.read_bytes())
            async with grpc.aio.secure_channel(f"localhost:{server.port}", credentials) as channel:
                stub = referee_pb2_grpc.RefereeStub(channel)  # type: ignore[no-untyped-call]
                response = await stub.CreateMatch(pb.CreateMatchRequest(), metadata=ORGANISER_METADATA)
                assert len(response.seat_tokens) == 4
            async with grpc.aio.insecure_channel(f"127.0.0.1:{server.port}") as plain:
                stub = referee_pb2_grpc.RefereeStub(plain)  # type: ignore[no-untyped-call]
                with pytest.raises(grpc.aio.AioRpcError):
                    await stub.ListMatches(pb.ListMatchesRequest(), metadata=ORGANISER_METADATA, timeout=2)
        finally:
            await server.stop(0)

    run(scenario())
