"""Referee speed over gRPC: decision round trips against a bare echo, hands/s, tables per process.

Run `.venv/bin/python bench/referee_bench.py` (about 3 minutes on 2 cores) or `--quick` (under 30 s);
`--only round-trip|hands|tables` runs one figure. Everything runs on 127.0.0.1. The referee runs
in a process of its own (`start_server`, as `tichu serve` runs it, writing every replay) beside
a bare grpc.aio echo service and a control service that reads the tables' statistics; clients
run in other processes.

1. Round trip per decision. (a) A bare grpc.aio bidirectional stream: the client writes a
   BotMessage and waits for the RefereeMessage the echo servicer returns. (b) The referee: four
   scripted seats (referee.scripted.ScriptedSeat, the tests' wire-level seat, with a clock) answer
   every DecisionRequest at once (no calls, bomb windows declined, else the first legal action);
   a round trip runs from the Decision leaving the seat to the first message the referee sends
   that seat because of it (the seat's own event, or a Rejection). A bomb window resolves on its
   last answer, and Grand Tichu and Tichu-step answers are revealed together: only the answer
   that completes such a question is timed (the others cause no message, and would time the
   other seats' answers). (c) A bare grpc.aio relay, a diagnostic
   with no bar: the same scripted seats, timed the same way, on four streams that carry the
   referee's messages of regular turns (a played or passed event and a window request to every
   seat, then a window_closed event to every seat and a turn request, with payloads the engine
   listed for a real game) and nothing else: no rule, clock or replay. (b)/(c) is what the
   referee costs beyond the gRPC traffic that any referee of these rules must make. The three
   paths alternate in chunks (ABC, CBA, ...) so that the machine's noise hits them alike; the
   server process's CPU time per echo and per decision is read between chunks.
2. Hands per second: one whole match between four sample bots, each a `tichu bot` process as in
   `tichu demo`: rounds scored / seconds from the match's start to its result (table records).
3. Tables per referee process: K matches at once, four scripted seats each, driven by two client
   processes (whole tables each), at a 200 ms decision limit. The seats say Hello as the SDK
   does (referee_declines, referee_passes, defer_events; `--hello plain` for a bot that asks for
   none of them), and a round trip then runs from a decision to the first message of a later
   state at any seat of its table. A step passes when every seat connected, no decision timed
   out (the tables' statistics, the whole step) and the p99 round trip is under 5 ms; the
   largest K with no timeout is printed too. The ladder climbs 25, 50, 100, 200, 300, 400, 500,
   600 while nothing times out, then, if no step passed, steps down (10, 3, 1). `--think-ms
   0,100` runs a ladder per think time (bomb windows are always answered at once, as the SDK
   does for a hand without a bomb). Each step prints the p99.9 round trip too, and every garbage
   collection the referee process made in the window (gc.callbacks, the collector left on), by
   generation: how many, the longest and p99 pause by the clock and in the collecting thread's
   CPU time (which the machine's other load does not stretch), and what they found; and the
   tracked heap after the window. `--collector tuned,frozen,python` runs each step once per
   collector setting, side by side (referee.server.heap is what `tichu serve` applies).

The machine is shared and noisy: compare figures of one run with each other, and read them with
the load average printed beside them.
"""

from __future__ import annotations

import argparse
import asyncio
import atexit
import contextlib
import cProfile
import dataclasses
import functools
import gc
import json
import math
import multiprocessing
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import grpc

from referee import log
from referee.demo import DEMO_CLOCK
from referee.match import PROTOCOL_VERSION, ClockSettings
from referee.match.records import EventRecord
from referee.match.tally import percentile
from referee.replay import read_replay
from referee.rules import OFFICIAL, Decline, Phase, answer_window, apply, legal_decisions, new_game, to_act
from referee.rules.events import RoundScored
from referee.scripted import ScriptedSeat, exchange_lowest
from referee.server.codec import action_to_proto
from referee.server.heap import referee_thresholds, tune_collector
from referee.server.serve import RunningServer, start_server
from referee.wire.tichu.v1 import referee_pb2 as pb
from referee.wire.tichu.v1 import referee_pb2_grpc

REPO = Path(__file__).resolve().parent.parent
LOOPBACK = "127.0.0.1"
ECHO_PLAY = "/bench.Echo/Play"
RELAY_PLAY = "/bench.Relay/Play"
REFEREE_PLAY = "/tichu.v1.Referee/Play"
# The relay replays the wire payloads of this many turns of a real game, over and over.
RELAY_TURNS = 400
CONTROL_CPU = "/bench.Control/Cpu"
CONTROL_STATS = "/bench.Control/Stats"
CONTROL_FINISHED = "/bench.Control/Finished"
CONTROL_STOP = "/bench.Control/Stop"
# The bars the figures are reported against.
P50_BAR_MS = 1.0
P99_BAR_MS = 5.0
RATIO_BAR = 2.0
# Figure 1: clocks that never run out during the pauses between chunks.
PATIENT = ClockSettings(decision_ms=600_000, bank_ms=0, window_ms=600_000)
# Figure 2: the demo's clocks.
DEMO = DEMO_CLOCK
# Figure 3: a 200 ms limit for decisions and windows, the default grace, no forfeits.
TIGHT = ClockSettings(decision_ms=200, bank_ms=0, window_ms=200, max_violations=1_000_000)
# Figures 1 and 3 play long games: a step ends at its time limit, not with the games.
LONG_GAME = '{"target_score": 10000}'
BOTS = {
    "random": "clients.random_bot:RandomBot",
    "heuristic": "clients.heuristic_bot:HeuristicBot",
    "showcase": "clients.showcase_bot:ShowcaseBot",
}
LADDER_UP = (25, 50, 100, 200, 300, 400, 500, 600, 800)
LADDER_DOWN = (10, 3, 1)
WORKERS = 2
# --profile-server DIR: each referee process runs under cProfile and writes DIR/referee-NAME.prof.
PROFILE_DIR = ""
# --no-bundles: the scripted seats do not accept Bundles (one gRPC message per referee message),
# to compare with the SDK's way. An environment variable, so the client processes see it too.
BUNDLES_ENV = "TICHU_BENCH_BUNDLES"
# --hello sdk|plain: whether the scripted seats of figure 3 say Hello as the Python SDK does
# (referee_declines, referee_passes, defer_events: fewer messages per turn) or as a bot that asks
# for none of them. An environment variable, so the client processes see it too.
HELLO_ENV = "TICHU_BENCH_HELLO"
# How the referee process's garbage collector runs (--collector): the start-up heap frozen and
# the thresholds `tichu serve` sets (referee.server.heap); frozen with CPython's own thresholds
# (what `tichu serve` did before); or None: CPython's defaults, nothing frozen.
Thresholds = tuple[int, int, int] | None
COLLECTORS: dict[str, Thresholds] = {
    "tuned": referee_thresholds(),  # read at import, from this interpreter's defaults
    "frozen": gc.get_threshold(),  # this interpreter's defaults: nothing has tuned them at import
    "python": None,
}
# The scripted seats' answers: no calls, bomb windows declined.
QUIET = frozenset({"no_grand_tichu", "no_tichu", "decline"})
K = pb.DecisionKind
LABELS: dict[int, str] = {
    K.DECISION_KIND_GRAND_TICHU: "call",
    K.DECISION_KIND_TICHU_STEP: "call",
    K.DECISION_KIND_EXCHANGE: "exchange",
    K.DECISION_KIND_PLAY: "turn",
    K.DECISION_KIND_DRAGON_GIFT: "turn",
    K.DECISION_KIND_BOMB_WINDOW: "window",
}
# Every seat answers these at once: another seat's answer is not this seat's effect.
SIMULTANEOUS: frozenset[int] = frozenset(
    {K.DECISION_KIND_GRAND_TICHU, K.DECISION_KIND_TICHU_STEP, K.DECISION_KIND_EXCHANGE}
)
SEAT_EVENTS = frozenset({"called", "call_declined"})
# The referee acts on these when the last seat has answered, and not before: the calls are
# revealed together (R-GT-1, R-CALL-6), a window resolves on its last answer (R-BOMB-9). The
# earlier answers make no message at all: each of them would time the other seats' answers.
TOGETHER: frozenset[int] = frozenset(
    {K.DECISION_KIND_GRAND_TICHU, K.DECISION_KIND_TICHU_STEP, K.DECISION_KIND_BOMB_WINDOW}
)


# ------------------------------------------------------------------------------------ figures


@dataclass(frozen=True, slots=True)
class Latency:
    """A round-trip distribution in milliseconds: how many, the median, the 99th and 99.9th percentiles."""

    count: int
    p50_ms: float
    p99_ms: float
    p999_ms: float = 0.0  # a pause that stalls every table shows here first

    @classmethod
    def of(cls, seconds: Sequence[float]) -> Latency:
        """The distribution of round trips given in seconds."""
        ordered = sorted(seconds)  # once, for the three nearest ranks
        return cls(
            len(seconds),
            percentile(ordered, 0.50) * 1000,
            percentile(ordered, 0.99) * 1000,
            percentile(ordered, 0.999) * 1000,
        )

    def __str__(self) -> str:
        return f"p50 {self.p50_ms:6.3f} ms  p99 {self.p99_ms:6.3f} ms  (n={self.count})"


