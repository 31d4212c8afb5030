"""The replay file: written as the match runs, complete, re-run exactly by `tichu replay verify`."""

from __future__ import annotations

import asyncio
import gc
import gzip
import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from referee.match.digests import seed_commitment
from referee.match.moves import ReplayMismatchError, SeedHiddenError, rerun
from referee.match.records import (
    FORMAT,
    CallRecord,
    DecisionRecord,
    EventRecord,
    Header,
    Line,
    ResultRecord,
    RevealRecord,
    WindowRecord,
    record_from_json,
)
from referee.replay import ReplayFormatError, read_replay
from referee.replay.cli import verify_files
from referee.replay.format import Replay, canonical_line
from referee.replay.writer import ReplayWriter
from referee.rules import new_game
from tests.replay.conftest import Played

GOLDEN = sorted((Path(__file__).parents[2] / "replays" / "golden").glob("*.jsonl"))
# Replays written by the release before the match core (0.1.0, commit 953f004), one for each
# thing a replay can hold: a forfeit after timeouts, rejections and a reconnection, a bomb that
# carried a Tichu call (R-CALL-7), a match resumed after a restart, and a whole demo game.
COMPAT = sorted((Path(__file__).parent / "compat").glob("*.jsonl.gz"))
Json = list[dict[str, Any]]


def _verify(replay: Replay) -> None:
    rerun(replay.header, replay.records)


def _line(record: Line, h: str = "") -> bytes:
    """The line the writer makes of a record (structlog puts an event record's "event" last)."""
    data = record.to_json()
    if h:
        data["h"] = h
    if "event" in data:
        data = {key: value for key, value in data.items() if key != "event"} | {"event": data["event"]}
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False).encode()


def test_the_file_is_the_tables_records_line_by_line(played: Played) -> None:
    lines = played.path.read_bytes().splitlines()
    assert lines == [_line(record, h) for record, h in zip(played.records, played.hashes, strict=True)]
    replay = read_replay(played.path)
    assert replay.hashes == played.hashes and replay.chain_break is None
    assert [replay.header, *replay.records] == played.records
    assert played.listed_path == str(played.path)


def test_the_header_commits_to_the_seed_and_the_end_reveals_it(played: Played) -> None:
    replay = read_replay(played.path)
    header = replay.header
    assert (
        header.format == FORMAT
        and header.seed is None
        and '"seed":' not in played.path.read_text().splitlines()[0]
    )
    assert [s.bot_name for s in header.seats] == ["north", "east", "south", "west"]
    assert header.clock.window_ms > 0 and header.created_at.endswith("Z")
    # The reveal, just before the result, holds the seed and salt the header committed to...
    reveal = replay.records[-2]
    assert isinstance(reveal, RevealRecord) and reveal.seed == "replay-tests" and len(reveal.salt) == 64
    assert seed_commitment(reveal.seed, reveal.salt) == header.seed_commitment
    # ...and the deal the file records is the deal the engine makes from that seed.
    _, deal = new_game(header.config, reveal.seed)
    recorded = [r.event for r in replay.records if isinstance(r, EventRecord) and r.version == 0]
    assert recorded == deal
    start = replay.start
    assert start is not None and [s.bot_version for s in start.seats] == ["test"] * 4


def test_every_decision_has_its_timing_and_every_window_its_outcome(played: Played) -> None:
    records = read_replay(played.path).records
    decisions = [r for r in records if isinstance(r, DecisionRecord)]
    windows = [r for r in records if isinstance(r, WindowRecord)]
    assert decisions and windows
    for decision in decisions:
        assert decision.sent_ms <= decision.received_ms and decision.time_used_ms >= 0
    for window in windows:
        assert [seat for seat, _ in window.answers] == list(window.order)
        assert {seat for seat, _ in window.times_ms} <= set(window.order)
    assert any(w.bomb is not None for w in windows), "the random bots bomb often: expected a bomb"


