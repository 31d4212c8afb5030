"""`tichu serve`: its options, its refusals, and a real process that serves and stops on SIGTERM."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import grpc
import pytest

from referee.scripted import ScriptedSeat
from referee.server.heap import OLDEST_THRESHOLD
from referee.server.serve import TOKEN_ENV, add_serve_arguments, run_serve
from referee.server.tokens import stored_organiser_token, token_bits, token_file
from referee.wire.tichu.v1 import referee_pb2 as pb
from referee.wire.tichu.v1 import referee_pb2_grpc
from tests.server.support import referee, run

STRONG = "a-strong-organiser-token-from-the-environment-0123"

ROOT = Path(__file__).resolve().parents[2]
# What the lead's cli.py does with these two functions, in a few lines.
ENTRY = (
    "import argparse, sys; from referee.server.serve import add_serve_arguments, run_serve; "
    "p = argparse.ArgumentParser(); add_serve_arguments(p); code = run_serve(p.parse_args(sys.argv[1:])); "
    # What the garbage collector was left as while it served (nothing resets it on the way out).
    "import gc, json; print(json.dumps([gc.get_threshold(), gc.get_freeze_count()])); sys.exit(code)"
)


def parse(*argv: str) -> argparse.Namespace:
    """Parse `tichu serve` options."""
    parser = argparse.ArgumentParser()
    add_serve_arguments(parser)
    return parser.parse_args(argv)


def test_options_carry_the_clock_defaults() -> None:
    args = parse("--insecure", "--decision-ms", "1500", "--fixed-length-windows", "--max-violations", "3")
    assert (args.decision_ms, args.fixed_length_windows, args.max_violations) == (1500, True, 3)
    assert args.listen == "127.0.0.1:50051" and args.window_ms == 2000


def test_serve_refuses_a_weak_token_or_no_security_choice(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv(TOKEN_ENV, raising=False)
    assert run_serve(parse("--insecure", "--organiser-token", "sunshine1", "--log-format", "json")) == 2
    assert "too weak" in capsys.readouterr().err
    assert run_serve(parse("--organiser-token", STRONG, "--log-format", "json")) == 2
    assert "--insecure" in capsys.readouterr().err
    assert run_serve(parse("--organiser-token", STRONG, "--tls-cert", "c.pem", "--log-format", "json")) == 2


def test_serve_without_a_token_makes_one_keeps_it_0600_and_shows_it_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(TOKEN_ENV, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    path = tmp_path / "tichu" / "organiser-token"
    first, made = stored_organiser_token(path)
    assert made and token_bits(first) >= 256 and path.stat().st_mode & 0o077 == 0
    assert stored_organiser_token(path) == (first, False)
    assert token_file() == path


def free_port() -> int:
    """A port nobody listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def serve_until_sigterm(tmp_path: Path, *options: str) -> tuple[tuple[int, int, int], int, str]:
    """Run `tichu serve` with `options`, create a match, stop it with SIGTERM; its collector's
    thresholds and frozen objects while it served, and its log."""
    port = free_port()
    env = {**os.environ, TOKEN_ENV: STRONG, "PYTHONPATH": str(ROOT)}
    command = [
        sys.executable,
        "-c",
        ENTRY,
        "--listen",
        f"127.0.0.1:{port}",
        "--insecure",
        "--log-format",
        "json",
        # Not the default replays/live of the working tree: each run would leave a match there
        # for the next run to resume.
        "--replay-dir",
        str(tmp_path / "replays"),
        *options,
    ]
    process = subprocess.Popen(
        command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            grpc.channel_ready_future(channel).result(timeout=20)
            stub = referee_pb2_grpc.RefereeStub(channel)  # type: ignore[no-untyped-call]
            metadata = (("authorization", f"Bearer {STRONG}"),)
            response = stub.CreateMatch(pb.CreateMatchRequest(seed="1"), metadata=metadata, timeout=5)
            assert len(response.seat_tokens) == 4
        time.sleep(0.1)
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=20) == 0
    finally:
        if process.poll() is None:
            process.kill()
        out, err = process.communicate()
    thresholds, frozen = json.loads(out)
    return tuple(thresholds), frozen, err


def test_serve_runs_until_sigterm(tmp_path: Path) -> None:
    _, _, err = serve_until_sigterm(tmp_path)
    assert '"event": "server_started"' in err and '"event": "server_stopping"' in err


def test_serve_freezes_its_start_up_heap_and_collects_rarely(tmp_path: Path) -> None:
    # Full collections would walk start-up's objects at every pass and stall every table
    # (issue 27); the served process's own collector shows the tuning was applied.
    fresh = subprocess.check_output([sys.executable, "-c", "import gc; print(*gc.get_threshold())"])
    young, middle, oldest = (int(n) for n in fresh.split())
    thresholds, frozen, err = serve_until_sigterm(tmp_path)
    assert thresholds == (young, middle, OLDEST_THRESHOLD) and oldest < OLDEST_THRESHOLD
    assert frozen > 10_000  # the modules, the protobuf descriptors, the server
    assert '"event": "collector_tuned"' in err
    # --gc-defaults leaves Python's collector as it was, for debugging.
    thresholds, frozen, err = serve_until_sigterm(tmp_path / "defaults", "--gc-defaults")
    assert thresholds == (young, middle, oldest) and frozen == 0
    assert '"event": "collector_tuned"' not in err


def test_two_thousand_streams_that_open_at_once_are_all_welcomed() -> None:
    """500 tables whose bots all connect at once (a tournament's start, or every bot coming back
    after a network blip): grpc-core's default sheds calls beyond 1,000 waiting ones."""

    async def scenario() -> list[str]:
        async with referee() as ref:
            assert ref.server is not None
            port = ref.server.port
            tokens = [token for _ in range(500) for token in ref.create_here()[1]]
            # Many connections, as many bots would have; each carries some of the streams.
            channels = [
                grpc.aio.insecure_channel(
                    f"127.0.0.1:{port}",
                    options=[("grpc.use_local_subchannel_pool", 1)],
                )
                for _ in range(100)
            ]
            bots = [
                ScriptedSeat(referee_pb2_grpc.RefereeStub(channels[i % 100]).Play, token)  # type: ignore[no-untyped-call]
                for i, token in enumerate(tokens)
            ]

            async def welcomed(bot: ScriptedSeat) -> str:
                try:
                    await bot.open()
                    message = await bot.read()
                except grpc.aio.AioRpcError as error:  # the Hello met a call that was shed
                    return str(error.code().name)
                finally:
                    if bot.call is not None:
                        bot.call.cancel()
                if message is None or not message.HasField("welcome"):
                    return "no welcome" if bot.error is None else bot.error.code().name
                return "welcome"

            try:
                return await asyncio.gather(*(welcomed(bot) for bot in bots))
            finally:
                for channel in channels:
                    await channel.close()

    outcomes = run(scenario(), timeout_s=120)
    assert len(outcomes) == 2000
    assert [o for o in outcomes if o != "welcome"] == []
