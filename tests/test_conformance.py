"""`tichu rules`: every op, every kind of bad input, id echo, and the real console command."""

from __future__ import annotations

import io
import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from referee import conformance
from referee.conformance import answer, compact_state_json, encode, serve
from referee.rules import (
    Play,
    RulesConfig,
    action_sort_key,
    apply,
    legal_actions,
    legal_decisions,
    new_game,
    parse_action,
    preset,
    state_from_json,
    state_to_json,
    to_act,
)

ROOT = Path(__file__).resolve().parent.parent

# P0 leads; every seat has played already (short hands), so no Tichu call is listed.
LEAD: dict[str, Any] = {"hands": ["7s 9j", "8s Kt", "2j", "3p 3s"], "turn": 0}
# P0 led the Mah Jong wishing 7 (T-WISH-1); P1 holds 7s and Kj and must play the 7.
WISH: dict[str, Any] = {
    "hands": ["2s 3s", "7s Kj", "9j", "Qp"],
    "trick": [{"seat": 0, "cards": "MJ"}],
    "wish": "7",
    "turn": 1,
}
# The exchange with no Grand Tichu and no pre-step: every seat owes its three cards.
EXCHANGE_CONFIG: dict[str, Any] = {
    "grand_tichu_enabled": False,
    "tichu_call_exchange_mode": "after_exchange_only",
}


def run(*lines: str | dict[str, Any]) -> list[dict[str, Any]]:
    """Feed request lines (raw text or objects) through serve(); the parsed answer lines."""
    text = "".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines)
    out = io.StringIO()
    assert serve(io.StringIO(text), out) == 0
    answers = out.getvalue().splitlines()
    return [json.loads(a) for a in answers]


def one(request: str | dict[str, Any]) -> dict[str, Any]:
    """The single answer to one request."""
    (result,) = run(request)
    return result


def error_of(request: str | dict[str, Any]) -> dict[str, Any]:
    """The error object of a request that must fail."""
    result = one(request)
    assert result["ok"] is False, result
    error: dict[str, Any] = result["error"]
    assert set(error) == {"type", "rule", "message"}
    assert isinstance(error["message"], str) and error["message"]
    return error


# ----------------------------------------------------------------------------- classify


def test_classify_straight_with_the_mah_jong() -> None:
    assert one({"op": "classify", "cards": "MJ 2s 3j 4p 5s"}) == {
        "ok": True,
        "op": "classify",
        "cards": "MJ 2s 3j 4p 5s",
        "readings": [{"kind": "straight", "length": 5, "rank": 5, "phoenix": None}],
    }


def test_classify_canonicalizes_the_cards() -> None:
    assert one({"op": "classify", "cards": "5S, 5j"})["cards"] == "5j 5s"


def test_classify_lists_every_phoenix_reading_highest_first() -> None:
    readings = one({"op": "classify", "cards": "5s 5j 6p 6t PHX"})["readings"]
    assert readings == [
        {"kind": "full_house", "length": 5, "rank": 6, "phoenix": "6"},
        {"kind": "full_house", "length": 5, "rank": 5, "phoenix": "5"},
    ]


def test_classify_a_straight_flush_is_a_bomb() -> None:
    readings = one({"op": "classify", "cards": "4s 5s 6s 7s 8s"})["readings"]
    assert readings == [{"kind": "bomb", "bomb": "straight_flush", "length": 5, "rank": 8, "phoenix": None}]


def test_classify_invalid_combination_has_no_reading() -> None:
    assert one({"op": "classify", "cards": "5s 5j 7p 7t"})["readings"] == []  # T-COMB-1
    assert one({"op": "classify", "cards": "MJ PHX"})["readings"] == []  # T-COMB-7


def test_classify_phoenix_single_takes_its_value_from_top() -> None:
    assert one({"op": "classify", "cards": "PHX"})["readings"][0]["rank"] == 1.5
    assert one({"op": "classify", "cards": "PHX", "top": "8s"})["readings"][0]["rank"] == 8.5
    assert one({"op": "classify", "cards": "PHX", "top": None})["readings"][0]["rank"] == 1.5


@pytest.mark.parametrize("top", ["8s 8j", "DOG", "5s 5j 7p 7t"])
def test_classify_top_must_be_a_single(top: str) -> None:
    assert error_of({"op": "classify", "cards": "PHX", "top": top})["type"] == "invalid"