def test_the_replay_verifies_and_its_summary_is_recounted(played: Played) -> None:
    replay = read_replay(played.path)
    run = rerun(replay.header, replay.records)
    assert run.moves == sum(isinstance(r, DecisionRecord | WindowRecord | CallRecord) for r in replay.records)
    assert list(run.state.scores) == list(played.result.scores)
    assert replay.result is not None
    # rerun() checks every summary field against its own count; here, against the live table too.
    assert [(s.seat, s.decisions, s.points) for s in run.tally.seats] == [
        (s["seat"], s["decisions"], s["points_won"]) for s in played.statistics["seats"]
    ]
    assert sum(s.decisions for s in run.tally.seats) > 100


def _tamper(records: Json, kind: str, change: Callable[[dict[str, Any]], None], nth: int = 0) -> int:
    """Change the nth record of a kind in a replay's JSON lines; its line number in the file."""
    matching = [i for i, r in enumerate(records) if r["kind"] == kind]
    index = matching[nth]
    change(records[index])
    return index + 1


def _rewrite(path: Path, records: Json) -> None:
    # In the referee's byte form: a forger writes what the referee would, so that only what the
    # lines say is left for verify to catch.
    path.write_bytes(b"".join(canonical_line(r) for r in records))


def _other_play(record: dict[str, Any]) -> None:
    record["action"] = "pass" if record["action"] != "pass" else "play DRG"


def _drop_event(records: Json) -> int:
    index = next(
        i for i, r in enumerate(records) if r["kind"] == "event" and r["event"]["type"] == "trick_won"
    )
    del records[index]
    return index + 1


def _claim_a_bomb(records: Json) -> int:
    """A window in which everyone declined, said to have been won by a bomb."""
    index = next(i for i, r in enumerate(records) if r["kind"] == "window" and r["bomb"] is None)
    records[index]["bomb"] = records[index]["order"][0]
    return index + 1


@pytest.mark.parametrize(
    ("name", "tamper", "expect"),
    [
        ("an action the engine refuses", lambda rs: _tamper(rs, "decision", _other_play, nth=40), "refuses"),
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
        ("a window's outcome", _claim_a_bomb, "the window's answers give bomb None"),
        (
            "a decision's kind",
            lambda rs: _tamper(rs, "decision", lambda r: r.update(decision="dragon_gift"), nth=5),
            "but it owed",
        ),
    ],
)
def test_verify_names_the_first_difference(
    played: Played, tmp_path: Path, name: str, tamper: Callable[[Json], int], expect: str
) -> None:
    lines = played.path.read_text(encoding="utf-8").splitlines()
    records = [json.loads(line) for line in lines]
    changed_line = tamper(records)
    path = tmp_path / "tampered.jsonl"
    _rewrite(path, records)
    with pytest.raises(ReplayMismatchError) as caught:
        _verify(read_replay(path))
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
    assert replay.chain_break is None  # the chain holds as far as it goes
    with pytest.raises(SeedHiddenError):
        _verify(replay)  # the seed is revealed only at the end: no deal can be re-made yet
    assert verify_files([path]) == 0


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "no complete line"),
        (b"not json\n", "not JSON"),
        (b'{"kind": "event"}\n', "expected a tichu-replay/2 or tichu-replay/1 header"),
        (b'{"kind": "header", "format": "tichu-replay/9"}\n', "tichu-replay/9"),
        (b'{"kind": "header", "format": "tichu-replay/1", "match_id": "m"}\n', "needs 'config'"),
        (b"[1, 2]\n", "a record is a JSON object"),
    ],
)
def test_what_is_not_a_replay_is_refused_with_its_line(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_bytes(content)
    with pytest.raises(ReplayFormatError, match=message):
        read_replay(path)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"kind": "decision", "seat": 1}', "needs 'request_id'"),
        ('{"kind": "decision", "seat": "one"}', "'seat' must be a whole number"),
        ('{"kind": "decision", "seat": 9}', "a seat 0..5"),
        ('{"kind": "window", "version": 1, "order": [0], "answers": {"0": "fly"}}', "not an action"),
        ('{"kind": "violation", "seat": 0, "request_id": 1, "decision": "dance"}', "unknown decision kind"),
        ('{"kind": "event", "version": 0, "event": {"type": "nothing"}}', "unreadable event"),
        ('{"kind": "teleport"}', "unknown record kind"),
        ('{"kind": "header"}', "a second header"),
    ],
)
def test_a_malformed_record_is_refused_naming_its_line_and_field(
    played: Played, tmp_path: Path, line: str, message: str
) -> None:
    first = played.path.read_bytes().splitlines(keepends=True)[0]
    path = tmp_path / "bad.jsonl"
    path.write_bytes(first + line.encode() + b"\n")
    with pytest.raises(ReplayFormatError, match=f"bad.jsonl:2: .*{message}"):
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
    run = rerun(replay.header, replay.records)
    assert replay.result is not None and run.moves > 0
    assert run.state.scores == replay.result.scores