def load_average() -> str:
    """The machine's 1, 5 and 15 minute load averages."""
    try:
        one, five, fifteen = os.getloadavg()
    except OSError:
        return "unknown"
    return f"{one:.2f} {five:.2f} {fifteen:.2f}"


def verdict(ok: bool) -> str:
    """How a figure stands against its bar."""
    return "meets the bar" if ok else "MISSES the bar"


# ------------------------------------------------------------------------------ scripted seats


class Samples:
    """Round trips in seconds by decision class, kept when the decision left inside the window."""

    def __init__(self) -> None:
        self.by_class: dict[str, list[float]] = {}
        self.window: tuple[float, float] | None = None  # monotonic (from, until); None = always
        self.count = 0
        self.decisions = 0  # decisions sent inside the window
        self.messages = 0  # messages the seats received inside the window
        self.rejections = 0
        self.target = 0
        self.reached = asyncio.Event()

    def in_window(self, t: float) -> bool:
        """Whether a decision sent at `t` counts."""
        return self.window is None or self.window[0] <= t < self.window[1]

    def add(self, label: str, sent: float, seconds: float) -> None:
        """Keep one round trip."""
        if self.in_window(sent):
            self.by_class.setdefault(label, []).append(seconds)
            self.count += 1
            if self.target and self.count >= self.target:
                self.reached.set()

    def all(self) -> list[float]:
        """Every round trip kept, whatever its class."""
        return [s for values in self.by_class.values() for s in values]


@dataclass(slots=True)
class _Pending:
    """A decision sent whose effect the seat has not heard yet."""

    request_id: int
    version: int
    kind: int
    sent: float


class TableClient:
    """The four scripted seats of one match (or relay), on one channel; each answers every request at once."""

    def __init__(
        self,
        channel: Any,
        tokens: Sequence[str],
        samples: Samples,
        *,
        gate: asyncio.Event | None = None,
        think_s: float = 0.0,
        path: str = REFEREE_PLAY,
        sdk_hello: bool = False,
    ) -> None:
        open_stream = channel.stream_stream(
            path,
            request_serializer=pb.BotMessage.SerializeToString,
            response_deserializer=pb.RefereeMessage.FromString,
        )
        self.samples = samples
        self.gate = gate  # figure 1: the seats answer only while it is set
        self.think_s = think_s
        self.seats = [_Seat(self, open_stream, seat, token) for seat, token in enumerate(tokens)]
        # As the SDK says Hello: a seat then hears nothing until it is asked, so a decision's
        # effect is the first message any seat of the table gets from a later state.
        self.sdk_hello = sdk_hello
        # (state version, kind, seat) of the last answer sent to a question every seat answers
        # together: the answer the referee acts on.
        self.last_together = (-1, -1, -1)
        self.welcomed = 0
        self.ended: dict[str, int] = {}  # how the streams ended: a gRPC status name, or "OK"

    async def play(self) -> None:
        """Play until every seat's stream has ended."""
        await asyncio.gather(*(seat.run() for seat in self.seats))

    def in_flight(self) -> bool:
        """Whether a decision other than a bomb-window answer still waits for its effect."""
        return any(
            s.pending is not None and s.pending.kind != K.DECISION_KIND_BOMB_WINDOW for s in self.seats
        )


def quiet_first(seat: ScriptedSeat, request: pb.DecisionRequest) -> pb.Action:
    """No calls, windows declined, the lowest cards given away, else the first legal action.

    Not `first_policy`, which also prefers "pass": these seats lead and follow with the first
    play, the game that `scripted_turns` replays on the relay.
    """
    if request.kind == K.DECISION_KIND_EXCHANGE:
        return exchange_lowest(seat, request)
    for action in request.legal_actions:
        if action.text in QUIET:
            return action
    return request.legal_actions[0]


class _Seat(ScriptedSeat):
    """The shared scripted seat (referee.scripted), timing its decisions' round trips.

    A round trip runs from the Decision leaving the seat (`decide`) to the first message the
    referee sends this seat because of it (`track`, stamped with the message's arrival off the
    network, which a Bundle's messages share).
    """

    def __init__(self, table: TableClient, open_call: Callable[[], Any], index: int, token: str) -> None:
        super().__init__(open_call, token, quiet_first, name=f"bench-{index}")
        self.table = table
        self.index = index
        self.accept_bundles = os.environ.get(BUNDLES_ENV, "1") == "1"
        self.keep_received = False  # a seat of a long game: no message history to walk at each GC
        self.pending: _Pending | None = None

    async def prepare(self) -> None:
        """Open the stream now and say Hello later (run): the referee takes the call now."""
        self.call = self.open_call()
        await self.call.wait_for_connection()

    async def open(self, hello: pb.Hello | None = None) -> None:
        """Say Hello, on the stream `prepare` opened if it did."""
        if self.call is None:
            self.call = self.open_call()
        assert hello is not None  # run() always gives the Hello it means
        await self.send(hello=hello)

    async def run(self) -> None:
        """Hello, then read and answer until the stream ends (or the result arrives)."""
        ended = "OK"
        try:
            sdk = self.table.sdk_hello
            await self.open(
                pb.Hello(
                    token=self.token,
                    bot_name=self.name,
                    bot_version="bench",
                    protocol_version=PROTOCOL_VERSION,
                    accept_bundles=self.accept_bundles,
                    referee_declines=sdk,
                    referee_passes=sdk,
                    defer_events=sdk,
                )
            )
            await self.play()
            if self.error is not None:
                ended = self.error.code().name
        except grpc.aio.AioRpcError as error:  # a write on a stream that had ended
            ended = error.code().name
        except asyncio.CancelledError:
            ended = "CANCELLED"
            raise
        finally:
            self.table.ended[ended] = self.table.ended.get(ended, 0) + 1
            if self.call is not None:
                self.call.cancel()

    def track(self, msg: pb.RefereeMessage) -> None:
        """Follow the seat as the shared seat does; then time the decision this message answers."""
        super().track(msg)
        arrived = self.last_arrived
        samples = self.table.samples
        if samples.in_window(arrived):
            samples.messages += 1
        kind = msg.WhichOneof("kind")
        if self.table.sdk_hello:
            for seat in self.table.seats:
                if seat.pending is not None:
                    seat._settle_by_table(seat.pending, kind, msg, arrived, seat is self)
        elif self.pending is not None:
            self._settle(self.pending, kind, msg, arrived)
        if kind == "welcome":
            self.table.welcomed += 1
        elif kind == "rejection":
            samples.rejections += 1

    def _settle(self, pending: _Pending, kind: str | None, msg: pb.RefereeMessage, arrived: float) -> None:
        """Time the decision if `msg` is the first message its effect caused."""
        if kind == "event":
            event = msg.event
            if event.state_version <= pending.version:
                return
            if (
                pending.kind in SIMULTANEOUS
                and event.type in SEAT_EVENTS
                and json.loads(event.json).get("seat") != self.index
            ):
                return  # another seat's answer to the same question
        elif kind == "rejection":
            if msg.rejection.request_id != pending.request_id:
                return
        elif kind == "request":
            if msg.request.state_version <= pending.version:
                return
        elif kind == "cancelled":
            if msg.cancelled.request_id == pending.request_id:
                self.pending = None
            return
        else:
            return
        self._timed(pending, arrived)

    def _timed(self, pending: _Pending, arrived: float) -> None:
        """The decision's effect arrived: keep its round trip, unless another seat's answer to
        the same question was the one that completed it."""
        self.pending = None
        last = self.table.last_together == (pending.version, pending.kind, self.index)
        if pending.kind in TOGETHER and not last:
            return  # not the answer that completed the question
        self.table.samples.add(LABELS.get(pending.kind, "other"), pending.sent, arrived - pending.sent)

    def _settle_by_table(
        self, pending: _Pending, kind: str | None, msg: pb.RefereeMessage, arrived: float, own: bool
    ) -> None:
        """As `_settle`, when events are deferred: the decision's effect is the first event or
        request of a later state that reaches any seat of the table (or this seat's rejection)."""
        if kind == "event":
            if msg.event.state_version <= pending.version:
                return
        elif kind == "request":
            if msg.request.state_version <= pending.version:
                return
        elif kind in ("rejection", "cancelled") and own:
            request_id = msg.rejection.request_id if kind == "rejection" else msg.cancelled.request_id
            if request_id != pending.request_id:
                return
            if kind == "cancelled":
                self.pending = None
                return
        else:
            return
        self._timed(pending, arrived)

    async def answer(self, request: pb.DecisionRequest) -> None:
        """Wait at the gate (figure 1) and think (figure 3), then answer with the policy."""
        gate = self.table.gate
        if gate is not None and not gate.is_set():
            await gate.wait()
        if self.table.think_s and request.kind != K.DECISION_KIND_BOMB_WINDOW:
            # As the SDK does for a hand without a bomb, windows are answered at once.
            await asyncio.sleep(self.table.think_s)
        await super().answer(request)

    async def decide(
        self, request: pb.DecisionRequest, action: pb.Action, version: int | None = None
    ) -> None:
        """Start the decision's clock as it leaves, then send it."""
        sent = time.monotonic()
        self.pending = _Pending(request.request_id, request.state_version, request.kind, sent)
        if request.kind in TOGETHER:
            self.table.last_together = (request.state_version, request.kind, self.index)
        samples = self.table.samples
        if samples.in_window(sent):
            samples.decisions += 1
        # Answered: nothing will ask for it again, and a long game would pile thousands up.
        self.requests.pop(request.request_id, None)
        await super().decide(request, action, version)