def test_classify_top_cannot_share_a_card_with_the_play() -> None:
    assert error_of({"op": "classify", "cards": "8s 8j", "top": "8s"})["type"] == "invalid"


def test_classify_unknown_card_names_the_rule() -> None:
    assert error_of({"op": "classify", "cards": "7s 1j"}) | {"message": ""} == {
        "type": "invalid",
        "rule": "R-DECK-1",
        "message": "",
    }


def test_classify_a_card_named_twice_is_invalid() -> None:
    assert error_of({"op": "classify", "cards": "7s 7s"})["type"] == "invalid"


# ----------------------------------------------------------------------------- legal


def test_legal_lists_canonical_actions_sorted() -> None:
    assert one({"op": "legal", "state": LEAD, "seat": 0}) == {
        "ok": True,
        "op": "legal",
        "seat": 0,
        "to_act": [0],
        "actions": ["play 7s", "play 9j"],
    }


def test_legal_for_a_seat_that_owes_nothing_is_empty() -> None:
    result = one({"op": "legal", "state": LEAD, "seat": 2})
    assert result["to_act"] == [0]
    assert result["actions"] == []


def test_legal_under_the_wish() -> None:
    assert one({"op": "legal", "state": WISH, "seat": 1})["actions"] == ["play 7s"]


def test_legal_order_is_action_sort_key_order() -> None:
    state = {"hands": ["MJ 2s 3j 4p 5s PHX", "8s", "9j", "Qp"], "turn": 0}
    actions = one({"op": "legal", "state": state, "seat": 0})["actions"]
    expected = sorted(legal_actions(state_from_json(state), 0), key=action_sort_key)
    assert actions == [str(a) for a in expected]
    assert actions[0] == "play MJ"
    assert "play MJ 2s 3j 4p 5s wish=7" in actions


def test_legal_exchange_is_the_full_list() -> None:
    state = state_to_json(new_game(RulesConfig(**EXCHANGE_CONFIG), 3)[0])
    result = one({"op": "legal", "state": state, "seat": 2})
    assert result["to_act"] == [0, 1, 2, 3]
    assert len(result["actions"]) == 2184  # 14 * 13 * 12
    assert len(set(result["actions"])) == 2184


def test_legal_exchange_strings_are_canonical_and_accepted() -> None:
    state = state_to_json(new_game(RulesConfig(**EXCHANGE_CONFIG), 3)[0])
    actions = one({"op": "legal", "state": state, "seat": 2})["actions"]
    assert all(str(parse_action(a)) == a for a in actions)
    assert one({"op": "apply", "state": state, "seat": 2, "action": actions[0]})["ok"] is True


FULL_HAND = "MJ 2s 3j 4p 5s 6s 7s 8s 9s 10s Js Qs Ks As"


def test_legal_includes_a_spontaneous_tichu_call() -> None:
    # P0 still holds 14 cards, so he has played none and may call (R-CALL-1); the others have.
    state = {"hands": [FULL_HAND, "Kj", "Qj", "Jj"], "turn": 0}
    assert one({"op": "legal", "state": state, "seat": 0})["actions"][0] == "tichu"
    assert one({"op": "legal", "state": state, "seat": 1})["actions"] == []


# ----------------------------------------------------------------------------- apply


def test_apply_returns_the_new_state_and_events() -> None:
    result = one({"op": "apply", "state": LEAD, "seat": 0, "action": "play 7s"})
    assert result["ok"] is True and result["op"] == "apply"
    assert result["events"] == [
        {
            "type": "played",
            "seat": 0,
            "cards": "7s",
            "combo": {"kind": "single", "length": 1, "rank": 7, "phoenix": None},
            "wish": None,
            "partner": None,
            "out_of_turn": False,
        }
    ]
    state = result["state"]
    assert state["format"] == "tichu-state/1"
    assert state["hands"][0] == "9j"
    assert state["window"]["order"] == [1, 2, 3, 0]
    # The answer's state is a position play continues from.
    assert one({"op": "legal", "state": state, "seat": 1})["actions"] == ["decline"]


def test_apply_accepts_an_action_object() -> None:
    result = one({"op": "apply", "state": WISH, "seat": 1, "action": {"type": "play", "cards": "7s"}})
    assert [e["type"] for e in result["events"]] == ["played", "wish_fulfilled"]


