"""Streams and seats with explicit times: heartbeats, reconnection, abandonment and flood limits."""

from __future__ import annotations

import dataclasses

import pytest

from referee.match import Match, RejectionReason
from referee.match.links import BURST, RATE_PER_S, STRIKE_DECAY_PER_S, TokenBucket
from referee.match.messages import (
    Accepted,
    Close,
    Connect,
    Decision,
    Disconnect,
    Drop,
    End,
    Hello,
    Note,
    Output,
    Ping,
    Pong,
    Received,
    Refused,
    Rejection,
    SeatStatus,
    Send,
    Snapshot,
    Welcome,
)
from referee.match.records import (
    Abandoned,
    Connected,
    DecisionRecord,
    Disconnected,
    RejectionRecord,
    ViolationRecord,
)
from referee.rules import DecisionKind, GrandTichu
from tests.match.support import (
    CLOCK,
    answer,
    connect_all,
    messages,
    new_match,
    records,
    rejections,
    request_of,
    sent,
    stream,
    tick,
)

T0 = 10.0
US = 1e-6

# ----------------------------------------------------------------------------- heartbeats

# Pings every second; a stream that says nothing for 2.5 s after a ping is dropped. Decisions
# are slow enough never to fall due here.
BEATING = dataclasses.replace(
    CLOCK, decision_ms=600_000, heartbeat_interval_ms=1_000, heartbeat_timeout_ms=2_500
)


def pings(outputs: list[Output], seat: int) -> list[int]:
    """The nonces of the pings sent to a seat."""
    return [p.nonce for p in sent(outputs, seat, Ping)]


def test_pings_go_out_at_the_interval_exactly() -> None:
    match = new_match(BEATING, t=T0)
    connect_all(match, T0)
    assert match.next_deadline() == T0 + 1.0
    assert tick(match, T0 + 1.0 - US) == []
    out = tick(match, T0 + 1.0)
    assert [pings(out, seat) for seat in range(4)] == [[1]] * 4
    # The next one an interval after this one was sent, each with the next nonce.
    assert match.next_deadline() == T0 + 2.0
    out = tick(match, T0 + 2.0)
    assert [pings(out, seat) for seat in range(4)] == [[2]] * 4


def test_a_ping_that_falls_due_late_is_sent_once_and_the_next_follows_from_then() -> None:
    """A clock that jumps (a shell that ticks late) sends one ping, not one per missed interval."""
    match = new_match(BEATING, t=T0)
    connect_all(match, T0)
    out = tick(match, T0 + 3.25)
    assert [pings(out, seat) for seat in range(4)] == [[1]] * 4
    assert match.next_deadline() == T0 + 4.25


def test_a_stream_that_stays_silent_after_a_ping_is_dropped_and_the_others_told() -> None:
    match = new_match(BEATING, t=T0)
    connect_all(match, T0)
    out = tick(match, T0 + 1.0)
    # Seats 0-2 answer every ping; seat 3 says nothing.
    for t in (T0 + 1.0, T0 + 2.0, T0 + 3.0):
        if t > T0 + 1.0:
            out = tick(match, t)
        for seat in range(3):
            for nonce in pings(out, seat):
                match.handle(Received(stream(seat), Pong(nonce)), t)
    assert tick(match, T0 + 1.0 + 2.5 - US) == []
    out = tick(match, T0 + 1.0 + 2.5)
    assert Close(stream(3), "UNAVAILABLE", "no Pong (or any message) within 2500 ms") in out
    for seat in range(3):
        assert sent(out, seat, SeatStatus) == [SeatStatus(3, False)]
    (gone,) = records(out, Disconnected)
    assert (gone.seat, gone.why, gone.status) == (3, "stalled", "UNAVAILABLE")
    assert [i.connected for i in match.seat_info()] == [True, True, True, False]
    assert [n.event for n in out if isinstance(n, Note)][:1] == ["stream_stalled"]


