"""The README's examples are real: its Python sessions, conformance exchanges and demo excerpt."""

from __future__ import annotations

import dataclasses
import doctest
import io
import json
import re
from pathlib import Path
from typing import Any

import pytest

from clients.demo import DEFAULT_SEED, run_local_demo
from referee.conformance import OPS, answer
from referee.match import ClockSettings
from referee.match.records import RECORD_KINDS
from referee.rules import OFFICIAL, new_game, state_to_json
from referee.rules.events import EVENT_TYPES
from referee.wire.tichu.v1 import referee_pb2 as pb

README = Path(__file__).resolve().parent.parent / "README.md"
BLOCK = re.compile(r"^```(\w+)\n(.*?)^```$", re.MULTILINE | re.DOTALL)
EXCHANGE = re.compile(r"^\$ echo '(.*)' \| tichu rules\n(.*)$", re.MULTILINE)


def blocks(language: str) -> list[tuple[int, str]]:
    """The README's fenced blocks in a language: (line number of the first line, text)."""
    text = README.read_text(encoding="utf-8")
    found = []
    for match in BLOCK.finditer(text):
        if match[1] == language:
            found.append((text.count("\n", 0, match.start(2)), match[2]))
    return found


def test_the_python_examples_run_as_shown() -> None:
    parser = doctest.DocTestParser()
    runner = doctest.DocTestRunner()
    globs: dict[str, Any] = {}  # one namespace: later examples use names from earlier ones
    examples = 0
    for lineno, text in blocks("python"):
        test = parser.get_doctest(text, globs, f"README.md:{lineno + 1}", str(README), lineno)
        examples += len(test.examples)
        runner.run(test, clear_globs=False)
        globs = test.globs  # DocTest works on a copy
    assert examples >= 20
    assert runner.failures == 0, "a README example differs from the real output (see above)"


def exchanges() -> list[tuple[str, str]]:
    """Every `$ echo '<request>' | tichu rules` in the README with the answer shown under it."""
    return [pair for _, text in blocks("console") for pair in EXCHANGE.findall(text)]


def test_the_readme_shows_every_op() -> None:
    shown = {json.loads(request).get("op") for request, _ in exchanges() if request.startswith("{")}
    assert set(OPS) <= shown


@pytest.mark.parametrize(("request_", "expected"), exchanges())
def test_each_conformance_answer_is_real(request_: str, expected: str) -> None:
    assert json.dumps(answer(request_)) == expected


def test_the_local_demo_excerpt_is_how_it_begins() -> None:
    (excerpt,) = [text for _, text in blocks("text") if text.startswith("Tichu demo, in this process:")]
    out = io.StringIO()
    assert run_local_demo(DEFAULT_SEED, out) == 0
    # The match's creation and start are dated: the excerpt shows them as the demo printed them once.
    dated = re.compile(r"\d{4}-\d\d-\d\dT[\d:.]+Z")
    assert dated.sub("DATE", out.getvalue()).startswith(dated.sub("DATE", excerpt))


def section(title: str) -> str:
    """The text of one README section (its subsections included)."""
    text = README.read_text(encoding="utf-8")
    return text.split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]


def documented(title: str) -> set[str]:
    """The names in backticks at the start of the table rows of one README section."""
    return set(re.findall(r"^\| `([a-z_0-9]+)` \|", section(title), re.MULTILINE))


def test_every_state_field_is_documented() -> None:
    assert documented("State JSON (`tichu-state/1`)") == set(state_to_json(new_game()[0]))


def test_every_event_type_is_documented() -> None:
    assert documented("Event JSON") == set(EVENT_TYPES)


def test_every_rules_flag_is_documented() -> None:
    assert documented("Rules configuration") == set(OFFICIAL.to_json())


def test_every_clock_option_is_documented_with_its_default() -> None:
    rows = re.findall(r"^\| `(--[a-z-]+)` \| ([^|]+?) \|", section("Running a referee"), re.MULTILINE)
    expected = {}
    for f in dataclasses.fields(ClockSettings):
        default = getattr(ClockSettings(), f.name)
        expected["--" + f.name.replace("_", "-")] = "off" if default is False else str(default)
    assert dict(rows) == expected


def test_every_decision_kind_and_rejection_reason_is_documented() -> None:
    rows = set(re.findall(r"^\| `([A-Z_]+)` \|", section("The protocol"), re.MULTILINE))
    kinds = {v.name.removeprefix("DECISION_KIND_") for v in pb.DecisionKind.DESCRIPTOR.values}
    reasons = {v.name.removeprefix("REJECTION_REASON_") for v in pb.RejectionReason.DESCRIPTOR.values}
    assert (kinds | reasons) - {"UNSPECIFIED"} <= rows


def test_every_replay_record_kind_is_documented() -> None:
    assert documented("Replays") == RECORD_KINDS
    written = {
        json.loads(line)["kind"]
        for path in (Path(__file__).parent.parent / "replays" / "golden").glob("*.jsonl")
        for line in path.read_text(encoding="utf-8").splitlines()
    }
    assert written <= RECORD_KINDS and len(written) >= 7