# ------------------------------------------------------------------------------ server process


def _json_handler(behaviour: Callable[[dict[str, Any]], Any]) -> Any:
    """A unary method taking and returning a JSON object as bytes."""

    async def handle(request: bytes, context: Any) -> bytes:
        result = behaviour(json.loads(request or b"{}"))
        if asyncio.iscoroutine(result):
            result = await result
        return json.dumps(result).encode()

    return grpc.unary_unary_rpc_method_handler(handle)


def _echo_handler() -> Any:
    """The bare echo: one RefereeMessage (an event, as small as a real one) for each BotMessage."""

    async def play(requests: Any, context: Any) -> Any:
        seq = 0
        async for _ in requests:
            seq += 1
            yield pb.RefereeMessage(
                event=pb.GameEvent(
                    seq=seq, state_version=seq, type="passed", json='{"type":"passed","seat":0}'
                )
            )

    return grpc.stream_stream_rpc_method_handler(
        play,
        request_deserializer=pb.BotMessage.FromString,
        response_serializer=pb.RefereeMessage.SerializeToString,
    )


@dataclass(frozen=True, slots=True)
class _Turn:
    """The wire payloads of one regular turn of a real game: its request's actions, its event."""

    actions: tuple[pb.Action, ...]
    event_type: str
    event_json: str


def scripted_turns(count: int, seed: str) -> list[_Turn]:
    """The first `count` turns of a game the scripted seats would play (first legal action, no
    calls, windows declined), as the engine lists and reports them."""
    state, _ = new_game(OFFICIAL, seed)
    turns: list[_Turn] = []
    while len(turns) < count:
        owed = to_act(state)
        if not owed:
            state, _ = new_game(OFFICIAL, f"{seed}/{len(turns)}")
            continue
        if state.window:
            state, _ = answer_window(state, {seat: Decline() for seat in state.window})
            continue
        seat = owed[0]
        options = legal_decisions(state, seat)
        quiet = [a for a in options if action_to_proto(a).text in QUIET]
        action = quiet[0] if quiet else options[0]
        regular_turn = state.phase is Phase.PLAY and state.gift < 0
        state, events = apply(state, seat, action)
        data = events[0].to_json() if events else {}
        if regular_turn and data.get("type") in ("played", "passed"):
            turns.append(
                _Turn(
                    tuple(action_to_proto(a) for a in options),
                    data["type"],
                    json.dumps(data, separators=(",", ":")),
                )
            )
    return turns


class _Outlet:
    """A relay stream's queued messages; its writer takes them all once woken."""

    def __init__(self) -> None:
        self.queued: list[pb.RefereeMessage] = []
        self.ready = asyncio.Event()

    async def take(self) -> list[pb.RefereeMessage]:
        while not (self.queued and self.ready.is_set()):
            self.ready.clear()
            await self.ready.wait()
        taken, self.queued = self.queued, []
        self.ready.clear()
        return taken


class _RelayGroup:
    """Four streams that exchange the referee's messages of regular turns, with no referee.

    A turn answer brings every seat the played event and a bomb-window request; the fourth
    window answer brings every seat a window_closed event and the next seat its turn request.
    Those are the reads, writes, bundles and payload sizes of a trick at the referee, with no
    rule, clock, record or replay behind them: what gRPC alone costs for the referee's traffic.
    """

    def __init__(self, turns: Sequence[_Turn]) -> None:
        self.turns = turns
        self.outlets: list[_Outlet | None] = [None] * 4
        self.version = 0
        self.request_id = 0
        self.turn = 0
        self.actor = 0
        self.answered: set[int] = set()
        self.decline = pb.Action(decline=pb.Empty(), text="decline")

    def join(self, seat: int) -> _Outlet:
        outlet = self.outlets[seat] = _Outlet()
        if all(self.outlets):
            self._request(self.actor, K.DECISION_KIND_PLAY, self.turns[self.turn].actions)
            self._wake(self.actor)
        return outlet

    def _request(self, seat: int, kind: int, actions: Sequence[pb.Action]) -> None:
        self.request_id += 1
        msg = pb.RefereeMessage()
        request = msg.request
        request.request_id = self.request_id
        request.kind = kind  # type: ignore[assignment]
        request.state_version = self.version
        request.deadline_ms = 600_000
        request.legal_actions.extend(actions)
        self._send(seat, msg)

    def _event(self, seat: int, event_type: str, event_json: str) -> None:
        msg = pb.RefereeMessage()
        msg.event.seq = self.version
        msg.event.state_version = self.version
        msg.event.type = event_type
        msg.event.json = event_json
        self._send(seat, msg)

    def _send(self, seat: int, msg: pb.RefereeMessage) -> None:
        outlet = self.outlets[seat]
        if outlet is not None:
            outlet.queued.append(msg)

    def _wake(self, first: int) -> None:
        for n in range(4):
            outlet = self.outlets[(first + n) % 4]
            if outlet is not None and outlet.queued:
                outlet.ready.set()

    def received(self, seat: int, msg: pb.BotMessage) -> None:
        """A seat's answer: the turn's or a window's."""
        if not msg.HasField("decision"):
            return
        if msg.decision.action.HasField("decline"):
            self.answered.add(seat)
            if len(self.answered) < 4:
                return
            self.answered.clear()
            self.version += 1
            self.turn = (self.turn + 1) % len(self.turns)
            self.actor = (self.actor + 1) % 4
            for other in range(4):
                self._event(other, "window_closed", '{"type":"window_closed"}')
            self._request(self.actor, K.DECISION_KIND_PLAY, self.turns[self.turn].actions)
        else:
            self.version += 1
            turn = self.turns[self.turn]
            for other in range(4):
                self._event(other, turn.event_type, turn.event_json)
                self._request(other, K.DECISION_KIND_BOMB_WINDOW, (self.decline,))
        self._wake(seat)


def _relay_handler() -> Any:
    """The bare relay: groups of four streams, named by their Hello tokens ("GROUP/SEAT")."""
    groups: dict[str, _RelayGroup] = {}
    turns: list[_Turn] = []

    async def forward(requests: Any, group: _RelayGroup, seat: int) -> None:
        with contextlib.suppress(grpc.RpcError, grpc.aio.AioRpcError):
            async for msg in requests:
                group.received(seat, msg)

    async def play(requests: Any, context: Any) -> Any:
        stream = aiter(requests)
        name, seat_text = (await anext(stream)).hello.token.rsplit("/", 1)
        seat = int(seat_text)
        if not turns:  # listed once, when first needed: the other figures do not use the relay
            turns.extend(scripted_turns(RELAY_TURNS, "relay"))
        group = groups.setdefault(name, _RelayGroup(turns))
        outlet = group.join(seat)
        reader = asyncio.create_task(forward(stream, group, seat))
        try:
            while True:
                batch = await outlet.take()
                yield batch[0] if len(batch) == 1 else pb.RefereeMessage(bundle=pb.Bundle(messages=batch))
        finally:
            reader.cancel()
            group.outlets[seat] = None

    return grpc.stream_stream_rpc_method_handler(
        play,
        request_deserializer=pb.BotMessage.FromString,
        response_serializer=pb.RefereeMessage.SerializeToString,
    )


GENERATIONS = (0, 1, 2)  # CPython's collector: 2 is the oldest, a full collection


@dataclass(frozen=True, slots=True)
class Pauses:
    """One generation's collections in a window: how many, and their pauses in milliseconds, by the
    clock (what a decision waits) and in CPU time of the collecting thread (what the machine's other
    load cannot stretch)."""

    count: int = 0
    max_ms: float = 0.0
    p99_ms: float = 0.0
    total_ms: float = 0.0
    max_cpu_ms: float = 0.0
    p99_cpu_ms: float = 0.0
    total_cpu_ms: float = 0.0
    collected: int = 0  # unreachable objects they found: what collecting less often would keep longer

    @classmethod
    def of(cls, walls_s: Sequence[float], cpus_s: Sequence[float], collected: int = 0) -> Pauses:
        """The pauses given in seconds, wall and CPU, one pair per collection."""
        return cls(
            len(walls_s),
            max(walls_s, default=0.0) * 1000,
            percentile(walls_s, 0.99) * 1000,
            sum(walls_s) * 1000,
            max(cpus_s, default=0.0) * 1000,
            percentile(cpus_s, 0.99) * 1000,
            sum(cpus_s) * 1000,
            collected,
        )

    def __str__(self) -> str:
        return (
            f"{self.count}x, max {self.max_ms:.1f} ms (CPU {self.max_cpu_ms:.1f}), "
            f"p99 {self.p99_ms:.1f} ms (CPU {self.p99_cpu_ms:.1f}), total CPU {self.total_cpu_ms:.0f} ms, "
            f"{self.collected:,} objects collected"
        )


