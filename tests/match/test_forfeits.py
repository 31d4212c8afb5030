"""Violations and forfeits (max_violations), and the start timeout (no-shows), with explicit times."""

from __future__ import annotations

import dataclasses

import pytest

from referee.match import Match
from referee.match.messages import (
    Accepted,
    Cancelled,
    Close,
    Connect,
    Disconnect,
    Finished,
    Output,
    Refused,
    ResultMessage,
    Snapshot,
    Welcome,
)
from referee.match.moves import rerun
from referee.match.outcome import Termination
from referee.match.records import Abandoned, ResultRecord, ViolationRecord, WindowRecord
from referee.rules import DecisionKind, Phase, default_action, state_from_json
from tests.match.support import (
    CLOCK,
    answer,
    connect_all,
    game_records,
    messages,
    new_match,
    records,
    request_of,
    requests,
    state_of,
    stream,
    tick,
)

T0 = 10.0
US = 1e-6
# No bank: a regular request is due limit + grace = 1.5 s after it leaves.
STEP_S = 1.5


def with_silent_seat(limit: int, silent: int = 1) -> tuple[Match, list[Output]]:
    """A new game whose seat `silent` never answers; the others answer every request at once with
    the engine's default. Ticks at each deadline until the match ends or three steps are over."""
    match = new_match(dataclasses.replace(CLOCK, bank_ms=0, max_violations=limit), t=T0)
    out = connect_all(match, T0)
    everything = list(out)
    t = T0
    for _ in range(3):
        for seat in range(4):
            if seat != silent:
                for request in requests(out, seat):
                    everything += answer(match, request, default_action(state_of(request), seat), t)
        t += STEP_S
        out = tick(match, t)
        everything += out
        if match.status == "finished":
            break
    return match, everything


@pytest.mark.parametrize(("limit", "forfeit_after"), [(0, None), (1, 2), (2, 3), (3, None)])
def test_a_team_forfeits_on_the_timeout_past_max_violations(limit: int, forfeit_after: int | None) -> None:
    """max_violations = N: the N+1th timeout forfeits the seat's team; 0 never forfeits."""
    match, out = with_silent_seat(limit)
    violations = records(out, ViolationRecord)
    assert {v.seat for v in violations} == {1}
    assert [v.count for v in violations] == list(range(1, len(violations) + 1))
    if forfeit_after is None:
        assert match.status == "running" and len(violations) == 3
        return
    assert match.status == "finished" and len(violations) == forfeit_after
    result = match.result
    assert result is not None
    assert (result.winner, result.forfeiting_team, result.forfeit, result.scores) == (0, 1, True, (0, 0))
    assert result.reason == (
        f"seat 1 ran out of time {forfeit_after} times (at most {limit} allowed): team B forfeits"
    )
    assert (result.round_scores, result.hands, result.state_version) == ((), 0, match.state_version)
    assert result.outcome.termination is Termination.OUT_OF_TIME
    assert result.summary[1].timeouts == forfeit_after
    (record,) = records(out, ResultRecord)
    assert (record.winner, record.forfeiting_team, record.reason, record.absent) == (0, 1, result.reason, ())
    assert record.outcome == result.outcome and record.rounds == 1
    assert record.summary == result.summary and record.ends_unfinished_game
    assert out[-1] == Finished(result)
    # The replay re-runs: the forfeiting timeout's default is checked but never applied.
    rerun(match.header, game_records(out))


def test_the_forfeiting_timeouts_default_is_not_taken() -> None:
    match, out = with_silent_seat(2)
    last = records(out, ViolationRecord)[-1]
    assert last.decision is DecisionKind.EXCHANGE
    # Seat 1's exchange was never made: the game stands where the timeout found it.
    assert match.state.phase is Phase.EXCHANGE and match.state.exchange[1] is None
    assert all(match.state.exchange[seat] is not None for seat in (0, 2, 3))
    assert match.state_version == last.version


