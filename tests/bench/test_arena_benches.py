"""bench/arena_latency_bench.py, arena_restart_bench.py and arena_bench.py at small sizes: they
still run, measure something, the restart bench's checks catch a store that is not consistent,
and the ranking bench sees a pool's games from either bot's side."""

from __future__ import annotations

import importlib
import random
import re
import time
from pathlib import Path
from typing import Any

import pytest

from referee.arena.store import INTERRUPTED, ArenaStore, BotState, GameRow, PairRow, RatingRow

# Imported by name: bench/ is a folder of scripts, not a package that mypy should follow.
latency: Any = importlib.import_module("bench.arena_latency_bench")
restart: Any = importlib.import_module("bench.arena_restart_bench")
accuracy: Any = importlib.import_module("bench.arena_bench")


def test_the_latency_bench_times_ready_to_seated_both_ways(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["--bots", "4", "--seconds", "4", "--pair-every-s", "1"]
    assert latency.main(argv) == 0
    out = capsys.readouterr().out
    waits = re.findall(r"ready -> seated, as the bots saw it \((\d+) waits\): p50 +([\d.]+) ms", out)
    assert len(waits) == 2, out  # the arena as it was, and as it is
    assert all(int(count) >= 4 for count, _ in waits), out  # every bot was seated at least once
    assert "as it was / as it is: p50 x" in out
    assert "until the matchmaker's round that seated it, after a pair" in out and "store.start_pair" in out
    assert "reproduce: .venv/bin/python bench/arena_latency_bench.py --bots 4 --seconds 4" in out


def test_percentiles_and_rematches() -> None:
    assert latency.percentile([], 50) == 0.0
    assert latency.percentile([3.0, 1.0, 2.0], 50) == 2.0
    assert latency.percentile([float(v) for v in range(1, 101)], 99) == 99.0

    def pair(pair_id: int, a: str, b: str) -> PairRow:
        return PairRow(pair_id, a, b, "remote", "s", False, "finished", "", 0.0, None, 0, 0)

    # a-b, c-d, then a-b again (a rematch), then a-c (not one).
    pairs = [pair(1, "a", "b"), pair(2, "c", "d"), pair(3, "b", "a"), pair(4, "a", "c")]
    assert latency.rematches(pairs) == 1


def test_the_restart_bench_kills_restarts_and_finds_the_store_consistent(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["--runs", "1", "--kill-within-s", "1", "--more-pairs", "3", "--no-sandbox", "--seed", "7"]
    assert restart.main(argv) == 0
    out = capsys.readouterr().out
    assert "1 of 1 runs consistent" in out and "same" in out and "problem" not in out, out
    assert f"reproduce: .venv/bin/python bench/arena_restart_bench.py {' '.join(argv)}" in out


def game(table: int) -> GameRow:
    return GameRow(table, f"m{table}", table, 100, 100, "normal", "", {}, {})


def test_the_restart_bench_s_checks_catch_what_a_kill_must_not_leave(tmp_path: Path) -> None:
    store = ArenaStore(tmp_path / "arena.sqlite")
    for name in ("a", "b"):
        store.add_bot(name, state=BotState.ACTIVE)
    half_rated = store.start_pair("a", "b", "remote", "s1", validation=False)
    rating = RatingRow("a", "remote", 26.0, 8.0, 1, 1, 0, 0, 10, time.time())
    store.finish_pair(half_rated, [game(0), game(1)], [rating])  # b's rating never written
    store.start_pair("a", "b", "remote", "s2", validation=False)  # left playing
    cut_off = store.start_pair("a", "b", "remote", "s3", validation=False)
    store.void_pair(cut_off, "the game ran over")  # voided, but not as the kill's
    run = restart.Run(killed_after_s=0.0)
    restart.check(store, run, {cut_off})
    store.close()
    problems = "\n".join(run.problems)
    assert "rated for ['a'], not once for each bot" in problems
    assert "is still playing" in problems
    assert "cut off by the kill, is voided ('the game ran over')" in problems
    assert "the ratings count 1 pair-sides, not 2" in problems
    assert (run.finished, run.rated, run.voided_other, run.voided_interrupted) == (1, 1, 1, 0)
    assert INTERRUPTED != "the game ran over"


def test_the_ranking_bench_draws_both_tables_from_either_side() -> None:
    pool = {("x", "y"): [accuracy.PoolPair(x_first=(100, 20), y_first=(30, 70))]}
    rng = random.Random(1)
    # From x's side: where x sat at seats 0 and 2 first, then where y did; x's points first.
    assert accuracy.draw(pool, "x", "y", rng) == ((100, 20), (30, 70))
    # From y's side: the same two tables, y's points first, y's own first-seat table first.
    assert accuracy.draw(pool, "y", "x", rng) == ((70, 30), (20, 100))
    step = accuracy.head_to_head(pool, "y", "x")
    assert (step.won, step.lost, step.margin) == (0, 1, -40)  # y: 70 + 20, x: 100 + 30


def test_the_ranking_bench_asks_only_for_the_order_its_pool_knows() -> None:
    pool = {
        ("x", "y"): [accuracy.PoolPair((100, 0), (100, 0)), accuracy.PoolPair((90, 10), (80, 20))],
        ("x", "z"): [accuracy.PoolPair((60, 40), (40, 60)), accuracy.PoolPair((40, 60), (70, 30))],
        ("y", "z"): [accuracy.PoolPair((0, 100), (10, 90)), accuracy.PoolPair((20, 80), (0, 100))],
    }
    known = accuracy.resolved(pool)
    # x beats y and z beats y by far; x and z are even: their order is not known.
    assert {(s.stronger, s.weaker) for s in known} == {("x", "y"), ("z", "y")}
    checks = accuracy.criteria(["x", "z", "y"], known)
    known_order, whole, _ = checks.values()
    assert known_order(["z", "x", "y"]) and not whole(["z", "x", "y"])
    assert not known_order(["x", "y", "z"]) and whole(["x", "z", "y"])


def test_the_ranking_bench_plays_a_pool_and_rates_from_it(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["--pool", "2", "--deals", "1", "--runs", "3", "--budget", "40", "--jobs", "1"]
    assert accuracy.main(argv) == 0
    out = capsys.readouterr().out
    assert "pool: 2 duplicate pairs per pairing, 1 deals a game, 40 hands" in out
    assert len(re.findall(r"^  \S+ v \S+: pairs \d+-\d+, margin [+-]\d+ \+- ", out, re.MULTILINE)) == 4, out
    assert len(re.findall(r"(duplicate pairs|single games) +median .*; never in \d of 3 runs", out)) == 6, out
    assert "reproduce: .venv/bin/python bench/arena_bench.py --pool 2 --deals 1" in out
