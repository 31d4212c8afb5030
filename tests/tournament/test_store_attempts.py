"""The store's history of a game: every attempt, its seats' statistics, skipped games, runs and builds."""

from __future__ import annotations

import socket
from dataclasses import replace
from pathlib import Path

import pytest

from referee.match.messages import MatchResult
from referee.match.summary import SeatSummary
from referee.tournament.config import parse_config
from referee.tournament.schedule import build_schedule
from referee.tournament.store import EntrantBuild, SeatRow, Store, StoreError, seat_rows
from tests.tournament.results import match_result
from tests.tournament.support import entrant

# Two entrants, four games: the store's schedule, with no game played by a referee here.
CONFIG = (
    '[tournament]\nseed = "s"\ngames_per_pairing = 4\n'
    + entrant("a", "clients.random_bot:RandomBot")
    + entrant("b", "clients.heuristic_bot:HeuristicBot")
)


@pytest.fixture
def store(tmp_path: Path) -> Store:
    config = parse_config(CONFIG, tmp_path / "t.toml")
    made = Store(tmp_path / "r.sqlite")
    made.initialise(config.fingerprint(), {}, build_schedule(config))
    return made


def _ids(store: Store) -> list[str]:
    return [g.game_id for g in store.games()]


def _summary(players: tuple[str, ...], decisions: int) -> tuple[SeatSummary, ...]:
    return tuple(
        SeatSummary(seat, name, f"{name}-1.{seat}", decisions + seat, 0.5, 9.25, seat, 0, 1, 1, 0, 0, 2,
                    50, 1, rate_limited=0, bank_left_ms=100)
        for seat, name in enumerate(players)
    )  # fmt: skip


def _result(summary: tuple[SeatSummary, ...] = ()) -> MatchResult:
    return match_result(300, 100, hands=2, summary=summary)


def test_attempts_across_failures_a_lost_host_and_an_interrupted_run(store: Store) -> None:
    game = _ids(store)[0]
    run = store.start_run("run", 11, host="main")
    assert store.mark_started(game, run, "m-a1", "replays/m-a1.jsonl", "host-1") == 1
    running = store.games("running")[0]
    assert (running.match_id, running.host) == ("m-a1", "host-1")
    store.add_round(game, 0, (50, 50), (50, 50))
    store.mark_pending(game, "not every seat connected within 30 s")
    pending = store.games("pending")[0]
    assert (pending.game_id, pending.match_id, pending.replay_path, pending.host) == (game, None, None, "")
    assert store.rounds([game]) == []
    assert store.mark_started(game, run, "m-a2", "replays/m-a2.jsonl", "host-2") == 2
    store.mark_pending(game, "host-2 stopped answering", "lost")
    assert store.mark_started(game, run, "m-a3", "replays/m-a3.jsonl", "host-1") == 3
    store.close()  # the run dies with attempt 3 running

    reopened = Store(store.path)
    assert reopened.run_rows()[0].ended_at is None  # a run that died has no end
    second = reopened.start_run("resume", 12, host="main")
    assert reopened.games()[0].status == "pending" and reopened.games()[0].match_id is None
    assert reopened.mark_started(game, second, "m-a4", "replays/m-a4.jsonl", "host-1") == 4
    reopened.mark_finished(game, _result())
    reopened.end_run(second, 0)
    history = [(a.attempt, a.run_id, a.match_id, a.host, a.outcome) for a in reopened.attempts(game)]
    assert history == [
        (1, run, "m-a1", "host-1", "failed"), (2, run, "m-a2", "host-2", "lost"),
        (3, run, "m-a3", "host-1", "interrupted"), (4, second, "m-a4", "host-1", "finished"),
    ]  # fmt: skip
    attempts = reopened.attempts(game)
    assert attempts[0].failure_reason == "not every seat connected within 30 s"
    assert attempts[1].failure_reason == "host-2 stopped answering"
    assert attempts[0].replay_path == "replays/m-a1.jsonl" and attempts[0].ended_at is not None
    assert attempts[2].ended_at is None and "run 2" in attempts[2].failure_reason
    assert attempts[3].ended_at is not None and attempts[3].failure_reason == ""
    row = reopened.games()[0]
    assert (row.status, row.attempts, row.match_id, row.replay_path, row.host) == (
        "finished", 4, "m-a4", "replays/m-a4.jsonl", "host-1",
    )  # fmt: skip
    assert reopened.attempts() == attempts  # the other games were never started
    with pytest.raises(ValueError, match="outcome 'finished'"):
        reopened.mark_pending(game, outcome="finished")
    reopened.close()


def test_an_attempt_that_is_not_running_keeps_no_result(store: Store) -> None:
    game = _ids(store)[1]
    run = store.start_run("run", 1, host="main")
    with pytest.raises(StoreError, match="mark_started comes first"):
        store.mark_finished(game, _result())
    store.mark_started(game, run, "m-a1", "r1", "h1")
    store.mark_pending(game, "h1 vanished", "lost")
    store.mark_started(game, run, "m-a2", "r2", "h2")
    # The vanished host's result comes in late: attempt 1 is lost, attempt 2 plays on.
    with pytest.raises(StoreError, match="attempt 1 is lost, not running"):
        store.mark_finished(game, _result(), attempt=1)
    # Closing an attempt older than the latest leaves the game running.
    store.mark_pending(game, "stale", "lost", attempt=1)
    assert store.games("running")[0].match_id == "m-a2"
    store.mark_finished(game, _result(), attempt=2)
    assert [a.outcome for a in store.attempts(game)] == ["lost", "finished"]
    with pytest.raises(StoreError, match="has no game nope"):
        store.mark_started("nope", run, "m", "r")
    store.close()