@pytest.mark.parametrize(
    "message",
    [Pong(1), Ping(77), Hello(), Decision(999, 0, GrandTichu(False))],
    ids=["pong", "ping", "hello", "a refused decision"],
)
def test_any_message_resets_the_heartbeat(message: Pong | Ping | Hello | Decision) -> None:
    match = new_match(BEATING, t=T0)
    connect_all(match, T0)
    for t in (T0 + 1.0, T0 + 2.0, T0 + 3.0):
        tick(match, t)  # pings 1, 2 and 3 to everyone; the first unanswered one counts
    # Seat 0 says something just before its time is up; the others say nothing.
    match.handle(Received(stream(0), message), T0 + 3.5 - US)
    out = tick(match, T0 + 3.5)
    assert [d.seat for d in records(out, Disconnected)] == [1, 2, 3]
    # Seat 0's clock restarted with the next ping after its message (at T0 + 4), so it is
    # dropped 2.5 s after that ping if it stays silent.
    assert pings(tick(match, T0 + 4.0), 0) == [4]
    assert records(tick(match, T0 + 6.5 - US), Disconnected) == []
    assert [d.seat for d in records(tick(match, T0 + 6.5), Disconnected)] == [0]


def test_a_ping_from_a_bot_is_answered_with_its_nonce() -> None:
    match = new_match(BEATING, t=T0)
    connect_all(match, T0)
    out = match.handle(Received(stream(2), Ping(41)), T0 + 0.5)
    assert sent(out, 2, Pong) == [Pong(41)]


def test_heartbeats_can_be_off() -> None:
    match = new_match(dataclasses.replace(BEATING, heartbeat_interval_ms=0), t=T0)
    connect_all(match, T0)
    assert match.next_deadline() == T0 + 600.0 + 4.0 + 0.5  # only the Grand Tichu requests


# ----------------------------------------------------------------------------- reconnection

AWAY = dataclasses.replace(CLOCK, reconnect_grace_ms=8_000)
# The Grand Tichu requests leave at T0 and are due at T0 + 5.5 (limit 1, bank 4, grace 0.5).
DUE = T0 + 5.5
SECOND = 200  # the stream id of a seat's second connection


def test_a_dropped_seat_reconnects_within_the_grace_with_its_open_request_up_to_date() -> None:
    match = new_match(AWAY, t=T0)
    seated = connect_all(match, T0)
    request = request_of(seated, 2)
    out = match.handle(Disconnect(stream(2)), T0 + 1.0)
    for seat in (0, 1, 3):
        assert sent(out, seat, SeatStatus) == [SeatStatus(2, False)]
    (gone,) = records(out, Disconnected)
    assert (gone.seat, gone.why, gone.status) == (2, "stream ended", "")
    back = match.handle(Connect(SECOND + 2, 2, "bot2", "2.0"), T0 + 2.0)
    assert back[0] == Accepted(SECOND + 2)
    welcome, snapshot = (o.message for o in back[1:3] if isinstance(o, Send))
    assert isinstance(welcome, Welcome) and welcome.seat == 2
    assert isinstance(snapshot, Snapshot) and snapshot.state_version == match.state_version
    (pending,) = snapshot.pending
    # The same request, its clocks as they stand now: 5.5 - 2 - 0.5 (the grace stays the referee's).
    assert pending.request_id == request.request_id
    assert (pending.deadline_ms, pending.bank_left_ms) == (3_000, 3_000)
    assert snapshot.observation.seat == 2
    for seat in (0, 1, 3):
        assert sent(back, seat, SeatStatus) == [SeatStatus(2, True)]
    (again,) = records(back, Connected)
    assert (again.seat, again.reconnect, again.bot_version) == (2, True, "2.0")
    # The request is answered on the new stream; its time counts from when it was first sent.
    out = match.handle(Received(SECOND + 2, Decision(pending.request_id, 0, GrandTichu(False))), T0 + 2.5)
    (decision,) = records(out, DecisionRecord)
    assert (decision.seat, decision.time_used_ms) == (2, 2_500.0)
    assert match.summary()[2].reconnections == 1


