"""Hello.referee_declines, referee_passes and defer_events in the match core, at explicit times:
the same game move for move, fewer requests, events held until the request they lead to."""

from __future__ import annotations

from dataclasses import replace

import pytest

from referee.match import Match
from referee.match.messages import Connect, EventMessage, Output, Request, ResultMessage, SeatOptions, Send
from referee.match.moves import ReplayMismatchError, rerun
from referee.match.records import DecisionRecord, Record, WindowRecord
from referee.rules import DecisionKind, legal_actions
from tests.match.support import (
    Answer,
    Policy,
    game_records,
    new_match,
    play_out,
    seat_of,
    seeded_policy,
    state_of,
    stream,
)


def quick(seed: str) -> Policy:
    """A seeded seat that answers at once and is never silent: no clock can tell two runs apart."""
    policy = seeded_policy(seed, silent_rate=0.0)

    def choose(request: Request) -> Answer:
        return replace(policy(request), think_s=0.0)

    return choose


def play(seed: int, *, declines: bool, defer: bool, passes: bool = False) -> tuple[Match, list[Output]]:
    match = new_match(seed=seed)
    given: list[Output] = []
    for seat in range(match.players):
        options = SeatOptions(referee_declines=declines, defer_events=defer, referee_passes=passes)
        hello = Connect(stream(seat), seat, f"bot{seat}", "1.0", options)
        given += match.handle(hello, 0.0)
    outputs, _ = play_out(match, [quick(f"d{seed}/{s}") for s in range(match.players)], 0.0, given=given)
    return match, given + outputs


def moves(records: list[Record]) -> list[tuple[object, ...]]:
    """The game's moves without their timing or how they were delivered."""
    found: list[tuple[object, ...]] = []
    for record in records:
        if isinstance(record, DecisionRecord):
            found.append((record.seat, record.version, str(record.action)))
        elif isinstance(record, WindowRecord):
            found.append((record.version, record.answers, record.bomb, record.call))
    return found


def requests_of(outputs: list[Output], kind: DecisionKind) -> list[Request]:
    return [
        o.message
        for o in outputs
        if isinstance(o, Send) and isinstance(o.message, Request) and o.message.kind is kind
    ]


def window_requests(outputs: list[Output]) -> int:
    return len(requests_of(outputs, DecisionKind.BOMB_WINDOW))


@pytest.mark.parametrize("seed", [3, 11])
def test_referee_declines_play_the_same_game_with_fewer_requests(seed: int) -> None:
    plain, plain_out = play(seed, declines=False, defer=False)
    declined, declined_out = play(seed, declines=True, defer=True)
    plain_records, declined_records = game_records(plain_out), game_records(declined_out)
    assert plain.result is not None and declined.result is not None
    assert (declined.result.winner, declined.result.scores) == (plain.result.winner, plain.result.scores)
    assert moves(declined_records) == moves(plain_records)
    windows = [r for r in declined_records if isinstance(r, WindowRecord)]
    declined_for = sum(len(r.referee_declined) for r in windows)
    assert declined_for > 0
    assert not any(r.referee_declined for r in plain_records if isinstance(r, WindowRecord))
    # Each seat declined for is a window request that was never sent.
    assert window_requests(plain_out) - window_requests(declined_out) == declined_for
    # The replay names them, and re-runs: the engine agrees each one could only decline.
    assert all(WindowRecord.from_json(r.to_json()) == r for r in windows if r.referee_declined)
    rerun(declined.header, declined_records)


def test_a_replay_that_declines_for_a_seat_that_could_bomb_or_call_is_refused() -> None:
    match, outputs = play(3, declines=True, defer=False)
    records = game_records(outputs)
    # A seat the referee asked in a window is one that could bomb or call (R-BOMB-5, R-CALL-1).
    index, record = next(
        (i, r)
        for i, r in enumerate(records)
        if isinstance(r, WindowRecord)
        and any(seat not in r.referee_declined for seat in r.order)
        and all(str(a) == "decline" for _, a in r.answers)
    )
    asked = next(seat for seat in record.order if seat not in record.referee_declined)
    forged = replace(record, referee_declined=(*record.referee_declined, asked))
    with pytest.raises(ReplayMismatchError, match=f"declined this window for seat {asked}"):
        rerun(match.header, [*records[:index], forged, *records[index + 1 :]])


