"""No side channel in the simultaneous phases (R-INFO-1, R-GT-1, R-CALL-6, R-EXCH-3, R-BOMB-5).

Two runs of one match differ only in whether another seat has given its hidden answer (to the
Grand Tichu question, the pre-exchange Tichu step, the exchange, a bomb window). Everything the
watching seat is sent, every version in it included, must be the same in both runs until the
answers are revealed: whatever it sends (a Tichu call with the latest version it has seen, a
malformed Decision, a reconnection, its own answer), it is told the same thing.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any

import pytest

from referee.match import Match, RejectionReason
from referee.match.messages import (
    Connect,
    Decision,
    Disconnect,
    EventMessage,
    Input,
    OutMessage,
    OutOfTurn,
    Output,
    Ping,
    Received,
    Rejection,
    Request,
    Send,
    Snapshot,
)
from referee.match.requests import Changes
from referee.rules import (
    OFFICIAL,
    CallTichu,
    DecisionKind,
    Phase,
    RulesConfig,
    default_action,
    parse_action,
    state_from_json,
    to_act,
)
from tests.match.support import connect_all, new_match, stream

T0 = 10.0
WATCHER = 0  # the seat whose view is compared
OTHER = 1  # the seat that answers in one run and not (yet) in the other
RECONNECT = 150  # the watcher's second stream
OPEN_CALLS = replace(OFFICIAL, tichu_call_exchange_mode="open")  # Tichu calls during the exchange


@dataclass
class Run:
    """One run of a match and everything its seats were sent, stream by stream."""

    match: Match
    sent: dict[int, list[OutMessage]] = field(default_factory=dict)
    pending: dict[int, Request] = field(default_factory=dict)  # each seat's last request

    def feed(self, outputs: Iterable[Output]) -> None:
        for o in outputs:
            if isinstance(o, Send):
                self.sent.setdefault(o.stream, []).append(o.message)
                if isinstance(o.message, Request):
                    self.pending[o.message.seat] = o.message

    def handle(self, item: Input, t: float) -> None:
        self.feed(self.match.handle(item, t))

    def seen(self, seat: int) -> list[OutMessage]:
        """What the seat's streams were sent, in order."""
        streams = (stream(seat), RECONNECT) if seat == WATCHER else (stream(seat),)
        return [m for s in streams for m in self.sent.get(s, [])]

    def latest_version(self, seat: int) -> int:
        """The latest state version the seat has seen, as a bot keeps it (the SDK does so)."""
        versions = [
            m.state_version
            for m in self.seen(seat)
            if isinstance(m, EventMessage | Request | Snapshot | Rejection)
        ]
        return max(versions, default=0)

    def answer(self, seat: int, t: float, text: str | None = None) -> None:
        """The seat answers its last request (with the engine's default unless told)."""
        request = self.pending.pop(seat)
        action = default_action(self.match.state, seat) if text is None else parse_action(text)
        self.handle(Received(stream(seat), Decision(request.request_id, request.state_version, action)), t)

    def answer_all(self, t: float) -> None:
        """Every seat with an open request answers it with its default, in seat order."""
        for seat in sorted(self.pending):
            self.answer(seat, t)


def start(config: RulesConfig = OFFICIAL, phase: Phase = Phase.GRAND_TICHU) -> Run:
    """A match whose seats have all connected, played on by defaults until `phase`."""
    run = Run(new_match(config=config, seed=16, t=T0))
    run.feed(connect_all(run.match, T0))
    while run.match.state.phase is not phase:
        run.answer_all(T0)
    assert sorted(run.pending) == [0, 1, 2, 3], "every seat owes the simultaneous decision"
    return run


