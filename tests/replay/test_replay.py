"""The replay file: written as the match runs, complete, re-run exactly by `tichu replay verify`."""

from __future__ import annotations

import asyncio
import gc
import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from referee.replay import FORMAT, ReplayFormatError, read_replay
from referee.replay.cli import verify_files
from referee.replay.format import RECORD_KINDS
from referee.replay.rerun import ReplayMismatchError, rerun
from referee.replay.writer import ReplayWriter
from referee.rules import RulesConfig, new_game
from tests.replay.conftest import Played

GOLDEN = sorted((Path(__file__).parents[2] / "replays" / "golden").glob("*.jsonl"))
Records = list[dict[str, Any]]


def test_the_file_is_the_tables_records_line_by_line(played: Played) -> None:
    lines = played.path.read_text(encoding="utf-8").splitlines()
    assert [json.loads(line) for line in lines] == json.loads(json.dumps(played.records))
    assert {r["kind"] for r in played.records} <= RECORD_KINDS
    assert played.listed_path == str(played.path)


def test_the_header_says_everything_needed_to_replay_the_deal(played: Played) -> None:
    replay = read_replay(played.path)
    header = replay.header
    assert header["format"] == FORMAT and header["seed"] == "replay-tests"
    assert [s["bot_name"] for s in header["seats"]] == ["north", "east", "south", "west"]
    assert header["clock"]["window_ms"] > 0 and header["created_at"].endswith("Z")
    # The deal the file records is the deal the engine makes from the header alone.
    _, deal = new_game(RulesConfig.from_json(header["config"]), header["seed"])
    recorded = [r["event"] for r in replay.records if r["kind"] == "event" and r["version"] == 0]
    assert recorded == [e.to_json() for e in deal]
    start = replay.start
    assert start is not None and [s["bot_version"] for s in start["seats"]] == ["test"] * 4


def test_every_decision_has_its_timing_and_every_window_its_outcome(played: Played) -> None:
    records = read_replay(played.path).records
    decisions = [r for r in records if r["kind"] == "decision"]
    windows = [r for r in records if r["kind"] == "window"]
    assert decisions and windows
    for r in decisions:
        assert r["sent_ms"] <= r["received_ms"] and r["time_used_ms"] >= 0 and r["action"]
    for r in windows:
        assert set(r["answers"]) == {str(s) for s in r["order"]}
        assert set(r["time_ms"]) <= set(r["answers"])
    assert any(r["bomb"] is not None for r in windows), "the random bots bomb often: expected a bomb"


def test_the_replay_verifies_and_its_summary_is_recounted(played: Played) -> None:
    replay = read_replay(played.path)
    run = rerun(replay)
    assert run.moves == sum(r["kind"] in ("decision", "window", "call") for r in replay.records)
    assert list(run.state.scores) == list(played.result.scores)
    result = replay.result
    assert result is not None and run.tally is not None
    # rerun() checks every summary field against its own count; here, against the live table too.
    assert [(s.seat, s.decisions, s.points) for s in run.tally.seats] == [
        (s["seat"], s["decisions"], s["points_won"]) for s in played.statistics["seats"]
    ]
    assert sum(s.decisions for s in run.tally.seats) > 100


def _tamper(records: Records, kind: str, change: Callable[[dict[str, Any]], None], nth: int = 0) -> int:
    """Change the nth record of a kind; its line number in the file."""
    matching = [i for i, r in enumerate(records) if r["kind"] == kind]
    index = matching[nth]
    change(records[index])
    return index + 1


def _rewrite(path: Path, records: Records) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")


def _other_play(record: dict[str, Any]) -> None:
    record["action"] = "pass" if record["action"] != "pass" else "play DRG"


def _drop_event(records: Records) -> int:
    index = next(
        i for i, r in enumerate(records) if r["kind"] == "event" and r["event"]["type"] == "trick_won"
    )
    del records[index]
    return index + 1


@pytest.mark.parametrize(
    ("name", "tamper", "expect"),
    [
        (
            "an action the engine refuses",
            lambda rs: _tamper(rs, "decision", _other_play, nth=40),
            "refuses",
        ),
        (
            "an event's fields",
            lambda rs: _tamper(
                rs, "event", lambda r: r["event"].update(points=r["event"].get("points", 0) + 5), 30
            ),
            "the engine produced",
        ),
        ("a missing event", _drop_event, "lacks an event"),
        (
            "the final score",
            lambda rs: _tamper(
                rs, "result", lambda r: r.update(scores=[r["scores"][0] + 10, r["scores"][1]])
            ),
            "scores",
        ),
        (
            "the summary",
            lambda rs: _tamper(rs, "result", lambda r: r["summary"][2].update(points_won=-1)),
            "points_won",
        ),
        (
            "a move's state version",
            lambda rs: _tamper(rs, "window", lambda r: r.update(version=r["version"] + 1), nth=3),
            "state",
        ),
    ],
)
def test_verify_names_the_first_difference(
    played: Played, tmp_path: Path, name: str, tamper: Callable[[Records], int], expect: str
) -> None:
    lines = played.path.read_text(encoding="utf-8").splitlines()
    records = [json.loads(line) for line in lines]
    changed_line = tamper(records)
    path = tmp_path / "tampered.jsonl"
    _rewrite(path, records)
    with pytest.raises(ReplayMismatchError) as caught:
        rerun(read_replay(path))
    assert expect in caught.value.message, (name, caught.value)
    # The difference is found at the changed line or, for an event, where its move was replayed.
    assert caught.value.line <= changed_line + 1 or name == "a missing event", (name, caught.value)


