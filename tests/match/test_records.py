"""Whole games through the core: every record round-trips, the replay re-runs, the statistics are
the re-run's, a resumed match ends as the original did, and the same inputs give the same outputs."""

from __future__ import annotations

import dataclasses
import functools
import json
from collections import Counter
from typing import Any

import pytest

from referee.match import Match
from referee.match.messages import Connect, Disconnect, Output, Stop
from referee.match.moves import ReplayMismatchError, rerun
from referee.match.records import (
    CallRecord,
    DecisionRecord,
    EventRecord,
    Header,
    Record,
    RejectionRecord,
    ResultRecord,
    ResumeRecord,
    ViolationRecord,
    WindowRecord,
    is_move,
    record_from_json,
)
from referee.rules import DecisionKind, Decline, State, state_from_json, state_to_json
from tests.match.support import (
    CLOCK,
    connect_all,
    game_records,
    new_match,
    play_out,
    seeded_policy,
    stream,
    tick,
)

# Positions rich in bombs, so that windows see bombs, discarded bombs and flagged calls; the
# second round is dealt from the seed. Nobody has played a card, so everyone may call Tichu.
POSITIONS: dict[str, dict[str, Any]] = {
    "4 players": {
        "hands": [
            "MJ 2j 2s 2p 2t 6j 6s 6p 6t 10j 10s 10p 10t DOG",
            "3j 3s 3p 3t 7j 7s 7p 7t Jj Js Jp Jt PHX DRG",
            "4j 4s 4p 4t 8j 8s 8p 8t Qj Qs Qp Qt Aj As",
            "5j 5s 5p 5t 9j 9s 9p 9t Kj Ks Kp Kt Ap At",
        ],
        "turn": 0,
        "config": {"match_mode": "fixed_rounds:2"},
    },
    "6 players": {
        "hands": [
            "MJ 2j 2s 2p 2t 8j 8s 8p 8t DOG",
            "3j 3s 3p 3t 9j 9s 9p 9t PHX DRG",
            "4j 4s 4p 4t 10j 10s 10p 10t Aj",
            "5j 5s 5p 5t Jj Js Jp Jt As",
            "6j 6s 6p 6t Qj Qs Qp Qt Ap",
            "7j 7s 7p 7t Kj Ks Kp Kt At",
        ],
        "turn": 0,
        "played": [False] * 6,
        "config": {"players": 6, "match_mode": "fixed_rounds:2"},
    },
}
# Heartbeats on (the scripted seats answer every ping), so pings are part of the run too.
GAME_CLOCK = dataclasses.replace(CLOCK, heartbeat_interval_ms=2_000, heartbeat_timeout_ms=8_000)
T0 = 10.0
RESUMED_AT = 5_000.0
# The seed of the test games (deals and seats), picked for what the games then hold (see the
# first test): bombs, discarded bombs, flagged calls, calls out of turn, timeouts of every kind.
SEED = 1


@dataclasses.dataclass(frozen=True)
class Game:
    """A whole game played through the core: the match, every output, and the records."""

    match: Match
    outputs: list[Output]
    records: list[Record]


def position(name: str) -> State:
    """A named test position."""
    return state_from_json(POSITIONS[name])


def policies(players: int, seed: str) -> list[Any]:
    """One seeded scripted seat per seat: bombs often, calls now and then, silent now and then."""
    return [seeded_policy(f"{seed}/{s}", bomb_rate=0.6, call_rate=0.1) for s in range(players)]


def play(name: str, seed: int) -> Game:
    """Play a whole game from a named position."""
    start = position(name)
    match = new_match(GAME_CLOCK, config=start.config, initial_state=start, seed=seed, t=T0)
    seated = connect_all(match, T0)
    out, _ = play_out(match, policies(start.players, f"{name}/{seed}"), T0, given=seated)
    outputs = seated + out
    return Game(match, outputs, game_records(outputs))


@functools.cache
def game(name: str) -> Game:
    """The test's whole game from a position (played once per test run; matches are not changed)."""
    return play(name, SEED)