class _Collections:
    """Every garbage collection in this process: its generation, when it ended (time.monotonic,
    which every process on the machine shares), and how long it took by the clock and in CPU time
    of the thread that collected (collections do not nest, so one start is pending at a time)."""

    def __init__(self) -> None:
        self.done: list[
            tuple[int, float, float, float, int]
        ] = []  # (generation, ended, wall s, CPU s, found)
        self._wall = self._cpu = 0.0

    def __call__(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._wall, self._cpu = time.perf_counter(), time.thread_time()
        else:
            wall, cpu = time.perf_counter() - self._wall, time.thread_time() - self._cpu
            self.done.append((info["generation"], time.monotonic(), wall, cpu, info["collected"]))

    def since(self, start: float) -> dict[str, Any]:
        """The collections that ended after `start`, by generation (Pauses' fields)."""
        recent = [c for c in self.done if c[1] >= start]
        by_generation = {}
        for generation in GENERATIONS:
            mine = [c for c in recent if c[0] == generation]
            pauses = Pauses.of([c[2] for c in mine], [c[3] for c in mine], sum(c[4] for c in mine))
            by_generation[str(generation)] = dataclasses.asdict(pauses)
        return {"gc": by_generation}


COLLECTIONS = _Collections()


class _LoopTurns:
    """Counts the event loop's iterations: a task that gives up its turn at each one."""

    def __init__(self) -> None:
        self.count = 0

    async def run(self) -> None:
        """Count until cancelled."""
        while True:
            await asyncio.sleep(0)
            self.count += 1


LOOP_TURNS = _LoopTurns()


def heap_now() -> dict[str, Any]:
    """The collector's settings and how many objects it tracks, by generation, and has frozen."""
    return {
        "thresholds": list(gc.get_threshold()),
        "frozen": gc.get_freeze_count(),
        "tracked": [len(gc.get_objects(generation)) for generation in GENERATIONS],
    }


def _aux_handlers(running: RunningServer, stop: asyncio.Event) -> list[Any]:
    """The echo and control services that sit beside the referee in its process."""
    service = running.service

    def cpu(_: dict[str, Any]) -> dict[str, Any]:
        return {"cpu_s": time.process_time(), "at": time.monotonic()}

    def stats(request: dict[str, Any]) -> dict[str, Any]:
        seats = [s for table in service.tables.values() for s in table.statistics()["seats"]]
        statuses = [table.status for table in service.tables.values()]
        return {
            **COLLECTIONS.since(float(request.get("since", 0.0))),
            "cpu_s": time.process_time(),
            "at": time.monotonic(),
            "loop_turns": LOOP_TURNS.count,  # bench/welcome_bench.py: how often the loop comes round
            "tables": len(statuses),
            "running": statuses.count("running"),
            "finished": statuses.count("finished"),
            "decisions": sum(s["decisions"] for s in seats),
            "timeouts": sum(s["timeouts"] for s in seats),
            "rejections": sum(s["rejections"] for s in seats),
            # Walking the heap is itself a pause: only when asked, after the timed window.
            **({"heap": heap_now()} if request.get("heap") else {}),
        }

    async def finished(request: dict[str, Any]) -> dict[str, Any]:
        table = service.tables[request["match_id"]]
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(table.finished.wait(), float(request["timeout_s"]))
        # From the replay (complete once the match is over): the referee keeps no records in memory.
        replay = read_replay(service.replay_paths[request["match_id"]])
        start, result = replay.start, replay.result
        rounds = sum(
            1 for r in replay.records if isinstance(r, EventRecord) and isinstance(r.event, RoundScored)
        )
        seats = table.statistics()["seats"]
        return {
            "finished": table.finished.is_set(),
            "rounds": rounds,
            "game_s": ((result.t_ms if result else 0.0) - (start.t_ms if start else 0.0)) / 1000,
            "decisions": sum(s["decisions"] for s in seats),
            "timeouts": sum(s["timeouts"] for s in seats),
            "scores": list(table.state.scores),
        }

    def stop_soon(_: dict[str, Any]) -> dict[str, Any]:
        asyncio.get_running_loop().call_later(0.05, stop.set)  # after this reply has left
        return {}

    return [
        grpc.method_handlers_generic_handler("bench.Echo", {"Play": _echo_handler()}),
        grpc.method_handlers_generic_handler("bench.Relay", {"Play": _relay_handler()}),
        grpc.method_handlers_generic_handler(
            "bench.Control",
            {
                "Cpu": _json_handler(cpu),
                "Stats": _json_handler(stats),
                "Finished": _json_handler(finished),
                "Stop": _json_handler(stop_soon),
            },
        ),
    ]


async def _serve(
    conn: Connection,
    organiser: str,
    clock: ClockSettings,
    lifetime_s: float,
    thresholds: Thresholds,
    settings: dict[str, Any],
) -> None:
    # Replays are written, as `tichu serve` writes them by default, into a folder that goes with
    # the process.
    replays = Path(tempfile.mkdtemp(prefix="tichu-bench-replays-"))
    atexit.register(shutil.rmtree, replays, True)
    running = await start_server(
        f"{LOOPBACK}:0", organiser, insecure=True, defaults=clock, replay_dir=replays, **settings
    )
    stop = asyncio.Event()
    aux = grpc.aio.server()
    aux.add_generic_rpc_handlers(_aux_handlers(running, stop))
    aux_port = aux.add_insecure_port(f"{LOOPBACK}:0")
    await aux.start()
    if thresholds is not None:
        tune_collector(thresholds)  # as `tichu serve` does
    conn.send((running.port, aux_port))
    turns = asyncio.create_task(LOOP_TURNS.run())
    try:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), lifetime_s)
    finally:
        turns.cancel()
        await running.stop(0.5)
        await aux.stop(0.5)


def serve_in_process(
    conn: Connection,
    organiser: str,
    clock: ClockSettings,
    lifetime_s: float,
    profile_to: str = "",
    thresholds: Thresholds = COLLECTORS["tuned"],
    settings: dict[str, Any] | None = None,
) -> None:
    """Entry point of the server process: the referee, the echo and the control services;
    `settings` are more of start_server's keywords (ServerSettings fields)."""
    # Timeouts are counted from the tables' statistics; the log keeps only errors.
    log.configure(level="error", force=True)
    gc.callbacks.append(COLLECTIONS)
    serve = functools.partial(_serve, conn, organiser, clock, lifetime_s, thresholds, settings or {})
    if not profile_to:
        asyncio.run(serve())
        return
    profiler = cProfile.Profile()
    profiler.enable()
    try:
        asyncio.run(serve())
    finally:
        profiler.disable()
        profiler.dump_stats(profile_to)


def _spawn() -> Any:
    """Processes start fresh (no fork of a process that holds gRPC state)."""
    return multiprocessing.get_context("spawn")


class ServerProcess:
    """A referee in a process of its own, and synchronous organiser and control calls to it."""

    def __init__(
        self,
        clock: ClockSettings,
        name: str,
        lifetime_s: float = 900.0,
        start_timeout_s: float = 60.0,
        thresholds: Thresholds = COLLECTORS["tuned"],
        settings: dict[str, Any] | None = None,
    ) -> None:
        self.organiser = secrets.token_urlsafe(16)
        self.metadata = (("authorization", f"Bearer {self.organiser}"),)
        profile_to = str(Path(PROFILE_DIR) / f"referee-{name}.prof") if PROFILE_DIR else ""
        parent, child = _spawn().Pipe()
        self.process = _spawn().Process(
            target=serve_in_process,
            args=(child, self.organiser, clock, lifetime_s, profile_to, thresholds, settings),
            daemon=True,
        )
        self.process.start()
        child.close()
        if not parent.poll(start_timeout_s):
            self.process.kill()
            raise RuntimeError("the referee process did not start")
        referee_port, aux_port = parent.recv()
        self.address = f"{LOOPBACK}:{referee_port}"
        self.aux_address = f"{LOOPBACK}:{aux_port}"
        self._channel = grpc.insecure_channel(self.address)
        self._aux = grpc.insecure_channel(self.aux_address)
        self.stub = referee_pb2_grpc.RefereeStub(self._channel)  # type: ignore[no-untyped-call]

    def control(self, method: str, deadline_s: float = 30.0, **request: Any) -> dict[str, Any]:
        """Call a control method; its JSON answer."""
        call = self._aux.unary_unary(method)
        answer: dict[str, Any] = json.loads(call(json.dumps(request).encode(), timeout=deadline_s))
        return answer

    def create_matches(
        self, count: int, rules_json: str, seed: str, preset: str = "official"
    ) -> list[pb.CreateMatchResponse]:
        """Create `count` matches through the organiser API."""
        return [
            self.stub.CreateMatch(
                pb.CreateMatchRequest(preset=preset, rules_json=rules_json, seed=f"{seed}/{n}"),
                metadata=self.metadata,
                timeout=30,
            )
            for n in range(count)
        ]

    def stop(self) -> None:
        """Stop the referee (its streams end) and wait for the process to exit."""
        with contextlib.suppress(grpc.RpcError):
            self.control(CONTROL_STOP, deadline_s=5)
        self._channel.close()
        self._aux.close()
        self.process.join(15)
        if self.process.is_alive():
            self.process.kill()
            self.process.join(5)


# ----------------------------------------------------------------------- 1. round trip per decision