def test_after_the_result_every_stream_gets_it_and_closes_normally() -> None:
    match, out = with_silent_seat(1)
    assert match.result is not None
    for seat in range(4):
        assert [m for m in messages(out, seat) if isinstance(m, ResultMessage)] == [
            ResultMessage(match.result)
        ]
        assert Close(stream(seat), None, "") in out
    # Nothing is due any more and nothing changes the result.
    assert match.next_deadline() is None
    assert tick(match, T0 + 100.0) == []
    assert match.handle(Disconnect(stream(0)), T0 + 100.0) == []


def test_open_requests_are_cancelled_when_a_forfeit_ends_the_match() -> None:
    """Seat 1's second timeout forfeits while seats 2 and 3 still owe their pre-step answers."""
    strict = new_match(dataclasses.replace(CLOCK, bank_ms=0, max_violations=1), t=T0)
    reqs = connect_all(strict, T0)
    for seat in (0, 2, 3):
        answer(strict, request_of(reqs, seat), "no_grand_tichu", T0)
    out = tick(strict, T0 + STEP_S)  # seat 1: first timeout, allowed
    steps = {seat: request_of(out, seat, DecisionKind.TICHU_STEP) for seat in range(4)}
    # Every seat times out at once, handled in seat order: seat 0's default is taken, then seat 1's
    # second timeout ends the match.
    out = tick(strict, T0 + 2 * STEP_S)
    violations = records(out, ViolationRecord)
    assert [(v.seat, v.count) for v in violations] == [(0, 1), (1, 2)]
    cancelled = [m for seat in (2, 3) for m in messages(out, seat) if isinstance(m, Cancelled)]
    assert cancelled == [
        Cancelled(steps[2].request_id, "the match is over"),
        Cancelled(steps[3].request_id, "the match is over"),
    ]
    assert strict.result is not None and strict.result.forfeiting_team == 1


def test_window_timeouts_count_too_and_a_forfeit_leaves_the_window_unresolved() -> None:
    position = {"hands": ["7s 9j", "8s Kt", "2j 3s", "3p 4s"], "turn": 0}
    match = new_match(
        dataclasses.replace(CLOCK, max_violations=1), initial_state=state_from_json(position), t=T0
    )
    lead = request_of(connect_all(match, T0), 0)
    out = answer(match, lead, "play 7s", T0)
    windows = {seat: request_of(out, seat, DecisionKind.BOMB_WINDOW) for seat in range(4)}
    for seat in (1, 2, 0):
        answer(match, windows[seat], "decline", T0 + 0.25)
    out = tick(match, T0 + 2.5)  # seat 3's first timeout: declined for it
    assert [(v.seat, v.decision, v.count) for v in records(out, ViolationRecord)] == [
        (3, DecisionKind.BOMB_WINDOW, 1)
    ]
    assert len(records(out, WindowRecord)) == 1
    turn = request_of(out, 1, DecisionKind.PLAY)
    out = answer(match, turn, "pass", T0 + 3.0)
    windows = {seat: request_of(out, seat, DecisionKind.BOMB_WINDOW) for seat in range(4)}
    for seat in (2, 0, 1):
        answer(match, windows[seat], "decline", T0 + 3.25)
    out = tick(match, T0 + 5.5)
    assert [v.count for v in records(out, ViolationRecord)] == [2]
    assert records(out, WindowRecord) == []  # the match ended before the window resolved
    assert match.result is not None and match.result.forfeiting_team == 1


# ----------------------------------------------------------------------------- the start timeout

START = dataclasses.replace(CLOCK, start_timeout_ms=4_000)


@pytest.mark.parametrize(
    ("present", "winner", "forfeiting", "reason"),
    [
        ([0, 1, 2], 0, 1, "seat 3 did not connect within 4 s: team B forfeits"),
        ([1, 3], 1, 0, "seat 0, 2 did not connect within 4 s: team A forfeits"),
        ([0, 1], None, None, "no contest: seats 2, 3 did not connect within 4 s"),
        ([], None, None, "no contest: seats 0, 1, 2, 3 did not connect within 4 s"),
    ],
)
def test_seats_missing_at_the_start_timeout(
    present: list[int], winner: int | None, forfeiting: int | None, reason: str
) -> None:
    """A team with a seat absent forfeits; with both teams absent nobody wins; the absent are listed."""
    match = new_match(START, t=T0)
    out = connect_all(match, T0 + 1.0, present)
    assert match.next_deadline() == T0 + 4.0  # from the match's creation
    assert tick(match, T0 + 4.0 - US) == []
    out += tick(match, T0 + 4.0)
    result = match.result
    assert result is not None and match.status == "finished"
    assert (result.winner, result.forfeiting_team, result.reason) == (winner, forfeiting, reason)
    assert result.outcome.termination is Termination.NO_SHOW
    (record,) = records(out, ResultRecord)
    assert record.absent == tuple(s for s in range(4) if s not in present)
    assert record.ends_unfinished_game
    assert match.state_version == 0  # no decision was ever asked
    for seat in present:
        assert ResultMessage(result) in messages(out, seat)
    rerun(match.header, game_records(out))


