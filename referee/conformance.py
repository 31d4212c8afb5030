"""`tichu rules`: the conformance command, one JSON request per line in, one JSON answer per line out.

Bot authors ask it what the engine says (readings, legal actions, the result of an action), and
other implementations are cross-checked against it. Every request gets exactly one answer line,
bad input included, so a driver can pair answers with requests by counting lines (or by `id`).
"""

from __future__ import annotations

import io
import json
import math
import os
import sys
from collections.abc import Callable
from typing import Any, TextIO, TypeVar

from referee.rules import (
    OFFICIAL,
    PRESETS,
    Combo,
    ComboKind,
    IllegalActionError,
    RulesConfig,
    RulesError,
    State,
    action_from_json,
    action_sort_key,
    apply,
    classify,
    default_action,
    format_cards,
    legal_actions,
    mask_of,
    new_game,
    observe,
    parse_cards,
    state_from_json,
    state_to_json,
    to_act,
)

Request = dict[str, Any]
Answer = dict[str, Any]
T = TypeVar("T")


class RequestError(Exception):
    """A request that cannot be answered, with the error type and rule to report."""

    def __init__(self, kind: str, message: str, rule: str | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.rule = rule


def _bad_request(message: str) -> RequestError:
    return RequestError("bad_request", message)


def _reject_constant(name: str) -> Any:
    # NaN and Infinity are not JSON; accepting them would make us echo non-JSON ids back.
    raise ValueError(f"{name} is not valid JSON")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"the number {text} is too large")  # it would be echoed as Infinity
    return value


def _check_fields(request: Request, op: str, required: tuple[str, ...], optional: tuple[str, ...]) -> None:
    """Reject missing and unknown fields, so that a misspelt optional field is never silently ignored."""
    allowed = {"op", "id", *required, *optional}
    unknown = sorted(set(request) - allowed)
    if unknown:
        expected = ", ".join(sorted(allowed - {"op"}))
        raise _bad_request(f"unknown field(s) {', '.join(unknown)} for op {op!r}; expected {expected}")
    for name in required:
        if name not in request:
            raise _bad_request(f"op {op!r} needs the field {name!r}")


def _text(request: Request, name: str) -> str:
    value = request[name]
    if not isinstance(value, str):
        raise _bad_request(f'{name!r} must be a string of cards, e.g. "7s 7j PHX", not {value!r}')
    return value


def _parsed(what: str, parse: Callable[[Any], T], data: Any) -> T:
    """Run an engine parser; a shape it does not check itself is still the caller's bad input."""
    try:
        return parse(data)
    except RulesError:
        raise
    except (ValueError, TypeError, KeyError, AttributeError, IndexError) as exc:
        raise RequestError("invalid", f"malformed {what}: {type(exc).__name__}: {exc}") from None


def _state(request: Request) -> State:
    data = request["state"]
    if not isinstance(data, dict):
        raise _bad_request("'state' must be a JSON object (format tichu-state/1)")
    return _parsed("state", state_from_json, data)


def _seat(request: Request, state: State) -> int:
    seat = request["seat"]
    if not isinstance(seat, int) or isinstance(seat, bool):
        raise _bad_request(f"'seat' must be an integer, not {seat!r}")
    if not 0 <= seat < state.players:
        raise RequestError("invalid", f"seat must be 0..{state.players - 1}, not {seat}")
    return seat


def _flag(request: Request, name: str) -> bool:
    value = request.get(name, False)
    if not isinstance(value, bool):
        raise _bad_request(f"{name!r} must be true or false, not {value!r}")
    return value


def compact_state_json(state: State) -> dict[str, Any]:
    """The state's JSON without the fields that state_from_json would fill in with the same value."""
    data = state_to_json(state)
    reference = state_from_json(data)
    named = [name for name, config in PRESETS.items() if config == state.config]
    official = OFFICIAL.to_json()
    data["config"] = (
        named[0]
        if named
        else {flag: value for flag, value in state.config.to_json().items() if value != official[flag]}
    )
    # Each field is dropped only after checking that the JSON still reads back as the full JSON
    # does, so the result is exact even where a default is inferred (`played` from hand sizes).
    for key in list(data):
        trial = {k: v for k, v in data.items() if k != key}
        try:
            if state_from_json(trial) == reference:
                data = trial
        except RulesError:
            continue
    return data


