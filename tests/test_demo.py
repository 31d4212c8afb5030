"""`tichu demo`: a real referee, four bot processes over gRPC, a whole game, a replay on disk."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path


def test_demo_plays_a_whole_game_over_grpc_and_writes_its_replay(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "referee.cli", "demo", "--seed", "7"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Final score: A " in done.stdout
    replays = list((tmp_path / "replays" / "out").glob("*.jsonl"))
    assert len(replays) == 1
    records = [json.loads(line) for line in replays[0].read_text().splitlines()]
    kinds = {record["kind"] for record in records}
    assert records[0]["kind"] == "header" and records[0]["format"] == "tichu-replay/2"
    # The header commits to the seed, and the demo shows the commitment before the match.
    assert "seed" not in records[0] and f"(committed: {records[0]['seed_commitment'][:16]})" in done.stdout
    assert {"start", "decision", "window", "event", "reveal", "result"} <= kinds
    assert all(len(record["h"]) == 43 for record in records)  # every line in the hash chain
    assert records[-2]["seed"] == 7 and records[-1]["signature"]  # the seed revealed, the head signed
    assert "Replay verified: " in done.stdout and ", signed by key " in done.stdout
    result = records[-1]
    assert result["kind"] == "result"
    seats = result["summary"]
    assert len(seats) == 4
    assert sum(seat["decisions"] for seat in seats) > 100
    assert max(result["scores"]) >= 1000 or result["forfeiting_team"] >= 0
