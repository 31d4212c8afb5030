"""Compact JSON made by orjson, byte for byte what json.dumps makes, or json.dumps's own.

The hash chain hashes a line's bytes and a replay's reader refuses a line not in the written byte
form, so no encoder may change a byte of what json.dumps(separators=(",", ":")) made. orjson
(about ten times quicker) differs from it only where these checks send the value to json.dumps:

- floats of magnitude under 1e-4: json.dumps writes `1e-05`, orjson `0.00001` or `1e-5`; any
  such float puts `e-` or `0.0000` in both outputs, and an output holding either is redone;
- NaN and the infinities: json.dumps writes `NaN` and `Infinity`, orjson `null`; an output with
  more `null`s than the value has Nones (counted in the object and the objects in it) is looked
  through for them;
- what orjson refuses (keys that are not strings, integers beyond 64 bits, lone surrogates,
  subclasses of str, int, dict and list, dataclasses, datetimes): json.dumps encodes or raises;
- json.dumps's ASCII form escapes non-ASCII text and DEL, which orjson writes as they are.

Every other float is spelled alike (Python's shortest repr, the exponent from 1e16 on), and text
is escaped alike (`\\n`, `\\"`, `\\u001f`, U+2028 left as it is): tests/match/test_jsonbytes.py
holds orjson to it for any JSON value, so an orjson that spells one differently fails there.
orjson also encodes enum members and UUIDs, which json.dumps refuses: no line holds one.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

import orjson

# orjson refuses these (its fallback, json.dumps, encodes them as before) instead of encoding
# them its own way: a str subclass, a dataclass or a datetime is no JSON value json.dumps shares.
_PLAIN = orjson.OPT_PASSTHROUGH_SUBCLASS | orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME
_SORTED = _PLAIN | orjson.OPT_SORT_KEYS
_COMPACT = (",", ":")


def _json_text(value: Any, sort_keys: bool, ensure_ascii: bool, default: Callable[[Any], Any] | None) -> str:
    return json.dumps(
        value, sort_keys=sort_keys, separators=_COMPACT, ensure_ascii=ensure_ascii, default=default
    )


def compact_json(
    value: Any,
    *,
    sort_keys: bool = False,
    default: Callable[[Any], Any] | None = None,
    finite: bool = False,
) -> bytes:
    """json.dumps(value, separators=(",", ":"), ensure_ascii=False, ...) in UTF-8, made by orjson.

    `finite`: the caller knows every float in `value` is finite (the engine's, made from
    integers), so the output's `null`s are not looked into.
    """
    try:
        out = orjson.dumps(value, option=_SORTED if sort_keys else _PLAIN)
    except orjson.JSONEncodeError:
        return _json_text(value, sort_keys, False, default).encode("utf-8")
    if _same_as_json(value, out, finite):
        return out
    return _json_text(value, sort_keys, False, default).encode("utf-8")


def ascii_json(value: Any, *, finite: bool = False) -> str:
    """json.dumps(value, separators=(",", ":")): compact, non-ASCII escaped, made by orjson."""
    try:
        out = orjson.dumps(value, option=_PLAIN)
    except orjson.JSONEncodeError:
        return _json_text(value, False, True, None)
    # json.dumps escapes DEL and all that is not ASCII here; orjson writes them as they are.
    if out.isascii() and b"\x7f" not in out and _same_as_json(value, out, finite):
        return out.decode("ascii")
    return _json_text(value, False, True, None)


def _same_as_json(value: Any, out: bytes, finite: bool) -> bool:
    """Whether orjson's `out` is json.dumps's bytes for `value` (the module's docstring says why)."""
    if b"e-" in out or b"0.0000" in out:
        return False  # a float under 1e-4 perhaps (or text that reads so): json.dumps decides
    nulls = out.count(b"null")
    if not nulls or finite:
        return True
    # Each None and each NaN or infinity is one `null`, and text may hold more: as many as the
    # Nones counted leaves no room for a NaN; else every float is looked at.
    return nulls == _nones(value) or _all_finite(value)


def _nones(value: Any) -> int:
    """The Nones among an object's values and its objects' values (where a line keeps them)."""
    if type(value) is not dict:
        return 0
    count = 0
    for item in value.values():
        if item is None:
            count += 1
        elif type(item) is dict:
            count += [*item.values()].count(None)
    return count


def _all_finite(value: Any) -> bool:
    """Whether no float in `value` (its lists, tuples and dicts too) is NaN or infinite."""
    stack = [value]
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind is dict:
            stack.extend(item.values())
        elif kind is list or kind is tuple:
            stack.extend(item)
        elif kind is float and not math.isfinite(item):
            return False
    return True
