from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class DecisionKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    DECISION_KIND_UNSPECIFIED: _ClassVar[DecisionKind]
    DECISION_KIND_GRAND_TICHU: _ClassVar[DecisionKind]
    DECISION_KIND_TICHU_STEP: _ClassVar[DecisionKind]
    DECISION_KIND_EXCHANGE: _ClassVar[DecisionKind]
    DECISION_KIND_PLAY: _ClassVar[DecisionKind]
    DECISION_KIND_BOMB_WINDOW: _ClassVar[DecisionKind]
    DECISION_KIND_DRAGON_GIFT: _ClassVar[DecisionKind]

class RejectionReason(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    REJECTION_REASON_UNSPECIFIED: _ClassVar[RejectionReason]
    REJECTION_REASON_ILLEGAL: _ClassVar[RejectionReason]
    REJECTION_REASON_INVALID: _ClassVar[RejectionReason]
    REJECTION_REASON_UNKNOWN_REQUEST: _ClassVar[RejectionReason]
    REJECTION_REASON_STALE: _ClassVar[RejectionReason]
    REJECTION_REASON_LATE: _ClassVar[RejectionReason]
    REJECTION_REASON_RATE_LIMITED: _ClassVar[RejectionReason]
    REJECTION_REASON_OUT_OF_ORDER: _ClassVar[RejectionReason]

class Termination(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    TERMINATION_UNSPECIFIED: _ClassVar[Termination]
    TERMINATION_PLAYED_OUT: _ClassVar[Termination]
    TERMINATION_NO_SHOW: _ClassVar[Termination]
    TERMINATION_WITHDRAWN: _ClassVar[Termination]
    TERMINATION_OUT_OF_TIME: _ClassVar[Termination]
    TERMINATION_REFEREE_ERROR: _ClassVar[Termination]
DECISION_KIND_UNSPECIFIED: DecisionKind
DECISION_KIND_GRAND_TICHU: DecisionKind
DECISION_KIND_TICHU_STEP: DecisionKind
DECISION_KIND_EXCHANGE: DecisionKind
DECISION_KIND_PLAY: DecisionKind
DECISION_KIND_BOMB_WINDOW: DecisionKind
DECISION_KIND_DRAGON_GIFT: DecisionKind
REJECTION_REASON_UNSPECIFIED: RejectionReason
REJECTION_REASON_ILLEGAL: RejectionReason
REJECTION_REASON_INVALID: RejectionReason
REJECTION_REASON_UNKNOWN_REQUEST: RejectionReason
REJECTION_REASON_STALE: RejectionReason
REJECTION_REASON_LATE: RejectionReason
REJECTION_REASON_RATE_LIMITED: RejectionReason
REJECTION_REASON_OUT_OF_ORDER: RejectionReason
TERMINATION_UNSPECIFIED: Termination
TERMINATION_PLAYED_OUT: Termination
TERMINATION_NO_SHOW: Termination
TERMINATION_WITHDRAWN: Termination
TERMINATION_OUT_OF_TIME: Termination
TERMINATION_REFEREE_ERROR: Termination

class BotMessage(_message.Message):
    __slots__ = ("hello", "decision", "out_of_turn", "ping", "pong")
    HELLO_FIELD_NUMBER: _ClassVar[int]
    DECISION_FIELD_NUMBER: _ClassVar[int]
    OUT_OF_TURN_FIELD_NUMBER: _ClassVar[int]
    PING_FIELD_NUMBER: _ClassVar[int]
    PONG_FIELD_NUMBER: _ClassVar[int]
    hello: Hello
    decision: Decision
    out_of_turn: OutOfTurn
    ping: Ping
    pong: Pong
    def __init__(self, hello: _Optional[_Union[Hello, _Mapping]] = ..., decision: _Optional[_Union[Decision, _Mapping]] = ..., out_of_turn: _Optional[_Union[OutOfTurn, _Mapping]] = ..., ping: _Optional[_Union[Ping, _Mapping]] = ..., pong: _Optional[_Union[Pong, _Mapping]] = ...) -> None: ...

class Hello(_message.Message):
    __slots__ = ("token", "bot_name", "bot_version", "protocol_version", "accept_bundles", "referee_declines", "defer_events", "referee_passes", "omit_observation")
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    BOT_NAME_FIELD_NUMBER: _ClassVar[int]
    BOT_VERSION_FIELD_NUMBER: _ClassVar[int]
    PROTOCOL_VERSION_FIELD_NUMBER: _ClassVar[int]
    ACCEPT_BUNDLES_FIELD_NUMBER: _ClassVar[int]
    REFEREE_DECLINES_FIELD_NUMBER: _ClassVar[int]
    DEFER_EVENTS_FIELD_NUMBER: _ClassVar[int]
    REFEREE_PASSES_FIELD_NUMBER: _ClassVar[int]
    OMIT_OBSERVATION_FIELD_NUMBER: _ClassVar[int]
    token: str
    bot_name: str
    bot_version: str
    protocol_version: int
    accept_bundles: bool
    referee_declines: bool
    defer_events: bool
    referee_passes: bool
    omit_observation: bool
    def __init__(self, token: _Optional[str] = ..., bot_name: _Optional[str] = ..., bot_version: _Optional[str] = ..., protocol_version: _Optional[int] = ..., accept_bundles: _Optional[bool] = ..., referee_declines: _Optional[bool] = ..., defer_events: _Optional[bool] = ..., referee_passes: _Optional[bool] = ..., omit_observation: _Optional[bool] = ...) -> None: ...

class Decision(_message.Message):
    __slots__ = ("request_id", "action", "state_version")
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    STATE_VERSION_FIELD_NUMBER: _ClassVar[int]
    request_id: int
    action: Action
    state_version: int
    def __init__(self, request_id: _Optional[int] = ..., action: _Optional[_Union[Action, _Mapping]] = ..., state_version: _Optional[int] = ...) -> None: ...

class OutOfTurn(_message.Message):
    __slots__ = ("action", "state_version")
    ACTION_FIELD_NUMBER: _ClassVar[int]
    STATE_VERSION_FIELD_NUMBER: _ClassVar[int]
    action: Action
    state_version: int
    def __init__(self, action: _Optional[_Union[Action, _Mapping]] = ..., state_version: _Optional[int] = ...) -> None: ...

class Ping(_message.Message):
    __slots__ = ("nonce",)
    NONCE_FIELD_NUMBER: _ClassVar[int]
    nonce: int
    def __init__(self, nonce: _Optional[int] = ...) -> None: ...

class Pong(_message.Message):
    __slots__ = ("nonce",)
    NONCE_FIELD_NUMBER: _ClassVar[int]
    nonce: int
    def __init__(self, nonce: _Optional[int] = ...) -> None: ...

class Action(_message.Message):
    __slots__ = ("pass_turn", "decline", "grand_tichu", "call_tichu", "decline_tichu", "play", "exchange", "gift", "text")
    PASS_TURN_FIELD_NUMBER: _ClassVar[int]
    DECLINE_FIELD_NUMBER: _ClassVar[int]
    GRAND_TICHU_FIELD_NUMBER: _ClassVar[int]
    CALL_TICHU_FIELD_NUMBER: _ClassVar[int]
    DECLINE_TICHU_FIELD_NUMBER: _ClassVar[int]
    PLAY_FIELD_NUMBER: _ClassVar[int]
    EXCHANGE_FIELD_NUMBER: _ClassVar[int]
    GIFT_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    pass_turn: Empty
    decline: Empty
    grand_tichu: GrandTichuAnswer
    call_tichu: Empty
    decline_tichu: Empty
    play: PlayCards
    exchange: ExchangeCards
    gift: DragonGift
    text: str
    def __init__(self, pass_turn: _Optional[_Union[Empty, _Mapping]] = ..., decline: _Optional[_Union[Empty, _Mapping]] = ..., grand_tichu: _Optional[_Union[GrandTichuAnswer, _Mapping]] = ..., call_tichu: _Optional[_Union[Empty, _Mapping]] = ..., decline_tichu: _Optional[_Union[Empty, _Mapping]] = ..., play: _Optional[_Union[PlayCards, _Mapping]] = ..., exchange: _Optional[_Union[ExchangeCards, _Mapping]] = ..., gift: _Optional[_Union[DragonGift, _Mapping]] = ..., text: _Optional[str] = ...) -> None: ...

class Empty(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class GrandTichuAnswer(_message.Message):
    __slots__ = ("call",)
    CALL_FIELD_NUMBER: _ClassVar[int]
    call: bool
    def __init__(self, call: _Optional[bool] = ...) -> None: ...

class PlayCards(_message.Message):
    __slots__ = ("cards", "phoenix", "wish", "partner", "tichu")
    CARDS_FIELD_NUMBER: _ClassVar[int]
    PHOENIX_FIELD_NUMBER: _ClassVar[int]
    WISH_FIELD_NUMBER: _ClassVar[int]
    PARTNER_FIELD_NUMBER: _ClassVar[int]
    TICHU_FIELD_NUMBER: _ClassVar[int]
    cards: _containers.RepeatedScalarFieldContainer[str]
    phoenix: str
    wish: str
    partner: int
    tichu: bool
    def __init__(self, cards: _Optional[_Iterable[str]] = ..., phoenix: _Optional[str] = ..., wish: _Optional[str] = ..., partner: _Optional[int] = ..., tichu: _Optional[bool] = ...) -> None: ...

class ExchangeCards(_message.Message):
    __slots__ = ("gifts",)
    GIFTS_FIELD_NUMBER: _ClassVar[int]
    gifts: _containers.RepeatedCompositeFieldContainer[Gift]
    def __init__(self, gifts: _Optional[_Iterable[_Union[Gift, _Mapping]]] = ...) -> None: ...

class Gift(_message.Message):
    __slots__ = ("to", "card")
    TO_FIELD_NUMBER: _ClassVar[int]
    CARD_FIELD_NUMBER: _ClassVar[int]
    to: int
    card: str
    def __init__(self, to: _Optional[int] = ..., card: _Optional[str] = ...) -> None: ...

class DragonGift(_message.Message):
    __slots__ = ("to",)
    TO_FIELD_NUMBER: _ClassVar[int]
    to: int
    def __init__(self, to: _Optional[int] = ...) -> None: ...

class RefereeMessage(_message.Message):
    __slots__ = ("welcome", "snapshot", "event", "request", "cancelled", "rejection", "seat_status", "ping", "pong", "result", "bundle")
    WELCOME_FIELD_NUMBER: _ClassVar[int]
    SNAPSHOT_FIELD_NUMBER: _ClassVar[int]
    EVENT_FIELD_NUMBER: _ClassVar[int]
    REQUEST_FIELD_NUMBER: _ClassVar[int]
    CANCELLED_FIELD_NUMBER: _ClassVar[int]
    REJECTION_FIELD_NUMBER: _ClassVar[int]
    SEAT_STATUS_FIELD_NUMBER: _ClassVar[int]
    PING_FIELD_NUMBER: _ClassVar[int]
    PONG_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    BUNDLE_FIELD_NUMBER: _ClassVar[int]
    welcome: Welcome
    snapshot: Snapshot
    event: GameEvent
    request: DecisionRequest
    cancelled: RequestCancelled
    rejection: Rejection
    seat_status: SeatStatus
    ping: Ping
    pong: Pong
    result: MatchResult
    bundle: Bundle
    def __init__(self, welcome: _Optional[_Union[Welcome, _Mapping]] = ..., snapshot: _Optional[_Union[Snapshot, _Mapping]] = ..., event: _Optional[_Union[GameEvent, _Mapping]] = ..., request: _Optional[_Union[DecisionRequest, _Mapping]] = ..., cancelled: _Optional[_Union[RequestCancelled, _Mapping]] = ..., rejection: _Optional[_Union[Rejection, _Mapping]] = ..., seat_status: _Optional[_Union[SeatStatus, _Mapping]] = ..., ping: _Optional[_Union[Ping, _Mapping]] = ..., pong: _Optional[_Union[Pong, _Mapping]] = ..., result: _Optional[_Union[MatchResult, _Mapping]] = ..., bundle: _Optional[_Union[Bundle, _Mapping]] = ...) -> None: ...

class Bundle(_message.Message):
    __slots__ = ("messages",)
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    messages: _containers.RepeatedCompositeFieldContainer[RefereeMessage]
    def __init__(self, messages: _Optional[_Iterable[_Union[RefereeMessage, _Mapping]]] = ...) -> None: ...

class Welcome(_message.Message):
    __slots__ = ("match_id", "seat", "team", "rules", "clock", "seats", "protocol_version", "seed_commitment")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    TEAM_FIELD_NUMBER: _ClassVar[int]
    RULES_FIELD_NUMBER: _ClassVar[int]
    CLOCK_FIELD_NUMBER: _ClassVar[int]
    SEATS_FIELD_NUMBER: _ClassVar[int]
    PROTOCOL_VERSION_FIELD_NUMBER: _ClassVar[int]
    SEED_COMMITMENT_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    seat: int
    team: int
    rules: RulesConfig
    clock: ClockSettings
    seats: _containers.RepeatedCompositeFieldContainer[SeatInfo]
    protocol_version: int
    seed_commitment: str
    def __init__(self, match_id: _Optional[str] = ..., seat: _Optional[int] = ..., team: _Optional[int] = ..., rules: _Optional[_Union[RulesConfig, _Mapping]] = ..., clock: _Optional[_Union[ClockSettings, _Mapping]] = ..., seats: _Optional[_Iterable[_Union[SeatInfo, _Mapping]]] = ..., protocol_version: _Optional[int] = ..., seed_commitment: _Optional[str] = ...) -> None: ...

class SeatInfo(_message.Message):
    __slots__ = ("seat", "bot_name", "connected")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    BOT_NAME_FIELD_NUMBER: _ClassVar[int]
    CONNECTED_FIELD_NUMBER: _ClassVar[int]
    seat: int
    bot_name: str
    connected: bool
    def __init__(self, seat: _Optional[int] = ..., bot_name: _Optional[str] = ..., connected: _Optional[bool] = ...) -> None: ...

class RulesConfig(_message.Message):
    __slots__ = ("json", "preset")
    JSON_FIELD_NUMBER: _ClassVar[int]
    PRESET_FIELD_NUMBER: _ClassVar[int]
    json: str
    preset: str
    def __init__(self, json: _Optional[str] = ..., preset: _Optional[str] = ...) -> None: ...

class ClockSettings(_message.Message):
    __slots__ = ("decision_ms", "bank_ms", "grace_ms", "window_ms", "fixed_length_windows", "max_violations", "heartbeat_interval_ms", "heartbeat_timeout_ms", "reconnect_grace_ms", "start_timeout_ms")
    DECISION_MS_FIELD_NUMBER: _ClassVar[int]
    BANK_MS_FIELD_NUMBER: _ClassVar[int]
    GRACE_MS_FIELD_NUMBER: _ClassVar[int]
    WINDOW_MS_FIELD_NUMBER: _ClassVar[int]
    FIXED_LENGTH_WINDOWS_FIELD_NUMBER: _ClassVar[int]
    MAX_VIOLATIONS_FIELD_NUMBER: _ClassVar[int]
    HEARTBEAT_INTERVAL_MS_FIELD_NUMBER: _ClassVar[int]
    HEARTBEAT_TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    RECONNECT_GRACE_MS_FIELD_NUMBER: _ClassVar[int]
    START_TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    decision_ms: int
    bank_ms: int
    grace_ms: int
    window_ms: int
    fixed_length_windows: bool
    max_violations: int
    heartbeat_interval_ms: int
    heartbeat_timeout_ms: int
    reconnect_grace_ms: int
    start_timeout_ms: int
    def __init__(self, decision_ms: _Optional[int] = ..., bank_ms: _Optional[int] = ..., grace_ms: _Optional[int] = ..., window_ms: _Optional[int] = ..., fixed_length_windows: _Optional[bool] = ..., max_violations: _Optional[int] = ..., heartbeat_interval_ms: _Optional[int] = ..., heartbeat_timeout_ms: _Optional[int] = ..., reconnect_grace_ms: _Optional[int] = ..., start_timeout_ms: _Optional[int] = ...) -> None: ...

class Snapshot(_message.Message):
    __slots__ = ("state_version", "observation_json", "pending")
    STATE_VERSION_FIELD_NUMBER: _ClassVar[int]
    OBSERVATION_JSON_FIELD_NUMBER: _ClassVar[int]
    PENDING_FIELD_NUMBER: _ClassVar[int]
    state_version: int
    observation_json: str
    pending: _containers.RepeatedCompositeFieldContainer[DecisionRequest]
    def __init__(self, state_version: _Optional[int] = ..., observation_json: _Optional[str] = ..., pending: _Optional[_Iterable[_Union[DecisionRequest, _Mapping]]] = ...) -> None: ...

class GameEvent(_message.Message):
    __slots__ = ("seq", "state_version", "type", "json")
    SEQ_FIELD_NUMBER: _ClassVar[int]
    STATE_VERSION_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    JSON_FIELD_NUMBER: _ClassVar[int]
    seq: int
    state_version: int
    type: str
    json: str
    def __init__(self, seq: _Optional[int] = ..., state_version: _Optional[int] = ..., type: _Optional[str] = ..., json: _Optional[str] = ...) -> None: ...

class DecisionRequest(_message.Message):
    __slots__ = ("request_id", "kind", "state_version", "deadline_ms", "bank_left_ms", "legal_actions", "exchange_give", "exchange_to", "can_call_tichu", "observation_json")
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    STATE_VERSION_FIELD_NUMBER: _ClassVar[int]
    DEADLINE_MS_FIELD_NUMBER: _ClassVar[int]
    BANK_LEFT_MS_FIELD_NUMBER: _ClassVar[int]
    LEGAL_ACTIONS_FIELD_NUMBER: _ClassVar[int]
    EXCHANGE_GIVE_FIELD_NUMBER: _ClassVar[int]
    EXCHANGE_TO_FIELD_NUMBER: _ClassVar[int]
    CAN_CALL_TICHU_FIELD_NUMBER: _ClassVar[int]
    OBSERVATION_JSON_FIELD_NUMBER: _ClassVar[int]
    request_id: int
    kind: DecisionKind
    state_version: int
    deadline_ms: int
    bank_left_ms: int
    legal_actions: _containers.RepeatedCompositeFieldContainer[Action]
    exchange_give: int
    exchange_to: _containers.RepeatedScalarFieldContainer[int]
    can_call_tichu: bool
    observation_json: str
    def __init__(self, request_id: _Optional[int] = ..., kind: _Optional[_Union[DecisionKind, str]] = ..., state_version: _Optional[int] = ..., deadline_ms: _Optional[int] = ..., bank_left_ms: _Optional[int] = ..., legal_actions: _Optional[_Iterable[_Union[Action, _Mapping]]] = ..., exchange_give: _Optional[int] = ..., exchange_to: _Optional[_Iterable[int]] = ..., can_call_tichu: _Optional[bool] = ..., observation_json: _Optional[str] = ...) -> None: ...

class RequestCancelled(_message.Message):
    __slots__ = ("request_id", "reason")
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    request_id: int
    reason: str
    def __init__(self, request_id: _Optional[int] = ..., reason: _Optional[str] = ...) -> None: ...

class Rejection(_message.Message):
    __slots__ = ("reason", "rule", "message", "request_id", "state_version")
    REASON_FIELD_NUMBER: _ClassVar[int]
    RULE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    STATE_VERSION_FIELD_NUMBER: _ClassVar[int]
    reason: RejectionReason
    rule: str
    message: str
    request_id: int
    state_version: int
    def __init__(self, reason: _Optional[_Union[RejectionReason, str]] = ..., rule: _Optional[str] = ..., message: _Optional[str] = ..., request_id: _Optional[int] = ..., state_version: _Optional[int] = ...) -> None: ...

class SeatStatus(_message.Message):
    __slots__ = ("seat", "connected")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    CONNECTED_FIELD_NUMBER: _ClassVar[int]
    seat: int
    connected: bool
    def __init__(self, seat: _Optional[int] = ..., connected: _Optional[bool] = ...) -> None: ...

class MatchResult(_message.Message):
    __slots__ = ("match_id", "winner", "scores", "forfeit", "forfeiting_team", "reason", "summary_json", "chain_head", "signature", "termination", "round_scores")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    WINNER_FIELD_NUMBER: _ClassVar[int]
    SCORES_FIELD_NUMBER: _ClassVar[int]
    FORFEIT_FIELD_NUMBER: _ClassVar[int]
    FORFEITING_TEAM_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_JSON_FIELD_NUMBER: _ClassVar[int]
    CHAIN_HEAD_FIELD_NUMBER: _ClassVar[int]
    SIGNATURE_FIELD_NUMBER: _ClassVar[int]
    TERMINATION_FIELD_NUMBER: _ClassVar[int]
    ROUND_SCORES_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    winner: int
    scores: _containers.RepeatedScalarFieldContainer[int]
    forfeit: bool
    forfeiting_team: int
    reason: str
    summary_json: str
    chain_head: str
    signature: str
    termination: Termination
    round_scores: _containers.RepeatedCompositeFieldContainer[RoundScore]
    def __init__(self, match_id: _Optional[str] = ..., winner: _Optional[int] = ..., scores: _Optional[_Iterable[int]] = ..., forfeit: _Optional[bool] = ..., forfeiting_team: _Optional[int] = ..., reason: _Optional[str] = ..., summary_json: _Optional[str] = ..., chain_head: _Optional[str] = ..., signature: _Optional[str] = ..., termination: _Optional[_Union[Termination, str]] = ..., round_scores: _Optional[_Iterable[_Union[RoundScore, _Mapping]]] = ...) -> None: ...

class RoundScore(_message.Message):
    __slots__ = ("points_a", "points_b")
    POINTS_A_FIELD_NUMBER: _ClassVar[int]
    POINTS_B_FIELD_NUMBER: _ClassVar[int]
    points_a: int
    points_b: int
    def __init__(self, points_a: _Optional[int] = ..., points_b: _Optional[int] = ...) -> None: ...

class WatchRequest(_message.Message):
    __slots__ = ("match_id",)
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    def __init__(self, match_id: _Optional[str] = ...) -> None: ...

class WatchMessage(_message.Message):
    __slots__ = ("event", "result")
    EVENT_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    event: GameEvent
    result: MatchResult
    def __init__(self, event: _Optional[_Union[GameEvent, _Mapping]] = ..., result: _Optional[_Union[MatchResult, _Mapping]] = ...) -> None: ...

class CreateMatchRequest(_message.Message):
    __slots__ = ("preset", "rules_json", "clock", "seed", "bot_names", "watch_delay_events", "match_id", "person_seats")
    PRESET_FIELD_NUMBER: _ClassVar[int]
    RULES_JSON_FIELD_NUMBER: _ClassVar[int]
    CLOCK_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    BOT_NAMES_FIELD_NUMBER: _ClassVar[int]
    WATCH_DELAY_EVENTS_FIELD_NUMBER: _ClassVar[int]
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    PERSON_SEATS_FIELD_NUMBER: _ClassVar[int]
    preset: str
    rules_json: str
    clock: ClockSettings
    seed: str
    bot_names: _containers.RepeatedScalarFieldContainer[str]
    watch_delay_events: int
    match_id: str
    person_seats: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, preset: _Optional[str] = ..., rules_json: _Optional[str] = ..., clock: _Optional[_Union[ClockSettings, _Mapping]] = ..., seed: _Optional[str] = ..., bot_names: _Optional[_Iterable[str]] = ..., watch_delay_events: _Optional[int] = ..., match_id: _Optional[str] = ..., person_seats: _Optional[_Iterable[int]] = ...) -> None: ...

class CreateMatchResponse(_message.Message):
    __slots__ = ("match_id", "seat_tokens", "seed_commitment")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    SEED_COMMITMENT_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    seat_tokens: _containers.RepeatedScalarFieldContainer[str]
    seed_commitment: str
    def __init__(self, match_id: _Optional[str] = ..., seat_tokens: _Optional[_Iterable[str]] = ..., seed_commitment: _Optional[str] = ...) -> None: ...

class ListMatchesRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ListMatchesResponse(_message.Message):
    __slots__ = ("matches",)
    MATCHES_FIELD_NUMBER: _ClassVar[int]
    matches: _containers.RepeatedCompositeFieldContainer[MatchInfo]
    def __init__(self, matches: _Optional[_Iterable[_Union[MatchInfo, _Mapping]]] = ...) -> None: ...

class MatchInfo(_message.Message):
    __slots__ = ("match_id", "status", "seats", "scores", "round", "replay_path")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    SEATS_FIELD_NUMBER: _ClassVar[int]
    SCORES_FIELD_NUMBER: _ClassVar[int]
    ROUND_FIELD_NUMBER: _ClassVar[int]
    REPLAY_PATH_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    status: str
    seats: _containers.RepeatedCompositeFieldContainer[SeatInfo]
    scores: _containers.RepeatedScalarFieldContainer[int]
    round: int
    replay_path: str
    def __init__(self, match_id: _Optional[str] = ..., status: _Optional[str] = ..., seats: _Optional[_Iterable[_Union[SeatInfo, _Mapping]]] = ..., scores: _Optional[_Iterable[int]] = ..., round: _Optional[int] = ..., replay_path: _Optional[str] = ...) -> None: ...

class LobbyRequest(_message.Message):
    __slots__ = ("games", "bot_version")
    GAMES_FIELD_NUMBER: _ClassVar[int]
    BOT_VERSION_FIELD_NUMBER: _ClassVar[int]
    games: int
    bot_version: str
    def __init__(self, games: _Optional[int] = ..., bot_version: _Optional[str] = ...) -> None: ...

class LobbyMessage(_message.Message):
    __slots__ = ("welcome", "seated", "notice")
    WELCOME_FIELD_NUMBER: _ClassVar[int]
    SEATED_FIELD_NUMBER: _ClassVar[int]
    NOTICE_FIELD_NUMBER: _ClassVar[int]
    welcome: LobbyWelcome
    seated: Seated
    notice: LobbyNotice
    def __init__(self, welcome: _Optional[_Union[LobbyWelcome, _Mapping]] = ..., seated: _Optional[_Union[Seated, _Mapping]] = ..., notice: _Optional[_Union[LobbyNotice, _Mapping]] = ...) -> None: ...

class LobbyWelcome(_message.Message):
    __slots__ = ("bot", "leaderboard", "state", "reason", "games")
    BOT_FIELD_NUMBER: _ClassVar[int]
    LEADERBOARD_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    GAMES_FIELD_NUMBER: _ClassVar[int]
    bot: str
    leaderboard: str
    state: str
    reason: str
    games: int
    def __init__(self, bot: _Optional[str] = ..., leaderboard: _Optional[str] = ..., state: _Optional[str] = ..., reason: _Optional[str] = ..., games: _Optional[int] = ...) -> None: ...

class Seated(_message.Message):
    __slots__ = ("match_id", "seat", "seat_token", "address", "pair_id", "validation", "rng_seed")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    SEAT_TOKEN_FIELD_NUMBER: _ClassVar[int]
    ADDRESS_FIELD_NUMBER: _ClassVar[int]
    PAIR_ID_FIELD_NUMBER: _ClassVar[int]
    VALIDATION_FIELD_NUMBER: _ClassVar[int]
    RNG_SEED_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    seat: int
    seat_token: str
    address: str
    pair_id: int
    validation: bool
    rng_seed: str
    def __init__(self, match_id: _Optional[str] = ..., seat: _Optional[int] = ..., seat_token: _Optional[str] = ..., address: _Optional[str] = ..., pair_id: _Optional[int] = ..., validation: _Optional[bool] = ..., rng_seed: _Optional[str] = ...) -> None: ...

class LobbyNotice(_message.Message):
    __slots__ = ("state", "reason")
    STATE_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    state: str
    reason: str
    def __init__(self, state: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...