def held_until_asked(outputs: list[Output], seat: int) -> bool:
    """Whether every event to `seat` leaves in one unbroken run with others of its own, just
    before the seat's request or result, or as the end of a round."""
    run: list[EventMessage] = []
    for o in outputs:
        message = o.message if isinstance(o, Send) and seat_of(o.stream) == seat else None
        if isinstance(message, EventMessage):
            run.append(message)
            continue
        led_to = isinstance(message, Request | ResultMessage)
        if run and run[-1].type != "round_scored" and not led_to:
            return False  # something else came between the events and what they lead to
        run = []
    return not run


def events_of(outputs: list[Output], seat: int) -> list[tuple[int, int, str]]:
    return [
        (o.message.seq, o.message.state_version, o.message.type)
        for o in outputs
        if isinstance(o, Send) and seat_of(o.stream) == seat and isinstance(o.message, EventMessage)
    ]


def test_deferred_events_arrive_with_the_next_request_and_none_is_lost() -> None:
    _, plain_out = play(5, declines=True, defer=False)
    _, deferred_out = play(5, declines=True, defer=True)
    assert moves(game_records(deferred_out)) == moves(game_records(plain_out))
    for seat in range(4):
        # The same events, numbered alike, in the same order: only when they leave differs.
        assert events_of(deferred_out, seat) == events_of(plain_out, seat)
        assert held_until_asked(deferred_out, seat)
        assert not held_until_asked(plain_out, seat)  # as they happen, events often come alone


@pytest.mark.parametrize("seed", [3, 11])
def test_referee_passes_play_the_same_game_with_fewer_requests(seed: int) -> None:
    plain, plain_out = play(seed, declines=True, defer=False)
    passed, passed_out = play(seed, declines=True, defer=False, passes=True)
    plain_records, passed_records = game_records(plain_out), game_records(passed_out)
    assert plain.result is not None and passed.result is not None
    assert (passed.result.winner, passed.result.scores) == (plain.result.winner, plain.result.scores)
    assert moves(passed_records) == moves(plain_records)
    by_referee = [r for r in passed_records if isinstance(r, DecisionRecord) and r.by_referee]
    assert by_referee and not any(isinstance(r, DecisionRecord) and r.by_referee for r in plain_records)
    # Each is a pass on a turn, with no request and no time used, and every one of them is a turn
    # the plain run asked about: a request that listed nothing but a pass.
    assert {(r.request_id, r.decision, str(r.action), r.time_used_ms) for r in by_referee} == {
        (0, DecisionKind.PLAY, "pass", 0.0)
    }
    forced = [
        (q.seat, q.state_version)
        for q in requests_of(plain_out, DecisionKind.PLAY)
        if [str(a) for a in legal_actions(state_of(q), q.seat)] == ["pass"]
    ]
    assert sorted((r.seat, r.version) for r in by_referee) == sorted(forced)
    plain_turns = len(requests_of(plain_out, DecisionKind.PLAY))
    assert plain_turns - len(requests_of(passed_out, DecisionKind.PLAY)) == len(by_referee)
    # The seat's statistics count what it decided, as for the windows declined for it.
    for counted in passed.tally.seats:
        asked = [r for r in passed_records if isinstance(r, DecisionRecord) and r.seat == counted.seat]
        timed = [s for r in passed_records if isinstance(r, WindowRecord) for s, _ in r.times_ms]
        assert counted.decisions == sum(not r.by_referee for r in asked) + timed.count(counted.seat)
    # The line says so only when it is so, reads back as written, and the replay re-runs.
    assert all(DecisionRecord.from_json(r.to_json()) == r for r in by_referee)
    assert (
        "by_referee"
        not in next(r for r in passed_records if isinstance(r, DecisionRecord) and not r.by_referee).to_json()
    )
    rerun(passed.header, passed_records)


def test_a_replay_that_passes_for_a_seat_that_could_play_is_refused() -> None:
    match, outputs = play(3, declines=True, defer=False, passes=True)
    records = game_records(outputs)
    # An asked pass is one from a seat that had something else to do (a play, a bomb or a call).
    index, record = next(
        (i, r)
        for i, r in enumerate(records)
        if isinstance(r, DecisionRecord)
        and r.decision is DecisionKind.PLAY
        and str(r.action) == "pass"
        and not r.by_referee
    )
    forged = replace(record, by_referee=True)
    with pytest.raises(ReplayMismatchError, match=f"passed for seat {record.seat}, which could do more"):
        rerun(match.header, [*records[:index], forged, *records[index + 1 :]])
