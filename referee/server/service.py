"""The gRPC servicer: a stream <-> a seat at a Table; thin on purpose.

Protocol abuse ends the call with a gRPC status (a bad token: UNAUTHENTICATED; an empty
envelope, or a field out of its bounds (referee.server.input_limits): INVALID_ARGUMENT; organiser calls
without the organiser token: UNAUTHENTICATED or PERMISSION_DENIED; too many failed Hellos from one
address: RESOURCE_EXHAUSTED), logged once with the peer. Nothing out of bounds is stored.
Everything that happens in a game is the Table's business.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
from collections import Counter
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn, cast

import grpc
from google.protobuf.message import DecodeError, Message

from referee.log import get_logger
from referee.match import PROTOCOL_VERSION, ClockSettings, MatchResult
from referee.match.messages import OutMessage, Request
from referee.rules import OFFICIAL, RulesError, State
from referee.server.codec import (
    clock_merged,
    config_from_proto,
    message_from_proto,
    message_to_proto,
    result_to_proto,
    seat_info_to_proto,
    seat_options_from_proto,
)
from referee.server.front import MatchExistsError, Referee
from referee.server.input_limits import (
    MAX_RECEIVE_BYTES,
    InputError,
    check_create_request,
    check_hello,
    check_length,
    check_match_fields,
    clip,
)
from referee.server.table import Connection, SeatUnavailableError, StreamEnd, Table
from referee.server.throttle import HelloThrottle
from referee.wire.tichu.v1 import referee_pb2 as pb
from referee.wire.tichu.v1 import referee_pb2_grpc

REFEREE_SERVICE: str = pb.DESCRIPTOR.services_by_name["Referee"].full_name
# At most this many messages go in one Bundle (a snapshot's worth of events is still one write).
MAX_BUNDLE = 64
# How long a call stays open after the result for the bot to close its side first.
RESULT_LINGER_S = 2.0
# How long a Play stream may stay open without its Hello.
HELLO_TIMEOUT_S = 10.0


@dataclass
class Traffic:
    """What the Play streams carried since the service started: the bench's messages per hand."""

    writes: int = 0  # gRPC messages sent (a Bundle is one)
    sent: Counter[str] = field(default_factory=Counter)  # messages sent by kind, inside bundles too
    received: Counter[str] = field(default_factory=Counter)  # bot messages by kind, the Hello too


@dataclass(frozen=True, slots=True)
class Malformed:
    """What a request's bytes became when they are not the message its RPC takes: the RPC answers
    INVALID_ARGUMENT itself (after the organiser's token, for organiser calls), instead of gRPC's
    UNKNOWN "Unexpected <class ...DecodeError>", unlogged, before any check."""

    expected: str  # the message's full name, e.g. tichu.v1.CreateMatchRequest

    @property
    def details(self) -> str:
        """The refusal's words."""
        return f"the request is not a valid {self.expected} message (malformed protobuf)"


def _lenient(message: type[Message]) -> Callable[[bytes], Message | Malformed]:
    """A request deserializer that turns bytes it cannot parse into a Malformed."""

    def parse(data: bytes) -> Message | Malformed:
        try:
            return message.FromString(data)
        except DecodeError:
            return Malformed(message.DESCRIPTOR.full_name)

    return parse


