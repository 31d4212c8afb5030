"""`tichu replay show`: every round and trick in order; a seat's view shows only what it saw."""

from __future__ import annotations

import io
import re
import threading
import time
from pathlib import Path

import pytest

from referee.match.moves import rerun
from referee.match.records import EventRecord, Move
from referee.replay import read_replay
from referee.replay.show import show
from referee.rules import Phase, State, format_cards
from referee.rules.events import RoundStarted, TrickWon
from tests.replay.conftest import Played

CARD = re.compile(r"\b(?:10|[2-9JQKA])[jspt]\b|\b(?:MJ|DOG|PHX|DRG)\b")


def _show(path: Path, **options: object) -> list[str]:
    out = io.StringIO()
    assert show(path, out=out, **options) == 0  # type: ignore[arg-type]
    return out.getvalue().splitlines()


def test_the_full_view_shows_every_round_trick_hand_and_the_summary(played: Played) -> None:
    lines = _show(played.path)
    replay = read_replay(played.path)
    rounds = sum(
        1 for r in replay.records if isinstance(r, EventRecord) and isinstance(r.event, RoundStarted)
    )
    assert sum(line.startswith("== Round ") for line in lines) == rounds == 3
    tricks = sum(1 for r in replay.records if isinstance(r, EventRecord) and isinstance(r.event, TrickWon))
    assert sum("takes the trick" in line for line in lines) == tricks
    assert lines[-5].startswith("seat bot") and all(line[0].isdigit() for line in lines[-4:])
    # The hands printed after the first exchange are the engine's hands when play begins.
    hands_at_play: list[str] = []

    def remember(line: int, record: Move, state: State) -> None:
        if state.phase is Phase.PLAY and not hands_at_play:
            hands_at_play.extend(format_cards(hand) for hand in state.hands)

    rerun(replay.header, replay.records, on_move=remember)
    first = lines.index("  Hands after the exchange:")
    shown = [line.split(": ", 1)[1] for line in lines[first + 1 : first + 5]]
    assert shown == hands_at_play


def test_a_seat_view_names_no_card_the_seat_was_not_shown(played: Played) -> None:
    seat = 1
    lines = _show(played.path, seat=seat)
    assert any(line.startswith(f"  seat {seat} (east) is dealt") for line in lines)
    assert not any(re.match(r"  seat [0234] \(\w+\) (is dealt|gives|receives)", line) for line in lines)
    assert not any("window at state" in line for line in lines)  # other seats' window answers
    # Every card named is one this seat holds or held, or one played in public.
    replay = read_replay(played.path)
    visible: set[str] = set()
    for record in replay.records:
        if isinstance(record, EventRecord) and record.private_to in (None, seat):
            text = " ".join(str(v) for v in record.data.values())
            visible |= set(CARD.findall(text))
    named = {card for line in lines if not line.startswith("Match ") for card in CARD.findall(line)}
    assert named <= visible


def test_round_jumps_to_that_round(played: Played) -> None:
    lines = _show(played.path, round_number=2)
    rounds = [line for line in lines if line.startswith("== Round ")]
    assert rounds[0].startswith("== Round 2 ") and len(rounds) == 2
    assert lines[0].startswith("Match ")


def test_an_out_of_range_seat_is_refused(played: Played, capsys: pytest.CaptureFixture[str]) -> None:
    assert show(played.path, seat=4, out=io.StringIO()) == 2
    assert "--seat must be 0..3" in capsys.readouterr().err


def test_follow_prints_lines_as_a_running_match_writes_them(played: Played, tmp_path: Path) -> None:
    data = played.path.read_bytes().splitlines(keepends=True)
    growing = tmp_path / "growing.jsonl"
    growing.write_bytes(b"".join(data[:50]))
    out = io.StringIO()
    codes: list[int] = []
    follower = threading.Thread(
        target=lambda: codes.append(show(growing, follow=True, out=out, poll_s=0.01)), daemon=True
    )
    follower.start()
    time.sleep(0.2)
    assert follower.is_alive() and "Result:" not in out.getvalue()
    with growing.open("ab") as file:
        for line in data[50:]:
            # Half a line at a time: a line is shown only once it is complete.
            file.write(line[: len(line) // 2])
            file.flush()
            file.write(line[len(line) // 2 :])
            file.flush()
    follower.join(timeout=20)
    assert not follower.is_alive() and codes == [0]
    assert out.getvalue().splitlines() == _show(played.path)
