"""Helpers for driving the pure match core with explicit times: no event loop, no wall clock.

Seat s always connects on stream `stream(s)`. Times are seconds on the test's own clock, and the
settings below are whole fractions of a second that floats hold exactly (0.5, 0.25, ...), so
that a deadline compares equal to the sum of its parts and every figure is exact.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from referee.match import ClockSettings, Match
from referee.match.messages import (
    Cancelled,
    Connect,
    Decision,
    EventMessage,
    OutMessage,
    OutOfTurn,
    Output,
    Ping,
    Pong,
    Received,
    Rejection,
    Request,
    Send,
    SentAction,
    Tick,
    Write,
)
from referee.match.records import Header, Record
from referee.rules import (
    OFFICIAL,
    Action,
    CallTichu,
    DecisionKind,
    Play,
    RulesConfig,
    State,
    default_action,
    legal_decisions,
    parse_action,
)

T = TypeVar("T")
STREAM_BASE = 100
# Clocks for tests that are not about heartbeats: no pings, so outputs hold only the game.
CLOCK = ClockSettings(
    decision_ms=1_000,
    bank_ms=4_000,
    grace_ms=500,
    window_ms=2_000,
    heartbeat_interval_ms=0,
    heartbeat_timeout_ms=8_000,
    reconnect_grace_ms=16_000,
    start_timeout_ms=0,
)


def stream(seat: int) -> int:
    """The stream id seat `seat` connects on in these tests."""
    return STREAM_BASE + seat


def seat_of(stream_id: int) -> int:
    """The seat a test stream belongs to."""
    return stream_id - STREAM_BASE


def new_match(
    clock: ClockSettings = CLOCK,
    *,
    config: RulesConfig = OFFICIAL,
    seed: int | str = 9,
    initial_state: State | None = None,
    watch_delay_events: int = 0,
    t: float = 0.0,
) -> Match:
    """A match created at time `t` (its header record drained)."""
    header = Match.header_for(
        "m",
        config,
        clock=clock,
        seed=seed,
        bot_names=[
            f"bot{s}" for s in range(config.players if initial_state is None else initial_state.players)
        ],
        watch_delay_events=watch_delay_events,
        initial_state=initial_state,
        wall=0.0,
    )
    match = Match(header, now=t, wall=0.0)
    match.drain()
    return match


def connect_all(match: Match, t: float, seats: Iterable[int] | None = None) -> list[Output]:
    """Connect every seat (or those given) at time `t`, in seat order; every output."""
    outputs: list[Output] = []
    for seat in range(match.players) if seats is None else seats:
        outputs += match.handle(Connect(stream(seat), seat, f"bot{seat}", "1.0"), t)
    return outputs


def seat_all(match: Match, t: float, seats: Iterable[int] | None = None) -> dict[int, list[OutMessage]]:
    """Connect every seat (or those given) at time `t`, in seat order; what each seat's stream got."""
    outputs = connect_all(match, t, seats)
    return {seat: messages(outputs, seat) for seat in range(match.players)}


def messages(outputs: Iterable[Output], seat: int) -> list[OutMessage]:
    """What was sent on seat `seat`'s stream."""
    return [o.message for o in outputs if isinstance(o, Send) and o.stream == stream(seat)]


def sent(outputs: Iterable[Output], seat: int, kind: type[T]) -> list[T]:
    """The messages of one type sent on a seat's stream."""
    return [m for m in messages(outputs, seat) if isinstance(m, kind)]


def requests(outputs: Iterable[Output], seat: int, kind: DecisionKind | None = None) -> list[Request]:
    """The requests sent to a seat (of one kind)."""
    return [r for r in sent(outputs, seat, Request) if kind is None or r.kind is kind]


def request_of(outputs: Iterable[Output], seat: int, kind: DecisionKind | None = None) -> Request:
    """The one request (of a kind) sent to a seat in these outputs."""
    found = requests(outputs, seat, kind)
    assert len(found) == 1, f"seat {seat} got {len(found)} requests: {found}"
    return found[0]


