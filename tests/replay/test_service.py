"""The referee's replay directory: where files go, stable seat tokens, forgetting finished matches."""

from __future__ import annotations

import asyncio
import base64
import gzip
import hashlib
import hmac
import json
import shutil
from pathlib import Path

import grpc
import pytest
from structlog.testing import capture_logs

from referee.match.moves import rerun
from referee.match.records import ResumeRecord
from referee.replay import read_replay
from referee.server.front import MatchExistsError, Referee
from referee.server.tokens import WeakTokenError, new_organiser_token
from referee.wire.tichu.v1 import referee_pb2 as pb
from tests.replay.conftest import Played
from tests.server.support import ORGANISER, Bot, referee, run


def test_seat_tokens_survive_a_restart_with_the_same_replay_folder_and_hide_the_organiser_token(
    tmp_path: Path,
) -> None:
    first = Referee(ORGANISER, replay_dir=tmp_path)
    again = Referee(ORGANISER + "-rotated", replay_dir=tmp_path)  # the secret is the folder's
    elsewhere = Referee(ORGANISER, replay_dir=tmp_path / "other")
    tokens = [first.seat_token("m1", seat) for seat in range(4)]
    assert tokens == [again.seat_token("m1", seat) for seat in range(4)]
    assert len(set(tokens)) == 4 and len(tokens[0]) >= 32
    assert tokens[0] != first.seat_token("m2", 0) and tokens[0] != elsewhere.seat_token("m1", 0)
    assert (tmp_path / ".seat-secret").stat().st_mode & 0o077 == 0
    # No seat token is the organiser token's HMAC any more: that form let a bot test guesses of
    # a weak organiser token offline, and derive every other seat's token from it.
    message = b"tichu-seat/m1/0"
    derived = base64.urlsafe_b64encode(hmac.new(ORGANISER.encode(), message, hashlib.sha256).digest()[:24])
    assert derived.decode() not in first.seat_tokens("m1", 0, legacy=True)  # a new folder: none to honour


def test_a_weak_organiser_token_is_refused_with_how_to_make_one() -> None:
    for weak in ("x", "sunshine1", "a" * 64, "0123456789abcdef0123456789abcde"):  # the last: 124 bits
        with pytest.raises(WeakTokenError, match=r"secrets\.token_urlsafe"):
            Referee(weak)
    Referee(new_organiser_token())