@dataclass(frozen=True, slots=True)
class RoundTrips:
    """Figure 1: the bare echo's, the bare relay's and the referee's round trips, side by side."""

    echo: Latency
    relay: Latency
    referee: Latency
    by_class: dict[str, Latency]
    relay_by_class: dict[str, Latency]
    echo_cpu_us: float  # the server process's CPU time per echo round trip
    relay_cpu_us: float  # the server process's CPU time per relayed decision (timed or not)
    decision_cpu_us: float  # the referee process's CPU time per decision (timed or not)
    decisions: int  # decisions the seats sent, timed or not
    messages: int  # messages the seats received
    relay_decisions: int  # the same two on the relay
    relay_messages: int
    matches: int
    rejections: int

    @property
    def ratio_p50(self) -> float:
        """Referee p50 / echo p50."""
        return self.referee.p50_ms / self.echo.p50_ms if self.echo.p50_ms else math.inf

    @property
    def ratio_p99(self) -> float:
        """Referee p99 / echo p99."""
        return self.referee.p99_ms / self.echo.p99_ms if self.echo.p99_ms else math.inf

    @property
    def over_relay_p50(self) -> float:
        """Referee p50 / relay p50: what the referee costs beyond the gRPC traffic it makes."""
        return self.referee.p50_ms / self.relay.p50_ms if self.relay.p50_ms else math.inf

    @property
    def over_relay_p99(self) -> float:
        """Referee p99 / relay p99."""
        return self.referee.p99_ms / self.relay.p99_ms if self.relay.p99_ms else math.inf

    @property
    def meets_bars(self) -> bool:
        """p50 under 1 ms, p99 under 5 ms, both under twice the echo's."""
        return (
            self.referee.p50_ms < P50_BAR_MS
            and self.referee.p99_ms < P99_BAR_MS
            and self.ratio_p50 < RATIO_BAR
            and self.ratio_p99 < RATIO_BAR
        )


class _MatchSeries:
    """Matches played one after another by four scripted seats, paused between chunks; or, with
    `relay`, the same seats on the bare relay."""

    def __init__(
        self,
        channel: Any,
        metadata: Sequence[tuple[str, str]],
        samples: Samples,
        seed: str,
        relay: bool = False,
    ) -> None:
        self.channel = channel
        self.stub = referee_pb2_grpc.RefereeStub(channel)  # type: ignore[no-untyped-call]
        self.metadata = metadata
        self.samples = samples
        self.seed = seed
        self.relay = relay
        self.gate = asyncio.Event()
        self.table: TableClient | None = None
        self.task: asyncio.Task[None] | None = None
        self.matches = 0

    async def _start(self) -> None:
        if self.relay:
            tokens = [f"{self.seed}-{self.matches}/{seat}" for seat in range(4)]
        else:
            created = await self.stub.CreateMatch(
                pb.CreateMatchRequest(rules_json=LONG_GAME, seed=f"{self.seed}/{self.matches}"),
                metadata=self.metadata,
            )
            tokens = list(created.seat_tokens)
        self.matches += 1
        path = RELAY_PLAY if self.relay else REFEREE_PLAY
        self.table = TableClient(self.channel, tokens, self.samples, gate=self.gate, path=path)
        self.task = asyncio.create_task(self.table.play())

    async def chunk(self, count: int, timeout_s: float) -> None:
        """Let the seats answer until `count` more round trips are timed, then pause them."""
        self.samples.target = self.samples.count + count
        self.samples.reached.clear()
        self.gate.set()
        try:
            async with asyncio.timeout(timeout_s):
                while self.samples.count < self.samples.target:
                    if self.task is None or self.task.done():
                        await self._start()
                    assert self.task is not None
                    reached = asyncio.ensure_future(self.samples.reached.wait())
                    await asyncio.wait({reached, self.task}, return_when=asyncio.FIRST_COMPLETED)
                    reached.cancel()
        finally:
            self.gate.clear()
            self.samples.target = 0
        # Let the decisions in flight land before the echo runs.
        for _ in range(100):
            if self.table is None or not self.table.in_flight():
                break
            await asyncio.sleep(0.002)

    async def close(self) -> None:
        """End the current match's streams (seats held at the gate included)."""
        if self.task is not None:
            self.task.cancel()
            with contextlib.suppress(asyncio.CancelledError, grpc.aio.AioRpcError):
                await self.task


async def _echo_chunk(call: Any, count: int, into: list[float]) -> None:
    message = pb.BotMessage(
        decision=pb.Decision(
            request_id=1, action=pb.Action(pass_turn=pb.Empty(), text="pass"), state_version=1
        )
    )
    for _ in range(count):
        sent = time.monotonic()
        await call.write(message)
        reply = await call.read()
        into.append(time.monotonic() - sent)
        if reply is grpc.aio.EOF:
            raise RuntimeError("the echo stream ended")


async def _round_trips(server: ServerProcess, decisions: int, chunk: int, seed: str) -> RoundTrips:
    samples = Samples()
    relay_samples = Samples()
    echo_times: list[float] = []
    chunk_timeout_s = max(30.0, chunk * 0.05)
    # The server process's CPU time during each path's chunks.
    cpu_s = {"echo": 0.0, "relay": 0.0, "referee": 0.0}
    async with (
        grpc.aio.insecure_channel(server.address) as channel,
        grpc.aio.insecure_channel(server.aux_address) as aux,
    ):
        echo = aux.stream_stream(
            ECHO_PLAY,
            request_serializer=pb.BotMessage.SerializeToString,
            response_deserializer=pb.RefereeMessage.FromString,
        )()
        read_cpu = aux.unary_unary(CONTROL_CPU)
        series = _MatchSeries(channel, server.metadata, samples, seed)
        relay = _MatchSeries(aux, (), relay_samples, seed, relay=True)

        async def timed(path: str, run: Callable[[], Awaitable[None]]) -> None:
            before = json.loads(await read_cpu(b"{}", timeout=10))["cpu_s"]
            await run()
            cpu_s[path] += json.loads(await read_cpu(b"{}", timeout=10))["cpu_s"] - before

        try:
            # Warm up every path, then forget what they measured.
            await _echo_chunk(echo, min(chunk, 200), [])
            for warmed in (samples, relay_samples):
                await (series if warmed is samples else relay).chunk(min(chunk, 200), chunk_timeout_s)
                warmed.by_class.clear()
                warmed.count = warmed.rejections = warmed.decisions = warmed.messages = 0
            chunks = max(1, math.ceil(decisions / chunk))
            for n in range(chunks):
                size = min(chunk, decisions - n * chunk)
                runs: list[tuple[str, Callable[[], Awaitable[None]]]] = [
                    ("echo", functools.partial(_echo_chunk, echo, size, echo_times)),
                    ("relay", functools.partial(relay.chunk, size, chunk_timeout_s)),
                    ("referee", functools.partial(series.chunk, size, chunk_timeout_s)),
                ]
                # ABC, then CBA: no path always runs right after the same other one.
                for path, run in runs if n % 2 == 0 else runs[::-1]:
                    await timed(path, run)
        finally:
            echo.cancel()
            await series.close()
            await relay.close()
    return RoundTrips(
        echo=Latency.of(echo_times),
        relay=Latency.of(relay_samples.all()),
        referee=Latency.of(samples.all()),
        by_class={label: Latency.of(values) for label, values in sorted(samples.by_class.items())},
        relay_by_class={
            label: Latency.of(values) for label, values in sorted(relay_samples.by_class.items())
        },
        echo_cpu_us=cpu_s["echo"] / max(1, len(echo_times)) * 1e6,
        relay_cpu_us=cpu_s["relay"] / max(1, relay_samples.decisions) * 1e6,
        decision_cpu_us=cpu_s["referee"] / max(1, samples.decisions) * 1e6,
        decisions=samples.decisions,
        messages=samples.messages,
        relay_decisions=relay_samples.decisions,
        relay_messages=relay_samples.messages,
        matches=series.matches,
        rejections=samples.rejections + relay_samples.rejections,
    )


def measure_round_trips(decisions: int = 5000, chunk: int = 250, seed: str = "bench") -> RoundTrips:
    """Figure 1: `decisions` referee round trips and as many echo round trips, alternating in chunks."""
    server = ServerProcess(PATIENT, "round-trip")
    try:
        return asyncio.run(
            asyncio.wait_for(_round_trips(server, decisions, chunk, seed), 120 + decisions * 0.05)
        )
    finally:
        server.stop()


# --------------------------------------------------------------------------------- 2. hands per second


@dataclass(frozen=True, slots=True)
class Hands:
    """Figure 2: one whole match between bot processes."""

    bot: str
    rounds: int
    game_s: float  # from the match's start (every seat connected) to its result
    wall_s: float  # from launching the bot processes to the result
    decisions: int
    timeouts: int
    finished: bool
    exit_codes: tuple[int | None, ...]

    @property
    def hands_per_s(self) -> float:
        """Rounds scored per second of play."""
        return self.rounds / self.game_s if self.game_s > 0 else 0.0