class RefereeService(referee_pb2_grpc.RefereeServicer):
    """Serves many matches: Play streams for bots, Watch for spectators, organiser calls."""

    def __init__(self, referee: Referee, *, hello_timeout_s: float = HELLO_TIMEOUT_S) -> None:
        self.referee = referee  # the matches: the servicer only turns the wire into its calls
        self.defaults = referee.defaults
        self.traffic = Traffic()
        self._log = get_logger()
        self.hello_timeout_s = hello_timeout_s
        # On the referee's clock, so that a test can drive it.
        self.hello_throttle = HelloThrottle(referee.now, self._log)

    # ---------------------------------------------------------------------------- Python API
    # What the wire's organiser calls take, as Python: the Referee (referee.server.front) is the
    # typed front door; these take the wire's strings for the callers that hold them.

    def create_match(
        self,
        *,
        preset: str = "",
        rules_json: str = "",
        clock: ClockSettings | None = None,
        seed: str = "",
        bot_names: Sequence[str] = (),
        watch_delay_events: int = 0,
        match_id: str = "",
        initial_state: State | None = None,
        salt: str = "",
        person_seats: Sequence[int] = (),
    ) -> tuple[Table, list[str]]:
        """Referee.create with the rules as the wire gives them (a preset and a JSON object of
        overrides); the table and one secret token per seat, in seat order."""
        check_match_fields(bot_names, seed, rules_json, watch_delay_events)
        rules = (
            OFFICIAL
            if initial_state is not None
            else config_from_proto(pb.RulesConfig(json=rules_json, preset=preset))
        )
        entry = self.referee.create(
            rules,
            clock=clock,
            seed=seed,
            bot_names=bot_names,
            watch_delay_events=watch_delay_events,
            match_id=match_id,
            initial_state=initial_state,
            salt=salt,
            person_seats=person_seats,
        )
        return entry.table, list(entry.tokens)

    @property
    def tables(self) -> dict[str, Table]:
        """Every match's table by id (a copy: the Referee holds them)."""
        return {entry.table.match_id: entry.table for entry in self.referee}

    @property
    def replay_paths(self) -> dict[str, Path]:
        """Where each match's replay is written, by id (a copy)."""
        return {e.table.match_id: e.replay_path for e in self.referee if e.replay_path is not None}

    def seat_token(self, match_id: str, seat: int) -> str:
        """Referee.seat_token."""
        return self.referee.seat_token(match_id, seat)

    def seat_tokens(self, match_id: str, seat: int, *, legacy: bool = False) -> tuple[str, ...]:
        """Referee.seat_tokens."""
        return self.referee.seat_tokens(match_id, seat, legacy=legacy)

    def resume_unfinished(self) -> list[str]:
        """Referee.resume_unfinished."""
        return self.referee.resume_unfinished()

    def forget(self, match_id: str) -> bool:
        """Referee.forget."""
        return self.referee.forget(match_id)

    def attach(self, server: grpc.aio.Server) -> None:
        """Register this servicer's RPCs on a grpc.aio server, as the generated
        add_RefereeServicer_to_server does, but with deserializers that hand malformed requests
        to the RPCs (Malformed) so that each answers them as it should."""
        handlers = {
            "Play": grpc.stream_stream_rpc_method_handler(
                self.Play, _lenient(pb.BotMessage), pb.RefereeMessage.SerializeToString
            ),
            "Watch": grpc.unary_stream_rpc_method_handler(
                self.Watch, _lenient(pb.WatchRequest), pb.WatchMessage.SerializeToString
            ),
            "CreateMatch": grpc.unary_unary_rpc_method_handler(
                self.CreateMatch, _lenient(pb.CreateMatchRequest), pb.CreateMatchResponse.SerializeToString
            ),
            "ListMatches": grpc.unary_unary_rpc_method_handler(
                self.ListMatches, _lenient(pb.ListMatchesRequest), pb.ListMatchesResponse.SerializeToString
            ),
        }
        assert set(handlers) == set(pb.DESCRIPTOR.services_by_name["Referee"].methods_by_name)
        server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(REFEREE_SERVICE, handlers),))
        server.add_registered_method_handlers(REFEREE_SERVICE, handlers)

    async def close(self) -> None:
        """Stop every match (closing its streams)."""
        await self.referee.close()

    # ---------------------------------------------------------------------------- Play

    async def Play(  # noqa: N802 (the RPC's name)
        self, request_iterator: AsyncIterator[pb.BotMessage | Malformed], context: grpc.aio.ServicerContext
    ) -> AsyncIterator[pb.RefereeMessage]:
        """One bot's stream: a Hello with its seat token, then messages both ways until the end."""
        table, conn, hello = await self._hello(request_iterator, context)
        reader = asyncio.create_task(self._read(request_iterator, table, conn))
        bundles = hello.accept_bundles
        observations = not hello.omit_observation
        try:
            while True:
                taken = await conn.take()
                close = taken[-1] if isinstance(taken[-1], StreamEnd) else None
                if close is not None:
                    taken.pop()
                # Everything one input made for this seat goes in one write when the bot takes
                # bundles: one gRPC message costs far more than its bytes, and a move usually
                # makes an event and a request for every seat at once.
                step = MAX_BUNDLE if bundles else 1
                sent = self.traffic.sent
                for start in range(0, len(taken), step):
                    batch = cast(list[OutMessage], taken[start : start + step])
                    envelope = pb.RefereeMessage()
                    # A Bundle's messages are made inside it: copying a request in would copy
                    # every legal action it lists once more.
                    inside = envelope.bundle.messages if len(batch) > 1 else None
                    for message in batch:
                        sent[type(message).__name__] += 1
                        # A request's legal actions are listed here, as it leaves, and its clock
                        # starts once they are: that time is the referee's, not the bot's.
                        message_to_proto(message, envelope if inside is None else inside.add(), observations)
                        if isinstance(message, Request):
                            table.delivered(conn, message.request_id)
                    self.traffic.writes += 1
                    yield envelope
                if close is not None:
                    if close.code is not None:
                        await _abort(context, grpc.StatusCode[close.code], close.details)
                    # The match is over. Ending the call at once would race a message the bot
                    # sends meanwhile (a Pong): a gRPC client whose write meets a finished call
                    # fails it and drops what it has not read yet, the result included. So the
                    # call ends when the bot closes its side, or RESULT_LINGER_S later.
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(asyncio.shield(reader), RESULT_LINGER_S)
                    return
        finally:
            reader.cancel()
            table.disconnect(conn)

    async def _hello(
        self, request_iterator: AsyncIterator[pb.BotMessage | Malformed], context: grpc.aio.ServicerContext
    ) -> tuple[Table, Connection, pb.Hello]:
        """The stream's Hello, checked and its seat taken; else the call ends with a status,
        logged once (with the peer), and counted against the peer by the throttle."""
        peer = context.peer()

        async def refuse(
            code: grpc.StatusCode, details: str, match_id: str = "", **fields: object
        ) -> NoReturn:
            # Only a failed Hello counts against its address (and the match it claimed), and only
            # failed ones are throttled: a Hello with a good token is never refused for someone
            # else's failures from there.
            wait_s = self.hello_throttle.failed(peer, details, match_id=match_id, code=code.name, **fields)
            if wait_s is not None:
                code = grpc.StatusCode.RESOURCE_EXHAUSTED
                details = (
                    f"too many failed Hellos from this address or for this match: wait {wait_s:.1f} s "
                    "before trying again; each try before then doubles the wait (a Hello with a good "
                    "seat token for a free seat is always let in)"
                )
            await _abort(context, code, details)

        try:
            first = await asyncio.wait_for(anext(aiter(request_iterator)), self.hello_timeout_s)
        except StopAsyncIteration:  # closed; or gRPC refused a first message over its size limit
            await refuse(
                grpc.StatusCode.UNAUTHENTICATED,
                f"the stream ended before a Hello (or its first message was over {MAX_RECEIVE_BYTES:,} "
                "bytes): send a Hello with your seat token first",
            )
        except TimeoutError:
            await refuse(
                grpc.StatusCode.DEADLINE_EXCEEDED,
                f"no Hello within {self.hello_timeout_s:g} s: send a Hello with your seat token first",
            )
        if isinstance(first, Malformed):
            await refuse(grpc.StatusCode.INVALID_ARGUMENT, first.details)
        kind = first.WhichOneof("kind")
        if kind is None:
            await refuse(grpc.StatusCode.INVALID_ARGUMENT, "empty BotMessage: set one of its fields")
        if kind != "hello":
            await refuse(
                grpc.StatusCode.UNAUTHENTICATED, "the first message must be a Hello with your seat token"
            )
        hello = first.hello
        self.traffic.received["Hello"] += 1
        if hello.protocol_version not in (0, PROTOCOL_VERSION):
            await refuse(
                grpc.StatusCode.FAILED_PRECONDITION,
                f"protocol_version {hello.protocol_version} is not supported; this referee speaks "
                f"{PROTOCOL_VERSION}",
            )
        try:
            check_hello(hello)
        except InputError as error:
            await refuse(grpc.StatusCode.INVALID_ARGUMENT, str(error))
        found = self.referee.seat_for(hello.token)
        if found is None:
            await refuse(grpc.StatusCode.UNAUTHENTICATED, "unknown seat token")
        table, seat = found
        try:
            conn = table.connect(seat, hello.bot_name, hello.bot_version, seat_options_from_proto(hello))
        except SeatUnavailableError as error:
            await refuse(grpc.StatusCode.UNAUTHENTICATED, str(error), match_id=table.match_id, seat=seat)
        return table, conn, hello

    async def _read(
        self, request_iterator: AsyncIterator[pb.BotMessage | Malformed], table: Table, conn: Connection
    ) -> None:
        """Forward a stream's messages to its table; an empty envelope ends the stream."""
        with contextlib.suppress(grpc.RpcError, grpc.aio.AioRpcError):
            received = self.traffic.received
            async for msg in request_iterator:
                if isinstance(msg, Malformed):
                    self._log.warning("message_refused", match_id=table.match_id, why=msg.details)
                    table.end(conn, "INVALID_ARGUMENT", msg.details)
                    return
                message = message_from_proto(msg)
                if message is None:
                    table.end(conn, "INVALID_ARGUMENT", "empty BotMessage: set one of its fields")
                    return
                received[type(message).__name__] += 1
                table.receive(conn, message)

    # ---------------------------------------------------------------------------- Watch

    async def Watch(  # noqa: N802 (the RPC's name)
        self, request: pb.WatchRequest | Malformed, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[pb.WatchMessage]:
        """A spectator stream: public and delayed, or complete and live with the organiser token."""
        full = False
        if _authorization(context) is not None:
            await self._require_organiser(context)
            full = True
        if isinstance(request, Malformed):
            await self._refuse(context, grpc.StatusCode.INVALID_ARGUMENT, "Watch", request.details)
        try:
            check_length("WatchRequest.match_id", request.match_id)
        except InputError as error:
            await self._refuse(context, grpc.StatusCode.INVALID_ARGUMENT, "Watch", str(error))
        table = self.referee.table(request.match_id)
        if table is None:
            await self._refuse(context, grpc.StatusCode.NOT_FOUND, "Watch", f"no match {request.match_id!r}")
        seq = 0
        async for item in table.watch(full):
            if isinstance(item, MatchResult):
                yield pb.WatchMessage(result=result_to_proto(item))
            else:
                seq += 1  # a watcher's seq is the position in its log
                event = pb.GameEvent(
                    seq=seq, state_version=item.state_version, type=item.type, json=item.json
                )
                yield pb.WatchMessage(event=event)

    # ---------------------------------------------------------------------------- organisers

    async def CreateMatch(  # noqa: N802 (the RPC's name)
        self, request: pb.CreateMatchRequest | Malformed, context: grpc.aio.ServicerContext
    ) -> pb.CreateMatchResponse:
        """Create a match and hand out its seat tokens (organisers only)."""
        await self._require_organiser(context)
        if isinstance(request, Malformed):
            await self._refuse(context, grpc.StatusCode.INVALID_ARGUMENT, "CreateMatch", request.details)
        try:
            check_create_request(request)
            table, tokens = self.create_match(
                preset=request.preset,
                rules_json=request.rules_json,
                clock=clock_merged(self.defaults, request.clock),
                seed=request.seed,
                bot_names=list(request.bot_names),
                watch_delay_events=request.watch_delay_events,
                match_id=request.match_id,
                person_seats=list(request.person_seats),
            )
        except MatchExistsError as error:
            await self._refuse(context, grpc.StatusCode.ALREADY_EXISTS, "CreateMatch", str(error))
        except (RulesError, ValueError) as error:
            await self._refuse(context, grpc.StatusCode.INVALID_ARGUMENT, "CreateMatch", str(error))
        commitment = table.match.header.seed_commitment
        return pb.CreateMatchResponse(match_id=table.match_id, seat_tokens=tokens, seed_commitment=commitment)

    async def ListMatches(  # noqa: N802 (the RPC's name)
        self, request: pb.ListMatchesRequest | Malformed, context: grpc.aio.ServicerContext
    ) -> pb.ListMatchesResponse:
        """Every match this referee holds, with its state (organisers only)."""
        await self._require_organiser(context)
        if isinstance(request, Malformed):
            await self._refuse(context, grpc.StatusCode.INVALID_ARGUMENT, "ListMatches", request.details)
        return pb.ListMatchesResponse(
            matches=[
                pb.MatchInfo(
                    match_id=entry.table.match_id,
                    status=entry.table.status,
                    seats=seat_info_to_proto(entry.table.seat_info()),
                    scores=list(entry.table.state.scores),
                    round=entry.table.state.round,
                    replay_path=str(entry.replay_path or ""),
                )
                for entry in self.referee
            ]
        )

    async def _require_organiser(self, context: grpc.aio.ServicerContext) -> None:
        value = _authorization(context)
        unauthenticated, denied = grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.PERMISSION_DENIED
        if value is None:
            await self._refuse(
                context, unauthenticated, "organiser", 'organisers send "authorization: Bearer <token>"'
            )
        scheme, _, token = value.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            await self._refuse(context, unauthenticated, "organiser", 'the authorization is "Bearer <token>"')
        if not hmac.compare_digest(token.strip().encode(), self.referee.organiser_token):
            await self._refuse(context, denied, "organiser", "wrong organiser token")

    async def _refuse(
        self, context: grpc.aio.ServicerContext, code: grpc.StatusCode, call: str, details: str
    ) -> NoReturn:
        """End an RPC with a status, logged once with the peer; the details are cut short so that
        no refusal repeats a huge input back."""
        details = clip(details)
        event = "organiser_refused" if call == "organiser" else "request_refused"
        self._log.warning(event, call=call, peer=context.peer(), code=code.name, why=details)
        await _abort(context, code, details)


def _authorization(context: grpc.aio.ServicerContext) -> str | None:
    """The authorization metadata value, if any."""
    metadata: Any = context.invocation_metadata() or ()
    for key, value in metadata:
        if key.lower() == "authorization":
            return str(value)
    return None


async def _abort(context: grpc.aio.ServicerContext, code: grpc.StatusCode, details: str) -> NoReturn:
    """End the call with a status (context.abort raises; this tells the type checker so)."""
    await context.abort(code, details)
    raise AssertionError("unreachable: context.abort raises")
