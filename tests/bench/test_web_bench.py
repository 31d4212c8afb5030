"""bench/web_bench.py prints the referee's CPU per hand without and with live pages, and their ratio."""

from __future__ import annotations

import importlib
import re
from typing import Any

import pytest

bench: Any = importlib.import_module("bench.web_bench")


def test_main_prints_each_phase_the_ratio_and_the_command(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["--tables", "4", "--viewers", "20", "--phases", "2", "--phase-s", "4", "--settle-s", "1"]
    assert bench.main(argv) == 0
    out = capsys.readouterr().out
    rows = re.findall(r"^ +(\d) +(\d+) +(\d+) +([\d.]+) +([\d.]+|nan)$", out, re.M)
    assert [(phase, viewers) for phase, viewers, *_ in rows] == [("1", "0"), ("2", "20")], out
    assert all(int(hands) > 0 and float(cpu) > 0 for _, _, hands, cpu, _ in rows), out
    assert re.search(r"^  ratio [\d.]+ \(the target: at most 1\.10\)$", out, re.M), out
    command = "bench/web_bench.py --tables 4 --viewers 20 --phases 2 --phase-s 4 --settle-s 1"
    assert f"Reproduce: .venv/bin/python {command}" in out