def test_a_replay_folder_of_an_earlier_release_keeps_its_bots_tokens(played: Played, tmp_path: Path) -> None:
    # Its replays were written before the folder held a seat secret: the matches resumed from it
    # still open with the tokens derived from the organiser token, which their bots hold.
    lines = played.path.read_bytes().splitlines(keepends=True)
    (tmp_path / "half.jsonl").write_bytes(b"".join(lines[: len(lines) // 2]))
    service = Referee(ORGANISER, replay_dir=tmp_path)
    match_id = read_replay(played.path).match_id
    message = f"tichu-seat/{match_id}/0".encode()
    derived = base64.urlsafe_b64encode(
        hmac.new(ORGANISER.encode(), message, hashlib.sha256).digest()[:24]
    ).decode()
    assert {derived, "_" + derived[1:]} & set(service.seat_tokens(match_id, 0, legacy=True))
    # Once the folder has a secret, a new referee honours no derived form.
    later = Referee(ORGANISER, replay_dir=tmp_path)
    assert later.seat_tokens(match_id, 0, legacy=True) == service.seat_tokens(match_id, 0)


def test_a_match_id_whose_replay_exists_is_refused(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with referee(replay_dir=tmp_path) as ref:
            ref.create_here(match_id="taken")
            assert (tmp_path / "taken.jsonl").exists()
        async with referee(replay_dir=tmp_path) as ref:
            assert ref.server is not None
            # The first referee stopped the match: its replay remains, unfinished, and it resumed.
            assert "taken" in ref.server.service.tables
            with pytest.raises(MatchExistsError):
                ref.create_here(match_id="taken")
            ref.server.service.referee.drop("taken")  # as a referee that lost it
            with pytest.raises(MatchExistsError, match="has a replay already"):
                ref.create_here(match_id="taken")

    run(scenario())


def test_only_unfinished_readable_replays_are_resumed(played: Played, tmp_path: Path) -> None:
    shutil.copy(played.path, tmp_path / played.path.name)  # finished: stays finished
    # The first half of the same match, as a referee killed in its middle left it: it is the one
    # resumed (a tichu-replay/2 header is not edited: its chain and its sealed seed hold the id).
    lines = played.path.read_bytes().splitlines(keepends=True)
    (tmp_path / "half.jsonl").write_bytes(b"".join(lines[: len(lines) // 2]))
    (tmp_path / "garbage.jsonl").write_text("this is not a replay\n")

    async def scenario() -> None:
        with capture_logs() as logs:
            async with referee(replay_dir=tmp_path) as ref:
                assert ref.server is not None
                service = ref.server.service
                assert sorted(service.tables) == [played.path.stem]
                table = service.tables[played.path.stem]
                assert table.status == "waiting" and table.state_version > 0
        failed = [entry for entry in logs if entry["event"] == "resume_failed"]
        assert [Path(entry["path"]).name for entry in failed] == ["garbage.jsonl"]

    run(scenario())
    # The resumed file got its resume record; the finished one was not touched.
    assert isinstance(read_replay(tmp_path / "half.jsonl").records[-1], ResumeRecord)
    assert (tmp_path / played.path.name).read_bytes() == played.path.read_bytes()


def test_a_finished_match_is_forgotten_after_its_delay_and_its_replay_stays(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with referee(replay_dir=tmp_path) as ref:
            assert ref.server is not None
            service = ref.server.service
            service.referee.forget_finished_after_s = 0.05
            table, tokens = ref.create_here(
                match_id="short", rules_json=json.dumps({"match_mode": "fixed_rounds:1"})
            )
            assert not service.forget("short")  # still waiting for its seats
            await table.stop("the test ends it")
            await asyncio.sleep(0.3)
            assert "short" not in service.tables and "short" not in service.replay_paths
            listing = await ref.stub.ListMatches(
                pb.ListMatchesRequest(), metadata=(("authorization", f"Bearer {ORGANISER}"),)
            )
            assert [m.match_id for m in listing.matches] == []
            late = Bot(ref, tokens[0])
            await late.open()
            assert await late.read() is None
            assert late.error is not None and late.error.code() == grpc.StatusCode.UNAUTHENTICATED
        assert (tmp_path / "short.jsonl").exists()

    run(scenario())


def test_a_resumed_match_whose_seats_do_not_come_back_ends_at_the_start_timeout(
    played: Played, tmp_path: Path
) -> None:
    # A replay of the previous release (tichu-replay/1: no chain, so its header may be edited)
    # resumes as well: its first half, with a short start timeout.
    source = Path(__file__).parent / "compat" / "release-0.1-reject.jsonl.gz"
    lines = gzip.decompress(source.read_bytes()).decode("utf-8").splitlines(keepends=True)
    header = json.loads(lines[0])
    header["clock"]["start_timeout_ms"] = 300
    header["match_id"] = "half"
    half = [json.dumps(header) + "\n", *lines[1 : len(lines) // 2]]
    (tmp_path / "half.jsonl").write_text("".join(half), encoding="utf-8")

    async def scenario() -> None:
        async with referee(replay_dir=tmp_path) as ref:
            assert ref.server is not None
            table = ref.server.service.tables["half"]
            assert table.status == "waiting" and table.state_version > 0
            async with asyncio.timeout(5):
                await table.finished.wait()
            assert table.result is not None and table.result.winner is None
            assert table.result.reason.startswith("no contest: seats 0, 1, 2, 3 did not connect")

    run(scenario())
    replay = read_replay(tmp_path / "half.jsonl")
    assert replay.result is not None and replay.result.absent == (0, 1, 2, 3)
    assert [r.kind for r in replay.records[-2:]] == ["resume", "result"]
    rerun(replay.header, replay.records)  # a game stopped in its middle by the timeout still verifies