def test_golden_and_compatibility_replays_exist() -> None:
    # The skips must never hide a lost directory.
    assert len(GOLDEN) >= 2, "replays/golden/ should hold the golden replays"
    assert len(COMPAT) >= 5, "tests/replay/compat/ should hold the previous release's replays"


@pytest.mark.parametrize("path", COMPAT, ids=[p.name for p in COMPAT])
def test_every_replay_of_the_previous_release_verifies_and_reads_back_line_for_line(path: Path) -> None:
    replay = read_replay(path)
    run = rerun(replay.header, replay.records)
    assert replay.result is not None and run.moves > 0
    # The schema loses nothing: each record, written again, is the line the old release wrote.
    lines = gzip.decompress(path.read_bytes()).splitlines()
    assert [_line(record) for record in [replay.header, *replay.records]] == lines
    assert verify_files([path]) == 0


def test_the_previous_releases_forfeit_after_timeouts_verifies(tmp_path: Path) -> None:
    # That release's own verifier refused this file: it re-applied the timeout that made the
    # team forfeit, whose default the referee never took.
    replay = read_replay(Path(__file__).parent / "compat" / "release-0.1-forfeit.jsonl.gz")
    assert replay.result is not None and replay.result.forfeiting_team == 1
    run = rerun(replay.header, replay.records)
    assert run.state.scores == replay.result.scores


def test_a_default_the_engine_would_not_take_fails_verification(tmp_path: Path) -> None:
    # R-DEF-1: the default of every timeout is the engine's; a referee that took another one
    # must not verify, and the line of the wrong default is named.
    source = Path(__file__).parent / "compat" / "release-0.1-forfeit.jsonl.gz"
    records = [json.loads(line) for line in gzip.decompress(source.read_bytes()).splitlines()]
    index = next(
        i for i, r in enumerate(records) if r["kind"] == "violation" and r["decision"] == "tichu_step"
    )
    records[index]["default"] = "tichu"
    path = tmp_path / "wrong-default.jsonl"
    _rewrite(path, records)
    with pytest.raises(ReplayMismatchError) as caught:
        _verify(read_replay(path))
    assert caught.value.line == index + 1
    assert "the engine's default (R-DEF-1) is no_tichu" in caught.value.message


def test_a_window_timeout_must_decline(tmp_path: Path) -> None:
    source = Path(__file__).parent / "compat" / "release-0.1-forfeit.jsonl.gz"
    records = [json.loads(line) for line in gzip.decompress(source.read_bytes()).splitlines()]
    silent = next(r for r in records if r["kind"] == "violation" and r["decision"] == "bomb_window")
    window = next(r for r in records if r["kind"] == "window" and r["version"] == silent["version"])
    index = records.index(window)
    window["answers"][str(silent["seat"])] = "play 2j"
    path = tmp_path / "silent-bomb.jsonl"
    _rewrite(path, records)
    with pytest.raises(ReplayMismatchError) as caught:
        _verify(read_replay(path))
    assert caught.value.line == index + 1
    assert f"seat {silent['seat']} timed out in this window, so its answer is decline" in caught.value.message


