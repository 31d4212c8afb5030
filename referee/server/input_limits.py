"""The bounds of everything a client sends the referee: one table of limits per field, with the
reason for each, and the checks that the service runs before anything is stored.

A string's limit counts characters (a protobuf string is valid UTF-8, so a character is at most
4 bytes); a repeated field's limit counts entries; a number's range is inclusive. The README's
"Limits" table is this module's (tests/server/test_limits.py holds them equal).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

from referee.rules import RulesConfig
from referee.visible import INVISIBLE_CATEGORIES
from referee.wire.tichu.v1 import referee_pb2 as pb


@dataclass(frozen=True, slots=True)
class Limit:
    """At most `most` characters (a string) or entries (a repeated field), and why."""

    most: int
    why: str
    unit: str = "characters"


@dataclass(frozen=True, slots=True)
class Range:
    """A number from `least` to `most` (inclusive); `or_zero`: 0 too, meaning `zero_means`."""

    least: int
    most: int
    why: str
    zero_means: str = ""

    def allows(self, value: int) -> bool:
        """Whether `value` is in the range."""
        return (value == 0 and bool(self.zero_means)) or self.least <= value <= self.most

    def describe(self) -> str:
        """The range as an error message says it."""
        text = f"{self.least:,} to {self.most:,}"
        return f"0 ({self.zero_means}) or {text}" if self.zero_means else text


# gRPC's bounds on one message. The largest message a client may send is a CreateMatchRequest
# with every field at its limit, under 30 KiB (tests/server/test_limits.py builds it); anything
# past MAX_RECEIVE_BYTES is refused by gRPC itself (RESOURCE_EXHAUSTED) before it is read. The
# referee's largest messages are a Snapshot or a Bundle of requests listing every legal play of a
# hand, well under 1 MiB; gRPC clients receive at most 4 MiB unless told otherwise.
MAX_RECEIVE_BYTES = 64 * 1024
MAX_SEND_BYTES = 4 * 1024 * 1024
NAME = 64
NAME_WHY = "shown in every Welcome, listing, replay and standings table; printable characters only"
# Every string and repeated field a client sends, by message and field.
LIMITS: dict[str, Limit] = {
    "Hello.token": Limit(64, "a seat token is 32 characters"),
    "Hello.bot_name": Limit(NAME, NAME_WHY),
    "Hello.bot_version": Limit(NAME, "recorded in the replay header; printable characters only"),
    "Action.text": Limit(256, "the longest canonical action (a play of every card of a hand) is under 120"),
    "PlayCards.cards": Limit(56, "the whole deck", "entries"),
    "PlayCards.cards[]": Limit(8, "a card's name is at most 3 characters"),
    "PlayCards.phoenix": Limit(8, "a rank is at most 2 characters"),
    "PlayCards.wish": Limit(8, "a rank is at most 2 characters"),
    "ExchangeCards.gifts": Limit(8, "one per recipient, at most 5", "entries"),
    "Gift.card": Limit(8, "a card's name is at most 3 characters"),
    "WatchRequest.match_id": Limit(64, "a match id is 1 to 64 characters"),
    "CreateMatchRequest.preset": Limit(32, "a preset's name"),
    "CreateMatchRequest.rules_json": Limit(4_096, "every flag of RULES.md §1 spelled out is under 1,000"),
    "CreateMatchRequest.seed": Limit(128, "a seed is a number or a short text; more adds nothing to a deal"),
    "CreateMatchRequest.bot_names": Limit(6, "one per seat, at most 6", "entries"),
    "CreateMatchRequest.bot_names[]": Limit(NAME, NAME_WHY),
    "CreateMatchRequest.match_id": Limit(64, "a match id is 1 to 64 letters, digits, '_', '.' or '-'"),
    "CreateMatchRequest.person_seats": Limit(6, "at most one per seat, at most 6", "entries"),
}
# Every number of a CreateMatchRequest that has a meaningful range (the ClockSettings fields
# that it sets, and the rules flags its rules_json gives).
HOUR_MS = 3_600_000
RANGES: dict[str, Range] = {
    "clock.decision_ms": Range(100, HOUR_MS, "below 100 ms no bot over a network can answer"),
    "clock.bank_ms": Range(0, HOUR_MS, "a time bank per game; 0 = none"),
    "clock.grace_ms": Range(0, 60_000, "network lag allowance"),
    "clock.window_ms": Range(100, HOUR_MS, "below 100 ms no bot over a network can answer"),
    "clock.max_violations": Range(0, 1_000_000, "0 = never forfeit"),
    "clock.heartbeat_interval_ms": Range(
        500, HOUR_MS, "each Ping costs the referee; faster pings find nothing sooner", zero_means="no pings"
    ),
    "clock.heartbeat_timeout_ms": Range(500, HOUR_MS, "a Pong needs a round trip"),
    "clock.reconnect_grace_ms": Range(0, HOUR_MS, "how long a dropped seat is kept"),
    "clock.start_timeout_ms": Range(1_000, 24 * HOUR_MS, "a day at most", zero_means="wait for ever"),
    "watch_delay_events": Range(0, 100_000, "a whole match is a few thousand events"),
    "person_seats": Range(0, 5, "a seat: 0 to 3, or 0 to 5 with six players"),
    "rules.target_score": Range(1, 100_000, "a match to 1000 lasts about ten rounds"),
    "rules.fixed_rounds": Range(1, 1_000, "match_mode fixed_rounds:N"),
    "rules.double_victory_points": Range(0, 10_000, "points of a double victory"),
}


class InputError(ValueError):
    """A field out of its bounds; `field` names it (e.g. Hello.bot_name)."""

    def __init__(self, field: str, detail: str) -> None:
        super().__init__(f"{field} {detail}")
        self.field = field


def check_length(field: str, value: str | Iterable[object], limit: Limit | None = None) -> None:
    """Raise InputError if a string or repeated field is longer than its limit."""
    limit = limit or LIMITS[field]
    size = len(value) if isinstance(value, str) else sum(1 for _ in value)
    if size > limit.most:
        raise InputError(field, f"is {size:,} {limit.unit} long; the limit is {limit.most:,} ({limit.why})")


def invisible(text: str) -> str | None:
    """The first character of `text` that does not print (a control, a bidi override...), or None."""
    for char in text:
        if unicodedata.category(char) in INVISIBLE_CATEGORIES:
            return char
    return None


def check_printable(field: str, text: str) -> None:
    """Raise InputError if `text` holds a control or other non-printing character."""
    char = invisible(text)
    if char is not None:
        raise InputError(
            field,
            f"holds the non-printing character U+{ord(char):04X} ({unicodedata.name(char, 'a control')}) "
            "at position "
            f"{text.index(char)}; names take printable characters only",
        )


def check_name(field: str, text: str, limit: Limit | None = None) -> None:
    """A name's bounds: its length, then its characters."""
    check_length(field, text, limit or LIMITS[field])
    check_printable(field, text)


