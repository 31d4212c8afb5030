"""The SDK's one translation of the wire: the referee's protobuf messages into the match core's
own values (referee.match.messages), and a seat's answers back into protobuf.

The seat driver (clients.driver) reads and writes only those values, so a bot follows a match the
same way in one process (clients.local, fed by the match core directly) and over gRPC
(clients.connect, which keeps only the transport). Nothing else in the SDK's play loop reads a
protobuf message.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from clients.listed import ListedActions
from referee.match import ClockSettings
from referee.match.messages import (
    BadAction,
    Cancelled,
    Decision,
    EventMessage,
    Message,
    OutMessage,
    OutOfTurn,
    Ping,
    Pong,
    Rejection,
    RejectionReason,
    Request,
    ResultMessage,
    SeatInfo,
    SeatOptions,
    SeatStatus,
    SentAction,
    Snapshot,
    Welcome,
)
from referee.rules.observation import observation_from_json
from referee.server.codec import (
    KIND_FROM_PROTO,
    REASON_FROM_PROTO,
    action_from_proto,
    action_to_proto,
    clock_merged,
    config_from_proto,
    result_from_proto,
    unbundle,
)
from referee.wire.tichu.v1 import referee_pb2 as pb

__all__ = ["UnreadMessage", "bot_message", "hello", "referee_messages"]


class UnreadMessage:
    """A message of the referee's that this SDK cannot read (a newer referee's kind, a request of
    an unknown decision): what it was, for the log."""

    __slots__ = ("kind", "why")

    def __init__(self, kind: str, why: str) -> None:
        self.kind = kind
        self.why = why

    def __repr__(self) -> str:
        return f"UnreadMessage({self.kind!r}, {self.why!r})"


def hello(token: str, name: str, version: str, protocol: int, options: SeatOptions) -> pb.BotMessage:
    """The first message of a seat's stream: the token, the bot, and what it asks of the referee."""
    return pb.BotMessage(
        hello=pb.Hello(
            token=token,
            bot_name=name,
            bot_version=version,
            protocol_version=protocol,
            accept_bundles=True,
            referee_declines=options.referee_declines,
            referee_passes=options.referee_passes,
            defer_events=options.defer_events,
            # The SDK folds the Snapshot and the events into its own observation.
            omit_observation=True,
        )
    )


def bot_message(message: Message) -> pb.BotMessage:
    """A seat's answer on the wire."""
    if isinstance(message, Decision):
        decision = pb.Decision(
            request_id=message.request_id,
            action=_action(message.action),
            state_version=message.state_version,
        )
        return pb.BotMessage(decision=decision)
    if isinstance(message, OutOfTurn):
        out_of_turn = pb.OutOfTurn(action=_action(message.action), state_version=message.state_version)
        return pb.BotMessage(out_of_turn=out_of_turn)
    if isinstance(message, Pong):
        return pb.BotMessage(pong=pb.Pong(nonce=message.nonce))
    if isinstance(message, Ping):
        return pb.BotMessage(ping=pb.Ping(nonce=message.nonce))
    raise TypeError(f"not a message a seat sends: {message!r}")


def _action(sent: SentAction) -> pb.Action:
    if sent is None or isinstance(sent, BadAction):
        raise TypeError(f"a seat sends actions, not {sent!r}")
    return action_to_proto(sent)


def referee_messages(envelope: pb.RefereeMessage) -> list[OutMessage | UnreadMessage]:
    """The messages an envelope carries (a Bundle's, in order), each as the match core's value."""
    return [_read(message) for message in unbundle(envelope)]


def _read(message: pb.RefereeMessage) -> OutMessage | UnreadMessage:
    kind = message.WhichOneof("kind")
    if kind == "event":
        event = message.event
        return EventMessage(event.seq, event.state_version, event.type, event.json)
    if kind == "request":
        return _request(message.request)
    if kind == "ping":
        return Ping(message.ping.nonce)
    if kind == "cancelled":
        return Cancelled(message.cancelled.request_id, message.cancelled.reason)
    if kind == "rejection":
        wire = message.rejection
        # A reason a newer referee added reads as INVALID; its message still says what was wrong.
        reason = REASON_FROM_PROTO.get(wire.reason, RejectionReason.INVALID)
        return Rejection(reason, wire.rule, wire.message, wire.request_id, wire.state_version)
    if kind == "snapshot":
        snapshot = message.snapshot
        observation = observation_from_json(json.loads(snapshot.observation_json))
        pending = tuple(r for r in map(_request, snapshot.pending) if isinstance(r, Request))
        return Snapshot(snapshot.state_version, observation, pending)
    if kind == "welcome":
        return _welcome(message.welcome)
    if kind == "seat_status":
        return SeatStatus(message.seat_status.seat, message.seat_status.connected)
    if kind == "result":
        try:
            return ResultMessage(result_from_proto(message.result))
        except ValueError as error:
            return UnreadMessage("result", str(error))
    if kind == "pong":
        return Pong(message.pong.nonce)
    return UnreadMessage(kind or "empty", "a message this SDK does not know")


def _request(wire: pb.DecisionRequest) -> Request | UnreadMessage:
    kind = KIND_FROM_PROTO.get(wire.kind)
    if kind is None:
        return UnreadMessage("request", f"request {wire.request_id}: unknown decision kind {wire.kind}")
    return Request(
        request_id=wire.request_id,
        kind=kind,
        state_version=wire.state_version,
        deadline_ms=wire.deadline_ms,
        bank_left_ms=wire.bank_left_ms,
        can_call_tichu=wire.can_call_tichu,
        exchange_to=tuple(wire.exchange_to),
        # Parsed as the bot reads them: most bots read one or a few of hundreds.
        listed=ListedActions(wire.legal_actions, action_from_proto),
    )


def _welcome(wire: pb.Welcome) -> Welcome:
    return Welcome(
        match_id=wire.match_id,
        seat=wire.seat,
        team=wire.team,
        config=config_from_proto(wire.rules),
        clock=clock_merged(ClockSettings(), wire.clock),
        seats=_seats(wire.seats),
        protocol_version=wire.protocol_version,
        seed_commitment=wire.seed_commitment,
    )


def _seats(seats: Sequence[pb.SeatInfo]) -> tuple[SeatInfo, ...]:
    return tuple(SeatInfo(s.seat, s.bot_name, s.connected) for s in seats)