def test_apply_pass_by_the_leader_is_illegal_with_its_rule() -> None:
    error = error_of({"op": "apply", "state": LEAD, "seat": 0, "action": "pass"})
    assert error["type"] == "illegal"
    assert error["rule"] == "R-TRICK-2"


@pytest.mark.parametrize("action", ["pass", "play Kj", {"type": "pass"}])
def test_apply_ignoring_the_wish_is_illegal(action: str | dict[str, Any]) -> None:
    error = error_of({"op": "apply", "state": WISH, "seat": 1, "action": action})
    assert (error["type"], error["rule"]) == ("illegal", "R-WISH-4")


def test_apply_out_of_turn_is_illegal() -> None:
    error = error_of({"op": "apply", "state": LEAD, "seat": 1, "action": "play 8s"})
    assert (error["type"], error["rule"]) == ("illegal", "R-TRICK-3")


@pytest.mark.parametrize(
    "action",
    ["fly away", "play", "play 7x", "play 7s wish=1", "gift x", {"type": "jump"}, {"cards": "7s"}, ""],
)
def test_apply_malformed_action_is_invalid(action: str | dict[str, Any]) -> None:
    assert error_of({"op": "apply", "state": LEAD, "seat": 0, "action": action})["type"] == "invalid"


@pytest.mark.parametrize("action", [7, None, ["play", "7s"], True])
def test_apply_action_of_the_wrong_type_is_a_bad_request(action: object) -> None:
    assert error_of({"op": "apply", "state": LEAD, "seat": 0, "action": action})["type"] == "bad_request"


def test_apply_compact_state_reads_back_as_the_same_state() -> None:
    full = one({"op": "apply", "state": WISH, "seat": 1, "action": "play 7s"})["state"]
    compact = one({"op": "apply", "state": WISH, "seat": 1, "action": "play 7s", "compact": True})["state"]
    assert len(json.dumps(compact)) < len(json.dumps(full)) / 4
    assert state_from_json(compact) == state_from_json(full)


@pytest.mark.parametrize("config", ["official", "tournament"])
def test_compact_state_json_reads_back_as_the_full_json_through_a_round(config: str) -> None:
    rng = random.Random(config)
    state, _ = new_game(preset(config), 11)
    step = 0
    while state.round == 0:
        step += 1
        if step < 40 or step % 10 == 0:  # every early phase, then a sample of the tricks
            compact = compact_state_json(state)
            assert state_from_json(compact) == state_from_json(state_to_json(state))
            assert "format" not in compact
            assert compact.get("config", "official") == config
        seat = to_act(state)[0]
        state = apply(state, seat, rng.choice(legal_decisions(state, seat)))[0]


def test_apply_resolves_a_window_bomb_read_from_the_state_json() -> None:
    state = {
        "hands": ["9j", "8s Kt", "4j 4s 4p 4t 2j", "3s 3p"],
        "trick": [{"seat": 0, "cards": "7s"}],
        "turn": 1,
        "window": {"order": [1, 2, 3, 0], "declined": [], "bombs": {}},
    }
    bombed = one({"op": "apply", "state": state, "seat": 2, "action": "play 4j 4s 4p 4t"})
    assert bombed["state"]["window"]["bombs"] == {"2": "play 4j 4s 4p 4t"}
    result = one({"op": "apply", "state": bombed["state"], "seat": 1, "action": "decline"})
    assert result["ok"] is True, result
    assert [e["type"] for e in result["events"]] == ["played"]


def test_apply_tichu_flag_is_processed_before_the_play() -> None:
    state = {"hands": [FULL_HAND, "Kj", "Qj", "Jj"], "turn": 0}
    result = one({"op": "apply", "state": state, "seat": 0, "action": "play MJ tichu"})
    assert [e["type"] for e in result["events"]][:2] == ["called", "played"]
    assert result["state"]["calls"][0] == "tichu"


# ----------------------------------------------------------------------------- new, observe, default


def test_new_deals_the_first_eight_cards() -> None:
    result = one({"op": "new", "config": "official", "seed": 7})
    assert result["ok"] is True and result["op"] == "new"
    state = result["state"]
    assert state["phase"] == "grand_tichu"
    assert [len(h.split()) for h in state["hands"]] == [8, 8, 8, 8]
    assert [e["type"] for e in result["events"]] == ["round_started"] + ["cards_dealt"] * 4
    assert one({"op": "new", "config": "official", "seed": 7}) == result