def measure_hands(
    bot: str = "random", rules_json: str = "", seed: str = "2024", timeout_s: float = 600.0
) -> Hands:
    """Figure 2: four `tichu bot` processes play one match on a referee process; rounds per second."""
    processes: list[subprocess.Popen[bytes]] = []
    with contextlib.ExitStack() as stack:
        server = ServerProcess(DEMO, "hands")
        stack.callback(server.stop)
        created = server.create_matches(1, rules_json=rules_json, seed=seed)[0]
        logs = [stack.enter_context(tempfile.TemporaryFile()) for _ in created.seat_tokens]
        stack.callback(_kill, processes)
        started = time.monotonic()
        for seat, (token, err) in enumerate(zip(created.seat_tokens, logs, strict=True)):
            env = {**os.environ, "TICHU_TOKEN": token, "TICHU_LOG_LEVEL": "warning"}
            processes.append(
                subprocess.Popen(
                    [sys.executable, "-m", "referee.cli", "bot", BOTS[bot], "--server", server.address,
                     "--insecure", "--name", f"{bot}-{seat}"],
                    env=env, cwd=REPO, stdout=subprocess.DEVNULL, stderr=err,
                )
            )  # fmt: skip
        info = server.control(
            CONTROL_FINISHED, deadline_s=timeout_s + 30, match_id=created.match_id, timeout_s=timeout_s
        )
        wall_s = time.monotonic() - started
        codes: list[int | None] = []
        for process in processes:
            try:
                codes.append(process.wait(30))
            except subprocess.TimeoutExpired:
                codes.append(None)
        if any(code != 0 for code in codes):
            for err in logs:
                err.seek(0)
                sys.stderr.write(err.read().decode(errors="replace")[-2000:])
        return Hands(
            bot=bot,
            rounds=int(info["rounds"]),
            game_s=float(info["game_s"]),
            wall_s=wall_s,
            decisions=int(info["decisions"]),
            timeouts=int(info["timeouts"]),
            finished=bool(info["finished"]),
            exit_codes=tuple(codes),
        )
    raise AssertionError("unreachable")  # the ExitStack returns or raises


def _kill(processes: Sequence[subprocess.Popen[bytes]]) -> None:
    """Kill the bot processes still running (ours, by their handles)."""
    for process in processes:
        if process.poll() is None:
            process.kill()
            process.wait(5)


# ------------------------------------------------------------------------------ 3. tables per process


async def _cpu_between(start: float, end: float) -> tuple[float, float]:
    """(CPU seconds, wall seconds) this process used between two monotonic times."""
    await asyncio.sleep(max(0.0, start - time.monotonic()))
    cpu, wall = time.process_time(), time.monotonic()
    await asyncio.sleep(max(0.0, end - time.monotonic()))
    return time.process_time() - cpu, time.monotonic() - wall


async def _drive(
    conn: Connection,
    address: str,
    tables: Sequence[Sequence[str]],
    think_s: float,
    limit_s: float,
    connect_s: float,
) -> dict[str, Any]:
    deadline = time.monotonic() + limit_s
    samples = Samples()
    samples.window = (math.inf, math.inf)  # nothing counts until the window is known
    # One connection per table, as separate bots would have (not one shared subchannel).
    channels = [
        grpc.aio.insecure_channel(address, options=[("grpc.use_local_subchannel_pool", 1)]) for _ in tables
    ]
    clients = [
        TableClient(channel, tokens, samples, think_s=think_s, sdk_hello=os.environ.get(HELLO_ENV) == "sdk")
        for channel, tokens in zip(channels, tables, strict=True)
    ]
    began = time.monotonic()
    connect_by = began + connect_s
    # Every seat but the last of each table connects first, in every client process (the main
    # process waits for them all), and the last seats open their streams without a Hello: no
    # game starts (and loads the machine) meanwhile. Then the last Hellos, and the games start
    # nearly together. A call that the referee has taken needs no more of its accept loop,
    # which a saturated referee runs once per event-loop iteration: seats that opened their
    # streams once the first games ran waited tens of seconds for their Welcome.
    tasks: list[asyncio.Task[None]] = []
    loop = asyncio.get_running_loop()
    last_seats = [c.seats[-1] for c in clients]
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(asyncio.gather(*(seat.prepare() for seat in last_seats)), connect_s)
    for first, last in ((0, -1), (-1, None)):
        tasks += [asyncio.create_task(seat.run()) for c in clients for seat in c.seats[first:last]]
        while sum(c.welcomed for c in clients) < len(tasks) and time.monotonic() < connect_by:
            await asyncio.sleep(0.01)
        if first == 0:
            conn.send(("almost", sum(c.welcomed for c in clients)))
            await loop.run_in_executor(None, conn.recv)  # the main process's go
    conn.send(("ready", (sum(c.welcomed for c in clients), time.monotonic() - began)))
    start, until = await loop.run_in_executor(None, conn.recv)
    samples.window = (start, until)
    cpu_s, wall_s = await _cpu_between(start, until)
    # The main process stops the referee after the window, which ends the streams.
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(
            asyncio.gather(*tasks, return_exceptions=True), max(0.1, deadline - time.monotonic())
        )
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    for channel in channels:
        await channel.close()
    return {
        "samples": samples.by_class,
        "decisions": samples.decisions,
        "rejections": samples.rejections,
        "cpu_s": cpu_s,
        "wall_s": wall_s,
    }


def drive_in_process(conn: Connection) -> None:
    """Entry point of a client process: the scripted seats of the tables it is given, step by step."""
    log.configure(level="warning", force=True)
    # One event loop for every step: grpc.aio's poller keeps the loop it first served, and
    # reports to a closed one ("Event loop is closed") if each step ran in a new loop.
    with asyncio.Runner() as runner:
        while True:
            try:
                command = conn.recv()
            except EOFError:
                return
            if command[0] != "step":
                return
            _, address, tables, think_s, limit_s, connect_s = command
            conn.send(("done", runner.run(_drive(conn, address, tables, think_s, limit_s, connect_s))))


class _Workers:
    """The client processes of figure 3; each drives whole tables (all four seats of each)."""

    def __init__(self, count: int) -> None:
        context = _spawn()
        self.pipes: list[Connection] = []
        self.processes: list[Any] = []
        for _ in range(count):
            parent, child = context.Pipe()
            process = context.Process(target=drive_in_process, args=(child,), daemon=True)
            process.start()
            child.close()
            self.pipes.append(parent)
            self.processes.append(process)

    def send(self, messages: Sequence[Any]) -> None:
        """One message to each process, in order."""
        for pipe, message in zip(self.pipes, messages, strict=True):
            pipe.send(message)

    def expect(self, kind: str, timeout_s: float) -> list[Any]:
        """Each process's next message, which must be of `kind`; its payloads."""
        deadline = time.monotonic() + timeout_s
        payloads = []
        for pipe in self.pipes:
            if not pipe.poll(max(0.0, deadline - time.monotonic())):
                raise RuntimeError(f"a client process sent no {kind!r} within {timeout_s:.0f} s")
            message = pipe.recv()
            if message[0] != kind:
                raise RuntimeError(f"a client process sent {message[0]!r}, not {kind!r}")
            payloads.append(message[1])
        return payloads

    def close(self) -> None:
        """Ask the processes to exit; kill the ones that do not."""
        for pipe in self.pipes:
            with contextlib.suppress(OSError):
                pipe.send(("exit",))
        for process in self.processes:
            process.join(5)
            if process.is_alive():
                process.kill()
                process.join(5)


@dataclass(frozen=True, slots=True)
class Step:
    """Figure 3, one step: K tables at once on one referee process, timed over a window."""

    tables: int
    seats_connected: int
    latency: Latency
    decisions_per_s: float
    timeouts: int  # in the whole step, connections and warm-up included
    window_timeouts: int  # in the timed window
    rejections: int
    server_cpu: float  # cores the referee process used in the window
    clients_cpu: float  # cores the client processes used, together
    connect_s: float  # seconds until every seat had its Welcome
    step_s: float  # the whole step, the referee process's start and stop included
    measure_s: float  # the timed window
    collector: str  # how the referee process's garbage collector ran: a COLLECTORS name
    gc: dict[int, Pauses]  # the referee process's collections in the timed window, by generation
    heap: dict[str, Any]  # the referee process's collector after the window (heap_now)

    @property
    def gc_full(self) -> int:
        """The referee process's full garbage collections in the timed window."""
        return self.gc[GENERATIONS[-1]].count

    @property
    def gc_longest_ms(self) -> float:
        """The longest of them, by the clock."""
        return self.gc[GENERATIONS[-1]].max_ms

    @property
    def cpu_per_decision_us(self) -> float:
        """The referee process's CPU time per decision."""
        return self.server_cpu / self.decisions_per_s * 1e6 if self.decisions_per_s else 0.0

    @property
    def passed(self) -> bool:
        """Every seat connected, no decision timed out, the p99 round trip under 5 ms."""
        return (
            self.seats_connected == 4 * self.tables
            and self.timeouts == 0
            and self.latency.count > 0
            and self.latency.p99_ms < P99_BAR_MS
        )


