"""The limits table and its checks, alone: every client field has a limit, the README shows each,
names take printable characters only, and a terminal is shown control characters escaped."""

from __future__ import annotations

import io
import re
from pathlib import Path
from typing import Any

import pytest
import structlog
from google.protobuf.descriptor import FieldDescriptor

from referee import log
from referee.match import ClockSettings
from referee.match.proof import new_header
from referee.match.records import Connected, RejectionRecord
from referee.replay.text import Renderer, summary_table
from referee.rules import RulesConfig
from referee.server.codec import message_from_proto
from referee.server.input_limits import (
    LIMITS,
    RANGES,
    InputError,
    action_problem,
    check_create_request,
    check_hello,
    check_printable,
    check_range,
    clip,
)
from referee.visible import visible
from referee.wire.tichu.v1 import referee_pb2 as pb

LIMITS_PAGE = Path(__file__).resolve().parents[2] / "docs" / "protocol" / "limits.md"
# What clients send: the bot's stream and the three other RPCs' requests.
CLIENT_MESSAGES = (pb.BotMessage, pb.WatchRequest, pb.CreateMatchRequest, pb.ListMatchesRequest)


def _client_fields() -> tuple[set[str], set[str]]:
    """'Message.field' (and 'Message.field[]' for a repeated string's entries) of every string
    field reachable from what a client sends, and of every repeated field."""
    found: set[str] = set()
    lists: set[str] = set()
    seen: set[str] = set()

    def walk(descriptor: Any) -> None:  # a protobuf Descriptor (the upb and Python types differ)
        if descriptor.full_name in seen:
            return
        seen.add(descriptor.full_name)
        for field in descriptor.fields:
            name = f"{descriptor.name}.{field.name}"
            repeated = field.is_repeated
            if field.type == FieldDescriptor.TYPE_STRING:
                found.add(name + "[]" if repeated else name)
            if repeated:
                lists.add(name)
            if field.message_type is not None:
                walk(field.message_type)

    for message in CLIENT_MESSAGES:
        walk(message.DESCRIPTOR)
    return found, lists


def test_every_string_and_repeated_field_a_client_sends_has_a_limit() -> None:
    strings, lists = _client_fields()
    assert "Hello.bot_name" in strings and "PlayCards.cards[]" in strings and "ExchangeCards.gifts" in lists
    assert sorted((strings | lists) ^ set(LIMITS)) == []
    assert {field for field, limit in LIMITS.items() if limit.unit == "entries"} == lists


def test_every_number_of_a_create_match_request_has_a_range() -> None:
    numbers = {
        f"clock.{f.name}" for f in pb.ClockSettings.DESCRIPTOR.fields if f.type != FieldDescriptor.TYPE_BOOL
    }
    numbers |= {
        f.name
        for f in pb.CreateMatchRequest.DESCRIPTOR.fields
        if f.cpp_type in (FieldDescriptor.CPPTYPE_UINT32, FieldDescriptor.CPPTYPE_INT32)
    }
    assert numbers and numbers <= set(RANGES)
    int_flags = {f"rules.{name}" for name, value in RulesConfig().to_json().items() if type(value) is int}
    assert int_flags - {"rules.players"} <= set(RANGES)  # players is 4 or 6 (R-SEAT-1)


def test_the_default_clocks_are_in_range() -> None:
    for name, value in ClockSettings().to_json().items():
        if f"clock.{name}" in RANGES:
            check_range(f"clock.{name}", value)


def test_the_docs_show_every_limit_and_range() -> None:
    text = LIMITS_PAGE.read_text(encoding="utf-8")
    rows = re.findall(r"^\| `([A-Za-z_.\[\]]+)` \| ([^|]+) \|", text, re.MULTILINE)
    for field, limit in LIMITS.items():
        assert (field, f"{limit.most:,} {limit.unit}") in rows, f"README: no row for {field}"
    for field, bounds in RANGES.items():
        assert (field, bounds.describe()) in rows, f"README: no row for {field} ({bounds.describe()})"


@pytest.mark.parametrize(
    "char",
    ["\x00", "\x07", "\x1b", "\n", "\r", "\t", "\x7f", "\x85", "\x9b", "\u200b", "\u202e", "\u2066",
     "\u2028", "\u2029", "\ufeff", "\ue000", "\U000e0001"],
)  # fmt: skip
def test_names_with_a_non_printing_character_are_refused_and_shown_escaped(char: str) -> None:
    with pytest.raises(InputError, match=f"U\\+{ord(char):04X}") as refused:
        check_printable("Hello.bot_name", f"bot{char}x")
    assert refused.value.field == "Hello.bot_name" and "position 3" in str(refused.value)
    shown = visible(f"bot{char}x")
    assert shown.isprintable() and shown.startswith("bot\\") and shown.endswith("x")


@pytest.mark.parametrize("name", ["", "Heuristic v2", "Ünïcødé", "名前", "bot 😀", "a-b_c.d (e)", "\\x1b"])
def test_printable_names_are_kept_as_they_are(name: str) -> None:
    check_printable("Hello.bot_name", name)
    assert visible(name) == name