def check_range(field: str, value: int, prefix: str = "") -> None:
    """Raise InputError if a number is outside its range (`prefix` goes before the field's name)."""
    bounds = RANGES[field]
    if not bounds.allows(value):
        raise InputError(prefix + field, f"is {value:,}; it must be {bounds.describe()} ({bounds.why})")


def check_hello(hello: pb.Hello) -> None:
    """Every field of a Hello within its bounds (InputError names the first one that is not)."""
    check_length("Hello.token", hello.token)
    check_name("Hello.bot_name", hello.bot_name)
    check_name("Hello.bot_version", hello.bot_version)


def action_problem(action: pb.Action) -> str | None:
    """What makes an Action too large to read, or None (an in-stream Rejection says it)."""
    try:
        check_length("Action.text", action.text)
        kind = action.WhichOneof("kind")
        if kind == "play":
            play = action.play
            check_length("PlayCards.cards", play.cards)
            for card in play.cards:
                check_length("PlayCards.cards[]", card)
            check_length("PlayCards.phoenix", play.phoenix)
            check_length("PlayCards.wish", play.wish)
        elif kind == "exchange":
            check_length("ExchangeCards.gifts", action.exchange.gifts)
            for gift in action.exchange.gifts:
                check_length("Gift.card", gift.card)
    except InputError as error:
        return str(error)
    return None


def check_create_request(request: pb.CreateMatchRequest) -> None:
    """A CreateMatchRequest's strings, lists and numbers within bounds (its rules are checked
    once they are read: check_rules)."""
    for name in ("preset", "rules_json", "seed", "match_id"):
        check_length(f"CreateMatchRequest.{name}", getattr(request, name))
    check_length("CreateMatchRequest.bot_names", request.bot_names)
    check_length("CreateMatchRequest.person_seats", request.person_seats)
    for seat in request.person_seats:
        check_range("person_seats", seat, "CreateMatchRequest.")
    for index, name in enumerate(request.bot_names):
        check_name(f"CreateMatchRequest.bot_names[{index}]", name, LIMITS["CreateMatchRequest.bot_names[]"])
    check_range("watch_delay_events", request.watch_delay_events, "CreateMatchRequest.")
    for descriptor, value in request.clock.ListFields():
        key = f"clock.{descriptor.name}"
        if key in RANGES:
            check_range(key, int(value), "CreateMatchRequest.")


def check_match_fields(bot_names: Iterable[str], seed: str, rules_json: str, watch_delay_events: int) -> None:
    """What the Python API and CreateMatch share: printable names, a bounded seed, rules and delay."""
    for index, name in enumerate(bot_names):
        check_name(f"bot_names[{index}]", name, LIMITS["CreateMatchRequest.bot_names[]"])
    check_length("seed", seed, LIMITS["CreateMatchRequest.seed"])
    check_length("rules_json", rules_json, LIMITS["CreateMatchRequest.rules_json"])
    check_range("watch_delay_events", watch_delay_events)


def check_rules(config: RulesConfig) -> None:
    """The rules flags whose numbers have a range (RulesConfig checks their types and choices)."""
    check_range("rules.target_score", config.target_score)
    check_range("rules.double_victory_points", config.double_victory_points)
    if config.fixed_rounds is not None:
        check_range("rules.fixed_rounds", config.fixed_rounds)


def clip(text: str, most: int = 300) -> str:
    """An error's text cut to `most` characters, so no refusal repeats a huge input back."""
    return text if len(text) <= most else text[: most - 1] + "…"


__all__ = [
    "LIMITS",
    "MAX_RECEIVE_BYTES",
    "MAX_SEND_BYTES",
    "RANGES",
    "InputError",
    "Limit",
    "Range",
    "action_problem",
    "check_create_request",
    "check_hello",
    "check_length",
    "check_match_fields",
    "check_name",
    "check_printable",
    "check_range",
    "check_rules",
    "clip",
    "invisible",
]