def requests_by_seat(got: dict[int, list[OutMessage]]) -> dict[int, Request]:
    """The one request each seat got (seat_all's result, or messages per seat)."""
    found: dict[int, Request] = {}
    for seat, sent_to in got.items():
        reqs = [m for m in sent_to if isinstance(m, Request)]
        if reqs:
            assert len(reqs) == 1, f"seat {seat} got {len(reqs)} requests"
            found[seat] = reqs[0]
    return found


def rejections(outputs: Iterable[Output], seat: int) -> list[Rejection]:
    """The rejections sent to a seat."""
    return sent(outputs, seat, Rejection)


def records(outputs: Iterable[Output], kind: type[T]) -> list[T]:
    """The replay records of one type in these outputs."""
    return [o.record for o in outputs if isinstance(o, Write) and isinstance(o.record, kind)]


def events(outputs: Iterable[Output], seat: int) -> list[dict[str, Any]]:
    """The JSON of every event sent to a seat."""
    return [json.loads(m.json) for m in sent(outputs, seat, EventMessage)]


def answer(
    match: Match, request: Request, sent_action: SentAction | str, t: float, version: int | None = None
) -> list[Output]:
    """Answer `request` at time `t` (on the request's state version unless told another)."""
    chosen = parse_action(sent_action) if isinstance(sent_action, str) else sent_action
    decision = Decision(request.request_id, request.state_version if version is None else version, chosen)
    return match.handle(Received(stream(request.seat), decision), t)


def out_of_turn(
    match: Match, seat: int, sent_action: SentAction | str, t: float, version: int | None = None
) -> list[Output]:
    """Send a bomb or a Tichu call out of turn at time `t` (on the seat's current version unless told)."""
    chosen = parse_action(sent_action) if isinstance(sent_action, str) else sent_action
    message = OutOfTurn(match.version_for(seat) if version is None else version, chosen)
    return match.handle(Received(stream(seat), message), t)


def tick(match: Match, t: float) -> list[Output]:
    """Nothing but the time: `t`."""
    return match.handle(Tick(), t)


# ----------------------------------------------------------------------------- whole games


@dataclass(frozen=True, slots=True)
class Answer:
    """What a scripted seat does with a request: its action after `think_s` (None: stays silent, so
    the request times out), and whether it calls Tichu out of turn just before answering."""

    action: Action | None
    think_s: float = 0.25
    call_first: bool = False


Policy = Callable[[Request], Answer]
# Think times a seeded seat picks from: mostly quick, sometimes past limit + grace (it spends bank).
THINK_S = (0.0, 0.125, 0.25, 0.5, 1.0, 1.75)


def state_of(request: Request) -> State:
    """The state a request of the match core's was made for (a request read off the wire has none)."""
    assert request.state is not None
    return request.state


def _position_key(request: Request) -> str:
    """The position a request is about, the same whichever request asks it: a request kept open
    across a Tichu call, or a fresh one for the same decision after a resume."""
    state = state_of(request)
    trick = tuple((seat, cards) for seat, cards, _ in state.trick)
    return repr(
        (state.round, state.phase.value, request.seat, request.kind.value, state.hands, trick)
        + (state.passed, state.window, state.gift)
    )


