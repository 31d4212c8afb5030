"""bench/rerun_bench.py in miniature: its workers measure the tree they were given, and it prints
every figure and the command that reproduces them."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

import pytest

# Imported by name: bench/ is a folder of scripts, not a package that mypy should follow.
bench: Any = importlib.import_module("bench.rerun_bench")
REPO = Path(__file__).resolve().parents[2]


def test_main_prints_each_operation_of_both_trees(capsys: pytest.CaptureFixture[str]) -> None:
    golden = REPO / "replays" / "golden" / "golden-6p-1-deal.jsonl"
    # The same tree as its own baseline: two workers, one per tree, alternately asked.
    assert bench.main([str(golden), "--baseline", str(REPO), "--repeats", "1"]) == 0
    out = capsys.readouterr().out
    for operation in ("verify", "html", "page"):
        assert f"{operation} golden-6p-1-deal.jsonl: median CPU this tree" in out
    assert out.count("of the baseline") == 3
    assert f"Reproduce: .venv/bin/python bench/rerun_bench.py {golden} --baseline {REPO} --repeats 1" in out


def test_a_worker_that_imports_another_trees_referee_is_refused(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match="that tree's referee"):
        bench.main(["--baseline", str(tmp_path), "--repeats", "1"])  # no referee/ there: not that tree's