def test_seat_stats_round_trip(store: Store) -> None:
    game = store.games()[0]
    run = store.start_run("run", 1)
    attempt = store.mark_started(game.game_id, run, "m-1", "r-1", "h")
    summary = _summary(game.players, 30)
    store.mark_finished(game.game_id, _result(summary), game.players, {2: "memory limit 256 MiB exceeded"})
    stored = store.seat_stats(game.game_id)
    assert stored == store.seat_stats() and [s.entrant for s in stored] == list(game.players)
    assert [(s.game_id, s.attempt) for s in stored] == [(game.game_id, attempt)] * 4
    # The statistics the store keeps: every count, not the live referee's rate limit or bank.
    assert [s.stats.counts() for s in stored] == [line.counts() for line in summary]
    third = stored[2]
    name = game.players[2]
    assert (third.seat, third.stats.bot_name, third.stats.bot_version) == (2, name, f"{name}-1.2")
    assert (third.stats.decisions, third.stats.think_ms_p50, third.stats.think_ms_p99) == (32, 0.5, 9.25)
    assert (third.stats.timeouts, third.stats.reconnections, third.stats.points_won) == (2, 1, 50)
    assert (third.stats.tichu_calls, third.stats.tichu_won, third.stats.bombs_played) == (1, 1, 2)
    assert third.exit_reason == "memory limit 256 MiB exceeded" and stored[0].exit_reason == ""
    kept = [replace(line, rate_limited=None, bank_left_ms=None) for line in summary]
    exits = {2: "memory limit 256 MiB exceeded"}
    assert stored == seat_rows(game.game_id, attempt, game.players, kept, exits)
    assert SeatRow.of_row(stored[1].row()) == stored[1]
    other = store.games()[1]
    store.mark_started(other.game_id, run, "m-2", "r-2")
    assert store.games()[1].status == "running" and store.seat_stats(other.game_id) == []
    store.close()


def test_skipped_games_and_playing_one_after_all(store: Store) -> None:
    ids = _ids(store)
    run = store.start_run("run", 1)
    store.mark_started(ids[0], run, "m-0", "r-0")
    store.mark_skipped(ids[2:], "SPRT a vs b: H1 accepted")
    skipped = store.games("skipped")
    assert [g.game_id for g in skipped] == ids[2:]
    assert all(g.skipped and not g.finished and g.skip_reason == "SPRT a vs b: H1 accepted" for g in skipped)
    with pytest.raises(StoreError, match="is running: only a pending game can be skipped"):
        store.mark_skipped([ids[1], ids[0]], "x")
    assert store.games()[1].status == "pending"  # all or nothing
    store.mark_pending(ids[3])  # a later run decides to play it
    again = store.games()[3]
    assert (again.status, again.skip_reason, again.attempts) == ("pending", None, 0)
    assert store.attempts(ids[3]) == []
    assert store.mark_started(ids[2], run, "m-2", "r-2") == 1  # a skipped game may be started too
    assert store.games()[2].skip_reason is None
    store.close()


def test_runs_end_with_their_exit_code_and_host(store: Store) -> None:
    first = store.start_run("run", 10)
    second = store.start_run("resume", 20, host="node-7")
    store.end_run(second, 130)
    rows = store.run_rows()
    assert [(r.run_id, r.kind, r.pid, r.host, r.exit_code) for r in rows] == [
        (first, "run", 10, socket.gethostname(), None), (second, "resume", 20, "node-7", 130),
    ]  # fmt: skip
    assert rows[0].ended_at is None
    assert rows[1].ended_at is not None and rows[1].ended_at >= rows[1].started_at
    assert store.runs() == [(first, "run"), (second, "resume")]
    with pytest.raises(StoreError, match="no run 9"):
        store.end_run(9, 0)
    store.close()


def test_entrant_builds(store: Store) -> None:
    first = store.start_run("run", 1)
    second = store.start_run("resume", 2)
    store.record_builds(first, [
        EntrantBuild("a", "bot", "clients.random_bot:RandomBot", "ab" * 32),
        EntrantBuild("b", "command", "node bots/b.js", ""),
    ])  # fmt: skip
    store.record_builds(second, [EntrantBuild("b", "remote", "")])
    store.record_builds(second, [EntrantBuild("b", "remote", "wss://b.example")])  # replaces
    everything = [(b.run_id, b.build.entrant) for b in store.builds()]
    assert everything == [(first, "a"), (first, "b"), (second, "b")]
    assert [b.build for b in store.builds(second)] == [EntrantBuild("b", "remote", "wss://b.example", "")]
    assert store.builds(first)[0].build.sha256 == "ab" * 32
    with pytest.raises(ValueError, match="kind 'docker'"):
        store.record_builds(first, [EntrantBuild("c", "docker", "x")])
    store.close()
