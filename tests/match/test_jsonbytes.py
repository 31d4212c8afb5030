"""orjson's bytes are json.dumps's: for any JSON value a line can hold, in every form the referee
makes (the chain's sorted form, a replay line, the wire's ASCII form), and the fallbacks to
json.dumps where orjson would differ."""

from __future__ import annotations

import json
import math
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from referee.match import jsonbytes
from referee.match.digests import canonical_json
from referee.match.jsonbytes import ascii_json, compact_json
from referee.replay.format import canonical_line

# Text with any code point but lone surrogates (UTF-8 cannot hold those: both encoders refuse
# them, tested below), control characters, DEL, U+2028 and U+2029 made likely.
TEXT = st.text(
    st.one_of(
        st.characters(codec="utf-8"),
        st.sampled_from(["\x00", "\x1f", "\x7f", "\u2028", "\u2029", '"', "\\", "\n", "\ufeff", "é"]),
    )
)
# Also text that looks like the orjson spellings the checks look for.
KEYS = st.one_of(TEXT, st.sampled_from(["null", "e-5", "0.0000", "t_ms", "kind"]))
INTS = st.one_of(
    st.integers(), st.integers(-(2**64), 2**64), st.sampled_from([2**63, 2**64 - 1, -(2**63) - 1])
)
FLOATS = st.one_of(
    st.floats(),  # NaN and the infinities too
    st.floats(min_value=-1e-3, max_value=1e-3),
    st.floats(min_value=1e15, max_value=1e17),
    st.floats(min_value=0, max_value=1e7).map(lambda x: round(x, 1)),  # a replay's times
)
SCALARS = st.one_of(st.none(), st.booleans(), INTS, FLOATS, TEXT, st.sampled_from(["null", "1e-05"]))
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=6),
        st.lists(inner, max_size=4).map(tuple),
        st.dictionaries(KEYS, inner, max_size=6),
    ),
    max_leaves=40,
)


def old_canonical(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def old_line(value: Any) -> bytes:
    return (json.dumps(value, separators=(",", ":"), ensure_ascii=False) + "\n").encode()


def old_ascii(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(VALUES)
@example({"t_ms": 1e-05, "private_to": None})
@example({"private_to": None, "t_ms": math.nan})
@example({"kind": "event", "event": {"x": None, "y": [math.inf]}})
@example([1.5e-7, 1e16, 5e-324, -0.0, 1e-4, 9.999999999999999e-05])
@example({"a": "\u2028\x7f\x00\x1f", "\u2029": 2**64 - 1})
def test_orjson_bytes_are_json_dumps_bytes(value: Any) -> None:
    assert canonical_json(value) == old_canonical(value)
    assert canonical_line(value) == old_line(value)
    assert ascii_json(value) == old_ascii(value)
    assert compact_json(value, default=str) == json.dumps(
        value, separators=(",", ":"), ensure_ascii=False, default=str
    ).encode("utf-8")


@settings(max_examples=500, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False))
def test_orjson_spells_a_float_as_json_dumps_does_from_1e_4_on(number: float) -> None:
    # The checks redo only floats under 1e-4 and non-finite ones: all others must be spelled alike
    # by orjson itself (not through a fallback), or an orjson upgrade changed its spelling.
    if number != 0 and abs(number) < 1e-4:
        return
    out = orjson.dumps(number)
    assert out == json.dumps(number).encode()
    assert jsonbytes._same_as_json(number, out, False)


@settings(max_examples=300, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False).filter(lambda x: x != 0 and abs(x) < 1e-4))
def test_a_float_under_1e_4_is_caught_in_orjson_bytes(number: float) -> None:
    # Whatever orjson writes for it, the output shows `e-` or `0.0000`, so json.dumps redoes it.
    assert not jsonbytes._same_as_json([number], orjson.dumps([number]), False)


@given(st.dictionaries(st.sampled_from(["a", "b", "c"]), st.one_of(st.none(), st.floats()), min_size=1))
def test_finite_skips_only_the_look_for_nan(value: dict[str, Any]) -> None:
    # `finite` is a promise: with it kept, the bytes are json.dumps's.
    if all(v is None or math.isfinite(v) for v in value.values()):
        assert ascii_json(value, finite=True) == old_ascii(value)
        assert compact_json(value, finite=True) == old_line(value)[:-1]


@pytest.mark.parametrize(
    "value",
    [{1: "int key"}, {"k": 2**70}, {None: 1, True: 2}, [-(2**64)], {"s": "\ud800"}, {"\udfff": 1}],
    ids=["int-key", "big-int", "none-and-bool-keys", "big-negative", "surrogate", "surrogate-key"],
)
def test_what_orjson_refuses_is_json_dumps_s_to_encode_or_refuse(value: Any) -> None:
    try:
        expected: bytes | type[Exception] = old_canonical(value)
    except (TypeError, ValueError) as error:  # UnicodeEncodeError is a ValueError
        expected = type(error)
    if isinstance(expected, bytes):
        assert canonical_json(value) == expected
    else:
        with pytest.raises(expected):
            canonical_json(value)
    assert ascii_json(value) == old_ascii(value)  # escaped as \\udXXX: no encoding to fail


def test_subclasses_go_to_json_dumps() -> None:
    class Name(str):
        pass

    class Row(dict[str, Any]):
        pass

    value = {"who": Name("x"), "row": Row(b=1, a=2), Name("key"): [Name("y")]}
    assert canonical_json(value) == old_canonical(value)
    assert canonical_line(value) == old_line(value)