def seeded_policy(
    seed: str, *, silent_rate: float = 0.05, bomb_rate: float = 0.5, call_rate: float = 0.03
) -> Policy:
    """A random seat whose every choice is a function of the seed and the position: the same
    decision gets the same answer in any run, a resumed one included."""

    def choose(request: Request) -> Answer:
        rng = random.Random(f"{seed}/{_position_key(request)}")
        # Every draw is made, in this order, whatever the request allows: a request for the same
        # position that differs only in what the seat may still do (a Tichu call made since) then
        # gets the same answer.
        think_s = rng.choice(THINK_S)
        call_roll, silent_roll, bomb_roll, flag_roll, pick = (rng.random() for _ in range(5))
        # Out of turn only in play: in the pre-step a call is that question's answer (R-CALL-6).
        in_play = request.kind in (DecisionKind.PLAY, DecisionKind.BOMB_WINDOW)
        call_first = in_play and request.can_call_tichu and call_roll < call_rate
        if silent_roll < silent_rate:
            return Answer(None, think_s, call_first)
        state, seat = state_of(request), request.seat
        legal = legal_decisions(state, seat) if request.kind is not DecisionKind.EXCHANGE else ()
        if request.kind is DecisionKind.EXCHANGE:
            chosen: Action = default_action(state, seat)
        elif request.kind is DecisionKind.BOMB_WINDOW:
            bombs = [a for a in legal if isinstance(a, Play)]
            chosen = legal[0]
            if bombs and bomb_roll < bomb_rate:
                bomb = bombs[int(pick * len(bombs))]
                # Sometimes with the call flag (R-CALL-7), when a call is allowed at all.
                flag = request.can_call_tichu and not call_first and flag_roll < 0.5
                chosen = Play(bomb.cards_mask, bomb.phoenix, bomb.wish, bomb.partner, flag)
        elif request.kind in (DecisionKind.GRAND_TICHU, DecisionKind.TICHU_STEP):
            calls = call_roll < call_rate
            chosen = next(a for a in legal if (str(a) in ("grand_tichu", "tichu")) == calls)
        else:
            chosen = legal[int(pick * len(legal))]
        return Answer(chosen, think_s, call_first)

    return choose


@dataclass(slots=True)
class _Due:
    at: float
    order: int
    request: Request
    answer: Answer


def play_out(
    match: Match,
    policies: Sequence[Policy],
    t: float,
    *,
    given: Iterable[Output] = (),
    max_inputs: int = 200_000,
) -> tuple[list[Output], float]:
    """Play the match to its end with one scripted seat per seat, from time `t`; every new output
    and the time it ended. `given` are outputs already made (the requests in them are answered too).

    Each seat answers each request `think_s` after it was sent, even if it timed out meanwhile (it
    is then rejected LATE, as for a real bot that does not know), answers pings at once, and gives
    up a request that was cancelled. When no answer is due before the next deadline, the match is
    ticked at that deadline.
    """
    out: list[Output] = []
    due: list[_Due] = []
    counter = 0
    pongs: list[tuple[int, int]] = []

    def take(outputs: Iterable[Output], now: float, new: bool = True) -> None:
        nonlocal counter
        for o in outputs:
            if new:
                out.append(o)
            if isinstance(o, Send):
                message, seat = o.message, seat_of(o.stream)
                if isinstance(message, Request):
                    chosen = policies[seat](message)
                    counter += 1
                    if chosen.action is not None:  # a silent seat just lets the clock run
                        due.append(_Due(now + chosen.think_s, counter, message, chosen))
                elif isinstance(message, Cancelled):
                    due[:] = [d for d in due if d.request.request_id != message.request_id]
                elif isinstance(message, Ping):
                    pongs.append((seat, message.nonce))

    take(given, t, new=False)
    for _ in range(max_inputs):
        if match.status == "finished":
            return out, t
        while pongs:
            seat, nonce = pongs.pop(0)
            take(match.handle(Received(stream(seat), Pong(nonce)), t), t)
        deadline = match.next_deadline()
        first = min(due, key=lambda d: (d.at, d.order), default=None)
        if first is not None and (deadline is None or first.at <= deadline):
            due.remove(first)
            t = max(t, first.at)
            request, chosen = first.request, first.answer
            if chosen.call_first:
                call = OutOfTurn(match.version_for(request.seat), CallTichu())
                take(match.handle(Received(stream(request.seat), call), t), t)
            assert chosen.action is not None
            take(answer(match, request, chosen.action, t), t)
        elif deadline is not None:
            t = max(t, deadline)
            take(tick(match, t), t)
        else:
            raise AssertionError("the match waits for nothing and no seat has anything to say")
    raise AssertionError(f"the match did not end within {max_inputs} inputs")


def game_records(outputs: Iterable[Output]) -> list[Record]:
    """Every record after the header, in order."""
    return [o.record for o in outputs if isinstance(o, Write) and not isinstance(o.record, Header)]
