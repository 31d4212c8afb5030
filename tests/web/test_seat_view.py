"""The person's seat without a browser: the page's messages (referee/web/seat.py) checked and
turned into the Play stream's, the referee's folded into what the page draws, `tichu play`'s
seating and clocks, and the command itself started as a person starts it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from referee.rules import OFFICIAL
from referee.server.codec import clock_to_proto, config_to_proto
from referee.web.app import CONTENT_SECURITY_POLICY
from referee.web.person import PERSON_DECISION_MS, PersonClock, Seating
from referee.web.relay import seat_url
from referee.web.seat import (
    MAX_PAGE_MESSAGE_BYTES,
    NO_LIMIT_MS,
    PageMessageError,
    SeatView,
    parse_hello,
)
from referee.wire.tichu.v1 import referee_pb2 as pb

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("not json", "a JSON object"),
        ("[1, 2]", "first message is a hello"),
        ('{"type": "act", "token": "x"}', "first message is a hello"),
        ('{"type": "hello"}', "the part after '#'"),
        ('{"type": "hello", "token": ""}', "the part after '#'"),
        (json.dumps({"type": "hello", "token": "x" * 201}), "the part after '#'"),
        (json.dumps({"type": "hello", "token": "x" * MAX_PAGE_MESSAGE_BYTES}), "at most"),
    ],
)
def test_a_page_s_first_message_must_be_a_hello_with_the_token(text: str, why: str) -> None:
    with pytest.raises(PageMessageError) as refused:
        parse_hello(text)
    assert why in str(refused.value)


def test_a_hello_gives_the_token() -> None:
    assert parse_hello('{"type": "hello", "token": "abc"}') == "abc"


def welcomed(seat: int = 0) -> SeatView:
    """A seat view that has had its Welcome (seat `seat` of four)."""
    view = SeatView(now=lambda: 100.0)
    welcome = pb.Welcome(
        match_id="m1",
        seat=seat,
        team=seat % 2,
        rules=config_to_proto(OFFICIAL),
        clock=clock_to_proto(PersonClock().settings()),
        seats=[pb.SeatInfo(seat=s, bot_name=f"bot{s}", connected=True) for s in range(4)],
    )
    step = view.from_referee(pb.RefereeMessage(welcome=welcome))
    assert step.page and step.page[-1]["type"] == "view" and not step.referee
    return view


def request(rid: int, kind: pb.DecisionKind, actions: list[str], version: int = 3) -> pb.RefereeMessage:
    legal = [pb.Action(text=a) for a in actions]
    message = pb.DecisionRequest(
        request_id=rid, kind=kind, state_version=version, deadline_ms=60_000, legal_actions=legal
    )
    return pb.RefereeMessage(request=message)


@pytest.mark.parametrize(
    ("message", "why"),
    [
        ("{", "a JSON object"),
        ('"act"', "a JSON object"),
        ('{"type": "shout"}', "unknown message type"),
        ('{"type": "act", "request": 1}', "an action is a string"),
        ('{"type": "act", "request": 1, "action": "   "}', "an action is a string"),
        (json.dumps({"type": "act", "request": 1, "action": "p" * 201}), "an action is a string"),
        (json.dumps({"type": "act", "action": "x" * 3000}), "at most"),
    ],
)
def test_a_malformed_page_message_is_refused_and_changes_nothing(message: str, why: str) -> None:
    view = welcomed()
    view.from_referee(request(1, pb.DECISION_KIND_PLAY, ["play 3j", "pass"]))
    before = view.view()
    with pytest.raises(PageMessageError) as refused:
        view.from_page(message)
    assert why in str(refused.value)
    assert view.view() == before


def test_an_answer_goes_as_the_request_s_decision_and_a_refusal_reopens_it() -> None:
    view = welcomed()
    view.from_referee(request(7, pb.DECISION_KIND_PLAY, ["play 3j", "pass"], version=9))
    step = view.from_page('{"type": "act", "request": 7, "action": "play 3j"}')
    [sent] = step.referee
    assert sent.decision.request_id == 7 and sent.decision.action.text == "play 3j"
    assert sent.decision.state_version == 9
    assert step.page[-1]["requests"] == []  # answered: the page offers it no more
    rejection = pb.Rejection(
        reason=pb.REJECTION_REASON_ILLEGAL, rule="R-WISH-4", message="the wish binds", request_id=7
    )
    step = view.from_referee(pb.RefereeMessage(rejection=rejection))
    shown = [m for m in step.page if m["type"] == "rejection"]
    assert shown == [
        {
            "type": "rejection",
            "reason": "illegal",
            "rule": "R-WISH-4",
            "message": "the wish binds",
            "request": 7,
        }
    ]
    assert [r["id"] for r in step.page[-1]["requests"]] == [7]


def test_an_action_with_no_open_request_goes_out_of_turn() -> None:
    view = welcomed()
    [bomb] = view.from_page('{"type": "act", "request": 99, "action": "play 9j 9s 9p 9t"}').referee
    assert bomb.out_of_turn.action.text == "play 9j 9s 9p 9t"
    [call] = view.from_page('{"type": "tichu"}').referee
    assert call.out_of_turn.action.text == "tichu"


def test_a_window_with_only_decline_is_declined_for_the_person() -> None:
    view = welcomed()
    step = view.from_referee(request(4, pb.DECISION_KIND_BOMB_WINDOW, ["decline"]))
    [decline] = step.referee
    assert decline.decision.request_id == 4 and decline.decision.action.text == "decline"
    assert view.view()["requests"] == []
    # With a bomb in hand the window is the person's to answer.
    step = view.from_referee(request(5, pb.DECISION_KIND_BOMB_WINDOW, ["decline", "play 9j 9s 9p 9t"]))
    assert step.referee == []
    [open_request] = view.view()["requests"]
    assert open_request["kind"] == "bomb_window"
    assert [a["bomb"] for a in open_request["legal"]] == [False, True]


def test_a_ping_is_answered_for_the_page() -> None:
    view = welcomed()
    [pong] = view.from_referee(pb.RefereeMessage(ping=pb.Ping(nonce=42))).referee
    assert pong.pong.nonce == 42


def test_the_seating_of_tichu_play() -> None:
    default = Seating.of([])
    assert default.seats() == [
        None,
        "clients.heuristic_bot:HeuristicBot",
        "clients.heuristic_bot:HeuristicBot",
        "clients.showcase_bot:ShowcaseBot",
    ]
    mine = Seating.of(["mybot:MyBot"])
    assert mine.opponents == ("mybot:MyBot", "mybot:MyBot")
    assert mine.names("Ann") == ["Ann", "MyBot", "HeuristicBot", "MyBot"]
    assert Seating.of(["mybot:MyBot"], "random").partner == "clients.random_bot:RandomBot"
    assert Seating.of(["a:A", "b:B"]).seats()[1::2] == ["a:A", "b:B"]
    with pytest.raises(ValueError, match="at most two opponents"):
        Seating.of(["a:A", "b:B", "c:C"])
    with pytest.raises(ValueError, match="MODULE:CLASS"):
        Seating.of(["mybot"])


def test_a_person_s_clock() -> None:
    limited = PersonClock().settings()
    assert limited.decision_ms == PERSON_DECISION_MS == 60_000 and limited.bank_ms == 0
    assert limited.max_violations == 0 and limited.start_timeout_ms == 0
    unlimited = PersonClock(decision_ms=None).settings()
    assert unlimited.decision_ms >= NO_LIMIT_MS


def test_the_seat_link_carries_the_token_in_its_fragment() -> None:
    assert seat_url("http://127.0.0.1:8080/", "t0k") == "http://127.0.0.1:8080/seat#t0k"


def run_tichu(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "referee.cli", *args],
        check=False,
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )


@pytest.mark.parametrize(
    ("args", "why"),
    [
        (["a:A", "b:B", "c:C"], "at most two opponents"),
        (["mybot"], "MODULE:CLASS"),
        (["--limit-s", "0"], "1 to 86400 seconds"),
        (["--http", "nowhere"], "HOST:PORT"),
    ],
)
def test_tichu_play_refuses_what_it_cannot_do_in_words(args: list[str], why: str) -> None:
    done = run_tichu("play", "--no-open", *args)
    assert done.returncode == 2 and why in done.stderr, done.stderr


def test_tichu_play_prints_the_seat_link_serves_the_page_and_stops_on_ctrl_c(tmp_path: Path) -> None:
    """`tichu play random --no-open`: the link is printed, the page is served under the site's
    headers, and Ctrl-C stops the referee, its web face and the bots' processes."""
    process = subprocess.Popen(
        [sys.executable, "-m", "referee.cli", "play", "random", "--no-open", "--replay-dir", str(tmp_path)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "TICHU_LOG_LEVEL": "warning"},
    )
    try:
        assert process.stdout is not None
        first = process.stdout.readline()
        assert first.startswith("Your seat (seat 0, team A; 60 s a decision)"), first
        link = process.stdout.readline().strip()
        assert "/seat#" in link
        with urllib.request.urlopen(link.partition("#")[0], timeout=60) as response:
            assert response.status == 200
            assert response.headers["Content-Security-Policy"] == CONTENT_SECURITY_POLICY
            assert response.headers["Cache-Control"] == "no-store"
            assert b'id="hand"' in response.read()
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=60) == 130
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
