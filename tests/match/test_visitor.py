"""Visitors of one re-run (referee.match.visitor): the hooks a walker calls, in which order, with
which states, and that the re-run's checks are the same with a visitor riding along."""

from __future__ import annotations

import dataclasses
import functools
import typing
from pathlib import Path

import pytest

from referee.match.moves import ReplayMismatchError, Rerun, apply_move, rerun
from referee.match.records import (
    DecisionRecord,
    EventRecord,
    Header,
    Line,
    Move,
    Record,
    RedactedRecord,
    ViolationRecord,
    WindowRecord,
    is_move,
)
from referee.match.visitor import HOOKS, RecordVisitor, ReplayVisitor, visit
from referee.replay.format import Replay, read_replay
from referee.rules import State, state_to_json

GOLDEN = Path(__file__).resolve().parents[2] / "replays" / "golden" / "golden-4p-2-deals.jsonl"


@functools.cache
def golden() -> Replay:
    """A finished four-player match of two deals, bombs and windows included."""
    return read_replay(GOLDEN)


class Recorder(ReplayVisitor):
    """Writes down every hook it is called with, and the states it is given."""

    def __init__(self) -> None:
        self.calls: list[str] = []
        self.first: State | None = None
        self.moves: list[tuple[int, Move, State, State]] = []
        self.records: list[Line] = []
        self.run: Rerun | None = None

    def visit_header(self, header: Header) -> None:
        self.calls.append("visit_header")

    def begin_game(self, state: State) -> None:
        self.calls.append("begin_game")
        self.first = state

    def visit_move(self, line: int, move: Move, before: State, after: State) -> None:
        self.calls.append("visit_move")
        self.moves.append((line, move, before, after))

    def end_game(self, run: Rerun) -> None:
        self.calls.append("end_game")
        self.run = run


def _recording(name: str) -> typing.Callable[[Recorder, Line], None]:
    def hook(self: Recorder, record: Line) -> None:
        self.calls.append(name)
        self.records.append(record)

    return hook


# Every record hook of the Recorder writes its own name down (visit_header is written above).
for _name in [n for n in vars(RecordVisitor) if n.startswith("visit_") and n != "visit_header"]:
    setattr(Recorder, _name, _recording(_name))


def test_every_kind_of_line_has_its_own_hook() -> None:
    kinds = typing.get_args(Line)
    assert set(HOOKS) == set(kinds)
    hooks = set(HOOKS.values())
    assert len(hooks) == len(kinds)  # no two kinds share a hook
    assert all(callable(getattr(RecordVisitor, hook)) for hook in hooks)


def test_visit_calls_the_hook_of_the_records_kind() -> None:
    replay = golden()
    recorder = Recorder()
    for record in [replay.header, *replay.records[:30]]:
        visit(recorder, record)
    start = ["visit_header", *["visit_connected"] * 4, "visit_start", *["visit_event"] * 2]
    assert recorder.calls[:8] == start
    assert recorder.records == replay.records[:30]
    assert "visit_decision" in recorder.calls and "visit_move" not in recorder.calls  # nothing re-ran


def test_the_hooks_come_in_file_order_with_each_move_after_its_record() -> None:
    replay = golden()
    records = replay.records[:40]  # cut off in the first deal's exchange: an unfinished replay
    recorder = Recorder()
    run = rerun(replay.header, records, visitor=recorder)
    expected = ["visit_header", "begin_game"]
    for record in records:
        expected.append(HOOKS[type(record)])
        if is_move(record):
            expected.append("visit_move")
    expected.append("end_game")
    assert recorder.calls == expected
    # The start of the golden replay, spelled out.
    assert recorder.calls[:14] == [
        "visit_header",
        "begin_game",
        *["visit_connected"] * 4,
        "visit_start",
        *["visit_event"] * 5,  # the round starts; four seats are dealt eight cards
        "visit_decision",  # seat 3 declines a Grand Tichu
        "visit_move",
    ]
    assert recorder.records == records
    assert recorder.run is run


def test_a_visitor_sees_every_move_with_the_states_around_it() -> None:
    replay = golden()
    recorder = Recorder()
    run = rerun(replay.header, replay.records, visitor=recorder)
    moves = [(index + 2, r) for index, r in enumerate(replay.records) if is_move(r)]
    assert [(line, move) for line, move, _, _ in recorder.moves] == moves
    assert len(recorder.moves) == run.moves == 430
    assert recorder.first is not None
    before = recorder.first
    for _, move, seen_before, after in recorder.moves:
        assert seen_before is before  # each move starts where the one before it left the game
        assert state_to_json(apply_move(before, move)[0]) == state_to_json(after)
        before = after
    assert before is run.state
    # A window's and a decision's records are moves too: the visitor saw both kinds.
    assert {type(move) for _, move, _, _ in recorder.moves} >= {DecisionRecord, WindowRecord}


def test_on_move_sees_what_a_visitors_visit_move_sees() -> None:
    replay = golden()
    recorder = Recorder()
    rerun(replay.header, replay.records, visitor=recorder)
    called: list[tuple[int, Move, State]] = []
    rerun(replay.header, replay.records, on_move=lambda line, move, after: called.append((line, move, after)))
    assert [(line, move, state_to_json(after)) for line, move, after in called] == [
        (line, move, state_to_json(after)) for line, move, _, after in recorder.moves
    ]
    with pytest.raises(TypeError):
        rerun(replay.header, replay.records, on_move=lambda *_: None, visitor=Recorder())


def test_a_mismatch_raises_at_its_line_and_the_visitor_saw_only_what_re_ran() -> None:
    replay = golden()
    records = list(replay.records)
    index = next(i for i, r in enumerate(records) if isinstance(r, EventRecord) and r.version == 20)
    wrong = records[index]
    assert isinstance(wrong, EventRecord)
    records[index] = dataclasses.replace(wrong, version=21)  # an event at the wrong state version
    recorder = Recorder()
    with pytest.raises(ReplayMismatchError) as raised:
        rerun(replay.header, records, visitor=recorder)
    assert raised.value.line == index + 2  # the header is line 1
    assert "end_game" not in recorder.calls
    assert recorder.records == records[:index]  # the wrong line's hook was never called
    # The same mismatch, the same line, with no visitor at all.
    with pytest.raises(ReplayMismatchError) as bare:
        rerun(replay.header, records)
    assert (bare.value.line, bare.value.message) == (raised.value.line, raised.value.message)


def test_a_withheld_line_is_refused_at_its_line_before_any_hook_sees_it() -> None:
    replay = golden()
    records: list[Record] = list(replay.records)
    index = next(i for i, r in enumerate(records) if isinstance(r, ViolationRecord | DecisionRecord))
    records[index] = RedactedRecord(t_ms=0.0, h="")
    recorder = Recorder()
    with pytest.raises(ReplayMismatchError, match="withheld") as raised:
        rerun(replay.header, records, visitor=recorder)
    assert raised.value.line == index + 2
    assert "visit_redacted" not in recorder.calls