def test_new_defaults_to_official_rules_and_seed_zero() -> None:
    assert one({"op": "new"})["state"] == state_to_json(new_game()[0])


def test_new_with_a_preset_and_with_flags() -> None:
    tournament = one({"op": "new", "config": "tournament", "seed": "abc"})["state"]
    assert tournament["config"]["grand_tichu_enabled"] is False
    assert tournament["seed"] == "abc"
    flags = one({"op": "new", "config": {"target_score": 500}, "compact": True})["state"]
    assert flags["config"] == {"target_score": 500}


@pytest.mark.parametrize(
    "config", ["house", {"no_such_flag": True}, {"players": 5}, {"bomb_timing": "never"}, {"match_mode": 5}]
)
def test_new_with_a_bad_config_is_invalid(config: object) -> None:
    assert error_of({"op": "new", "config": config})["type"] == "invalid"


@pytest.mark.parametrize(
    "request_", [{"op": "new", "seed": True}, {"op": "new", "seed": 1.5}, {"op": "new", "config": 4}]
)
def test_new_with_wrong_types_is_a_bad_request(request_: dict[str, Any]) -> None:
    assert error_of(request_)["type"] == "bad_request"


def test_observe_shows_only_what_the_seat_may_know() -> None:
    result = one({"op": "observe", "state": WISH, "seat": 1})
    assert result["ok"] is True and result["op"] == "observe" and result["seat"] == 1
    observation = result["observation"]
    assert observation["hand"] == "7s Kj"
    assert observation["hand_sizes"] == [2, 2, 1, 1]
    assert observation["wish"] == "7"
    assert observation["legal_actions"] == ["play 7s"]
    assert "9j" not in json.dumps(observation)  # P2's hand


def test_default_is_the_r_def_1_action() -> None:
    assert one({"op": "default", "state": LEAD, "seat": 0}) == {
        "ok": True,
        "op": "default",
        "seat": 0,
        "action": "play 7s",
    }
    assert one({"op": "default", "state": WISH, "seat": 1})["action"] == "play 7s"


def test_default_exchange_gives_the_three_lowest_cards() -> None:
    state = state_to_json(new_game(RulesConfig(**EXCHANGE_CONFIG), 3)[0])
    lowest = state["hands"][1].split()[:3]
    # R-DEF-1: the lowest to next(p), the next to the following seat, and so on.
    expected = f"exchange 0:{lowest[2]} 2:{lowest[0]} 3:{lowest[1]}"
    assert one({"op": "default", "state": state, "seat": 1})["action"] == expected


def test_default_for_a_seat_that_owes_nothing_is_illegal() -> None:
    error = error_of({"op": "default", "state": LEAD, "seat": 3})
    assert (error["type"], error["rule"]) == ("illegal", "R-DEF-1")


# ----------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    "line",
    [
        "not json",
        "{",
        '{"op": "legal",}',
        "[1, 2",
        '{"op": NaN}',
        '{"id": -Infinity}',
        '{"id": 1e400}',
        "[" * 100_000,
    ],
)
def test_a_line_that_is_not_json_is_a_bad_request(line: str) -> None:
    error = error_of(line)
    assert error == {"type": "bad_request", "rule": None, "message": error["message"]}
    assert error["message"].startswith("not JSON")


@pytest.mark.parametrize("line", ["[1, 2]", '"classify"', "42", "null", "true"])
def test_a_request_that_is_not_an_object_is_a_bad_request(line: str) -> None:
    assert error_of(line)["type"] == "bad_request"


@pytest.mark.parametrize("request_", [{}, {"op": "fly"}, {"op": 3}, {"op": None}, {"op": "CLASSIFY"}])
def test_a_missing_or_unknown_op_is_a_bad_request(request_: dict[str, Any]) -> None:
    result = one(request_)
    assert "op" not in result
    assert result["error"]["type"] == "bad_request"


