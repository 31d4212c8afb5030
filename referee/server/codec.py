"""The one place that translates between protobuf messages and plain values (the rules' actions
and events, the match core's messages and results)."""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from typing import Any

from referee.match.clock import ClockSettings
from referee.match.fields import RecordError
from referee.match.jsonbytes import ascii_json
from referee.match.messages import (
    BadAction,
    Cancelled,
    Decision,
    EventMessage,
    Hello,
    MatchResult,
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
from referee.match.outcome import Outcome, Termination, round_scores
from referee.match.summary import SeatSummary
from referee.rules import (
    Action,
    CallTichu,
    DecisionKind,
    Decline,
    DeclineTichu,
    Event,
    Exchange,
    GiftDragon,
    GrandTichu,
    IllegalActionError,
    InvalidActionError,
    Pass,
    Play,
    RulesConfig,
    RulesError,
    format_cards,
    legal_decisions,
    parse_action,
    parse_card,
    parse_cards,
)
from referee.rules.actions import make_exchange
from referee.rules.cards import CARD_NAMES, mask_of, parse_rank, rank_name
from referee.rules.config import PRESETS
from referee.rules.events import event_from_json
from referee.rules.observation import observation_data
from referee.server.input_limits import action_problem
from referee.wire.tichu.v1 import referee_pb2 as pb

KIND_TO_PROTO = {
    DecisionKind.GRAND_TICHU: pb.DECISION_KIND_GRAND_TICHU,
    DecisionKind.TICHU_STEP: pb.DECISION_KIND_TICHU_STEP,
    DecisionKind.EXCHANGE: pb.DECISION_KIND_EXCHANGE,
    DecisionKind.PLAY: pb.DECISION_KIND_PLAY,
    DecisionKind.BOMB_WINDOW: pb.DECISION_KIND_BOMB_WINDOW,
    DecisionKind.DRAGON_GIFT: pb.DECISION_KIND_DRAGON_GIFT,
}
KIND_FROM_PROTO = {wire: kind for kind, wire in KIND_TO_PROTO.items()}
TERMINATION_TO_PROTO = {
    Termination.PLAYED_OUT: pb.TERMINATION_PLAYED_OUT,
    Termination.NO_SHOW: pb.TERMINATION_NO_SHOW,
    Termination.WITHDRAWN: pb.TERMINATION_WITHDRAWN,
    Termination.OUT_OF_TIME: pb.TERMINATION_OUT_OF_TIME,
    Termination.REFEREE_ERROR: pb.TERMINATION_REFEREE_ERROR,
}
TERMINATION_FROM_PROTO = {wire: termination for termination, wire in TERMINATION_TO_PROTO.items()}
REASON_TO_PROTO = {
    RejectionReason.ILLEGAL: pb.REJECTION_REASON_ILLEGAL,
    RejectionReason.INVALID: pb.REJECTION_REASON_INVALID,
    RejectionReason.UNKNOWN_REQUEST: pb.REJECTION_REASON_UNKNOWN_REQUEST,
    RejectionReason.STALE: pb.REJECTION_REASON_STALE,
    RejectionReason.LATE: pb.REJECTION_REASON_LATE,
    RejectionReason.RATE_LIMITED: pb.REJECTION_REASON_RATE_LIMITED,
    RejectionReason.OUT_OF_ORDER: pb.REJECTION_REASON_OUT_OF_ORDER,
}
REASON_FROM_PROTO = {wire: reason for reason, wire in REASON_TO_PROTO.items()}
_COMPACT = (",", ":")


# ----------------------------------------------------------------------------------- actions


def action_to_proto(action: Action) -> pb.Action:
    """The wire form of an action, with its canonical string in `text`."""
    if isinstance(action, Play):
        return _play_to_proto(action)
    msg = pb.Action(text=str(action))
    if isinstance(action, Pass):
        msg.pass_turn.SetInParent()
    elif isinstance(action, Decline):
        msg.decline.SetInParent()
    elif isinstance(action, GrandTichu):
        msg.grand_tichu.call = action.call
    elif isinstance(action, CallTichu):
        msg.call_tichu.SetInParent()
    elif isinstance(action, DeclineTichu):
        msg.decline_tichu.SetInParent()
    elif isinstance(action, Exchange):
        for to, card in action.gifts:
            msg.exchange.gifts.add(to=to, card=format_cards([card]))
    elif isinstance(action, GiftDragon):
        msg.gift.to = action.to
    return msg


def _play_to_proto(play: Play) -> pb.Action:
    # A lead request lists hundreds of plays: the card names are looked up once and make both
    # the cards and the text, which is str(play) (tests/test_wire.py holds them equal).
    names = []
    mask = play.cards_mask
    while mask:  # lowest bit first: R-DEF-2 order, as cards_of
        low = mask & -mask
        names.append(CARD_NAMES[low.bit_length() - 1])
        mask ^= low
    words = ["play", *names]
    msg = pb.Action()
    wire = msg.play
    wire.cards.extend(names)
    if play.phoenix:
        wire.phoenix = rank_name(play.phoenix)
        words.append(f"phoenix={wire.phoenix}")
    if play.wish:
        wire.wish = rank_name(play.wish)
        words.append(f"wish={wire.wish}")
    if play.partner >= 0:
        wire.partner = play.partner
        words.append(f"partner={play.partner}")
    if play.tichu:
        wire.tichu = True
        words.append("tichu")
    msg.text = " ".join(words)
    return msg


def action_from_proto(msg: pb.Action) -> Action:
    """An action from its wire form; malformed input raises InvalidActionError."""
    kind = msg.WhichOneof("kind")
    if kind is None:
        if msg.text:
            return parse_action(msg.text)
        raise InvalidActionError("the action is empty: set one of its fields, or its text")
    if kind == "play":
        play = msg.play
        if not play.cards:
            raise InvalidActionError("a play names at least one card; to pass, send pass")
        cards = parse_cards(list(play.cards))
        return Play(
            mask_of(cards),
            parse_rank(play.phoenix) if play.phoenix else 0,
            parse_rank(play.wish) if play.wish else 0,
            play.partner if play.HasField("partner") and play.partner >= 0 else -1,
            play.tichu,
        )
    if kind == "pass_turn":
        return Pass()
    if kind == "decline":
        return Decline()
    if kind == "grand_tichu":
        return GrandTichu(msg.grand_tichu.call)
    if kind == "call_tichu":
        return CallTichu()
    if kind == "decline_tichu":
        return DeclineTichu()
    if kind == "exchange":
        return make_exchange([(gift.to, int(parse_card(gift.card))) for gift in msg.exchange.gifts])
    if kind == "gift":
        return GiftDragon(msg.gift.to)
    raise InvalidActionError(f"unknown action kind {kind!r}")


def _sent_action(msg: pb.Action, present: bool) -> SentAction:
    """The action a message carries, a BadAction saying why it cannot be read, or None if absent."""
    if not present:
        return None
    problem = action_problem(msg)
    if problem is not None:  # read nothing of an oversized action, nor repeat it back
        return BadAction(RejectionReason.INVALID, problem)
    try:
        return action_from_proto(msg)
    except RulesError as error:
        reason = RejectionReason.ILLEGAL if isinstance(error, IllegalActionError) else RejectionReason.INVALID
        return BadAction(reason, error.detail, error.rule or "")
    except ValueError as error:  # e.g. a number where the codec expected a card
        return BadAction(RejectionReason.INVALID, str(error))


# The same actions are offered again and again (declines, passes, the same plays from one hand);
# extend() copies each message into the request, so a shared cached one is never changed. Plays
# are cached by their fields: hashing the fields is cheaper than hashing the Play.
_wire_other = functools.lru_cache(maxsize=256)(action_to_proto)


@functools.lru_cache(maxsize=16_384)
def _wire_play(cards_mask: int, phoenix: int, wish: int, partner: int, tichu: bool) -> pb.Action:
    return action_to_proto(Play(cards_mask, phoenix, wish, partner, tichu))


def wire_actions(actions: Sequence[Action]) -> list[pb.Action]:
    """The wire form of each action, from the caches."""
    return [
        _wire_play(a.cards_mask, a.phoenix, a.wish, a.partner, a.tichu) if type(a) is Play else _wire_other(a)
        for a in actions
    ]


# ----------------------------------------------------------------------------------- messages


def seat_options_from_proto(hello: pb.Hello) -> SeatOptions:
    """What a Hello asks of the referee beyond the protocol's defaults."""
    return SeatOptions(hello.referee_declines, hello.defer_events, hello.referee_passes)


def message_from_proto(msg: pb.BotMessage) -> Message | None:
    """What a bot's message says, as the match core reads it; None for an empty envelope."""
    kind = msg.WhichOneof("kind")
    if kind == "decision":
        decision = msg.decision
        action = _sent_action(decision.action, decision.HasField("action"))
        return Decision(decision.request_id, decision.state_version, action)
    if kind == "out_of_turn":
        oot = msg.out_of_turn
        return OutOfTurn(oot.state_version, _sent_action(oot.action, oot.HasField("action")))
    if kind == "ping":
        return Ping(msg.ping.nonce)
    if kind == "pong":
        return Pong(msg.pong.nonce)
    if kind == "hello":
        return Hello()
    return None


def request_to_proto(
    request: Request, into: pb.DecisionRequest | None = None, observation: bool = True
) -> pb.DecisionRequest:
    """A request on the wire, its legal answers and (unless `observation` is False, for a seat
    whose Hello set omit_observation) the seat's observation made now, filled in place into
    `into`."""
    # Filled in place inside the message that is sent: a request can list hundreds of actions,
    # and building it apart would copy them all once more.
    msg = pb.DecisionRequest() if into is None else into
    msg.request_id = request.request_id
    msg.kind = KIND_TO_PROTO[request.kind]
    msg.state_version = request.state_version
    msg.deadline_ms = request.deadline_ms
    msg.bank_left_ms = request.bank_left_ms
    msg.can_call_tichu = request.can_call_tichu
    state, seat = request.state, request.seat
    assert state is not None, "the referee sends requests of its own state"
    decisions_json: list[str] | None = None  # an exchange's are described, not listed: short
    if request.kind is DecisionKind.EXCHANGE:
        msg.exchange_give = len(request.exchange_to)
        msg.exchange_to.extend(request.exchange_to)
    else:
        wired = wire_actions(legal_decisions(state, seat))
        msg.legal_actions.extend(wired)
        decisions_json = [action.text for action in wired]  # each is str() of its action
    if observation:
        # Every value is the engine's (its floats are halved ranks, finite): no NaN to look for.
        msg.observation_json = ascii_json(observation_data(state, seat, decisions_json), finite=True)
    return msg


def seat_info_to_proto(seats: Sequence[SeatInfo]) -> list[pb.SeatInfo]:
    """Each seat's name and connection."""
    return [pb.SeatInfo(seat=s.seat, bot_name=s.bot_name, connected=s.connected) for s in seats]


def result_to_proto(result: MatchResult) -> pb.MatchResult:
    """The end of a match on the wire, the statistics as summary_json ("no winner" and "no
    forfeit" are -1 there)."""
    outcome = result.outcome
    return pb.MatchResult(
        match_id=result.match_id,
        winner=-1 if outcome.winner is None else outcome.winner,
        scores=list(result.scores),
        forfeit=outcome.forfeit,
        forfeiting_team=-1 if outcome.forfeiting_team is None else outcome.forfeiting_team,
        reason=outcome.reason,
        summary_json=json.dumps(result.statistics(), separators=_COMPACT),
        chain_head=result.chain_head,
        signature=result.signature,
        termination=TERMINATION_TO_PROTO[outcome.termination],
        round_scores=[pb.RoundScore(points_a=r.points[0], points_b=r.points[1]) for r in result.round_scores],
    )


def result_from_proto(msg: pb.MatchResult) -> MatchResult:
    """The MatchResult a wire result carries: the value the referee's match core made (an older
    referee's, which sends no termination, has it read back from winner, forfeit and reason);
    ValueError when its summary is not one."""
    winner = msg.winner if msg.winner >= 0 else None
    forfeiting = msg.forfeiting_team if msg.forfeit and msg.forfeiting_team >= 0 else None
    termination = TERMINATION_FROM_PROTO.get(msg.termination)
    if termination is None:
        outcome = Outcome.of_legacy(winner, forfeiting, msg.reason, ())
    else:
        outcome = Outcome(termination, winner, forfeiting, msg.reason)
    try:
        statistics = json.loads(msg.summary_json) if msg.summary_json else {}
    except json.JSONDecodeError as error:
        raise ValueError(f"the result's summary_json is not JSON: {error}") from None
    if not isinstance(statistics, dict):
        raise ValueError("the result's summary_json is not an object")
    try:
        seats = tuple(SeatSummary.from_json(line) for line in statistics.get("seats") or ())
    except (RecordError, TypeError, AttributeError) as error:
        raise ValueError(f"the result's summary_json has a malformed seat ({error})") from None
    scores = (msg.scores[0], msg.scores[1]) if len(msg.scores) == 2 else (0, 0)
    points = [(r.points_a, r.points_b) for r in msg.round_scores]
    version = statistics.get("state_version")
    return MatchResult(
        match_id=msg.match_id,
        outcome=outcome,
        scores=scores,
        round_scores=round_scores(points, scores),
        state_version=version if isinstance(version, int) else 0,
        summary=seats,
        chain_head=msg.chain_head,
        signature=msg.signature,
    )


def message_to_proto(
    message: OutMessage, into: pb.RefereeMessage | None = None, observation: bool = True
) -> pb.RefereeMessage:
    """A message for a seat on the wire (a request's legal answers are listed now), filled in
    place into `into` when given (a Bundle's next message: no copy of what it holds);
    `observation`: whether its requests carry the seat's observation (Hello.omit_observation)."""
    wire = pb.RefereeMessage() if into is None else into
    if isinstance(message, EventMessage):
        event = wire.event  # filled in place: cheaper than building and copying one
        event.seq = message.seq
        event.state_version = message.state_version
        event.type = message.type
        event.json = message.json
    elif isinstance(message, Request):
        request_to_proto(message, wire.request, observation)
    elif isinstance(message, Cancelled):
        wire.cancelled.request_id = message.request_id
        wire.cancelled.reason = message.reason
    elif isinstance(message, Rejection):
        rejection = wire.rejection
        rejection.reason = REASON_TO_PROTO[message.reason]
        rejection.rule = message.rule
        rejection.message = message.message
        rejection.request_id = message.request_id
        rejection.state_version = message.state_version
    elif isinstance(message, Ping):
        wire.ping.nonce = message.nonce
    elif isinstance(message, Pong):
        wire.pong.nonce = message.nonce
    elif isinstance(message, SeatStatus):
        wire.seat_status.seat = message.seat
        wire.seat_status.connected = message.connected
    elif isinstance(message, Snapshot):
        snapshot = wire.snapshot
        snapshot.state_version = message.state_version
        snapshot.observation_json = ascii_json(message.observation.to_json())
        for request in message.pending:
            request_to_proto(request, snapshot.pending.add(), observation)
    elif isinstance(message, Welcome):
        wire.welcome.CopyFrom(
            pb.Welcome(
                match_id=message.match_id,
                seat=message.seat,
                team=message.team,
                rules=config_to_proto(message.config),
                clock=clock_to_proto(message.clock),
                seats=seat_info_to_proto(message.seats),
                protocol_version=message.protocol_version,
                seed_commitment=message.seed_commitment,
            )
        )
    elif isinstance(message, ResultMessage):
        wire.result.CopyFrom(result_to_proto(message.result))
    else:
        raise TypeError(f"not a message for a seat: {message!r}")
    return wire


# ----------------------------------------------------------------------------------- the rest


def event_from_proto(msg: pb.GameEvent) -> Event:
    """The engine event a GameEvent carries."""
    data: dict[str, Any] = json.loads(msg.json)
    return event_from_json(data)


def config_to_proto(config: RulesConfig) -> pb.RulesConfig:
    """The rules flags as JSON, with the preset name when they are exactly a preset."""
    preset = next((name for name, value in PRESETS.items() if value == config), "")
    return pb.RulesConfig(json=json.dumps(config.to_json(), sort_keys=True), preset=preset)


def config_from_proto(msg: pb.RulesConfig) -> RulesConfig:
    """The rules flags a RulesConfig message carries."""
    if msg.json:
        try:
            data = json.loads(msg.json)
        except RecursionError:
            raise InvalidActionError("rules json is nested too deeply: it is an object of flags") from None
        except json.JSONDecodeError:
            raise
        except ValueError:  # e.g. a number of thousands of digits, which Python will not read
            raise InvalidActionError("rules json holds a number too long to be a flag's value") from None
        if not isinstance(data, dict):
            raise InvalidActionError("rules json must be an object of flags")
        if msg.preset:
            data = {"preset": msg.preset, **data}
        return RulesConfig.from_json(data)
    return RulesConfig.from_json(msg.preset or None)


def clock_to_proto(clock: ClockSettings) -> pb.ClockSettings:
    """The clock settings on the wire."""
    return pb.ClockSettings(**clock.to_json())


def clock_merged(defaults: ClockSettings, msg: pb.ClockSettings) -> ClockSettings:
    """`defaults` with every field that `msg` sets taking over (unset = the default)."""
    given = {name: getattr(msg, name) for name in defaults.to_json() if msg.HasField(name)}
    return ClockSettings(**{**defaults.to_json(), **given})


def unbundle(message: pb.RefereeMessage) -> Sequence[pb.RefereeMessage]:
    """The messages a RefereeMessage carries: a Bundle's, in order, or the message itself."""
    if message.WhichOneof("kind") == "bundle":
        return message.bundle.messages
    return (message,)


__all__ = [
    "KIND_FROM_PROTO",
    "KIND_TO_PROTO",
    "REASON_FROM_PROTO",
    "REASON_TO_PROTO",
    "action_from_proto",
    "action_to_proto",
    "clock_merged",
    "clock_to_proto",
    "config_from_proto",
    "config_to_proto",
    "event_from_proto",
    "message_from_proto",
    "message_to_proto",
    "request_to_proto",
    "result_from_proto",
    "result_to_proto",
    "seat_info_to_proto",
    "unbundle",
    "wire_actions",
]
