"""`tichu check-bot`: the sample bots pass every check; bots with one fault each fail, named.

The faulty bots (tests/checkbot/faulty_bot.py) are not part of the kit. Each runs only the checks
its fault shows in, to keep the runtime modest; the clocks are the kit's defaults, which a busy
machine meets easily (a good bot answers in milliseconds).
"""

from __future__ import annotations

import json
import sys
from dataclasses import replace

import pytest

from referee.bot_commands import filled
from referee.checkbot.checks import all_checks
from referee.checkbot.kit import Settings, bot_command, run_kit
from referee.checkbot.report import Grade, Report

# Several checks at once: most of a check is waiting (held requests, deadlines), not computing.
SETTINGS = Settings(parallel=4)


def faulty(mode: str) -> list[str]:
    return [sys.executable, "-m", "tests.checkbot.faulty_bot", mode, "{server}", "{token}"]


def failed(report: Report, check: str) -> tuple[str, str, str]:
    outcome = report.outcome(check)
    assert outcome.verdict is Grade.FAILED, report.render()
    return outcome.fault, outcome.rule, outcome.detail


@pytest.mark.parametrize(
    "spec",
    [
        "clients.random_bot:RandomBot",
        "clients.heuristic_bot:HeuristicBot",
        "clients.showcase_bot:ShowcaseBot",
    ],
)
def test_the_sample_bots_pass_every_check(spec: str) -> None:
    report = run_kit(bot_command(spec), spec, SETTINGS)
    assert report.passed, report.render()
    assert report.exit_code == 0 and len(report.outcomes) == len(all_checks())


@pytest.mark.parametrize(
    ("mode", "check", "fault", "rule"),
    [
        ("never_reconnects", "dropped_stream", "never_reconnected", ""),
        ("bad_windows", "bomb_window", "illegal_answer", "R-BOMB-"),
        ("crashes_on_duplicate", "duplicates", "crashed_on_duplicate", ""),
        ("answers_twice", "duplicates", "answered_twice", ""),
        ("silent_exchange", "opening", "no_answer", "R-DEF-1"),
        ("resends_stale", "stale_request", "answered_stale_request", ""),
    ],
)
def test_a_faulty_bot_fails_the_check_of_its_fault_naming_it(
    mode: str, check: str, fault: str, rule: str
) -> None:
    report = run_kit(faulty(mode), mode, SETTINGS, only=[check])
    found, named, detail = failed(report, check)
    assert found == fault, report.render()
    assert named.startswith(rule), report.render()
    assert detail and report.exit_code == 1


def test_a_bot_that_ignores_the_wish_fails_the_wish_check_with_the_rule() -> None:
    report = run_kit(faulty("ignores_wish"), "ignores_wish", SETTINGS, only=["wish"])
    fault, rule, detail = failed(report, "wish")
    assert fault == "illegal_answer" and rule.startswith("R-WISH-"), detail
    assert "play Kp" in detail or "Kp" in detail, detail
    assert report.exit_code == 1


@pytest.mark.parametrize(
    ("bot", "checks", "fault", "rule", "words"),
    [
        ("NoPlay", ["wish"], "method_missing", "", "play(): is missing: NoPlay must define play(obs)"),
        (
            "RaisesInExchange",
            ["opening"],
            "bot_raised",
            "",
            "exchange(): raised RuntimeError: no gifts chosen for a hand of 14, in the EXCHANGE decision",
        ),
        ("IgnoresWish", ["wish"], "answer_replaced", "R-WISH-4", "play(): pass is not legal now"),
    ],
)
def test_what_the_sdk_replaced_fails_the_check_naming_the_method_situation_and_cause(
    bot: str, checks: list[str], fault: str, rule: str, words: str
) -> None:
    spec = f"tests.checkbot.sdk_bots:{bot}"
    report = run_kit(bot_command(spec), spec, SETTINGS, only=checks)
    outcome = report.outcome(checks[0])
    assert outcome.verdict is Grade.FAILED and outcome.fault == fault, report.render()
    assert outcome.rule == rule and words in outcome.detail, report.render()
    assert "the SDK sent" in outcome.detail, report.render()
    if fault == "bot_raised":  # the bot's own traceback lines, down to where it raised
        assert any("sdk_bots.py" in line and "choose_gifts" in line for line in outcome.traceback)
        assert not any("clients/bot.py" in line for line in outcome.traceback)
        assert outcome.traceback[-1].strip().startswith("raise RuntimeError")
    # --lenient grades what the referee saw: the SDK's replacement was a legal answer.
    lenient = run_kit(bot_command(spec), spec, replace(SETTINGS, lenient=True), only=checks)
    assert lenient.passed, lenient.render()


def test_the_command_line_prints_the_report_writes_json_and_exits_by_it(
    tmp_path: pytest.TempPathFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    from pathlib import Path

    from referee.cli import main

    out = Path(str(tmp_path)) / "report.json"
    good = main(["check-bot", "--only", "dog", "--json", str(out), "clients.random_bot:RandomBot"])
    printed = capsys.readouterr().out
    assert good == 0 and "PASS  dog" in printed, printed
    data = json.loads(out.read_text())
    assert data["passed"] is True and [c["check"] for c in data["checks"]] == ["dog"]
    bad = main(["check-bot", "--only", "wish", "--", *faulty("ignores_wish")])
    printed = capsys.readouterr().out
    assert bad == 1 and "FAIL  wish" in printed and "illegal_answer (R-WISH-" in printed, printed


def test_the_command_line_refuses_a_bot_given_twice_or_not_at_all(capsys: pytest.CaptureFixture[str]) -> None:
    from referee.cli import main

    assert main(["check-bot"]) == 2
    assert main(["check-bot", "clients.random_bot:RandomBot", "--", "node", "bot.js"]) == 2
    assert main(["check-bot", "--only", "nonsense", "clients.random_bot:RandomBot"]) == 2
    assert "unknown check" in capsys.readouterr().err


def test_a_command_gets_its_placeholders_and_the_same_values_in_its_environment() -> None:
    command = [sys.executable, "-m", "tests.checkbot.faulty_bot", "plain", "env", "env", "{seat}"]
    report = run_kit(command, "plain", SETTINGS, only=["dog", "bomb_window"])
    assert report.passed, report.render()  # seat 0 for the Dog, seat 1 for the window


def test_placeholders_are_filled_wherever_they_stand() -> None:
    values = {"server": "127.0.0.1:5", "token": "-tok", "seat": "2", "ca_file": ""}
    assert filled(["bot", "--token={token}", "{server}", "seat{seat}", "{ca_file}"], values) == [
        "bot",
        "--token=-tok",
        "127.0.0.1:5",
        "seat2",
        "",
    ]


def test_the_docs_describe_every_check() -> None:
    from tests.docs import page

    section = page("bots/check-bot.md")
    rows = {line.split("|")[1].strip().strip("`") for line in section.splitlines() if line.startswith("| `")}
    assert rows == {c.name for c in all_checks()}