@pytest.mark.parametrize(
    "request_",
    [
        {"op": "classify"},
        {"op": "legal", "seat": 0},
        {"op": "legal", "state": LEAD},
        {"op": "apply", "state": LEAD, "seat": 0},
        {"op": "observe", "state": LEAD},
        {"op": "default", "seat": 0},
    ],
)
def test_a_missing_field_is_a_bad_request(request_: dict[str, Any]) -> None:
    result = one(request_)
    assert result["op"] == request_["op"]
    assert result["error"]["type"] == "bad_request"
    assert "needs the field" in result["error"]["message"]


def test_an_unknown_field_is_a_bad_request() -> None:
    error = error_of({"op": "classify", "cards": "PHX", "tops": "8s"})
    assert error["type"] == "bad_request"
    assert "tops" in error["message"]


@pytest.mark.parametrize(
    "request_",
    [
        {"op": "classify", "cards": 7},
        {"op": "classify", "cards": ["7s"]},
        {"op": "classify", "cards": "PHX", "top": 8},
        {"op": "legal", "state": LEAD, "seat": "0"},
        {"op": "legal", "state": LEAD, "seat": True},
        {"op": "legal", "state": LEAD, "seat": 0.0},
        {"op": "legal", "state": "LEAD", "seat": 0},
        {"op": "legal", "state": [LEAD], "seat": 0},
        {"op": "apply", "state": LEAD, "seat": 0, "action": "play 7s", "compact": "yes"},
    ],
)
def test_a_field_of_the_wrong_type_is_a_bad_request(request_: dict[str, Any]) -> None:
    assert error_of(request_)["type"] == "bad_request"


@pytest.mark.parametrize("seat", [-1, 4, 99])
def test_a_seat_out_of_range_is_invalid(seat: int) -> None:
    for op in ("legal", "observe", "default"):
        assert error_of({"op": op, "state": LEAD, "seat": seat})["type"] == "invalid"
    assert error_of({"op": "apply", "state": LEAD, "seat": seat, "action": "pass"})["type"] == "invalid"


@pytest.mark.parametrize(
    "state",
    [
        {},
        {"hands": ["7s", "8s"]},
        {"hands": ["7s", "8s", "9s", "Zz"]},
        {"hands": ["7s", "7s", "9s", "10s"]},
        {"hands": ["7s", "8s", "9s", "10s"], "phase": "lunch"},
        {"hands": ["7s", "8s", "9s", "10s"], "turn": 7},
        {"hands": ["7s", "8s", "9s", "10s"], "format": "tichu-state/9"},
        {"hands": ["7s", "8s", "9s", "10s"], "round": "x"},
        {"hands": ["7s", "8s", "9s", "10s"], "history": 5},
        {"hands": ["7s", "8s", "9s", "10s"], "passed": 3},
        {"hands": ["7s", "8s", "9s", "10s"], "window": [1]},
        {"hands": ["7s", "8s", "9s", "10s"], "trick": [{"seat": 0, "cards": "5s 5j 7p 7t"}]},
    ],
)
def test_a_bad_state_is_invalid(state: dict[str, Any]) -> None:
    for op in ("legal", "observe", "default"):
        error = error_of({"op": op, "state": state, "seat": 0})
        assert error["type"] == "invalid", (op, error)
    assert error_of({"op": "apply", "state": state, "seat": 0, "action": "pass"})["type"] == "invalid"


