"""The spectators' logs: public events `watch_delay_events` behind, every event for the full view."""

from __future__ import annotations

import json

from referee.match import Match
from referee.match.messages import Stop
from referee.match.records import EventRecord
from referee.rules import GrandTichu
from tests.match.support import answer, connect_all, new_match, records, request_of, tick

T0 = 10.0
DELAY = 3


def shown(match: Match, full: bool) -> list[str]:
    """The types of the events a spectator may see now."""
    log, upto = match.spectator_log(full)
    return [entry.type for entry in log[:upto]]


def test_the_public_view_lags_by_the_delay_and_the_full_view_does_not() -> None:
    match = new_match(watch_delay_events=DELAY, t=T0)
    assert shown(match, False) == [] and shown(match, True) == []
    out = connect_all(match, T0)
    # The deal: one public event and a private one per seat (R-INFO-1).
    assert shown(match, True) == ["round_started"] + ["cards_dealt"] * 4
    assert [e.type for e in match.public_log] == ["round_started"]
    assert shown(match, False) == []  # 1 public event, 3 held back
    reqs = {seat: request_of(out, seat) for seat in range(4)}
    for seat in range(4):
        out += answer(match, reqs[seat], GrandTichu(False), T0 + 1.0)
    # Each answer is revealed together: four call_declined, then the last six cards (private).
    public = [e.type for e in match.public_log]
    assert public == ["round_started"] + ["call_declined"] * 4
    assert shown(match, False) == public[: len(public) - DELAY]
    assert shown(match, True) == [e.type for e in match.full_log]
    # The logs hold exactly the events the replay has.
    assert [e.json for e in match.full_log] == [
        json.dumps(r.data, separators=(",", ":")) for r in records(out, EventRecord)
    ]


def test_private_events_are_only_in_the_full_log() -> None:
    match = new_match(t=T0)
    connect_all(match, T0)
    private = [e for e in match.full_log if e.type == "cards_dealt"]
    assert len(private) == 4 and all(e not in match.public_log for e in private)
    assert {json.loads(e.json)["seat"] for e in private} == {0, 1, 2, 3}
    # Every entry keeps the state version its event belongs to, as on the wire.
    assert {e.state_version for e in match.full_log} == {0}


def test_once_the_match_is_over_the_public_view_shows_everything() -> None:
    match = new_match(watch_delay_events=DELAY, t=T0)
    connect_all(match, T0)
    tick(match, T0 + 5.5)  # every Grand Tichu request times out: four public reveals
    assert len(shown(match, False)) == len(match.public_log) - DELAY
    match.handle(Stop(), T0 + 6.0)
    assert shown(match, False) == [e.type for e in match.public_log]


def test_a_delay_longer_than_the_log_shows_nothing() -> None:
    match = new_match(watch_delay_events=1_000, t=T0)
    connect_all(match, T0)
    tick(match, T0 + 5.5)
    assert shown(match, False) == []


def test_a_viewer_clock_shows_whom_the_match_waits_for_and_for_how_long() -> None:
    match = new_match(t=T0)
    assert match.clocks(T0, full=False) == ()  # nobody is asked before the game starts
    out = connect_all(match, T0)
    asked = match.clocks(T0 + 2.5, full=False)
    # The first decision (R-GT-1) is asked of every seat at once, each with its own clock.
    assert [(c.seat, c.kind) for c in asked] == [(seat, "grand_tichu") for seat in range(4)]
    clock = match.clock
    for c in asked:
        assert c.used_s == 2.5 and c.limit_s == clock.decision_ms / 1000 and c.bank_s == clock.bank_ms / 1000
        assert c.left_s == c.limit_s + c.bank_s - 2.5
    answer(match, request_of(out, 1), GrandTichu(False), T0 + 3.0)
    assert [c.seat for c in match.clocks(T0 + 3.0, full=False)] == [0, 2, 3]


def test_a_delayed_public_view_gets_no_clock() -> None:
    match = new_match(watch_delay_events=DELAY, t=T0)
    connect_all(match, T0)
    # Who is asked now is ahead of what a delayed view may show; the full view sees it.
    assert match.clocks(T0 + 1, full=False) == ()
    assert len(match.clocks(T0 + 1, full=True)) == 4
    match.handle(Stop("over"), T0 + 2)
    assert match.clocks(T0 + 2, full=True) == ()
