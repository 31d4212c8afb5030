"""How a match ended, as one value from the core to the wire and the replay: its Termination and
Outcome, each scored round from the state's history, and old replays' results read as before."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from referee.match.outcome import Outcome, RoundScore, Termination, round_scores
from referee.match.records import ResultRecord, record_from_json
from referee.replay import read_replay
from referee.server.codec import result_from_proto, result_to_proto
from tests.match.test_records import GAMES, game

COMPAT = Path(__file__).parents[1] / "replay" / "compat"


def test_each_way_a_match_ends_names_its_termination_winner_and_forfeit() -> None:
    assert Outcome.played_out(1, (300, 1010)) == Outcome(
        Termination.PLAYED_OUT, 1, None, "team B won 1010 to 300"
    )
    assert Outcome.played_out(None, (1000, 1000)) == Outcome(Termination.PLAYED_OUT, None, None, "draw")
    assert Outcome.no_show([1, 3], 4_000) == Outcome(
        Termination.NO_SHOW, 0, 1, "seat 1, 3 did not connect within 4 s: team B forfeits"
    )
    assert Outcome.no_show([0, 1], 4_000).winner is None
    assert Outcome.withdrawn(2, "its process ended").forfeiting_team == 0
    assert Outcome.out_of_time(3, 4, 3).reason == (
        "seat 3 ran out of time 4 times (at most 3 allowed): team B forfeits"
    )
    error = Outcome.referee_error(RuntimeError("boom"))
    assert (error.termination, error.winner, error.forfeit) == (Termination.REFEREE_ERROR, None, False)
    assert [t.ends_unfinished_game for t in Termination] == [False, True, True, True, True]


def test_round_scores_come_from_the_history_and_add_up_to_the_totals() -> None:
    assert round_scores([(100, 0), (-100, 300)], (0, 300)) == (
        RoundScore(0, (100, 0), (100, 0)),
        RoundScore(1, (-100, 300), (0, 300)),
    )
    assert round_scores([], (0, 0)) == ()


@pytest.mark.parametrize("name", GAMES)
def test_the_result_carries_the_outcome_and_the_rounds_to_the_record_and_through_the_wire(name: str) -> None:
    run = game(name)
    result = run.match.result
    assert result is not None and result.outcome.termination is Termination.PLAYED_OUT
    state = run.match.state
    assert [r.points for r in result.round_scores] == list(state.history)
    assert result.round_scores[-1].totals == result.scores == tuple(state.scores)
    (record,) = [r for r in run.records if isinstance(r, ResultRecord)]
    assert record.outcome == result.outcome and record.termination is Termination.PLAYED_OUT
    assert record.to_json()["termination"] == "played_out"
    # The wire result decodes into the same value.
    assert result_from_proto(result_to_proto(result)) == result


def test_an_older_referees_wire_result_reads_its_termination_from_the_rest() -> None:
    result = game(GAMES[0]).match.result
    assert result is not None
    wire = result_to_proto(result)
    wire.ClearField("termination")
    assert result_from_proto(wire).outcome == result.outcome


@pytest.mark.parametrize(
    ("name", "termination", "winner", "forfeiting"),
    [
        ("release-0.1-forfeit.jsonl.gz", Termination.OUT_OF_TIME, 0, 1),
        ("release-0.1-demo.jsonl.gz", Termination.PLAYED_OUT, 0, None),
    ],
)
def test_an_old_replays_result_reads_as_before_with_its_outcome_read_back(
    name: str, termination: Termination, winner: int | None, forfeiting: int | None
) -> None:
    path = COMPAT / name
    replay = read_replay(path)
    assert replay.result is not None and replay.result.termination is None
    outcome = replay.result.outcome
    assert (outcome.termination, outcome.forfeiting_team) == (termination, forfeiting)
    assert outcome.winner == winner or termination is Termination.PLAYED_OUT
    last = json.loads(gzip.decompress(path.read_bytes()).splitlines()[-1])
    assert "termination" not in last and replay.result.to_json() == last


def test_no_winner_and_no_forfeit_are_minus_one_in_the_json_and_none_in_python() -> None:
    outcome = Outcome.no_show([0, 1, 2, 3], 1_000)
    record = ResultRecord.of(
        outcome, scores=(0, 0), finished_at="", rounds=1, summary=(), absent=(0, 1, 2, 3), t_ms=1.0
    )
    data = record.to_json()
    assert (data["winner"], data["forfeiting_team"], data["termination"]) == (-1, -1, "no_show")
    assert record_from_json(data) == record and record.ends_unfinished_game
    with pytest.raises(Exception, match="termination"):
        record_from_json({**data, "termination": "resigned"})


def test_legacy_results_are_told_apart_without_a_termination() -> None:
    assert Outcome.of_legacy(
        1, 0, "seat 2 was gone before it connected (x): team A forfeits", [2]
    ).termination is (Termination.WITHDRAWN)
    assert Outcome.of_legacy(None, None, "no contest: seats 0, 1 did not connect", [0, 1]).termination is (
        Termination.NO_SHOW
    )
    assert (
        Outcome.of_legacy(None, None, "referee error: KeyError(3)", []).termination
        is Termination.REFEREE_ERROR
    )
    assert Outcome.of_legacy(None, None, "draw", []).termination is Termination.PLAYED_OUT