def run_step(
    workers: _Workers,
    tables: int,
    warmup_s: float,
    measure_s: float,
    think_s: float,
    seed: str,
    collector: str = "tuned",
) -> Step:
    """Serve `tables` matches on a fresh referee process, its garbage collector run as `collector`
    says (COLLECTORS); time the round trips over the window."""
    began = time.monotonic()
    count = len(workers.pipes)
    connect_s = 20.0 + tables * 0.1
    server = ServerProcess(TIGHT, f"tables-{tables}-{collector}", thresholds=COLLECTORS[collector])
    stepped = went = windowed = False
    try:
        tokens = [list(c.seat_tokens) for c in server.create_matches(tables, LONG_GAME, f"{seed}/{tables}")]
        limit_s = connect_s + warmup_s + measure_s + 30
        workers.send(
            [("step", server.address, tokens[i::count], think_s, limit_s, connect_s) for i in range(count)]
        )
        stepped = True
        workers.expect("almost", connect_s + 30)
        workers.send([("go",)] * count)
        went = True
        ready = workers.expect("ready", connect_s + 30)
        connected = sum(welcomed for welcomed, _ in ready)
        start = time.monotonic() + warmup_s
        until = start + measure_s
        workers.send([(start, until)] * count)
        windowed = True
        time.sleep(max(0.0, start - time.monotonic()))
        before = server.control(CONTROL_STATS)
        time.sleep(max(0.0, until - time.monotonic()))
        after = server.control(CONTROL_STATS, since=start, heap=True)
    finally:
        if stepped and not windowed:
            with contextlib.suppress(OSError):
                if not went:
                    workers.send([("go",)] * count)
                workers.send([(0.0, 0.0)] * count)  # an empty window: let them finish
        server.stop()
    results = workers.expect("done", 60)
    seconds = [s for r in results for values in r["samples"].values() for s in values]
    clients_wall = max(r["wall_s"] for r in results) or 1.0
    return Step(
        tables=tables,
        seats_connected=connected,
        latency=Latency.of(seconds),
        decisions_per_s=sum(r["decisions"] for r in results) / measure_s,
        timeouts=int(after["timeouts"]),
        window_timeouts=int(after["timeouts"] - before["timeouts"]),
        rejections=int(after["rejections"]),
        server_cpu=(after["cpu_s"] - before["cpu_s"]) / max(1e-9, after["at"] - before["at"]),
        clients_cpu=sum(r["cpu_s"] for r in results) / clients_wall,
        connect_s=max(seconds for _, seconds in ready),
        step_s=time.monotonic() - began,
        measure_s=measure_s,
        collector=collector,
        gc={int(generation): Pauses(**pauses) for generation, pauses in after["gc"].items()},
        heap=after["heap"],
    )


@dataclass(frozen=True, slots=True)
class Capacity:
    """Figure 3: every step run, the largest K that passed, and the largest K without timeouts."""

    steps: list[Step]
    best: int  # the largest K that passed (0: none did)
    steady: int  # the largest K with every seat connected and no timeouts (0: none)
    capped: bool  # the climb reached its last step without timeouts: `steady` is a lower bound


def measure_capacity(
    max_tables: int = 600,
    ladder: Sequence[int] | None = None,
    warmup_s: float = 1.0,
    measure_s: float = 4.0,
    think_ms: float = 0.0,
    seed: str = "bench",
    budget_s: float = 600.0,
    on_step: Callable[[Step], None] | None = None,
    collectors: Sequence[str] = ("tuned",),
) -> Capacity:
    """Figure 3: climb the ladder of K tables while none times out; then, if none passed, step down.
    Each K runs once per garbage collector setting in `collectors` (COLLECTORS' names), side by
    side, in an order that alternates from one K to the next; `best` and `steady` are the first's."""
    up = list(ladder) if ladder else [k for k in LADDER_UP if k <= max_tables]
    deadline = time.monotonic() + budget_s
    steps: list[Step] = []
    workers = _Workers(WORKERS)

    def step(tables: int) -> Step:
        order = list(collectors) if len(steps) % (2 * len(collectors)) == 0 else list(reversed(collectors))
        done = {}
        for collector in order:
            done[collector] = run_step(workers, tables, warmup_s, measure_s, think_ms / 1000, seed, collector)
            steps.append(done[collector])
            if on_step is not None:
                on_step(done[collector])
        return done[collectors[0]]

    try:
        capped = True
        for tables in up:
            if time.monotonic() > deadline:
                capped = False
                break
            done = step(tables)
            if done.timeouts or done.seats_connected < 4 * tables:
                capped = False  # the referee no longer keeps up: no point in more tables
                break
        if ladder is None and not any(s.passed for s in steps):
            for tables in LADDER_DOWN:
                if tables < min(up, default=1) and time.monotonic() < deadline and step(tables).passed:
                    break
    finally:
        workers.close()
    first = [s for s in steps if s.collector == collectors[0]]
    best = max((s.tables for s in first if s.passed), default=0)
    steady = max((s.tables for s in first if not s.timeouts and s.seats_connected == 4 * s.tables), default=0)
    return Capacity(steps=steps, best=best, steady=steady, capped=capped and bool(steps))


# ------------------------------------------------------------------------------------------ main

PARTS = ("round-trip", "hands", "tables")
PYTHON = ".venv/bin/python bench/referee_bench.py"


def _print_round_trips(result: RoundTrips, command: str) -> None:
    print("\n1. Round trip per decision, loopback, side by side in chunks")
    print(f"   (a) bare grpc.aio echo:   {result.echo}")
    print(f"   (b) referee decision:     {result.referee}")
    for label, latency in result.by_class.items():
        print(f"       {label + ':':<22} {latency}")
    print(f"   (c) bare grpc.aio relay:  {result.relay}")
    for label, latency in result.relay_by_class.items():
        print(f"       {label + ':':<22} {latency}")
    added = result.referee.p50_ms - result.echo.p50_ms
    print(
        f"   (b)/(a): p50 x{result.ratio_p50:.2f}, p99 x{result.ratio_p99:.2f}; "
        f"the referee adds {added:.3f} ms at p50"
    )
    print(
        f"   (b)/(c): p50 x{result.over_relay_p50:.2f}, p99 x{result.over_relay_p99:.2f}: the referee "
        "against gRPC alone carrying the same messages of a trick (diagnostic, no bar)"
    )
    print(
        f"   server CPU: {result.decision_cpu_us:.0f} us per referee decision ({result.decisions} decisions, "
        f"timed or not, {result.messages / max(1, result.decisions):.2f} messages to the seats each), "
        f"{result.relay_cpu_us:.0f} us per relayed decision "
        f"({result.relay_messages / max(1, result.relay_decisions):.2f} messages each), "
        f"{result.echo_cpu_us:.0f} us per echo"
    )
    print(
        f"   bars: p50 < {P50_BAR_MS:g} ms, p99 < {P99_BAR_MS:g} ms, both < {RATIO_BAR:g}x the echo: "
        f"{verdict(result.meets_bars)}  ({result.matches} matches, {result.rejections} rejections)"
    )
    print(f"   reproduce: {command}")


def _print_hands(result: Hands, command: str) -> None:
    print(f"\n2. Hands per second, a whole match, four {result.bot} bots as `tichu bot` processes")
    state = "finished" if result.finished else "DID NOT FINISH"
    print(
        f"   {result.rounds} rounds in {result.game_s:.2f} s of play: {result.hands_per_s:.2f} hands/s "
        f"({result.decisions} decisions, {result.decisions / max(result.game_s, 1e-9):.0f}/s; "
        f"{result.timeouts} timeouts; {result.wall_s:.1f} s with process start-up; {state}; "
        f"exit codes {list(result.exit_codes)})"
    )
    print(f"   reproduce: {command}")


STEP_HEADER = (
    f"   {'K':>5} {'GC':>13} {'seats':>6} {'dec/s':>6} {'p50 ms':>8} {'p99 ms':>8} {'p99.9 ms':>9} "
    f"{'timeouts':>12} {'ref CPU':>8} {'us/dec':>7} {'GC ms':>9} {'bots CPU':>9} {'connect':>8} {'step':>6}"
)


def _print_step(step: Step) -> None:
    timeouts = f"{step.timeouts} ({step.window_timeouts})"
    print(
        f"   {step.tables:>5} {step.collector:>13} {step.seats_connected:>6} {step.decisions_per_s:>6.0f} "
        f"{step.latency.p50_ms:>8.2f} {step.latency.p99_ms:>8.2f} {step.latency.p999_ms:>9.2f} "
        f"{timeouts:>12} "
        f"{step.server_cpu:>8.2f} {step.cpu_per_decision_us:>7.0f} "
        f"{f'{step.gc_full}x {step.gc_longest_ms:.0f}':>9} {step.clients_cpu:>9.2f} "
        f"{step.connect_s:>7.1f}s {step.step_s:>5.1f}s  {'ok' if step.passed else 'FAILS'}",
        flush=True,
    )
    for generation, pauses in sorted(step.gc.items()):
        print(f"{'':>16}gen {generation}: {pauses}")
    heap = step.heap
    gc_cpu_ms = sum(pauses.total_cpu_ms for pauses in step.gc.values())
    server_cpu_ms = step.server_cpu * 1000 * step.measure_s
    print(
        f"{'':>16}collector CPU {gc_cpu_ms:.0f} ms of the referee's {server_cpu_ms:.0f} ms; thresholds "
        f"{tuple(heap['thresholds'])}, {heap['frozen']:,} objects frozen, tracked by generation "
        f"{', '.join(f'{n:,}' for n in heap['tracked'])} after the window",
        flush=True,
    )


Summary = list[tuple[str, str, str]]  # (figure, measured, bar)


