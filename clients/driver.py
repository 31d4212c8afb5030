"""One bot's seat in one match, sans I/O: the referee's messages in, the seat's answers out.

`SeatDriver.handle(message)` takes what the referee sent (the match core's own values,
referee.match.messages: read off the wire by clients.codec, or handed over directly in one
process by clients.local) and returns what the seat sends back. It folds the Snapshot and the
events into the seat's observation (the engine's one fold, referee.rules.observation.advance),
asks the bot through its Harness, which checks every answer, and says a Tichu call the way the
protocol wants it: riding on the play it comes with (R-CALL-7), or as its own message just before
a decision of another kind. The same bot therefore leaves the same replay in one process and over
the wire. It keeps no clock and does no I/O: the transports time, thread and send.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Sequence

import structlog

from clients.bot import Bot, Harness
from referee.match.messages import (
    Cancelled,
    Decision,
    EventMessage,
    Message,
    OutMessage,
    OutOfTurn,
    Ping,
    Pong,
    Rejection,
    Request,
    ResultMessage,
    SeatOptions,
    Snapshot,
    Welcome,
)
from referee.match.messages import MatchResult as MatchEnd
from referee.rules import Action, CallTichu, DecisionKind, Observation, Play, event_from_json, mask_of
from referee.rules.legal import ExchangeChoices
from referee.rules.observation import advance, answered, before_first_deal, for_request, idle

__all__ = ["SeatDriver"]

log = structlog.get_logger("tichu.seat")


class SeatDriver:
    """Follows one seat for a bot across its streams: call new_stream() when one opens, handle()
    each message the referee sends on it, and send what handle() returns."""

    def __init__(self, bot: Bot, name: str | None = None, seat: int | None = None) -> None:
        self.bot = bot
        self.harness = Harness(bot, seat)
        # What the seat's Hello asks of the referee: not to be asked what only has one answer,
        # and, for a bot that does not listen to events, to hold them until its next request.
        self.options = SeatOptions(
            referee_declines=bot.referee_declines,
            defer_events=not self.harness.hears_events,
            referee_passes=bot.referee_passes,
        )
        # The seat's observation, from the last Snapshot and the events since; None until the
        # Welcome. Events up to snapshot_version are in the Snapshot already.
        self.obs: Observation | None = None
        self.snapshot_version = -1
        self.welcome: Welcome | None = None  # the last one
        self.result: MatchEnd | None = None  # the match's end, once the referee sent it
        self.last_seq = 0  # the last event passed to the bot: a replayed event is not repeated
        self.last_event_version = -1  # and its state version: a repeated copy of it is dropped
        self.state_version = 0  # the newest the seat has heard of
        self.answered: set[int] = set()  # requests answered on the current stream
        self.cancelled: set[int] = set()
        self._log = log.bind(bot=name or bot.name)

    @property
    def seat(self) -> int | None:
        """The seat, once a Welcome named it."""
        return None if self.welcome is None else self.welcome.seat

    def new_stream(self) -> None:
        """A new stream opened: its Snapshot lists what the referee still waits for, answered or not."""
        self.answered = set()

    def cancel(self, request_id: int) -> None:
        """A request needs no answer any more (the transport may call this while the bot thinks)."""
        self.cancelled.add(request_id)

    def handle_all(self, messages: Iterable[OutMessage]) -> list[Message]:
        """handle() for each message in order; everything they return."""
        out: list[Message] = []
        for message in messages:
            out.extend(self.handle(message))
        return out

    def handle(self, message: OutMessage) -> list[Message]:
        """What the seat sends in answer to one of the referee's messages (often nothing)."""
        if isinstance(message, EventMessage):
            self._event(message)
        elif isinstance(message, Request):
            return self._request(message)
        elif isinstance(message, Ping):
            return [Pong(message.nonce)]
        elif isinstance(message, Snapshot):
            return self._snapshot(message)
        elif isinstance(message, Welcome):
            self._welcome(message)
        elif isinstance(message, Rejection):
            self.harness.rejection(message)
        elif isinstance(message, Cancelled):
            self.cancel(message.request_id)
        elif isinstance(message, ResultMessage):
            self.result = message.result
        # A SeatStatus changes nothing the bot is asked: the transport may log it.
        return []

    def _welcome(self, welcome: Welcome) -> None:
        self.welcome = welcome
        if self.obs is None or self.obs.seat != welcome.seat:
            self.obs = before_first_deal(welcome.seat, welcome.config)
            self.snapshot_version = -1
        self.harness.seat = welcome.seat
        self._log = self._log.bind(match_id=welcome.match_id, seat=welcome.seat)

    def _snapshot(self, snapshot: Snapshot) -> list[Message]:
        self.obs = idle(snapshot.observation)
        self.snapshot_version = snapshot.state_version
        self.state_version = max(self.state_version, snapshot.state_version)
        out: list[Message] = []
        for request in snapshot.pending:
            out.extend(self._request(request))
        return out

    def _event(self, message: EventMessage) -> None:
        old = message.state_version <= self.snapshot_version
        if old and message.seq <= self.last_seq:
            return  # heard before a reconnection, and already in the snapshot
        if message.seq <= self.last_seq and message.state_version <= self.last_event_version:
            return  # a repeated copy (the network, or a proxy, sent it twice)
        self.last_seq = max(self.last_seq, message.seq)
        self.last_event_version = max(self.last_event_version, message.state_version)
        self.state_version = max(self.state_version, message.state_version)
        event = message.event if message.event is not None else event_from_json(json.loads(message.json))
        if self.obs is not None and not old:
            self.obs = advance(self.obs, event)
        self.harness.event(event)

    def _request(self, request: Request) -> list[Message]:
        rid = request.request_id
        if rid in self.cancelled or rid in self.answered or self.obs is None:
            return []  # one answer per request: a repeated copy of one is not answered again
        self.answered.add(rid)
        self.state_version = max(self.state_version, request.state_version)
        started = time.monotonic()
        kind = request.kind
        legal = self._legal(request)
        obs = for_request(self.obs, kind, legal, request.can_call_tichu)
        call = request.can_call_tichu and self.harness.wants_tichu_call(obs)
        if call:
            self.obs = answered(self.obs, CallTichu())
            obs = for_request(self.obs, kind, legal, False)
        action = self.harness.decide(obs, kind)
        if rid in self.cancelled:
            return []
        out: list[Message] = []
        if call and kind is DecisionKind.PLAY and isinstance(action, Play):
            # One message: the call first, then the play (R-CALL-7).
            action = Play(action.cards_mask, action.phoenix, action.wish, action.partner, True)
        elif call:
            # A call does not change whose turn it is (R-CALL-4): the decision still answers
            # the same request, so it keeps the request's state version.
            out.append(OutOfTurn(self.state_version, CallTichu()))
        self.obs = answered(self.obs, action)
        used_ms = (time.monotonic() - started) * 1000
        if request.deadline_ms and used_ms > request.deadline_ms:
            self._log.warning("decision_late", request_id=rid, used_ms=round(used_ms))
        out.append(Decision(rid, request.state_version, action))
        return out

    def _legal(self, request: Request) -> Sequence[Action]:
        """The request's legal answers; an exchange's are described (how many, to whom), not listed."""
        if request.kind is DecisionKind.EXCHANGE:
            assert self.obs is not None
            return ExchangeChoices(mask_of(self.obs.hand), request.exchange_to, ())
        return request.legal()
