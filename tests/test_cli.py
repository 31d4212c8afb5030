"""The `tichu` command line itself: --version, and token values that begin with '-'."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import referee
import referee.rules.game
from clients.connect import add_bot_arguments
from referee.cli import attach_token_values, main, version_line
from referee.match import PROTOCOL_VERSION
from referee.server.serve import add_serve_arguments

ROOT = Path(__file__).resolve().parent.parent
# The build this process loaded: a compiled module's file is a shared library, a pure one its source.
ENGINE = "pure Python" if (referee.rules.game.__file__ or "").endswith(".py") else "compiled (mypyc)"
VERSION_LINE = (
    f"tichu {referee.__version__} (protocol tichu.v1, protocol_version {PROTOCOL_VERSION}; engine {ENGINE})"
)


def test_version_prints_the_package_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out == VERSION_LINE + "\n"
    # The distribution's version is read from referee.__version__: there is only one.
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "version" in project["project"]["dynamic"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "referee.__version__"}


@pytest.mark.parametrize(("compiled", "engine"), [(True, "compiled (mypyc)"), (False, "pure Python")])
def test_version_names_the_engine_loaded(
    monkeypatch: pytest.MonkeyPatch, compiled: bool, engine: str
) -> None:
    monkeypatch.setattr(referee.rules, "COMPILED", compiled)
    assert version_line().endswith(f"; engine {engine})")


def test_version_from_a_real_process() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-m", "referee.cli", "--version"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert (done.returncode, done.stdout.strip()) == (0, VERSION_LINE)


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["bot", "m:C", "--token", "-abc", "--insecure"], ["bot", "m:C", "--token=-abc", "--insecure"]),
        (["serve", "--organiser-token", "-x_y-"], ["serve", "--organiser-token=-x_y-"]),
        (["bot", "m:C", "--token", "abc"], ["bot", "m:C", "--token", "abc"]),
        # A forgotten token stays an argparse error rather than swallowing the next option.
        (["bot", "m:C", "--token", "--insecure"], ["bot", "m:C", "--token", "--insecure"]),
        (["bot", "m:C", "--token", "--name=x"], ["bot", "m:C", "--token", "--name=x"]),
        (["bot", "m:C", "--token", "--"], ["bot", "m:C", "--token", "--"]),
        (["bot", "m:C", "--token"], ["bot", "m:C", "--token"]),
        # After a bare `--` the words belong to a command, not to us.
        (["x", "--", "--token", "-abc"], ["x", "--", "--token", "-abc"]),
    ],
)
def test_attach_token_values(argv: list[str], expected: list[str]) -> None:
    assert attach_token_values(argv) == expected


def test_a_token_beginning_with_a_dash_parses() -> None:
    bot = argparse.ArgumentParser()
    add_bot_arguments(bot)
    argv = ["clients.random_bot:RandomBot", "--token", "-Zq_9", "--insecure"]
    with pytest.raises(SystemExit):  # what argparse alone makes of it: "expected one argument"
        bot.parse_args(argv)
    args = bot.parse_args(attach_token_values(argv))
    assert (args.token, args.insecure) == ("-Zq_9", True)
    serve = argparse.ArgumentParser()
    add_serve_arguments(serve)
    assert serve.parse_args(attach_token_values(["--organiser-token", "-Zq"])).organiser_token == "-Zq"


def test_tichu_match_serves_its_games_on_the_web_face_when_asked(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TICHU_LOG_LEVEL": "error"}
    argv = [sys.executable, "-m", "referee.cli", "match", "random", "--seed", "3", "--out", str(tmp_path)]
    done = subprocess.run(
        [*argv, "--http", "127.0.0.1:0"], env=env, capture_output=True, text=True, timeout=600, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Watch it live: http://127.0.0.1:" in done.stdout and "/matches/match-" in done.stdout
    refused = subprocess.run(
        [*argv, "--http", "nowhere"], env=env, capture_output=True, text=True, timeout=600, check=False
    )
    assert refused.returncode == 1 and "--http nowhere: give HOST:PORT" in refused.stderr