GAMES = list(POSITIONS)
# The decisions each game's silent seats let time out (with SEED).
TIMED_OUT = {
    "4 players": {
        DecisionKind.GRAND_TICHU,
        DecisionKind.EXCHANGE,
        DecisionKind.PLAY,
        DecisionKind.BOMB_WINDOW,
    },
    "6 players": set(DecisionKind),
}


def by_json(record: Record) -> Record:
    """A record as a replay file gives it back: to JSON text and back."""
    return record_from_json(json.loads(json.dumps(record.to_json())))


@pytest.mark.parametrize("name", GAMES)
def test_the_game_has_what_the_other_tests_rely_on(name: str) -> None:
    """The runs below are only as good as what happens in them: check that it all happened."""
    run = game(name)
    kinds = Counter(type(r) for r in run.records)
    windows = [r for r in run.records if isinstance(r, WindowRecord)]
    violations = [r for r in run.records if isinstance(r, ViolationRecord)]
    assert run.match.status == "finished" and kinds[ResultRecord] == 1
    assert run.match.state.round == 1 and run.match.state.is_over  # two rounds: a whole game
    assert sum(w.bomb is not None for w in windows) >= 3
    assert any(w.discarded for w in windows) and any(w.call is not None for w in windows)
    # R-DEF-1: defaults of every kind the game timed out on are re-run against the engine.
    assert {v.decision for v in violations} >= TIMED_OUT[name]
    assert kinds[CallRecord] >= 1 and kinds[DecisionRecord] >= 100
    assert {r.reason for r in run.records if isinstance(r, RejectionRecord)} >= {"late"}


@pytest.mark.parametrize("name", GAMES)
def test_every_record_round_trips_through_json(name: str) -> None:
    run = game(name)
    header = run.match.header
    assert Header.from_json(json.loads(json.dumps(header.to_json()))) == header
    for record in run.records:
        assert by_json(record) == record, record


def test_connection_resume_and_no_show_records_round_trip() -> None:
    """The records a whole game does not make: a reconnection, an abandonment, a resume, a no-show."""
    match = new_match(dataclasses.replace(CLOCK, reconnect_grace_ms=1_000), t=T0)
    out = connect_all(match, T0)
    out += match.handle(Disconnect(stream(1)), T0 + 0.5)
    out += match.handle(Connect(201, 1, "bot1", "2"), T0 + 0.75)
    out += match.handle(Disconnect(stream(2)), T0 + 1.0)
    out += tick(match, T0 + 2.0)
    out += match.handle(Stop(), T0 + 3.0)
    resumed = Match.resume(match.header, game_records(out)[:5], now=T0, wall=0.0)
    absent = new_match(dataclasses.replace(CLOCK, start_timeout_ms=1_000), t=T0)
    out += resumed.drain() + connect_all(absent, T0, [0]) + tick(absent, T0 + 1.0)
    records = game_records(out)
    assert {r.kind for r in records} >= {"connection", "resume", "result"}
    assert any(isinstance(r, ResultRecord) and r.absent == (1, 2, 3) for r in records)
    for record in records:
        assert by_json(record) == record, record


@pytest.mark.parametrize("name", GAMES)
def test_the_whole_replay_re_runs_and_its_statistics_are_the_matchs(name: str) -> None:
    """DESIGN §6: a replay re-runs through the rules, timeouts' defaults included; the tally counted
    from the records is the live match's."""
    run = game(name)
    checked = rerun(run.match.header, [by_json(r) for r in run.records])
    assert checked.version == run.match.state_version
    assert state_to_json(checked.state) == state_to_json(run.match.state)
    assert checked.tally.summary() == run.match.tally.summary()
    live = run.match.summary()
    assert [s.counts() for s in checked.tally.summary()] == [s.counts() for s in live]
    (result,) = [r for r in run.records if isinstance(r, ResultRecord)]
    assert result.summary == live
    assert run.match.result is not None and run.match.result.summary == live
    assert run.match.result.statistics() == run.match.statistics()
    # The counts are about the game: every accepted answer and window answer, every timeout.
    decisions = sum(isinstance(r, DecisionRecord) for r in run.records)
    window_answers = sum(len(r.times_ms) for r in run.records if isinstance(r, WindowRecord))
    assert sum(s.decisions for s in live) == decisions + window_answers
    assert sum(s.timeouts for s in live) == sum(isinstance(r, ViolationRecord) for r in run.records)