def probe(run: Run, t: float) -> None:
    """The watcher does what a bot might while the others decide: a Tichu call on the latest version
    it has seen, a malformed Decision, a Ping, a reconnection, and finally its own answer."""
    match, seat = run.match, WATCHER
    run.handle(Received(stream(seat), OutOfTurn(run.latest_version(seat), CallTichu())), t)
    request = run.pending[seat]
    run.handle(Received(stream(seat), Decision(request.request_id, request.state_version, None)), t + 0.125)
    run.handle(Received(stream(seat), Ping(3)), t + 0.25)
    run.handle(Disconnect(stream(seat)), t + 0.375)
    run.handle(Connect(RECONNECT, seat, "bot0", "1.0"), t + 0.5)
    request = run.pending.pop(seat)
    if seat in to_act(match.state):  # in the pre-step, the call was the seat's answer (R-CALL-6)
        action = default_action(match.state, seat)
        run.handle(
            Received(RECONNECT, Decision(request.request_id, request.state_version, action)), t + 0.625
        )
    run.handle(Received(RECONNECT, OutOfTurn(run.latest_version(seat), CallTichu())), t + 0.75)


def two_runs(config: RulesConfig, phase: Phase) -> tuple[Run, Run]:
    """The same match twice: seat 1 answers before the watcher's probe in one run, after it in the other."""
    early, late = start(config, phase), start(config, phase)
    early.answer(OTHER, T0 + 0.25)
    probe(early, T0 + 0.5)
    probe(late, T0 + 0.5)
    late.answer(OTHER, T0 + 1.5)
    return early, late


@pytest.mark.parametrize(
    ("config", "phase"),
    [
        (OFFICIAL, Phase.GRAND_TICHU),
        (OFFICIAL, Phase.TICHU_STEP),
        (OFFICIAL, Phase.EXCHANGE),
        (OPEN_CALLS, Phase.EXCHANGE),
    ],
    ids=["grand-tichu", "tichu-step", "exchange", "exchange-open-calls"],
)
def test_a_seat_is_told_the_same_whether_another_has_answered(config: RulesConfig, phase: Phase) -> None:
    early, late = two_runs(config, phase)
    assert early.match.state.phase is phase, "the answers are still hidden"
    assert early.seen(WATCHER) == late.seen(WATCHER)
    # The latest version the watcher has seen is always accepted (never STALE, never "ahead").
    refused = [m for m in early.seen(WATCHER) if isinstance(m, Rejection)]
    assert not [r for r in refused if r.reason is RejectionReason.STALE], refused
    # The revelation comes with the last answer, and from then on both runs agree too.
    for run in (early, late):
        run.answer(2, T0 + 2.0)
        run.answer(3, T0 + 2.0)
        assert run.match.state.phase is not phase
    assert early.seen(WATCHER) == late.seen(WATCHER)


def test_a_tichu_call_in_the_open_exchange_is_accepted_on_the_latest_version_seen() -> None:
    """The issue's case: others' exchanges must not make the watcher's call STALE (R-CALL-6 open)."""
    run = start(OPEN_CALLS, Phase.EXCHANGE)
    run.answer(1, T0 + 0.25)
    run.answer(2, T0 + 0.25)
    run.handle(Received(stream(WATCHER), OutOfTurn(run.latest_version(WATCHER), CallTichu())), T0 + 0.5)
    called = [m for m in run.seen(WATCHER) if isinstance(m, EventMessage) and m.type == "called"]
    assert [m.json for m in called][-1:] == ['{"type":"called","seat":0,"call":"tichu"}']
    assert not [m for m in run.seen(WATCHER) if isinstance(m, Rejection)]


def test_a_public_change_still_makes_an_older_version_stale() -> None:
    """Seat 2's Tichu call in the exchange is public: an OutOfTurn decided before it is STALE, and the
    rejection names only the call, not the hidden exchanges."""
    run = start(OPEN_CALLS, Phase.EXCHANGE)
    before = run.latest_version(WATCHER)
    run.answer(1, T0 + 0.25)
    run.handle(Received(stream(2), OutOfTurn(run.latest_version(2), CallTichu())), T0 + 0.375)
    run.handle(Received(stream(WATCHER), OutOfTurn(before, CallTichu())), T0 + 0.5)
    rejection = [m for m in run.seen(WATCHER) if isinstance(m, Rejection)][-1]
    assert rejection.reason is RejectionReason.STALE
    assert rejection.state_version == before + 1
    assert rejection.message == (
        f"decided on state {before}; since then: a Tichu call by seat 2 (state {before} -> {before + 1})"
    )