def test_a_bombs_tichu_call_is_checked_against_the_window(tmp_path: Path) -> None:
    source = Path(__file__).parent / "compat" / "release-0.1-callbomb.jsonl.gz"
    records = [json.loads(line) for line in gzip.decompress(source.read_bytes()).splitlines()]
    window = next(r for r in records if r["kind"] == "window" and r["call"] is not None)
    assert window["call"] == window["bomb"]
    replay = read_replay(source)
    calling = [r for r in replay.records if isinstance(r, WindowRecord) and r.call is not None]
    assert calling and calling[0].call is not None
    assert str(dict(calling[0].answers)[calling[0].call]).endswith(" tichu")
    # Dropping the call leaves a "called" event that the answers no longer make.
    window["call"] = None
    path = tmp_path / "no-call.jsonl"
    _rewrite(path, records)
    with pytest.raises(ReplayMismatchError, match="the engine produced"):
        _verify(read_replay(path))


def test_a_gzipped_replay_reads_as_the_plain_one(played: Played, tmp_path: Path) -> None:
    packed = tmp_path / (played.path.name + ".gz")
    packed.write_bytes(gzip.compress(played.path.read_bytes()))
    assert read_replay(packed).records == read_replay(played.path).records
    assert verify_files([packed]) == 0


def test_a_copied_replay_still_verifies_after_a_move(played: Played, tmp_path: Path) -> None:
    moved = tmp_path / "elsewhere" / played.path.name
    moved.parent.mkdir()
    shutil.copy(played.path, moved)
    assert verify_files([moved]) == 0


def _event(n: int) -> EventRecord:
    record = record_from_json({"kind": "event", "version": n, "event": {"type": "passed", "seat": n % 4}})
    assert isinstance(record, EventRecord)
    return record


def test_the_writer_flushes_an_inputs_records_together_just_after_it(played: Played, tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    header: Header = read_replay(played.path).header
    ReplayWriter(path).write(header)  # outside an event loop: written and flushed at once
    assert _lines(path) == [header.to_json()]

    async def in_a_loop() -> list[list[dict[str, Any]]]:
        writer = ReplayWriter(path)
        seen = []
        writer.write(_event(1))
        writer.write(_event(2))
        seen.append(_lines(path))  # still kept: the bots' messages go first
        await asyncio.sleep(0.001)
        seen.append(_lines(path))  # flushed together, in order, once the loop moved on
        writer.write(_event(3))
        writer.close()  # closing writes what is kept
        seen.append(_lines(path))
        writer.write(_event(4))  # dropped after close
        await asyncio.sleep(0.001)
        seen.append(_lines(path))
        return seen

    kept, flushed, closed, after = asyncio.run(in_a_loop())
    assert kept == []
    assert [r["version"] for r in flushed] == [1, 2]
    assert [r["version"] for r in closed] == [1, 2, 3] and after == closed


def test_a_header_is_on_disk_as_soon_as_it_is_written(played: Played, tmp_path: Path) -> None:
    # A process killed before the loop's next iteration still leaves a replay that has its header
    # (a killed tournament once left an empty one).
    path = tmp_path / "r.jsonl"
    header: Header = read_replay(played.path).header

    async def in_a_loop() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        writer = ReplayWriter(path)
        writer.write(header)
        at_once = _lines(path)
        writer.write(_event(1))
        kept = _lines(path)
        writer.close()
        return at_once, kept

    at_once, kept = asyncio.run(in_a_loop())
    assert at_once == [header.to_json()] and kept == at_once


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_the_writer_makes_no_reference_cycles(played: Played, tmp_path: Path) -> None:
    # A cycle per record would wait for the garbage collector's full passes, which pause the
    # referee longer the more of them there are.
    writer = ReplayWriter(tmp_path / "cycles.jsonl")
    writer.write(read_replay(played.path).header)
    gc.collect()
    gc.disable()
    try:
        for n in range(1, 200):
            writer.write(_event(n))
        unreachable = gc.collect()
    finally:
        gc.enable()
        writer.close()
    assert unreachable == 0
    assert len((tmp_path / "cycles.jsonl").read_text(encoding="utf-8").splitlines()) == 200


def test_the_result_record_is_the_last_line(played: Played) -> None:
    replay = read_replay(played.path)
    assert isinstance(replay.records[-1], ResultRecord) and replay.result is replay.records[-1]
