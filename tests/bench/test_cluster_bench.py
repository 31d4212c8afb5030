"""bench/cluster_bench.py prints games per hour in one process and on a local Ray cluster, side by side."""

from __future__ import annotations

import importlib
import re
from typing import Any

import pytest

pytest.importorskip("ray", reason="Ray is the [ray] extra: pip install -e '.[ray]' (make test does)")
bench: Any = importlib.import_module("bench.cluster_bench")


def test_main_prints_both_rates_and_the_command(capsys: pytest.CaptureFixture[str]) -> None:
    bench.main(["--games", "2", "--rounds", "1", "--nodes", "1"])
    out = capsys.readouterr().out
    rows = re.findall(r"^  (one process|Ray local:1) +(\d+) +(\d+) +([\d,]+) +([\d.]+)x", out, re.M)
    assert [row[0] for row in rows] == ["one process", "Ray local:1"]
    assert all(int(games) == 2 and int(rate.replace(",", "")) > 0 for _, _, games, rate, _ in rows)
    assert rows[0][4] == "1.00"
    assert "Reproduce: .venv/bin/python bench/cluster_bench.py --games 2 --rounds 1 --nodes 1" in out