WINDOW_POSITION: dict[str, Any] = {
    "hands": ["7s 9j 10j", "3j 3s 3p 3t 4j", "5j 5s 5p 5t 6j", "2j 8p Kj"],
    "turn": 0,
    "played": [False, False, False, False],
}


def window_run() -> Run:
    """Seat 0 led 7s: every seat owes the bomb window."""
    run = Run(new_match(initial_state=state_from_json(WINDOW_POSITION), t=T0))
    run.feed(connect_all(run.match, T0))
    run.answer(0, T0, "play 7s")
    assert sorted(run.pending) == [0, 1, 2, 3]
    return run


def test_a_bomb_window_answer_tells_the_others_nothing() -> None:
    """Window answers are held until the window resolves (R-BOMB-5, R-BOMB-9)."""
    early, late = window_run(), window_run()
    early.answer(OTHER, T0 + 0.25, "play 3j 3s 3p 3t")
    probe(early, T0 + 0.5)
    probe(late, T0 + 0.5)
    assert early.match.state.window, "seat 2 has not answered: the window is open"
    assert early.seen(WATCHER) == late.seen(WATCHER)
    assert [p.kind for p in (early.pending[2], late.pending[2])] == [DecisionKind.BOMB_WINDOW] * 2


def test_the_grand_tichu_answers_move_no_version_until_revealed() -> None:
    """A Grand Tichu answer is told to nobody, its own seat included (no event): every seat's
    version stays where it was, then moves to the match's once the answers are revealed."""
    run = start()
    for seat in (3, 1, 2):
        run.answer(seat, T0 + 0.25)
        assert [run.match.version_for(s) for s in range(4)] == [0, 0, 0, 0]
    assert run.match.state_version == 3
    run.answer(0, T0 + 0.5)
    assert [run.match.version_for(s) for s in range(4)] == [4, 4, 4, 4] == [run.match.state_version] * 4


def test_an_exchange_moves_only_its_givers_version() -> None:
    """The giver is told its exchange (exchange_submitted, at its own new version); nobody else."""
    run = start(OFFICIAL, Phase.EXCHANGE)
    base = run.match.state_version
    run.answer(2, T0 + 0.25)
    run.answer(1, T0 + 0.25)
    assert [run.match.version_for(s) for s in range(4)] == [base, base + 1, base + 1, base]
    submitted = [m for m in run.seen(1) if isinstance(m, EventMessage)][-1]
    assert (submitted.type, submitted.state_version) == ("exchange_submitted", base + 1)


def test_a_stale_rejection_lists_at_most_four_changes() -> None:
    """Then a count of the rest; in play every change moves every seat's version."""
    state = state_from_json(WINDOW_POSITION)
    changes = Changes(state)
    for version in range(1, 7):
        changes.add(state, version, f"change {version}")
    assert changes.seats == (6, 6, 6, 6)
    assert changes.since(2, 0) == (
        "change 1 (state 0 -> 1), then change 2 (state 1 -> 2), then change 3 (state 2 -> 3), "
        "then change 4 (state 3 -> 4), and 2 more changes"
    )
    assert changes.since(2, 5) == "change 6 (state 5 -> 6)"
    assert changes.since(2, 6) == "nothing"


def test_a_public_spectator_is_told_no_hidden_answer_either() -> None:
    """Anyone may watch the public events at once (watch_delay_events 0): a Tichu call during the
    exchange is shown at the version every seat that has not exchanged was told."""
    run = start(OPEN_CALLS, Phase.EXCHANGE)
    base = run.match.state_version
    run.answer(1, T0 + 0.25)
    run.answer(2, T0 + 0.25)
    run.handle(Received(stream(3), OutOfTurn(run.latest_version(3), CallTichu())), T0 + 0.5)
    log, shown = run.match.spectator_log(full=False)
    assert (log[shown - 1].type, log[shown - 1].state_version) == ("called", base + 1)
    full, _ = run.match.spectator_log(full=True)
    assert (full[-1].type, full[-1].state_version) == ("called", base + 3)  # the replay's version
    seen = [m for m in run.seen(WATCHER) if isinstance(m, EventMessage)][-1]
    assert (seen.type, seen.state_version) == ("called", base + 1)
