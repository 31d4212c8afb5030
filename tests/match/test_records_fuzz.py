"""Every malformed record line is a RecordError that names what is wrong, never another exception
(issue 23, part 5): records from real replays of every release, one field replaced by any JSON."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from referee.match.fields import RecordError
from referee.match.records import header_from_json, record_from_json

COMPAT = Path(__file__).parent.parent / "replay" / "compat"


def _lines() -> list[dict[str, Any]]:
    """Every line of the kept replays of earlier releases: each kind of record, as written."""
    lines: list[dict[str, Any]] = []
    for path in sorted(COMPAT.glob("*.jsonl.gz")):
        lines += [json.loads(line) for line in gzip.decompress(path.read_bytes()).decode().splitlines()]
    return lines


LINES = _lines()
KINDS = sorted({line["kind"] for line in LINES})
# One example of each kind, and each kind's fields.
EXAMPLES = [next(line for line in LINES if line["kind"] == kind) for kind in KINDS]

NUMBERS = st.integers(-(2**70), 2**70) | st.floats(allow_nan=False)
SCALARS = st.none() | st.booleans() | NUMBERS | st.text(max_size=8)
JSON_VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=12,
)


def _read(line: dict[str, Any]) -> object:
    return header_from_json(line) if line.get("kind") == "header" else record_from_json(line)


def test_the_kept_replays_hold_every_kind_the_fuzz_needs() -> None:
    assert {"header", "event", "decision", "result"} <= set(KINDS), KINDS
    for line in EXAMPLES:
        _read(line)  # each example reads as it is


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_a_field_replaced_by_any_json_reads_or_is_a_record_error(data: st.DataObject) -> None:
    line = dict(data.draw(st.sampled_from(EXAMPLES), label="record"))
    key = data.draw(st.sampled_from(sorted(line)), label="field")
    if key == "kind":
        return
    line[key] = data.draw(JSON_VALUES, label="value")
    try:
        _read(line)
    except RecordError as error:
        assert str(error), line


@settings(max_examples=500, deadline=None)
@given(st.data())
def test_a_field_removed_or_nested_values_replaced_reads_or_is_a_record_error(data: st.DataObject) -> None:
    line = json.loads(json.dumps(data.draw(st.sampled_from(EXAMPLES), label="record")))
    key = data.draw(st.sampled_from(sorted(k for k in line if k != "kind")), label="field")
    value = line[key]
    if isinstance(value, list) and value:
        index = data.draw(st.integers(0, len(value) - 1), label="index")
        value[index] = data.draw(JSON_VALUES, label="item")
    elif isinstance(value, dict) and value:
        inner = data.draw(st.sampled_from(sorted(value)), label="inner")
        value[inner] = data.draw(JSON_VALUES, label="inner value")
    else:
        del line[key]
    try:
        _read(line)
    except RecordError as error:
        assert str(error), line