def _state_json(state: State, compact: bool) -> dict[str, Any]:
    return compact_state_json(state) if compact else state_to_json(state)


def _readings(readings: tuple[Combo, ...]) -> list[dict[str, object]]:
    return [combo.to_json() for combo in readings]


def _classify(request: Request) -> Answer:
    _check_fields(request, "classify", ("cards",), ("top",))
    cards = parse_cards(_text(request, "cards"))
    mask = mask_of(cards)
    top = None
    if request.get("top") is not None:
        top_cards = parse_cards(_text(request, "top"))
        top_readings = classify(mask_of(top_cards))
        # Only a single's value matters (the Phoenix single, R-PHX-2), so only a single is accepted.
        if len(top_cards) != 1 or not top_readings or top_readings[0].kind is not ComboKind.SINGLE:
            raise RequestError("invalid", "'top' is the single card on the table, e.g. \"8s\"", "R-PHX-2")
        if mask & mask_of(top_cards):
            raise RequestError("invalid", "a card cannot be both on the table and in the play", "R-DECK-1")
        top = top_readings[0]
    return {"cards": format_cards(cards), "readings": _readings(classify(mask, top))}


def _legal(request: Request) -> Answer:
    _check_fields(request, "legal", ("state", "seat"), ())
    state = _state(request)
    seat = _seat(request, state)
    actions = sorted(legal_actions(state, seat), key=action_sort_key)
    return {"seat": seat, "to_act": list(to_act(state)), "actions": [str(a) for a in actions]}


def _apply(request: Request) -> Answer:
    _check_fields(request, "apply", ("state", "seat", "action"), ("compact",))
    compact = _flag(request, "compact")
    state = _state(request)
    seat = _seat(request, state)
    data = request["action"]
    if not isinstance(data, (str, dict)):
        raise _bad_request('\'action\' is a string like "play 7s" or an object like {"type": "pass"}')
    new_state, events = apply(state, seat, action_from_json(data))
    return {"state": _state_json(new_state, compact), "events": [event.to_json() for event in events]}


def _new(request: Request) -> Answer:
    _check_fields(request, "new", (), ("config", "seed", "compact"))
    compact = _flag(request, "compact")
    config_data = request.get("config")
    if config_data is not None and not isinstance(config_data, (str, dict)):
        raise _bad_request('\'config\' is a preset name ("official", "tournament") or an object of flags')
    seed = request.get("seed", 0)
    if not isinstance(seed, (int, str)) or isinstance(seed, bool):
        raise _bad_request(f"'seed' must be an integer or a string, not {seed!r}")
    state, events = new_game(_parsed("rules config", RulesConfig.from_json, config_data), seed)
    return {"state": _state_json(state, compact), "events": [event.to_json() for event in events]}


def _observe(request: Request) -> Answer:
    _check_fields(request, "observe", ("state", "seat"), ())
    state = _state(request)
    seat = _seat(request, state)
    return {"seat": seat, "observation": observe(state, seat).to_json()}


def _default(request: Request) -> Answer:
    _check_fields(request, "default", ("state", "seat"), ())
    state = _state(request)
    seat = _seat(request, state)
    pending = to_act(state)
    # R-DEF-1 defines a default only for a decision the seat owes; anything else is a caller's mistake.
    if seat not in pending:
        raise IllegalActionError(f"seat {seat} owes no decision now (to_act: {list(pending)})", "R-DEF-1")
    return {"seat": seat, "action": str(default_action(state, seat))}


OPS: dict[str, Callable[[Request], Answer]] = {
    "classify": _classify,
    "legal": _legal,
    "apply": _apply,
    "new": _new,
    "observe": _observe,
    "default": _default,
}


