"""A failed TLS handshake is reported as one, at once, with what to do: a real TLS referee, real bots."""

from __future__ import annotations

import argparse
import asyncio
import datetime
import io
import ipaddress
import socket
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from clients import connect as connector
from clients.connect import ConnectError, add_bot_arguments, connect, run_bot
from clients.random_bot import RandomBot
from clients.worker import serve_seats
from referee.server.serve import RunningServer, start_server
from tests.server.support import ORGANISER


def certificate(
    folder: Path, name: str, hosts: Sequence[str] = ("localhost", "127.0.0.1")
) -> tuple[Path, Path]:
    """A throwaway self-signed certificate for `hosts` and its key, as PEM files in `folder`."""
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = datetime.datetime.now(datetime.UTC)
    alt_names: list[x509.GeneralName] = []
    for host in hosts:
        try:
            alt_names.append(x509.IPAddress(ipaddress.ip_address(host)))
        except ValueError:
            alt_names.append(x509.DNSName(host))
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(hours=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName(alt_names), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = folder / f"{name}.pem", folder / f"{name}.key"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    return cert_path, key_path


@asynccontextmanager
async def tls_referee(cert: Path, key: Path) -> AsyncIterator[tuple[RunningServer, list[str]]]:
    """A TLS referee on a free local port with one match; the server and the match's tokens."""
    running = await start_server("127.0.0.1:0", ORGANISER, tls_cert=cert, tls_key=key)
    try:
        _, tokens = running.service.create_match(match_id="tls")
        yield running, tokens
    finally:
        await running.stop(0)


def count_attempts(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """A list that grows by one for each stream the SDK opens."""
    attempts: list[int] = []
    play = connector._Session.play

    async def counted(self: Any, stub: Any) -> Any:
        attempts.append(1)
        return await play(self, stub)

    monkeypatch.setattr(connector._Session, "play", counted)
    return attempts


def test_a_referee_certificate_the_bot_does_not_trust_is_named_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cert, key = certificate(tmp_path, "referee")
    other, _ = certificate(tmp_path, "other")
    attempts = count_attempts(monkeypatch)

    async def scenario() -> list[str]:
        async with tls_referee(cert, key) as (running, tokens):
            address = f"localhost:{running.port}"
            errors = []
            for ca_file in (str(other), None):  # the wrong CA, then the system's roots
                with pytest.raises(ConnectError) as caught:
                    await connect(RandomBot(), address, tokens[0], ca_file=ca_file, retries=5, backoff_s=5)
                errors.append(str(caught.value))
            # With the right CA the handshake passes: a bad token is then what the bot hears.
            with pytest.raises(ConnectError, match="UNAUTHENTICATED"):
                await connect(RandomBot(), address, "not-a-token", ca_file=str(cert))
            return errors

    errors = asyncio.run(scenario())
    for error in errors:
        assert error.startswith("TLS handshake with localhost:")
        assert "the referee's certificate is not trusted (self signed certificate)" in error
        assert "--ca-file" in error and "reconnections" not in error
    assert len(attempts) == 3  # one stream each: no retries of a handshake that cannot pass


def test_a_certificate_for_another_host_and_a_plaintext_referee_are_told_apart(tmp_path: Path) -> None:
    cert, key = certificate(tmp_path, "referee", hosts=("localhost",))

    async def scenario() -> tuple[str, str]:
        async with tls_referee(cert, key) as (running, tokens):
            with pytest.raises(ConnectError) as other_host:
                await connect(RandomBot(), f"127.0.0.1:{running.port}", tokens[0], ca_file=str(cert))
        plain = await start_server("127.0.0.1:0", ORGANISER, insecure=True)
        try:
            _, tokens = plain.service.create_match(match_id="plain")
            with pytest.raises(ConnectError) as plaintext:
                await connect(RandomBot(), f"localhost:{plain.port}", tokens[0], ca_file=str(cert))
        finally:
            await plain.stop(0)
        return str(other_host.value), str(plaintext.value)

    other_host, plaintext = asyncio.run(scenario())
    assert other_host.startswith("TLS handshake with 127.0.0.1:")
    assert "the referee's certificate is not for '127.0.0.1'" in other_host
    assert plaintext.startswith("TLS handshake with localhost:")
    assert "does not speak TLS" in plaintext and "--insecure" in plaintext


def test_a_referee_out_of_reach_is_still_retried() -> None:
    with socket.socket() as probe:  # a port that nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(ConnectError, match="1 reconnections failed"):
        asyncio.run(connect(RandomBot(), f"127.0.0.1:{port}", "t", insecure=True, retries=1, backoff_s=0.01))


def test_tichu_bot_and_the_worker_print_the_tls_failure(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("referee.log.configure", lambda **_: None)
    cert, key = certificate(tmp_path, "referee")
    other, _ = certificate(tmp_path, "other")
    parser = argparse.ArgumentParser()
    add_bot_arguments(parser)

    async def scenario() -> tuple[int, str]:
        async with tls_referee(cert, key) as (running, tokens):
            address = f"localhost:{running.port}"
            argv = ["clients.random_bot:RandomBot", "--server", address, "--ca-file", str(other)]
            code = await asyncio.to_thread(run_bot, parser.parse_args([*argv, "--token", tokens[0]]))
            lines: asyncio.Queue[str | None] = asyncio.Queue()
            for line in (f"{tokens[1]} seat1\n", None):
                lines.put_nowait(line)
            out = io.StringIO()
            await serve_seats(RandomBot, address, False, lines, out, ca_file=str(other))
            return code, out.getvalue()

    code, worker_out = asyncio.run(scenario())
    assert code == 1
    assert "tichu bot: TLS handshake with localhost:" in capsys.readouterr().err
    assert worker_out.startswith("failed seat1: TLS handshake with localhost:")
    assert "not trusted" in worker_out