def _figure_round_trips(decisions: int, chunk: int, seed: str) -> Summary:
    command = f"{PYTHON} --only round-trip --decisions {decisions} --chunk {chunk} --seed {seed}"
    if os.environ.get(BUNDLES_ENV) == "0":
        command += " --no-bundles"
    trips = measure_round_trips(decisions, chunk, seed)
    _print_round_trips(trips, command)
    return [
        ("echo round trip p50 / p99", f"{trips.echo.p50_ms:.3f} / {trips.echo.p99_ms:.3f} ms", ""),
        (
            "referee round trip p50 / p99",
            f"{trips.referee.p50_ms:.3f} / {trips.referee.p99_ms:.3f} ms",
            f"< {P50_BAR_MS:g} / {P99_BAR_MS:g} ms",
        ),
        (
            "referee / echo, p50 / p99",
            f"x{trips.ratio_p50:.2f} / x{trips.ratio_p99:.2f}",
            f"< x{RATIO_BAR:g}",
        ),
        ("relay round trip p50 / p99", f"{trips.relay.p50_ms:.3f} / {trips.relay.p99_ms:.3f} ms", ""),
        ("referee / relay, p50 / p99", f"x{trips.over_relay_p50:.2f} / x{trips.over_relay_p99:.2f}", ""),
    ]


def _figure_hands(bot: str, rules: str, seed: str) -> Summary:
    rules_flag = f" --match-rules '{rules}'" if rules else ""
    command = f"{PYTHON} --only hands --bot {bot}{rules_flag} --seed {seed}"
    hands = measure_hands(bot, rules, seed)
    _print_hands(hands, command)
    return [(f"hands/s, {bot} bots", f"{hands.hands_per_s:.2f}", "")]


def _print_collectors(steps: Sequence[Step], collectors: Sequence[str]) -> None:
    """Each K's steps side by side: the garbage collector's pauses and CPU, and the p99.9 round trip."""
    print("   side by side (CPU: the collecting thread's; GC CPU: all collections, share of the referee's):")
    for tables in sorted({s.tables for s in steps}):
        for collector in collectors:
            for step in (s for s in steps if s.tables == tables and s.collector == collector):
                full = step.gc[GENERATIONS[-1]]
                gc_cpu_ms = sum(pauses.total_cpu_ms for pauses in step.gc.values())
                share = gc_cpu_ms / max(1e-9, step.server_cpu * 1000 * step.measure_s)
                print(
                    f"   K={tables:<4} {collector:>13}: full collections {full.count}x, "
                    f"longest {full.max_ms:.1f} ms (CPU {full.max_cpu_ms:.1f}); "
                    f"GC CPU {gc_cpu_ms:.0f} ms ({share:.1%}); us/dec {step.cpu_per_decision_us:.0f}; "
                    f"p99.9 {step.latency.p999_ms:.1f} ms "
                    f"(n={step.latency.count})"
                )


def _figure_tables(
    max_tables: int,
    ladder: list[int] | None,
    measure_s: float,
    warmup_s: float,
    think_ms: float,
    seed: str,
    collectors: Sequence[str] = ("tuned",),
) -> Summary:
    steps_flag = f" --tables {','.join(map(str, ladder))}" if ladder else f" --max-tables {max_tables}"
    command = (
        f"{PYTHON} --only tables{steps_flag} --measure-s {measure_s:g} --warmup-s {warmup_s:g}"
        f" --think-ms {think_ms:g} --seed {seed}"
    )
    command += f" --collector {','.join(collectors)}"
    sdk = os.environ.get(HELLO_ENV) == "sdk"
    command += f" --hello {'sdk' if sdk else 'plain'}"
    pace = "at once" if not think_ms else f"after {think_ms:g} ms (bomb windows at once)"
    print(
        f"\n3. Tables per referee process: 200 ms limit, {WORKERS} client processes, "
        f"seats answer {pace}, {measure_s:g} s timed per step"
    )
    if sdk:
        print(
            "   Hello as the SDK says it (referee_declines, referee_passes, defer_events): round trip from a "
            "decision to the first message\n   of a later state at any seat of its table"
        )
    else:
        print("   Hello as a bot that asks for nothing (every window and turn asked, events as they happen)")
    print(STEP_HEADER)
    capacity = measure_capacity(
        max_tables, ladder, warmup_s, measure_s, think_ms, seed, on_step=_print_step, collectors=collectors
    )
    if len(collectors) > 1:
        _print_collectors(capacity.steps, collectors)
    best = str(capacity.best) if capacity.best else "none of those tried"
    steady = ("at least " if capacity.capped else "") + str(capacity.steady)
    print(f"   largest K with p99 < {P99_BAR_MS:g} ms and no timeouts: {best}")
    print(f"   largest K without timeouts: {steady}")
    print(
        "   (dec/s: decisions answered per second; timeouts: in the step (in the timed window); "
        "ref CPU, bots CPU: cores used by\n   the referee process and by the client processes; "
        "us/dec: referee CPU per decision; GC: the referee process's garbage collector, tuned as `tichu "
        "serve` runs it or python's\n   defaults; GC ms: its full collections in the timed window, and the "
        "longest; under each step, every generation's collections\n   in the window; connect: until every "
        "seat was welcomed)"
    )
    print(f"   reproduce: {command}")
    return [
        (f"tables, think {think_ms:g} ms", str(capacity.best), f"p99 < {P99_BAR_MS:g} ms, 0 timeouts"),
        (f"tables, think {think_ms:g} ms", steady, "0 timeouts"),
    ]


def main(argv: list[str] | None = None) -> int:
    """Measure the figures and print each with the command that reproduces it."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes: under 30 s")
    parser.add_argument("--only", action="append", choices=PARTS, help="run only this figure (repeatable)")
    parser.add_argument("--decisions", type=int, help="figure 1: round trips of each kind (default 5000)")
    parser.add_argument("--chunk", type=int, help="figure 1: round trips per chunk (default 250)")
    parser.add_argument("--bot", choices=sorted(BOTS), default="random", help="figure 2: the sample bot")
    parser.add_argument(
        "--match-rules", help="figure 2: rules_json of the match (default: official, to 1000)"
    )
    parser.add_argument("--max-tables", type=int, help="figure 3: the ladder's cap (default 600)")
    parser.add_argument("--tables", help="figure 3: the steps, e.g. 25,50 (default: the ladder)")
    parser.add_argument("--measure-s", type=float, help="figure 3: seconds timed per step (default 4)")
    parser.add_argument("--warmup-s", type=float, help="figure 3: seconds before timing (default 1)")
    parser.add_argument(
        "--think-ms",
        help="figure 3: the seats' think times, one ladder each (default 0,100; windows answered at once)",
    )
    parser.add_argument("--seed", default="bench")
    parser.add_argument("--profile-server", metavar="DIR", help="profile each referee process into DIR")
    parser.add_argument(
        "--no-bundles", action="store_true", help="seats take one gRPC message per referee message"
    )
    parser.add_argument(
        "--hello",
        choices=("sdk", "plain"),
        default="sdk",
        help="figure 3: seats say Hello as the SDK does (default) or ask for nothing",
    )
    parser.add_argument(
        "--collector",
        default="tuned",
        metavar="NAMES",
        help="figure 3: the referee process's garbage collector: tuned as `tichu serve` runs it "
        "(default), frozen (the start-up heap, python's thresholds), python (its defaults), or A/B/C "
        "(frozen, thresholds A, B, C); several, comma-separated, run side by side; both = tuned,python",
    )
    args = parser.parse_args(argv)
    os.environ[BUNDLES_ENV] = "0" if args.no_bundles else "1"
    os.environ[HELLO_ENV] = args.hello
    collectors = ["tuned", "python"] if args.collector == "both" else args.collector.split(",")
    for name in collectors:
        with contextlib.suppress(ValueError):
            zero, one, two = (int(n) for n in name.split("/"))
            COLLECTORS[name] = (zero, one, two)
    if unknown := set(collectors) - set(COLLECTORS):
        parser.error(
            f"--collector: no collector {', '.join(sorted(unknown))} (known: {', '.join(COLLECTORS)})"
        )
    if args.profile_server:
        global PROFILE_DIR  # noqa: PLW0603 (one switch for the whole run, read in ServerProcess)
        PROFILE_DIR = args.profile_server
        Path(PROFILE_DIR).mkdir(parents=True, exist_ok=True)
    quick = args.quick
    parts = args.only or list(PARTS)
    log.configure(level="warning")
    print(
        f"Python {sys.version.split()[0]}, {os.cpu_count()} cores, load average {load_average()} (1/5/15 min)"
    )
    summary: Summary = []
    if "round-trip" in parts:
        summary += _figure_round_trips(
            args.decisions or (400 if quick else 5000), args.chunk or (100 if quick else 250), args.seed
        )
    if "hands" in parts:
        quick_rules = '{"match_mode": "fixed_rounds:2"}'
        rules = args.match_rules if args.match_rules is not None else (quick_rules if quick else "")
        summary += _figure_hands(args.bot, rules, args.seed)
    if "tables" in parts:
        ladder = [int(k) for k in args.tables.split(",")] if args.tables else ([5, 25] if quick else None)
        for think_ms in (float(t) for t in (args.think_ms or ("0" if quick else "0,100")).split(",")):
            summary += _figure_tables(
                args.max_tables or 600,
                ladder,
                args.measure_s or (1.5 if quick else 4.0),
                args.warmup_s if args.warmup_s is not None else (0.5 if quick else 1.0),
                think_ms,
                args.seed,
                collectors,
            )
    print(f"\n{'figure':<32}{'measured':<26}bar")
    for name, value, bar in summary:
        print(f"{name:<32}{value:<26}{bar}")
    print(f"load average at the end: {load_average()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