def test_visible_escapes_as_python_writes_them() -> None:
    assert visible("a\x1b[2Jb\nc\td\x00\u202e\U000e0001") == "a\\x1b[2Jb\\nc\\td\\x00\\u202e\\U000e0001"


def test_hello_limits_name_the_field_and_the_limit() -> None:
    check_hello(pb.Hello(token="t" * 64, bot_name="b" * 64, bot_version="v" * 64))
    with pytest.raises(InputError, match=r"Hello\.bot_name is 65 characters long; the limit is 64"):
        check_hello(pb.Hello(bot_name="b" * 65))
    with pytest.raises(InputError, match=r"Hello\.token is 1,000 characters"):
        check_hello(pb.Hello(token="t" * 1000))


def test_an_oversized_action_is_an_invalid_rejection_that_does_not_repeat_it() -> None:
    huge_text = pb.Action(text="play " + "7s " * 10_000)
    assert "Action.text is 30,005 characters long" in (action_problem(huge_text) or "")
    many = pb.Action(play=pb.PlayCards(cards=["7s"] * 57))
    assert "PlayCards.cards is 57 entries" in (action_problem(many) or "")
    long_card = pb.Action(play=pb.PlayCards(cards=["7" * 9]))
    assert "PlayCards.cards[] is 9 characters" in (action_problem(long_card) or "")
    gifts = pb.Action(exchange=pb.ExchangeCards(gifts=[pb.Gift(to=1, card="7s")] * 9))
    assert "ExchangeCards.gifts is 9 entries" in (action_problem(gifts) or "")
    wish = pb.Action(play=pb.PlayCards(cards=["MJ"], wish="7" * 100))
    assert "PlayCards.wish" in (action_problem(wish) or "")
    assert action_problem(pb.Action(text="play 7s 7j")) is None
    message = message_from_proto(pb.BotMessage(decision=pb.Decision(request_id=1, action=huge_text)))
    bad = getattr(message, "action", None)
    assert bad is not None and bad.reason.value == "invalid" and "7s 7s" not in bad.message


def test_create_request_checks_name_the_field_and_the_range() -> None:
    check_create_request(pb.CreateMatchRequest(bot_names=["a"] * 6, clock=pb.ClockSettings(bank_ms=0)))
    with pytest.raises(InputError, match=r"CreateMatchRequest\.clock\.decision_ms is 0; it must be 100 to"):
        check_create_request(pb.CreateMatchRequest(clock=pb.ClockSettings(decision_ms=0)))
    with pytest.raises(InputError, match=r"heartbeat_interval_ms is 1; it must be 0 \(no pings\) or 500"):
        check_create_request(pb.CreateMatchRequest(clock=pb.ClockSettings(heartbeat_interval_ms=1)))
    with pytest.raises(InputError, match=r"CreateMatchRequest\.bot_names\[2\] holds"):
        check_create_request(pb.CreateMatchRequest(bot_names=["a", "b", "c\x1b", "d"]))


def test_clip_cuts_long_errors() -> None:
    assert clip("short") == "short"
    cut = clip("x" * 10_000)
    assert len(cut) == 300 and cut.endswith("…")


def test_replay_show_escapes_names_and_messages() -> None:
    evil = "evil\x1b[2J\nseat 3 wins"
    header = new_header(
        "m1", RulesConfig(), clock=ClockSettings(), seed=1, bot_names=[evil, "b", "c", "d"], wall=0.0
    )
    renderer = Renderer()
    lines = renderer.feed(header)
    lines += renderer.feed(Connected(0, False, evil, "1\x07", 0.0))
    lines += renderer.feed(RejectionRecord(0, "invalid", "", "unknown action 'a\nb\x1b'", 1))
    text = "\n".join(lines)
    assert "\x1b" not in text and "\x07" not in text
    assert all("\n" not in line for line in lines)
    assert "evil\\x1b[2J\\nseat 3 wins" in text and "a\\nb\\x1b" in text
    assert "\x1b" not in "".join(summary_table([]))


def test_console_logs_escape_control_characters(capsys: pytest.CaptureFixture[str]) -> None:
    log.configure(json=False, force=True)
    evil = "evil\x1b[2J\nforged line"
    log.get_logger().warning("odd\x1b", bot_name=evil, seats=["a\x1b"], n="plain", u="abc\u202e")
    err = capsys.readouterr().err
    assert "\x1b" not in err and "\u202e" not in err and err.count("\n") == 1, err
    assert "bot_name='evil\\x1b[2J\\nforged line'" in err and "odd\\x1b" in err and "n=plain" in err


def test_json_logs_escape_control_characters_by_themselves() -> None:
    stream = io.StringIO()
    structlog.configure(
        processors=[structlog.processors.JSONRenderer()], logger_factory=structlog.PrintLoggerFactory(stream)
    )
    structlog.get_logger().warning("x", name="a\x1b\nb")
    assert stream.getvalue().count("\n") == 1 and "\x1b" not in stream.getvalue()
