"""Stale, unknown, malformed and illegal messages: refused with a typed reason, and nothing changes."""

from __future__ import annotations

from typing import Any

import pytest

from referee.match import Match, RejectionReason
from referee.match.messages import (
    BadAction,
    Decision,
    Hello,
    Message,
    Note,
    OutOfTurn,
    Received,
    Send,
    Write,
)
from referee.match.records import DecisionRecord, RejectionRecord
from referee.rules import CallTichu, DecisionKind, Decline, Pass, parse_action, state_from_json, state_to_json
from tests.match.support import (
    CLOCK,
    answer,
    connect_all,
    new_match,
    records,
    rejections,
    request_of,
    requests_by_seat,
    seat_all,
    stream,
    tick,
)

POSITION: dict[str, Any] = {
    "hands": ["7s 9j 10j", "3j 3s 3p 3t 4j", "5j 5s 5p 5t 6j", "2j 8p Kj"],
    "turn": 0,
    "played": [False, False, False, False],
}
T0 = 10.0
# Seat 1's turn request, as seat_one_to_play makes it: id 6 (the lead was 1, the window 2..5).
TURN = 6


def seat_one_to_play() -> Match:
    """P0 led 7s (state 0 -> 1) and everyone declined the window (1 -> 2): seat 1 owes its turn."""
    match = new_match(initial_state=state_from_json(POSITION), t=T0)
    out = answer(match, request_of(connect_all(match, T0), 0), "play 7s", T0 + 0.5)
    windows = {seat: request_of(out, seat, DecisionKind.BOMB_WINDOW) for seat in range(4)}
    for seat in (1, 2, 3, 0):
        out = answer(match, windows[seat], "decline", T0 + 1.0)
    turn = request_of(out, 1, DecisionKind.PLAY)
    assert (turn.request_id, turn.state_version, match.state_version) == (TURN, 2, 2)
    return match


def bad(reason: str, message: str, rule: str = "") -> BadAction:
    """An action the codec could not read."""
    return BadAction(RejectionReason(reason), message, rule)


STALE_1 = "request 6 is for state 2; since state 1: the bomb window closing (state 1 -> 2)"
STALE_0 = (
    "request 6 is for state 2; since state 0: a play by seat 0 (state 0 -> 1), "
    "then the bomb window closing (state 1 -> 2)"
)
CASES: list[tuple[str, int, Message, RejectionReason, str, str]] = [
    # (name, seat, message, reason, rule, words in the message)
    ("stale by one", 1, Decision(TURN, 1, Pass()), RejectionReason.STALE, "", STALE_1),
    ("stale by two", 1, Decision(TURN, 0, Pass()), RejectionReason.STALE, "", STALE_0),
    ("from the future", 1, Decision(TURN, 3, Pass()), RejectionReason.INVALID, "", "not 3"),
    ("unknown id", 1, Decision(999, 2, Pass()), RejectionReason.UNKNOWN_REQUEST, "", "no open request 999"),
    (
        "another seat's",
        2,
        Decision(TURN, 2, Pass()),
        RejectionReason.UNKNOWN_REQUEST,
        "",
        "no open request 6",
    ),
    ("answered window", 3, Decision(4, 1, Decline()), RejectionReason.UNKNOWN_REQUEST, "", "request 4 is"),
    (
        "a call as an answer",
        1,
        Decision(TURN, 2, CallTichu()),
        RejectionReason.INVALID,
        "",
        "a play request is answered with pass or a play, not tichu; a Tichu call is sent as OutOfTurn",
    ),
    ("the wrong kind", 1, Decision(TURN, 2, Decline()), RejectionReason.INVALID, "", "not decline"),
    ("no action", 1, Decision(TURN, 2, None), RejectionReason.INVALID, "", "a Decision needs an action"),
    (
        "unreadable",
        1,
        Decision(TURN, 2, bad("invalid", "no card Zz")),
        RejectionReason.INVALID,
        "",
        "no card Zz",
    ),
    (
        "read but illegal",
        1,
        Decision(TURN, 2, bad("illegal", "nope", "R-X")),
        RejectionReason.ILLEGAL,
        "R-X",
        "nope",
    ),
    ("too low", 1, Decision(TURN, 2, parse_action("play 4j")), RejectionReason.ILLEGAL, "R-BEAT-1", "beat"),
    ("not held", 1, Decision(TURN, 2, parse_action("play 8p")), RejectionReason.ILLEGAL, "R-INFO-2", "8p"),
    (
        "stale bomb",
        2,
        OutOfTurn(1, parse_action("play 5j 5s 5p 5t")),
        RejectionReason.STALE,
        "",
        "since then",
    ),
    ("future bomb", 2, OutOfTurn(3, parse_action("play 5j 5s 5p 5t")), RejectionReason.INVALID, "", "yet"),
    ("empty OutOfTurn", 2, OutOfTurn(2, None), RejectionReason.INVALID, "", "needs an action"),
    (
        "a pass out of turn",
        2,
        OutOfTurn(2, Pass()),
        RejectionReason.INVALID,
        "",
        "answer requests with a Decision",
    ),
    ("unreadable OutOfTurn", 2, OutOfTurn(2, bad("invalid", "what")), RejectionReason.INVALID, "", "what"),
    # R-BOMB-9: outside a window a bomb from a seat not on its turn is refused by the rules.
    (
        "bomb in another's turn",
        2,
        OutOfTurn(2, parse_action("play 5j 5s 5p 5t")),
        RejectionReason.ILLEGAL,
        "R-BOMB-9",
        "",
    ),
    ("play out of turn", 3, OutOfTurn(2, parse_action("play Kj")), RejectionReason.ILLEGAL, "R-TRICK-3", ""),
    # R-CALL-1: seat 0 has played a card, so its Tichu window is closed.
    ("a call too late", 0, OutOfTurn(2, CallTichu()), RejectionReason.ILLEGAL, "R-CALL-1", ""),
    ("a second Hello", 1, Hello(), RejectionReason.OUT_OF_ORDER, "", "first message"),
]


