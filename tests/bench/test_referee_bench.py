"""bench/referee_bench.py in miniature: every figure is measured and well formed (not held to its bar)."""

from __future__ import annotations

import importlib
import math
from typing import Any

import pytest

from referee.scripted import ScriptedSeat
from referee.server.heap import OLDEST_THRESHOLD

# Imported by name: bench/ is a folder of scripts, not a package that mypy should follow.
bench: Any = importlib.import_module("bench.referee_bench")


def is_figure(value: object) -> bool:
    """A finite, positive number."""
    return isinstance(value, int | float) and math.isfinite(value) and value > 0


def test_percentile_is_nearest_rank() -> None:
    values = [0.004, 0.001, 0.003, 0.002]
    assert bench.percentile(values, 0.5) == 0.002
    assert bench.percentile(values, 0.99) == 0.004
    assert bench.percentile([], 0.5) == 0.0
    latency = bench.Latency.of(values)
    assert (latency.count, latency.p50_ms, latency.p99_ms, latency.p999_ms) == (4, 2.0, 4.0, 4.0)


def test_collections_are_summed_up_by_generation_since_a_time() -> None:
    collections = bench._Collections()
    collections.done = [
        (0, 10.0, 0.001, 0.0005, 3),  # before the window: left out
        (0, 20.0, 0.002, 0.001, 1),
        (0, 21.0, 0.004, 0.003, 0),
        (2, 22.0, 0.150, 0.100, 7),
    ]
    by_generation = collections.since(15.0)["gc"]
    young = bench.Pauses(**by_generation["0"])
    assert (young.count, young.max_ms, young.max_cpu_ms, young.collected) == (2, 4.0, 3.0, 1)
    assert young.total_ms == pytest.approx(6.0) and young.total_cpu_ms == pytest.approx(4.0)
    assert bench.Pauses(**by_generation["1"]) == bench.Pauses()
    full = bench.Pauses(**by_generation["2"])
    assert (full.count, full.max_ms, full.p99_ms, full.max_cpu_ms) == (1, 150.0, 150.0, 100.0)


def test_the_seats_are_the_shared_scripted_seat() -> None:
    # One wire-level scripted seat for the tests and the benchmarks; the bench only times it.
    assert issubclass(bench._Seat, ScriptedSeat)


def test_round_trips_of_the_echo_the_relay_and_the_referee() -> None:
    trips = bench.measure_round_trips(decisions=60, chunk=30, seed="smoke")
    assert trips.echo.count == 60
    assert trips.referee.count >= 60 and trips.relay.count >= 60
    for latency in (trips.echo, trips.referee, trips.relay, *trips.by_class.values()):
        assert is_figure(latency.p50_ms) and latency.p50_ms <= latency.p99_ms
    assert set(trips.by_class) <= {"call", "exchange", "turn", "window"}
    # The relay carries regular turns only, and times both of their kinds.
    assert set(trips.relay_by_class) == {"turn", "window"}
    assert is_figure(trips.ratio_p50) and is_figure(trips.ratio_p99)
    assert is_figure(trips.over_relay_p50) and is_figure(trips.over_relay_p99)
    assert is_figure(trips.echo_cpu_us) and is_figure(trips.decision_cpu_us) and is_figure(trips.relay_cpu_us)
    assert trips.decisions >= trips.referee.count and trips.messages > trips.decisions
    assert trips.relay_decisions >= trips.relay.count and trips.relay_messages > trips.relay_decisions
    assert trips.rejections == 0 and trips.matches >= 1


def test_relay_payloads_come_from_a_real_game() -> None:
    turns = bench.scripted_turns(60, "smoke")
    assert len(turns) == 60
    assert {turn.event_type for turn in turns} == {"played", "passed"}
    # A regular turn lists what the engine allows: a lead lists plays, a follow also "pass".
    assert all(turn.actions and all(action.text for action in turn.actions) for turn in turns)
    assert any(len(turn.actions) > 5 for turn in turns)
    assert any(any(action.text == "pass" for action in turn.actions) for turn in turns)


def test_hands_per_second_with_bot_processes() -> None:
    hands = bench.measure_hands("random", '{"match_mode": "fixed_rounds:1"}', seed="smoke", timeout_s=120)
    assert hands.finished and hands.rounds == 1
    assert hands.exit_codes == (0, 0, 0, 0)
    assert is_figure(hands.hands_per_s) and hands.game_s <= hands.wall_s
    assert hands.decisions > 0 and hands.timeouts == 0


@pytest.mark.parametrize("hello", ["sdk", "plain"])
def test_tables_per_referee_process(hello: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # The client processes read how to say Hello from the environment they start with.
    monkeypatch.setenv(bench.HELLO_ENV, hello)
    seen: list[Any] = []
    capacity = bench.measure_capacity(
        ladder=[1, 2], warmup_s=0.3, measure_s=0.7, seed="smoke", on_step=seen.append
    )
    assert [step.tables for step in capacity.steps] == [1, 2] and seen == capacity.steps
    for step in capacity.steps:
        assert step.seats_connected == 4 * step.tables
        assert step.latency.count > 0 and is_figure(step.latency.p50_ms)
        assert step.latency.p50_ms <= step.latency.p99_ms
        assert is_figure(step.decisions_per_s) and is_figure(step.server_cpu) and is_figure(step.clients_cpu)
        assert step.timeouts >= step.window_timeouts >= 0
        assert step.passed == (step.timeouts == 0 and step.latency.p99_ms < bench.P99_BAR_MS)
    assert capacity.best in (0, 1, 2) and capacity.steady in (0, 1, 2)
    for step in capacity.steps:
        assert step.collector == "tuned" and set(step.gc) == {0, 1, 2}
        assert step.heap["thresholds"] == list(bench.COLLECTORS["tuned"])
        assert step.heap["thresholds"][2] == OLDEST_THRESHOLD


def test_collectors_side_by_side_as_each_referee_process_ran_its_own() -> None:
    # The comparison is only worth its figures if each referee process ran as its name says.
    capacity = bench.measure_capacity(
        ladder=[1], warmup_s=0.3, measure_s=0.5, seed="smoke", collectors=("python", "tuned")
    )
    by_collector = {step.collector: step for step in capacity.steps}
    assert set(by_collector) == {"python", "tuned"} and capacity.steady in (0, 1)
    tuned, python = by_collector["tuned"].heap, by_collector["python"].heap
    assert tuned["thresholds"][2] == OLDEST_THRESHOLD and tuned["frozen"] > 10_000
    assert python["thresholds"] != tuned["thresholds"] and python["frozen"] == 0
    assert all(count >= 0 for count in python["tracked"]) and sum(python["tracked"]) > sum(tuned["tracked"])


@pytest.mark.parametrize("argv", [["--quick", "--only", "round-trip", "--decisions", "40", "--chunk", "20"]])
def test_main_prints_each_figure_with_its_command(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert bench.main(argv) == 0
    out = capsys.readouterr().out
    assert "load average" in out
    assert (
        "reproduce: .venv/bin/python bench/referee_bench.py --only round-trip --decisions 40 --chunk 20"
        in out
    )
    assert "referee round trip p50 / p99" in out
