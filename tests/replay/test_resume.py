"""A referee killed with SIGKILL in the middle of a hand, restarted, finishes the match from its replay."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import grpc

from referee.match.records import ResumeRecord
from referee.replay import read_replay
from referee.replay.signing import load_public_key, write_key_pair
from referee.replay.verify import verify
from referee.wire.tichu.v1 import referee_pb2 as pb
from referee.wire.tichu.v1 import referee_pb2_grpc

TOKEN = "resume-test-organiser-token-of-enough-bits"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _serve(port: int, replay_dir: Path, log: Path, key: Path) -> subprocess.Popen[bytes]:
    command = [
        sys.executable, "-m", "referee.cli", "serve", "--listen", f"127.0.0.1:{port}", "--insecure",
        "--organiser-token", TOKEN, "--replay-dir", str(replay_dir), "--log-format", "json",
        "--decision-ms", "10000", "--window-ms", "2000", "--reconnect-grace-ms", "60000",
        "--signing-key", str(key),
    ]  # fmt: skip
    env = {**os.environ, "TICHU_LOG_LEVEL": "info"}
    return subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=log.open("ab"), env=env)


def _wait_ready(port: int) -> None:
    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        grpc.channel_ready_future(channel).result(timeout=30)


def _mid_hand(path: Path) -> bool:
    """True once the second deal is under way: at least 12 cards played in round 2."""
    if not path.exists():
        return False
    played = 0
    for line in path.read_bytes().splitlines():
        record = json.loads(line) if line.endswith(b"}") else {}
        event = record.get("event") or {}
        if event.get("type") == "round_started":
            played = 0 if event["round"] == 1 else -1000
        elif event.get("type") == "played":
            played += 1
    return played >= 12


def test_a_killed_referee_resumes_every_match_from_its_replay(tmp_path: Path) -> None:
    port = _free_port()
    replay_dir = tmp_path / "replays"
    log = tmp_path / "serve.log"
    key = tmp_path / "referee.key"
    public_key = load_public_key(write_key_pair(key))
    server = _serve(port, replay_dir, log, key)
    bots: list[subprocess.Popen[bytes]] = []
    try:
        _wait_ready(port)
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            stub = referee_pb2_grpc.RefereeStub(channel)  # type: ignore[no-untyped-call]
            created = stub.CreateMatch(
                pb.CreateMatchRequest(
                    rules_json=json.dumps({"match_mode": "fixed_rounds:3"}),
                    seed="resume",
                    bot_names=["a", "b", "c", "d"],
                    match_id="resumed-match",
                ),
                metadata=(("authorization", f"Bearer {TOKEN}"),),
            )
        path = replay_dir / "resumed-match.jsonl"
        for seat, token in enumerate(created.seat_tokens):
            command = [sys.executable, "-m", "referee.cli", "bot", "clients.random_bot:RandomBot"]
            command += ["--server", f"127.0.0.1:{port}", "--insecure", "--token", token]
            command += ["--name", f"random-{seat}", "--retries", "12"]
            bots.append(
                subprocess.Popen(
                    command,
                    stdout=subprocess.DEVNULL,
                    stderr=(tmp_path / f"bot{seat}.log").open("ab"),
                    env={**os.environ, "TICHU_LOG_LEVEL": "warning"},
                )
            )
        deadline = time.monotonic() + 90
        while not _mid_hand(path):
            assert time.monotonic() < deadline, "the match never reached the middle of its second hand"
            assert server.poll() is None, log.read_text()
            time.sleep(0.02)
        server.send_signal(signal.SIGKILL)
        server.wait(timeout=10)
        before = path.read_bytes()
        assert read_replay(path).result is None

        server = _serve(port, replay_dir, log, key)
        for bot in bots:
            assert bot.wait(timeout=120) == 0, (tmp_path / "bot0.log").read_text()[-2000:]
    finally:
        for process in [server, *bots]:
            if process.poll() is None:
                process.kill()
                process.wait(timeout=10)

    after = path.read_bytes()
    # Nothing written before the kill was lost or changed (a line cut off by the kill excepted).
    complete = before[: before.rfind(b"\n") + 1]
    assert after.startswith(complete) and len(after) > len(complete)
    replay = read_replay(path)
    assert not replay.truncated and replay.result is not None
    resumes = [r for r in replay.records if isinstance(r, ResumeRecord)]
    assert len(resumes) == 1
    # The chain runs on through the restart, the signature covers it all, the seed (unsealed by
    # the restarted referee) is the committed one, and the whole match re-runs through the
    # engine: no move lost, none played twice.
    verdict = verify(replay, public_key)
    assert "signed by key" in verdict.text and "the seed is the one committed to" in verdict.text
    run = verdict.run
    assert run is not None
    assert run.state.is_over and run.state.scores == replay.result.scores
    killed_at = resumes[0].version
    assert 0 < killed_at < run.version
    summary = replay.result.summary
    assert all(seat.reconnections >= 1 for seat in summary), summary
    assert "match_resumed_from_replay" in log.read_text()
