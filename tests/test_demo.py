"""`tichu demo`: one whole game between random players, printed, with a winner."""

from __future__ import annotations

import functools
import io
import re

import pytest

from referee import demo
from referee.demo import DEFAULT_SEED, SEED_ENV, RandomPlayer, run_demo
from referee.rules import OFFICIAL, GrandTichu, Phase, new_game, observe, to_act

TOTALS = re.compile(r"totals A (-?\d+), B (-?\d+)$")


def run_into_buffer(seed: int | None = None) -> tuple[int, str]:
    """Run the demo into a buffer: its exit code and what it printed."""
    out = io.StringIO()
    code = run_demo(seed, out)
    return code, out.getvalue()


@functools.cache
def demo_output(seed: int = DEFAULT_SEED) -> tuple[int, str]:
    """The demo's result for a seed, run once per test session (a game takes about a second)."""
    return run_into_buffer(seed)


def test_demo_plays_a_game_to_the_target_and_names_the_winner() -> None:
    code, text = demo_output()
    assert code == 0
    lines = text.splitlines()
    assert lines[0].startswith("Tichu demo:")
    assert f"Seed {DEFAULT_SEED}" in lines[1]
    winner = re.fullmatch(r"Game over: team ([AB]) wins (-?\d+) to (-?\d+)\.", lines[-2])
    assert winner is not None, lines[-2:]
    assert re.fullmatch(r"\d+ rounds played\.", lines[-1])
    # The last round's score line holds the final totals, which the winner line repeats.
    totals = [m for line in lines if (m := TOTALS.search(line))]
    assert totals
    a, b = int(totals[-1][1]), int(totals[-1][2])
    assert max(a, b) >= OFFICIAL.target_score and a != b
    assert winner[1] == ("A" if a > b else "B")
    assert (int(winner[2]), int(winner[3])) == (max(a, b), min(a, b))
    # Every round prints its calls, its tricks, who went out and its score.
    rounds = sum(line.startswith("Round ") for line in lines)
    assert rounds == len(totals) == int(lines[-1].split()[0])
    for marker in ("  Calls: ", "  Trick  1: ", "  Out: ", "  Score: "):
        assert sum(line.startswith(marker) for line in lines) == rounds, marker


def test_demo_is_deterministic_and_the_seed_changes_the_game() -> None:
    assert run_into_buffer(5) == demo_output(5)
    assert demo_output(5)[1] != demo_output(6)[1]


def test_demo_reads_the_seed_from_the_environment(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv(SEED_ENV, "6")
    assert run_demo() == 0
    assert capsys.readouterr().out == demo_output(6)[1]
    monkeypatch.setenv(SEED_ENV, "table-3")  # the engine takes string seeds too
    code, text = run_into_buffer()
    assert code == 0
    assert "Seed table-3 " in text


def test_demo_trick_lines_name_plays_winners_and_points() -> None:
    _, text = demo_output()
    tricks = [line for line in text.splitlines() if line.startswith("  Trick ")]
    assert tricks
    for line in tricks:
        assert re.match(r"  Trick +\d+: P\d ", line), line
        assert re.search(
            r" -> (P\d wins -?\d+ pts|P\d wins with the Dragon, gives -?\d+ pts to P\d|round over.*)$", line
        ), line


def test_demo_stops_with_an_error_at_the_round_bound(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(demo, "MAX_ROUNDS", 2)
    code, text = run_into_buffer()
    assert code == 1
    assert "Game over" not in text
    assert "safety bound" in capsys.readouterr().err


def test_random_player_answers_grand_tichu_with_a_rare_yes() -> None:
    state, _ = new_game(OFFICIAL, 1)
    assert state.phase is Phase.GRAND_TICHU
    seat = to_act(state)[0]
    answers = [RandomPlayer(f"p{i}").decide(observe(state, seat)) for i in range(400)]
    calls = sum(isinstance(a, GrandTichu) and a.call for a in answers)
    assert 0 < calls < 60  # about 5 %


def test_random_players_never_call_tichu_spontaneously() -> None:
    _, text = demo_output()
    assert " calls " not in text  # a call during play would be printed inside a trick line