@pytest.mark.parametrize(
    ("name", "seat", "message", "reason", "rule", "words"), CASES, ids=[c[0] for c in CASES]
)
def test_a_refused_message_changes_nothing(
    name: str, seat: int, message: Message, reason: RejectionReason, rule: str, words: str
) -> None:
    match = seat_one_to_play()
    before = (match.state_version, state_to_json(match.state), match.next_deadline())
    t = T0 + 1.25
    out = match.handle(Received(stream(seat), message), t)
    (rejection,) = rejections(out, seat)
    assert (rejection.reason, rejection.rule) == (reason, rule)
    assert words in rejection.message
    assert rejection.state_version == 2
    # Only the rejection, its record and its log line: no event, no request, no cancellation.
    assert [type(o) for o in out] == [Note, Write, Send]
    (record,) = records(out, RejectionRecord)
    assert (record.seat, record.reason, record.rule, record.message) == (
        seat,
        reason.value,
        rule,
        rejection.message,
    )
    assert (match.state_version, state_to_json(match.state), match.next_deadline()) == before
    # Seat 1's request is still open, with its clock: it is answered as if nothing had come.
    out = match.handle(Received(stream(1), Decision(TURN, 2, Pass())), t + 0.25)
    (decision,) = records(out, DecisionRecord)
    assert decision.request_id == TURN
    assert match.summary()[seat].rejections == 1


def test_a_stale_answer_names_a_hidden_answer_by_no_seat() -> None:
    """R-GT-1, R-CALL-6: the simultaneous answers stay secret until revealed together."""
    match = new_match(t=T0)
    reqs = requests_by_seat(seat_all(match, T0))
    for seat in range(4):
        out = answer(match, reqs[seat], "no_grand_tichu", T0 + 0.5)
    steps = {seat: request_of(out, seat, DecisionKind.TICHU_STEP) for seat in range(4)}
    assert {r.state_version for r in steps.values()} == {4}
    (stale,) = rejections(answer(match, steps[0], "no_tichu", T0 + 1.0, version=3), 0)
    assert stale.reason is RejectionReason.STALE
    rid = steps[0].request_id
    # Each seat saw the version go from 0 to 4 at once, when the answers were revealed.
    assert (
        stale.message == f"request {rid} is for state 4; since state 3: a simultaneous answer (state 0 -> 4)"
    )
    for seat in range(4):
        out = answer(match, steps[seat], "no_tichu", T0 + 1.0)
    exchange = request_of(out, 0, DecisionKind.EXCHANGE)
    (stale,) = rejections(answer(match, exchange, parse_action("exchange 1:2j 2:2p 3:3p"), T0 + 1, 0), 0)
    assert stale.message == (
        "request 9 is for state 8; since state 0: a simultaneous answer (state 0 -> 4), "
        "then a simultaneous answer (state 4 -> 8)"
    )
    assert "seat" not in stale.message


def test_messages_before_the_game_starts_are_out_of_order() -> None:
    match = new_match(CLOCK)
    connect_all(match, T0, seats=[0, 1])
    out = match.handle(Received(stream(0), OutOfTurn(0, CallTichu())), T0)
    (refused,) = rejections(out, 0)
    assert refused.reason is RejectionReason.OUT_OF_ORDER and "not started" in refused.message
    assert tick(match, T0 + 1.0) == []


def test_a_message_from_an_unknown_stream_is_ignored() -> None:
    match = seat_one_to_play()
    assert match.handle(Received(999, Decision(TURN, 2, Pass())), T0 + 2.0) == []