def test_a_seat_that_came_and_went_counts_as_absent() -> None:
    match = new_match(START, t=T0)
    out = connect_all(match, T0, [0, 1, 2])
    out += match.handle(Disconnect(stream(1)), T0 + 1.0)
    out += tick(match, T0 + 4.0)
    (record,) = records(out, ResultRecord)
    assert (record.absent, record.forfeiting_team, record.winner) == ((1, 3), 1, 0)


def test_a_late_seat_after_the_result_is_told_it_and_closed() -> None:
    match = new_match(START, t=T0)
    connect_all(match, T0, [0, 1, 2])
    tick(match, T0 + 4.0)
    out = match.handle(Connect(stream(3), 3, "late"), T0 + 5.0)
    assert match.result is not None
    kinds = [type(o) for o in out]
    assert kinds[0] is Accepted and kinds[-1] is Close
    sent = messages(out, 3)
    assert [type(m) for m in sent] == [Welcome, Snapshot, ResultMessage]
    assert out[-1] == Close(stream(3), None)


def test_a_seat_that_comes_after_the_timeout_but_before_the_tick_is_told_the_result() -> None:
    """The deadline that passed before the Connect ends the match first (the seat was absent then);
    the Connect is then a late one, answered with the result, not left without an answer."""
    match = new_match(START, t=T0)
    connect_all(match, T0, [0, 1, 2])
    out = match.handle(Connect(stream(3), 3, "late"), T0 + 4.25)
    (record,) = records(out, ResultRecord)
    assert record.absent == (3,) and match.result is not None
    assert Accepted(stream(3)) in out
    assert [type(m) for m in messages(out, 3)] == [Welcome, Snapshot, ResultMessage]
    assert out[-1] == Close(stream(3), None)


def test_a_seat_back_after_its_grace_but_before_the_tick_is_refused() -> None:
    """The grace that ended before the Connect is handled first: the seat is abandoned, when the
    referee finds out (the record's time), and the Connect refused."""
    match = new_match(dataclasses.replace(CLOCK, reconnect_grace_ms=1_000), t=T0)
    connect_all(match, T0)
    match.handle(Disconnect(stream(1)), T0 + 0.25)
    out = match.handle(Connect(201, 1, "bot1"), T0 + 1.5)  # the grace ended at T0 + 1.25
    assert records(out, Abandoned) == [Abandoned(1, 1_500.0)]
    assert out[-1] == Refused(201, "seat 1 did not reconnect within the grace period")


def test_a_start_timeout_of_zero_waits_for_ever() -> None:
    match = new_match(dataclasses.replace(CLOCK, start_timeout_ms=0), t=T0)
    assert match.next_deadline() is None
    connect_all(match, T0, [0, 2])
    assert match.next_deadline() is None
    assert tick(match, T0 + 10_000_000.0) == []
    assert match.result is None and match.seat_info()[1].connected is False
    connect_all(match, T0 + 10_000_001.0, [1, 3])
    assert match.status == "running"


def test_the_start_timeout_stops_once_every_seat_is_there() -> None:
    match = new_match(START, t=T0)
    out = connect_all(match, T0 + 3.0)
    assert match.status == "running"
    assert match.next_deadline() == T0 + 3.0 + 1.0 + 4.0 + 0.5  # the Grand Tichu requests
    assert records(tick(match, T0 + 4.0), ResultRecord) == []
    assert requests(out, 0, DecisionKind.GRAND_TICHU)
