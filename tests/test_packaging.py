"""The wheel's engine (setup.py): compiled by mypyc when it can be, else pure with a warning."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# What a wheel is built from (the sdist's files), without this tree's builds or caches.
PACKAGE_FILES = ["pyproject.toml", "setup.py", "README.md", "LICENSE", "referee", "clients"]
# A C compiler that does not exist: the machine the pure fallback is for.
NO_COMPILER = {"CC": "tichu-no-such-compiler"}


def test_the_wheel_builds_with_the_mypy_the_suite_uses() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    build_mypy = [r for r in project["build-system"]["requires"] if r.startswith("mypy")]
    dev_mypy = [r for r in project["project"]["optional-dependencies"]["dev"] if r.startswith("mypy")]
    assert build_mypy == dev_mypy and len(build_mypy) == 1


def copy_of_the_package(tmp_path: Path) -> Path:
    """The package's sources in a folder of their own, so that a build writes nothing here."""
    source = tmp_path / "source"
    source.mkdir()
    for name in PACKAGE_FILES:
        if (ROOT / name).is_dir():
            ignore = shutil.ignore_patterns("__pycache__", "*.so", "*.egg-info")
            shutil.copytree(ROOT / name, source / name, ignore=ignore)
        else:
            shutil.copy2(ROOT / name, source / name)
    return source


def build_wheel(source: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """`python -m build --wheel` in this environment (no download), in the copy."""
    return subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", "dist", "."],
        cwd=source,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


@pytest.mark.parametrize(
    ("env", "warned"),
    [(NO_COMPILER, True), ({"TICHU_PURE": "1"}, False)],
    ids=["no-compiler", "TICHU_PURE"],
)
def test_a_machine_that_cannot_compile_gets_a_pure_wheel(
    tmp_path: Path, env: dict[str, str], warned: bool
) -> None:
    source = copy_of_the_package(tmp_path)
    done = build_wheel(source, env)
    assert done.returncode == 0, done.stdout + done.stderr
    (wheel,) = (source / "dist").glob("*.whl")
    # Tagged for every platform, and nothing compiled in it.
    assert wheel.name.endswith("-py3-none-any.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "referee/rules/game.py" in names and not [n for n in names if n.endswith((".so", ".pyd"))]
    warning = "WARNING (tichu-referee): the rules engine stays pure Python"
    assert (warning in done.stdout + done.stderr) == warned
    if warned:
        assert "no working C compiler" in done.stderr


def test_a_compiled_build_that_was_required_fails_without_a_compiler(tmp_path: Path) -> None:
    source = copy_of_the_package(tmp_path)
    done = subprocess.run(
        [sys.executable, "setup.py", "build_ext", "--build-lib", "lib", "--build-temp", "temp"],
        cwd=source,
        env={**os.environ, **NO_COMPILER, "TICHU_COMPILE": "1"},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode != 0
    assert "TICHU_COMPILE=1, but no working C compiler" in done.stderr
    assert not list(source.rglob("*.so"))


def test_an_editable_install_keeps_the_engine_pure(tmp_path: Path) -> None:
    # What `pip install -e .` calls (PEP 660), with this machine's compiler: modules compiled
    # beside sources that are then edited would hide the edits.
    source = copy_of_the_package(tmp_path)
    hook = "from setuptools import build_meta; print(build_meta.build_editable('dist'))"
    done = subprocess.run(
        [sys.executable, "-c", hook],
        cwd=source,
        env={k: v for k, v in os.environ.items() if k not in {"TICHU_COMPILE", "TICHU_PURE"}},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "an editable install keeps the engine pure" in done.stderr
    (wheel,) = (source / "dist").glob("*.whl")
    assert not [n for n in zipfile.ZipFile(wheel).namelist() if n.endswith((".so", ".pyd"))]
    assert not list(source.rglob("*.so"))