# What `tichu rules --help` says of each op: its fields (optional ones in brackets) and its answer.
OP_HELP = {
    "classify": ("cards [top]", "every reading of a card set, against the single on the table"),
    "legal": ("state seat", "the seat's legal actions in a tichu-state/1 position, and who is to act"),
    "apply": (
        "state seat action [compact]",
        "the position after the action, and its events; or the rule broken",
    ),
    "new": ("[config] [seed] [compact]", "a new game's first position and events (a preset or flags)"),
    "observe": ("state seat", "what the seat may see: the observation a bot gets"),
    "default": ("state seat", "the action the referee takes for a seat that does not answer (R-DEF-1)"),
}


def describe_ops() -> str:
    """The operations, for `tichu rules --help`."""
    width = max(len(f"{op} {fields}") for op, (fields, _) in OP_HELP.items())
    lines = [
        "Reads one JSON request a line on standard input and writes one JSON answer a line, bad",
        'input included: {"op": OP, FIELD: VALUE, ..., "id": ANY}. Answers are {"ok": true, ...} or',
        '{"ok": false, "error": {"type", "rule", "message"}}; an "id" is echoed. The operations:',
        "",
        *(f"  {f'{op} {fields}':<{width}}  {text}" for op, (fields, text) in OP_HELP.items()),
        "",
        'e.g. echo \'{"op": "classify", "cards": "7s 7j"}\' | tichu rules',
    ]
    return "\n".join(lines)


def _error(kind: str, message: str, rule: str | None) -> Answer:
    return {"ok": False, "error": {"type": kind, "rule": rule, "message": message}}


def answer(line: str) -> Answer:
    """The answer to one request line; never raises, whatever the line holds."""
    try:
        request = json.loads(line, parse_constant=_reject_constant, parse_float=_finite_float)
    except (ValueError, RecursionError) as exc:
        return _error("bad_request", f"not JSON: {exc}", None)
    if not isinstance(request, dict):
        return _error("bad_request", "a request is a JSON object with an 'op'", None)
    op = request.get("op")
    handler = OPS.get(op) if isinstance(op, str) else None
    head: Answer = {"ok": True}
    if handler is not None:
        head["op"] = op
    if "id" in request:
        head["id"] = request["id"]
    try:
        if op is None:
            raise _bad_request(f"a request needs an 'op': one of {', '.join(OPS)} (tichu rules --help)")
        if handler is None:
            raise _bad_request(f"unknown op {op!r}: expected one of {', '.join(OPS)}")
        return head | handler(request)
    except RequestError as exc:
        error = _error(exc.kind, exc.message, exc.rule)
    except IllegalActionError as exc:
        error = _error("illegal", exc.detail, exc.rule)
    except RulesError as exc:
        error = _error("invalid", exc.detail, exc.rule)
    except Exception as exc:  # one bad line must never end the session for the lines after it
        error = _error("internal", f"{type(exc).__name__}: {exc}", None)
    return head | error


def encode(result: Answer) -> str:
    """One answer as one line of JSON; an answer that cannot be encoded becomes an error line."""
    try:
        return json.dumps(result)
    except (ValueError, TypeError, RecursionError) as exc:
        # Only an echoed id nested to the parser's depth limit can get here.
        return json.dumps(_error("bad_request", f"the answer cannot be encoded: {exc}", None))


def serve(stdin: TextIO, stdout: TextIO) -> int:
    """Answer each JSON request line of stdin with one JSON line on stdout until EOF; returns 0."""
    if isinstance(stdin, io.TextIOWrapper):
        # Undecodable bytes become U+FFFD and so a bad_request answer, instead of a crash.
        stdin.reconfigure(errors="replace")
    try:
        while True:
            line = stdin.readline()
            if not line:
                return 0
            if not line.strip():
                continue
            stdout.write(encode(answer(line)) + "\n")
            stdout.flush()
    except BrokenPipeError:
        # The reader has gone (`tichu rules | head`): stop quietly, and keep the interpreter's
        # final flush of the dead pipe from printing a second error.
        if stdout is sys.stdout:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
