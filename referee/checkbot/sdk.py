"""Grading what the Python SDK hid: the answers it had to replace, and the exceptions it caught.

The SDK replaces a bot's exception or illegal answer with a safe one, so the referee sees a good
bot. The kit asks the SDK (SDK_REPORT_ENV) to write each replacement to the bot's standard error
and fails the check on the first, naming the method, the situation, the problem and the bot's own
traceback lines; `tichu check-bot --lenient` grades as the referee sees it.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from referee.bot_commands import SDK_REPORT_ENV, SDK_REPORT_PREFIX
from referee.checkbot.report import CheckResult, Grade

# The environment that asks the SDK for its reports.
REPORTING = {SDK_REPORT_ENV: "stderr"}


def replacements(stderr: Path) -> list[dict[str, Any]]:
    """The replacements the SDK reported in a bot's standard error, in order."""
    try:
        text = stderr.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    found = []
    for line in text.splitlines():
        if line.startswith(SDK_REPORT_PREFIX):
            try:
                report = json.loads(line[len(SDK_REPORT_PREFIX) :])
            except ValueError:
                continue
            if isinstance(report, dict):
                found.append(report)
    return found


def graded(outcome: CheckResult, stderr: Path) -> CheckResult:
    """The outcome, failed on the first answer the SDK replaced during the check, if any."""
    found = replacements(stderr)
    if not found:
        return outcome
    first = found[0]
    method = str(first.get("method", "?"))
    answer = f" (it returned {first['answer']})" if first.get("answer") else ""
    sent = f"; the SDK sent {first['sent']} instead" if first.get("sent") else ""
    more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
    detail = f"{method}(): {first.get('problem', '')}{answer}, in {first.get('situation', '')}{sent}{more}"
    return replace(
        outcome,
        verdict=Grade.FAILED,
        detail=detail,
        fault=str(first.get("fault") or "answer_replaced"),
        rule=str(first.get("rule") or ""),
        traceback=tuple(str(line) for line in first.get("traceback") or ()),
    )
