"""`tichu demo --local`: one whole game between the sample bots in one process, told round by round."""

from __future__ import annotations

import functools
import io
import re
import subprocess
import sys

import pytest

from clients import demo
from clients.demo import DEFAULT_SEED, SEED_ENV, run_local_demo
from referee.rules import OFFICIAL

TOTALS = re.compile(r"  Totals: A (-?\d+), B (-?\d+)$")
THINK = re.compile(r" \(\d+ ms\)$")


@functools.cache
def demo_output(seed: str = DEFAULT_SEED) -> tuple[int, str]:
    """The demo's exit code and text for a seed, run once per test session."""
    out = io.StringIO()
    code = run_local_demo(seed, out)
    return code, out.getvalue()


def test_the_local_demo_plays_a_game_to_the_target_and_names_the_winner() -> None:
    code, text = demo_output()
    assert code == 0
    lines = text.splitlines()
    assert lines[0].startswith("Tichu demo, in this process: seed 2024")
    assert re.fullmatch(r"\d+ rounds played in \d+\.\d s\.", lines[-1])
    # It is told by the replay renderer of `tichu replay show`: rounds, tricks, scores, the result.
    rounds = sum(line.startswith("== Round ") for line in lines)
    assert rounds == int(lines[-1].split()[0])
    totals = [(int(m[1]), int(m[2])) for line in lines if (m := TOTALS.match(line))]
    assert len(totals) == rounds
    a, b = totals[-1]
    assert max(a, b) >= OFFICIAL.target_score and a != b
    winner = "A" if a > b else "B"
    assert f"Game over: team {winner} wins (A {a}, B {b})" in lines
    assert f"Result: team {winner} wins, A {a} - B {b}" in lines
    assert any("takes the trick" in line for line in lines)
    assert any(line.startswith("seat bot") for line in lines)  # the summary table


def test_the_local_demo_is_deterministic_and_the_seed_changes_the_game() -> None:
    def game(text: str) -> list[str]:
        # The moves, without what depends on the clock: the dates, think times and their summary.
        lines = text.splitlines()
        first = next(i for i, line in enumerate(lines) if line.startswith("== Round "))
        last = next(i for i, line in enumerate(lines) if line.startswith("Result: "))
        return [THINK.sub("", line) for line in lines[first:last]]

    again = io.StringIO()
    assert run_local_demo("5", again) == 0
    assert game(again.getvalue()) == game(demo_output("5")[1])
    assert game(demo_output("5")[1]) != game(demo_output("6")[1])


def test_the_local_demo_reads_the_seed_from_the_environment(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv(SEED_ENV, "table-3")  # the engine takes string seeds too
    assert run_local_demo() == 0
    assert "seed table-3 " in capsys.readouterr().out


def test_tichu_demo_local_runs_it_from_the_command_line() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "referee.cli", "demo", "--local", "--seed", "7"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert (
        done.stdout.splitlines()[0]
        == "Tichu demo, in this process: seed 7 (set TICHU_DEMO_SEED or --seed for another game)"
    )
    assert "Game over: team " in done.stdout


def test_the_local_demo_stops_quietly_when_its_reader_goes(monkeypatch: pytest.MonkeyPatch) -> None:
    class Closed(io.StringIO):
        def write(self, text: str) -> int:
            raise BrokenPipeError

    assert demo.run_local_demo("1", Closed()) == 1
