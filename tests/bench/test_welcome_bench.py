"""bench/welcome_bench.py in miniature: each variant's burst is welcomed and printed with the command."""

from __future__ import annotations

import importlib
from typing import Any

import pytest

# Imported by name: bench/ is a folder of scripts, not a package that mypy should follow.
bench: Any = importlib.import_module("bench.welcome_bench")


def test_variants_parse_into_the_referee_settings() -> None:
    variant = bench.Variant.parse("loops=4+yield+switch=0.5+per=10")
    assert (variant.accept_loops, variant.yield_after_write, variant.switch_ms) == (4, True, 0.5)
    assert variant.seats_per_channel == 10
    assert variant.settings() == {"accept_loops": 4}
    with pytest.raises(ValueError):
        bench.Variant.parse("loops=2+faster")


def test_a_small_burst_is_welcomed_beside_playing_tables(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["--tables", "2", "--burst", "8", "--variants", "loops=1,loops=2", "--warmup-s", "0.5"]
    assert bench.main([*argv, "--timeout-s", "60"]) == 0
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.startswith("| loops=")]
    assert len(rows) == 2 and all("8/8" in row for row in rows), out
    assert "Reproduce: .venv/bin/python bench/welcome_bench.py --tables 2 --burst 8" in out


def test_the_waits_stages_pair_the_referees_times_with_the_seats() -> None:
    welcomed = [("a", 10.0, 10.5), ("b", 10.0, 12.0), ("c", 10.0, 11.0)]
    server = {"a": (10.2, 10.4), "b": (11.0, 11.9)}  # c: not traced
    stages = bench._stages(welcomed, server)
    assert stages["accept_p50"] == pytest.approx(0.2) and stages["accept_p99"] == pytest.approx(1.0)
    assert stages["hello_p99"] == pytest.approx(0.9)
    assert stages["send_p50"] == pytest.approx(0.1)
