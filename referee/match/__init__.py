"""The pure match core: a match as a state machine over the rules (standard library,
referee.rules and orjson's pure encoding only; no asyncio, grpc, protobuf, files or clocks: time
is an argument)."""

from referee.match.clock import ClockSettings
from referee.match.core import Match
from referee.match.fields import RecordError
from referee.match.messages import LogEntry, MatchResult, RejectionReason
from referee.match.records import FORMAT, PROTOCOL_VERSION, Header, Record

__all__ = [
    "FORMAT",
    "PROTOCOL_VERSION",
    "ClockSettings",
    "Header",
    "LogEntry",
    "Match",
    "MatchResult",
    "Record",
    "RecordError",
    "RejectionReason",
]