def test_an_internal_error_is_answered_and_the_session_goes_on(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(request: dict[str, Any]) -> dict[str, Any]:
        raise RuntimeError("boom")

    monkeypatch.setitem(conformance.OPS, "classify", broken)
    first, second = run({"op": "classify", "cards": "7s", "id": 1}, {"op": "legal", "state": LEAD, "seat": 0})
    assert first == {
        "ok": False,
        "op": "classify",
        "id": 1,
        "error": {"type": "internal", "rule": None, "message": "RuntimeError: boom"},
    }
    assert second["ok"] is True


# ----------------------------------------------------------------------------- the session


@pytest.mark.parametrize("request_id", [1, "abc", None, {"n": [1, 2]}, 0.5])
def test_the_id_is_echoed_on_success_and_on_error(request_id: object) -> None:
    good = one({"op": "classify", "cards": "7s", "id": request_id})
    assert good["ok"] is True and good["id"] == request_id
    bad = one({"op": "classify", "cards": "7x", "id": request_id})
    assert bad["ok"] is False and bad["id"] == request_id
    unknown = one({"op": "fly", "id": request_id})
    assert unknown["id"] == request_id


def test_no_id_no_echo() -> None:
    assert "id" not in one({"op": "classify", "cards": "7s"})
    assert "id" not in one("not json")


def test_one_answer_line_per_request_and_blank_lines_skipped() -> None:
    answers = run(
        "",
        {"op": "classify", "cards": "7s"},
        "   ",
        "oops",
        "\t",
        {"op": "default", "state": LEAD, "seat": 0},
    )
    assert [a["ok"] for a in answers] == [True, False, True]


def test_answers_are_flushed_line_by_line() -> None:
    class Recorder(io.StringIO):
        """Counts flushes, to check that each answer is flushed as soon as it is written."""

        flushes = 0

        def flush(self) -> None:
            self.flushes += 1

    out = Recorder()
    requests = "".join(json.dumps({"op": "classify", "cards": c}) + "\n" for c in ("7s", "8s", "9s"))
    assert serve(io.StringIO(requests), out) == 0
    assert out.flushes >= 3
    assert len(out.getvalue().splitlines()) == 3


def test_an_answer_that_cannot_be_encoded_becomes_an_error_line() -> None:
    line = encode({"ok": True, "id": {1, 2}})
    assert json.loads(line)["error"]["type"] == "bad_request"


def test_a_reader_that_goes_away_ends_the_session() -> None:
    class GonePipe(io.StringIO):
        """A stdout whose reader has closed the pipe."""

        def write(self, text: str) -> int:
            raise BrokenPipeError

    requests = io.StringIO(json.dumps({"op": "classify", "cards": "7s"}) + "\n")
    assert serve(requests, GonePipe()) == 1


def test_an_empty_input_is_answered_with_nothing() -> None:
    out = io.StringIO()
    assert serve(io.StringIO(""), out) == 0
    assert out.getvalue() == ""


def test_answer_never_raises_on_any_single_character() -> None:
    for code in range(128):
        result = answer(chr(code))
        assert result["ok"] is False


def test_a_full_round_through_the_protocol() -> None:
    """Drive a whole round with `default` and `apply` only, as an external implementation would."""
    state = one({"op": "new", "config": "tournament", "seed": 5})["state"]
    for _ in range(2000):
        if state["phase"] == "game_over" or state["round"] > 0:
            break
        to_act = one({"op": "legal", "state": state, "seat": 0})["to_act"]
        seat = to_act[0]
        action = one({"op": "default", "state": state, "seat": seat})["action"]
        result = one({"op": "apply", "state": state, "seat": seat, "action": action})
        assert result["ok"] is True, result
        state = result["state"]
    assert state["round"] == 1
    assert len(state["history"]) == 1
    assert sum(state["history"][0]) == 100  # no calls: card points, or 100 for a 1-2


def test_the_console_command_answers_each_line() -> None:
    requests = b"\n".join(
        [
            json.dumps({"op": "classify", "cards": "MJ 2s 3j 4p 5s", "id": 1}).encode(),
            json.dumps({"op": "apply", "state": LEAD, "seat": 0, "action": "pass", "id": 2}).encode(),
            b"",
            b"\xff\xfe not utf-8",
            b"not json",
            json.dumps({"op": "legal", "state": LEAD, "seat": 0, "id": 3}).encode(),
        ]
    )
    done = subprocess.run(
        [sys.executable, "-m", "referee.cli", "rules"],
        input=requests,
        capture_output=True,
        cwd=ROOT,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == b""
    answers = [json.loads(line) for line in done.stdout.decode().splitlines()]
    assert [a.get("id") for a in answers] == [1, 2, None, None, 3]
    assert answers[0]["readings"][0]["kind"] == "straight"
    assert answers[1]["error"]["rule"] == "R-TRICK-2"
    assert answers[2]["error"]["type"] == "bad_request"
    assert answers[3]["error"]["type"] == "bad_request"
    assert answers[4]["actions"] == ["play 7s", "play 9j"]


def test_play_objects_listed_by_legal_parse_back() -> None:
    """Every string `legal` lists is an action the engine parses back to an equal action."""
    state = {"hands": ["MJ 2s 3j 4p 5s PHX 7t 7j", "8s", "9j", "Qp"], "turn": 0}
    for text in one({"op": "legal", "state": state, "seat": 0})["actions"]:
        action = parse_action(text)
        assert str(action) == text
        assert isinstance(action, Play)
