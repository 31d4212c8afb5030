"""bench/sandbox_bench.py prints the time and CPU per game with and without the sandbox, side by side."""

from __future__ import annotations

import importlib
import re
import sys
from typing import Any

import pytest

from referee.sandbox import SandboxUnavailableError, check_available

bench: Any = importlib.import_module("bench.sandbox_bench")


def test_main_prints_both_kinds_with_and_without_and_the_command(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    try:
        check_available()
    except SandboxUnavailableError as error:
        pytest.skip(str(error))
    monkeypatch.setattr(sys, "argv", ["sandbox_bench.py", "--games", "2", "--rounds", "1"])
    assert bench.main() == 0
    out = capsys.readouterr().out
    rows = re.findall(r"^  (a process per seat|shared workers) +(yes|no) +([\d.]+) +([\d.]+)$", out, re.M)
    assert [(kind, boxed) for kind, boxed, _, _ in rows] == [
        ("a process per seat", "no"),
        ("a process per seat", "yes"),
        ("shared workers", "no"),
        ("shared workers", "yes"),
    ]
    assert all(float(wall) > 0 and float(cpu) > 0 for _, _, wall, cpu in rows)
    assert len(re.findall(r"^ +ratio +[\d.]+ +[\d.]+$", out, re.M)) == 2
    assert "Reproduce: .venv/bin/python bench/sandbox_bench.py --games 2 --rounds 1" in out