@pytest.mark.parametrize("name", GAMES)
def test_a_replay_that_differs_from_the_engine_is_refused(name: str) -> None:
    """The re-run is a check, not a replay of whatever the file says (R-DEF-1, R-BOMB-9)."""
    run = game(name)
    header, records = run.match.header, run.records
    default = next(i for i, r in enumerate(records) if isinstance(r, ViolationRecord) and r.is_move)
    window = next(i for i, r in enumerate(records) if isinstance(r, WindowRecord) and r.bomb is not None)
    timed_out, resolved = records[default], records[window]
    assert isinstance(timed_out, ViolationRecord) and isinstance(resolved, WindowRecord)
    wrong_default = dataclasses.replace(timed_out, default=Decline())  # not the engine's default
    wrong_window = dataclasses.replace(resolved, bomb=None)  # as if the bomb had not applied
    wrongs: list[tuple[int, Record]] = [(default, wrong_default), (window, wrong_window)]
    for index, wrong in wrongs:
        with pytest.raises(ReplayMismatchError):
            rerun(header, [*records[:index], wrong, *records[index + 1 :]])


def resume_points(records: list[Record]) -> list[int]:
    """Where to cut a replay: before every eighth move, before every sixth window record, inside a
    move's events (a referee stopped between writing a move and its events), and just after the
    start."""
    moves = [i for i, r in enumerate(records) if is_move(r)]
    windows = [i for i, r in enumerate(records) if isinstance(r, WindowRecord)]
    inside = [i + 2 for i in moves if i + 2 < len(records) and isinstance(records[i + 2], EventRecord)]
    start = next(i for i, r in enumerate(records) if r.kind == "start")
    return sorted({start + 1, *moves[::8], *windows[::6], *inside[::8], len(records) - 1})


def resumed(name: str, cut: int) -> tuple[Match, list[Record]]:
    """The game's replay cut after `cut` records, resumed and played on by the same seats; the
    resumed match and the whole replay (the prefix, then what the resumed match wrote)."""
    run = game(name)
    prefix = run.records[:cut]
    match = Match.resume(run.match.header, prefix, now=RESUMED_AT, wall=0.0)
    restored = match.drain()
    seated = connect_all(match, RESUMED_AT)
    out, _ = play_out(match, policies(match.players, f"{name}/{SEED}"), RESUMED_AT, given=seated)
    return match, prefix + game_records(restored + seated + out)


@pytest.mark.parametrize(
    ("name", "cut"), [(name, cut) for name in GAMES for cut in resume_points(game(name).records)]
)
def test_a_resumed_match_ends_as_the_original_did(name: str, cut: int) -> None:
    original = game(name)
    match, replay = resumed(name, cut)
    assert [isinstance(r, ResumeRecord) for r in replay].count(True) == 1
    assert match.result is not None and original.match.result is not None
    assert (match.result.winner, match.result.scores) == (
        original.match.result.winner,
        original.match.result.scores,
    )
    assert state_to_json(match.state) == state_to_json(original.match.state)
    # The same game, event for event, and the joined replay re-runs.
    assert [r.event for r in replay if isinstance(r, EventRecord)] == [
        r.event for r in original.records if isinstance(r, EventRecord)
    ]
    checked = rerun(match.header, replay)
    assert checked.version == match.state_version
    assert [e.json for e in match.full_log] == [e.json for e in original.match.full_log]


@pytest.mark.parametrize("name", GAMES)
def test_the_same_inputs_at_the_same_times_give_the_same_outputs(name: str) -> None:
    first, second = play(name, SEED), play(name, SEED)
    assert first.outputs == second.outputs
    assert len(first.outputs) > 1_000
    assert first.records == game(name).records