def test_a_line_cut_off_by_a_crash_is_ignored_and_the_rest_verifies(played: Played, tmp_path: Path) -> None:
    lines = played.path.read_bytes().splitlines(keepends=True)
    kept = b"".join(lines[: len(lines) // 2])
    path = tmp_path / "crashed.jsonl"
    path.write_bytes(kept + lines[len(lines) // 2][:17])
    replay = read_replay(path)
    assert replay.truncated and replay.complete_bytes == len(kept) and replay.result is None
    rerun(replay)  # verified as far as it goes
    assert verify_files([path]) == 0


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "no complete line"),
        (b"not json\n", "not JSON"),
        (b'{"kind": "event"}\n', "expected a tichu-replay/1 header"),
        (b'{"kind": "header", "format": "tichu-replay/9"}\n', "tichu-replay/9"),
        (b'{"kind": "header", "format": "tichu-replay/1", "match_id": "m"}\n', "lacks"),
        (b"[1, 2]\n", "a record is a JSON object"),
    ],
)
def test_what_is_not_a_replay_is_refused_with_its_line(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_bytes(content)
    with pytest.raises(ReplayFormatError, match=message):
        read_replay(path)


def test_the_verify_command_exits_1_at_a_difference(played: Played, tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    records = [json.loads(line) for line in played.path.read_text().splitlines()]
    _tamper(records, "decision", _other_play, nth=10)
    _rewrite(bad, records)
    done = subprocess.run(
        [sys.executable, "-m", "referee.cli", "replay", "verify", str(played.path), str(bad)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    good_line, bad_line = done.stdout.splitlines()
    assert good_line.startswith(f"{played.path}: OK: ") and "finished" in good_line
    assert bad_line.startswith(f"{bad}: FAILED: line ")


@pytest.mark.skipif(not GOLDEN, reason="no golden replays")
@pytest.mark.parametrize("path", GOLDEN, ids=[p.name for p in GOLDEN])
def test_golden_replays_verify(path: Path) -> None:
    replay = read_replay(path)
    run = rerun(replay)
    assert replay.result is not None and run.moves > 0
    assert list(run.state.scores) == replay.result["scores"]


def test_golden_replays_exist() -> None:
    # The skip above must never hide a lost directory.
    assert len(GOLDEN) >= 2, "replays/golden/ should hold the golden replays"


def test_a_copied_replay_still_verifies_after_a_move(played: Played, tmp_path: Path) -> None:
    moved = tmp_path / "elsewhere" / played.path.name
    moved.parent.mkdir()
    shutil.copy(played.path, moved)
    assert verify_files([moved]) == 0


def test_the_writer_flushes_an_inputs_records_together_just_after_it(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    first = {"kind": "header", "format": FORMAT, "n": 1}
    ReplayWriter(path).write(first)  # outside an event loop: written and flushed at once
    assert [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()] == [first]

    async def in_a_loop() -> list[list[dict[str, Any]]]:
        writer = ReplayWriter(path)
        seen = []
        writer.write({"kind": "event", "n": 1})
        writer.write({"kind": "event", "n": 2})
        seen.append(_lines(path))  # still kept: the bots' messages go first
        await asyncio.sleep(0.001)
        seen.append(_lines(path))  # flushed together, in order, once the loop moved on
        writer.write({"kind": "result", "n": 3})
        writer.close()  # closing writes what is kept
        seen.append(_lines(path))
        writer.write({"kind": "event", "n": 4})  # dropped after close
        await asyncio.sleep(0.001)
        seen.append(_lines(path))
        return seen

    kept, flushed, closed, after = asyncio.run(in_a_loop())
    assert kept == []
    assert [r["n"] for r in flushed] == [1, 2]
    assert [r["n"] for r in closed] == [1, 2, 3] and after == closed


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_the_writer_makes_no_reference_cycles(tmp_path: Path) -> None:
    # A cycle per record would wait for the garbage collector's full passes, which pause the
    # referee longer the more of them there are.
    writer = ReplayWriter(tmp_path / "cycles.jsonl")
    writer.write({"kind": "header", "n": 0})
    gc.collect()
    gc.disable()
    try:
        for n in range(1, 200):
            writer.write({"kind": "event", "n": n, "event": {"type": "passed", "seat": n % 4}})
        unreachable = gc.collect()
    finally:
        gc.enable()
        writer.close()
    assert unreachable == 0
    assert len((tmp_path / "cycles.jsonl").read_text(encoding="utf-8").splitlines()) == 200