def test_an_away_seats_requests_still_time_out() -> None:
    match = new_match(AWAY, t=T0)
    connect_all(match, T0)
    match.handle(Disconnect(stream(1)), T0 + 1.0)
    out = tick(match, DUE)
    assert [v.seat for v in records(out, ViolationRecord)] == [0, 1, 2, 3]
    # Nothing is sent to the absent seat, and its next request waits in the snapshot.
    assert messages(out, 1) == []
    back = match.handle(Connect(SECOND + 1, 1, "bot1"), DUE + 1.0)
    (snapshot,) = [o.message for o in back if isinstance(o, Send) and isinstance(o.message, Snapshot)]
    (pending,) = snapshot.pending
    assert pending.kind is DecisionKind.TICHU_STEP
    # Sent at DUE with no bank left: 1 s of limit, of which 1 s has gone.
    assert (pending.deadline_ms, pending.bank_left_ms) == (0, 0)


def test_after_the_grace_the_seat_is_abandoned_and_may_not_come_back() -> None:
    match = new_match(AWAY, t=T0)
    connect_all(match, T0)
    match.handle(Drop(3), T0 + 0.5)  # the shell closes the stream; the Disconnect follows
    out = match.handle(Disconnect(stream(3)), T0 + 1.0)
    assert records(out, Disconnected)[0].status == "UNAVAILABLE"
    out = tick(match, T0 + 9.0 - US)
    assert records(out, Abandoned) == []
    # The match goes on without it: its decisions time out.
    assert [v.seat for v in records(out, ViolationRecord)] == [0, 1, 2, 3]
    out = tick(match, T0 + 9.0)
    assert records(out, Abandoned) == [Abandoned(3, 9_000.0)]
    refused = match.handle(Connect(SECOND + 3, 3, "bot3"), T0 + 9.5)
    assert refused == [Refused(SECOND + 3, "seat 3 did not reconnect within the grace period")]
    assert match.status == "running"


def test_before_the_game_starts_seats_come_and_go_freely() -> None:
    match = new_match(AWAY, t=T0)
    connect_all(match, T0, [0, 1])
    match.handle(Disconnect(stream(0)), T0 + 1.0)
    # Far past any grace: before the start nothing is abandoned.
    assert match.next_deadline() is None
    assert tick(match, T0 + 1_000.0) == []
    out = match.handle(Connect(SECOND, 0, "bot0"), T0 + 1_000.0)
    assert out[0] == Accepted(SECOND)
    assert records(out, Abandoned) == []
    connect_all(match, T0 + 1_001.0, [2, 3])
    assert match.status == "running"


def test_a_second_stream_on_a_connected_seat_is_refused() -> None:
    match = new_match(AWAY, t=T0)
    connect_all(match, T0)
    assert match.handle(Connect(SECOND + 1, 1, "impostor"), T0 + 1.0) == [
        Refused(SECOND + 1, "seat 1 is already connected")
    ]
    assert match.handle(Connect(SECOND + 9, 9, "nobody"), T0 + 1.0) == [
        Refused(SECOND + 9, "there is no seat 9")
    ]
    # The seat's own stream is untouched.
    assert match.seat_info()[1].connected


def test_a_stream_ended_for_abuse_is_closed_with_its_status() -> None:
    match = new_match(AWAY, t=T0)
    connect_all(match, T0)
    out = match.handle(End(stream(1), "INVALID_ARGUMENT", "empty BotMessage"), T0 + 1.0)
    assert out == [Close(stream(1), "INVALID_ARGUMENT", "empty BotMessage")]
    out = match.handle(Disconnect(stream(1)), T0 + 1.0)
    assert records(out, Disconnected)[0].status == "INVALID_ARGUMENT"


# ----------------------------------------------------------------------------- flood limits


def pinged(match: Match, seat: int, count: int, t: float) -> list[Output]:
    """`count` Pings from a seat, all at time `t`; every output."""
    out: list[Output] = []
    for nonce in range(count):
        out += match.handle(Received(stream(seat), Ping(nonce)), t)
    return out


def limited(outputs: list[Output], seat: int) -> int:
    """How many RATE_LIMITED rejections a seat got."""
    return sum(r.reason is RejectionReason.RATE_LIMITED for r in rejections(outputs, seat))


