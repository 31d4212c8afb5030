"""bench/sandbox_bench.py prints the time and CPU per game with and without the sandbox, side by
side, and the parts of that cost: a gRPC call over each transport, a process's start."""

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
    argv = ["sandbox_bench.py", "--games", "2", "--rounds", "1", "--calls", "200", "--starts", "2"]
    monkeypatch.setattr(sys, "argv", argv)
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
    transports = re.findall(r"^    (TCP on loopback|Unix socket) +([\d.]+) us$", out, re.M)
    assert [name for name, _ in transports] == ["TCP on loopback", "Unix socket"]
    starts = re.findall(r"^    sandbox (no|yes) +([\d.]+) ms$", out, re.M)
    assert [boxed for boxed, _ in starts] == ["no", "yes"]
    assert all(float(figure) > 0 for _, figure in [*transports, *starts])
    command = "bench/sandbox_bench.py --games 2 --rounds 1 --calls 200 --starts 2"
    assert f"Reproduce: .venv/bin/python {command}" in out
