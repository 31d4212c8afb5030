"""The kit's graded report: one outcome per check, as terminal text or JSON."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any


def printable(text: str) -> str:
    """Text with control characters shown as escapes, so that a bot's words cannot drive the terminal."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


class Grade(StrEnum):
    """How a check came out."""

    PASSED = "passed"
    FAILED = "failed"
    NOT_REACHED = "not_reached"  # the situation never arose (the bot took another path, or stalled early)


@dataclass(frozen=True, slots=True)
class CheckResult:
    """One check's grade: the verdict, the fault found (a short name), what the bot did, the rule."""

    check: str
    title: str
    verdict: Grade
    detail: str = ""
    fault: str = ""  # e.g. "never_reconnected", "illegal_answer", "answered_twice"
    rule: str = ""  # the RULES.md rule ID the referee named, if any
    traceback: tuple[str, ...] = ()  # the bot's own traceback lines, when one of its methods raised

    def to_json(self) -> dict[str, Any]:
        """The outcome as a JSON object."""
        return {
            "check": self.check,
            "title": self.title,
            "verdict": self.verdict.value,
            "fault": self.fault,
            "rule": self.rule,
            "detail": self.detail,
            "traceback": list(self.traceback),
        }


@dataclass(slots=True)
class Report:
    """Every check's outcome for one bot."""

    bot: str
    outcomes: list[CheckResult] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        """True only when every check passed (a check not reached is not a pass)."""
        return bool(self.outcomes) and all(o.verdict is Grade.PASSED for o in self.outcomes)

    @property
    def exit_code(self) -> int:
        """0 when every check passed, else 1."""
        return 0 if self.passed else 1

    def outcome(self, check: str) -> CheckResult:
        """The outcome of one check; KeyError if it did not run."""
        for found in self.outcomes:
            if found.check == check:
                return found
        raise KeyError(check)

    def to_json(self) -> dict[str, Any]:
        """The report as a JSON object."""
        counts = {v.value: sum(o.verdict is v for o in self.outcomes) for v in Grade}
        return {
            "format": "tichu-check-bot/1",
            "bot": self.bot,
            "passed": self.passed,
            "counts": counts,
            "checks": [o.to_json() for o in self.outcomes],
        }

    def write_json(self, path: Path) -> None:
        """Write the JSON report to a file."""
        path.write_text(json.dumps(self.to_json(), indent=2) + "\n", encoding="utf-8")

    def render(self) -> str:
        """The report for a terminal: one line per check, then what went wrong under it."""
        marks = {Grade.PASSED: "PASS", Grade.FAILED: "FAIL", Grade.NOT_REACHED: "----"}
        lines = [f"tichu check-bot: {printable(self.bot)}"]
        width = max((len(o.check) for o in self.outcomes), default=0)
        for o in self.outcomes:
            lines.append(f"  {marks[o.verdict]}  {o.check:<{width}}  {o.title}")
            if o.verdict is not Grade.PASSED:
                label = " ".join(part for part in (o.fault, o.rule and f"({o.rule})") if part)
                lines.append(
                    f"        {label}: {printable(o.detail)}" if label else f"        {printable(o.detail)}"
                )
                lines.extend(f"          {printable(line)}" for line in o.traceback)
        counts = {v: sum(o.verdict is v for o in self.outcomes) for v in Grade}
        lines.append(
            f"{counts[Grade.PASSED]} passed, {counts[Grade.FAILED]} failed, "
            f"{counts[Grade.NOT_REACHED]} not reached: "
            + ("the bot passes" if self.passed else "the bot does not pass")
        )
        return "\n".join(lines)