def test_the_bucket_allows_a_burst_then_the_rate() -> None:
    assert (RATE_PER_S, BURST, STRIKE_DECAY_PER_S) == (50.0, 100.0, 10.0)
    bucket = TokenBucket(T0)
    assert [bucket.take(T0) for _ in range(100)] == ["ok"] * 100
    assert bucket.take(T0) == "limited"
    # Half a second later 25 tokens are back; a strike fades at 10 a second.
    assert [bucket.take(T0 + 0.5) for _ in range(25)] == ["ok"] * 25
    assert bucket.strikes == 0.0
    assert bucket.take(T0 + 0.5) == "limited"
    # A credit (a reply the referee asked for) passes even with no tokens left.
    bucket.credit()
    assert bucket.take(T0 + 0.5) == "ok"
    assert bucket.take(T0 + 0.5) == "limited"


def test_strikes_close_the_stream_once_they_reach_the_burst() -> None:
    bucket = TokenBucket(T0)
    for _ in range(100):
        bucket.take(T0)
    assert [bucket.take(T0) for _ in range(99)] == ["limited"] * 99
    assert bucket.take(T0) == "flooding"
    # With time the strikes fade: 99 strikes, then 0.5 s (25 tokens, 5 strikes gone).
    slower = TokenBucket(T0)
    for _ in range(199):
        slower.take(T0)
    assert [slower.take(T0 + 0.5) for _ in range(25)] == ["ok"] * 25
    assert [slower.take(T0 + 0.5) for _ in range(5)] == ["limited"] * 5
    assert slower.take(T0 + 0.5) == "flooding"


def test_a_flooding_stream_is_rate_limited_then_closed_resource_exhausted() -> None:
    match = new_match(CLOCK, t=T0)
    seated = connect_all(match, T0)
    request = request_of(seated, 0)
    t = T0 + 1.0
    # One message for the request it was sent, then the burst: 101 pass; the 102nd does not.
    out = pinged(match, 0, 101, t)
    assert len(sent(out, 0, Pong)) == 101 and limited(out, 0) == 0
    out = pinged(match, 0, 1, t)
    (refused,) = rejections(out, 0)
    assert refused == Rejection(
        RejectionReason.RATE_LIMITED, "", "more than 50 messages a second; this one was dropped", 0, 0
    )
    # Not in the replay (a flood would swamp it), but counted in the live statistics.
    assert records(out, RejectionRecord) == []
    assert match.summary()[0].rate_limited == 1 and match.summary()[0].rejections == 0
    # A dropped message is dropped whatever it was: this answer does not count.
    out = answer(match, request, "no_grand_tichu", t)
    assert limited(out, 0) == 1 and records(out, DecisionRecord) == []
    # 98 more strikes is 100 in all: the stream is closed.
    out = pinged(match, 0, 98, t)
    assert limited(out, 0) == 97
    assert Close(stream(0), "RESOURCE_EXHAUSTED", "too many messages (more than 50/s)") in out
    (gone,) = records(out, Disconnected)
    assert (gone.seat, gone.why, gone.status) == (0, "flooded", "RESOURCE_EXHAUSTED")
    for seat in (1, 2, 3):
        assert sent(out, seat, SeatStatus) == [SeatStatus(0, False)]
    assert match.summary()[0].rate_limited == 100
    # Its later messages come from no seat's stream.
    assert pinged(match, 0, 1, t + 1.0) == []


def test_answers_that_were_asked_for_never_count_against_the_rate() -> None:
    """Each request (and each ping) sent gives one free message: a fast bot is never limited."""
    match = new_match(dataclasses.replace(CLOCK, heartbeat_interval_ms=1_000), t=T0)
    seated = connect_all(match, T0)
    t = T0 + 0.5
    pinged(match, 1, 100, t)  # every token spent
    out = answer(match, request_of(seated, 1), "no_grand_tichu", t)
    assert records(out, DecisionRecord) and limited(out, 1) == 0
    assert limited(pinged(match, 1, 1, t), 1) == 1
    out = tick(match, T0 + 1.0)  # a ping from the referee: its Pong is free too
    (nonce,) = pings(out, 1)
    # 0.5 s gave back 25 tokens; spend them, then the Pong still passes.
    pinged(match, 1, 25, T0 + 1.0)
    assert limited(match.handle(Received(stream(1), Pong(nonce)), T0 + 1.0), 1) == 0
