"""Reading typed fields out of a replay line's JSON object, with errors that name the field.

The replay schema (records.py) reads every record through these, so a line that is not what the
schema says is refused with the record's kind and the field at fault.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

from referee.rules import Action, DecisionKind, RulesError, parse_action

T = TypeVar("T")


class RecordError(ValueError):
    """A JSON object that is not a record of this schema; the message names the field."""


def read_value(data: Mapping[str, Any], key: str, kind: type[T] | tuple[type, ...], what: str) -> Any:
    """The field `key`, which must be of `kind` (`what`, for the error)."""
    if key not in data:
        raise RecordError(f"a {data.get('kind')} record needs {key!r}")
    value = data[key]
    # bool is an int in Python; a flag is never a count and a count never a flag.
    if not isinstance(value, kind) or (isinstance(value, bool) and kind in (int, float, (int, float))):
        raise RecordError(f"{data.get('kind')} record: {key!r} must be {what}, not {value!r}")
    return value


def read_int(data: Mapping[str, Any], key: str) -> int:
    """A whole number."""
    value: int = read_value(data, key, int, "a whole number")
    return value


def read_seat(data: Mapping[str, Any], key: str = "seat") -> int:
    """A seat number, 0 to 5."""
    value = read_int(data, key)
    if not 0 <= value < 6:
        raise RecordError(f"{data.get('kind')} record: {key!r} must be a seat 0..5, not {value}")
    return value


def read_opt_seat(data: Mapping[str, Any], key: str) -> int | None:
    """A seat number, or None."""
    if data.get(key) is None:
        return None
    return read_seat(data, key)


def read_num(data: Mapping[str, Any], key: str) -> float:
    """A number (kept as written: int or float)."""
    value: float = read_value(data, key, (int, float), "a number")
    return value


def read_opt_num(data: Mapping[str, Any], key: str) -> float | None:
    """A number, or None."""
    return None if data.get(key) is None else read_num(data, key)


def read_str(data: Mapping[str, Any], key: str) -> str:
    """A string."""
    value: str = read_value(data, key, str, "a string")
    return value


def read_bool(data: Mapping[str, Any], key: str) -> bool:
    """true or false."""
    value: bool = read_value(data, key, bool, "true or false")
    return value


def read_list(data: Mapping[str, Any], key: str) -> list[Any]:
    """A list."""
    value: list[Any] = read_value(data, key, list, "a list")
    return value


def read_object(data: Mapping[str, Any], key: str) -> dict[str, Any]:
    """An object."""
    value: dict[str, Any] = read_value(data, key, dict, "an object")
    return value


def read_t_ms(data: Mapping[str, Any]) -> float:
    """The record's time (0 when a hand-written line lacks it)."""
    # Every record has one; a line hand-written without it reads as at the start.
    return 0.0 if "t_ms" not in data else read_num(data, "t_ms")


def read_action(data: Mapping[str, Any], key: str) -> Action:
    """An action in its canonical notation."""
    text = read_str(data, key)
    try:
        return parse_action(text)
    except RulesError as error:
        raise RecordError(f"{data.get('kind')} record: {key!r} is not an action ({error})") from None


def read_decision_kind(data: Mapping[str, Any]) -> DecisionKind:
    """The decision kind of a decision or violation record."""
    text = read_str(data, "decision")
    try:
        return DecisionKind(text)
    except ValueError:
        raise RecordError(f"{data.get('kind')} record: unknown decision kind {text!r}") from None


def read_seat_map(data: Mapping[str, Any], key: str) -> list[tuple[int, Any]]:
    """An object keyed by seat numbers ("0".."5"), in the order written."""
    pairs = []
    for seat_key, value in read_object(data, key).items():
        if not (isinstance(seat_key, str) and seat_key.isdigit() and int(seat_key) < 6):
            raise RecordError(f"{data.get('kind')} record: {key!r} is keyed by seats, not {seat_key!r}")
        pairs.append((int(seat_key), value))
    return pairs


def read_seats(values: Sequence[Any], key: str, kind: str) -> tuple[int, ...]:
    """A list of seat numbers."""
    if not all(isinstance(v, int) and not isinstance(v, bool) and 0 <= v < 6 for v in values):
        raise RecordError(f"{kind} record: {key!r} must list seats 0..5, not {list(values)!r}")
    return tuple(values)
