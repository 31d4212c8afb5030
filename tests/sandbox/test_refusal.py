"""Where bubblewrap is missing or cannot make namespaces, hosted bots refuse to start and say what to
install; where only user namespaces are refused, the sandbox does without one; --no-sandbox plays
all the same and says so."""

from __future__ import annotations

import argparse
import dataclasses
import io
import os
import stat
from pathlib import Path

import pytest

from referee.checkbot import kit
from referee.sandbox import Isolation, SandboxUnavailableError, check_available
from referee.tournament import host
from referee.tournament.config import parse_config
from referee.tournament.runner import TournamentError, run_tournament
from tests.tournament.support import OUTPUTS, RANDOM

CONFIG = f"""
[tournament]
seed = "refusal"
games_per_pairing = 2
{OUTPUTS}
[rules]
match_mode = "fixed_rounds:1"
[sprt]
stop_early = false
{RANDOM}
[[entrants]]
name = "other"
bot = "clients.random_bot:RandomBot"
"""


def fake_bwrap(folder: Path, script: str) -> None:
    """A `bwrap` on PATH that runs `script` (sh) instead."""
    folder.mkdir(exist_ok=True)
    path = folder / "bwrap"
    path.write_text(f"#!/bin/sh\n{script}\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


def test_no_bwrap_on_path_is_refused_with_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # nothing there
    with pytest.raises(SandboxUnavailableError, match="apt-get install bubblewrap") as refused:
        check_available.__wrapped__()
    assert "--no-sandbox" in str(refused.value)


def test_a_bwrap_that_cannot_make_namespaces_is_refused_with_its_own_words(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_bwrap(tmp_path, 'echo "bwrap: No permissions to create new namespace" >&2; exit 1')
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    with pytest.raises(SandboxUnavailableError, match=r"No permissions to create new namespace.*bubblewrap"):
        check_available.__wrapped__()


def test_without_user_namespaces_the_sandbox_does_without_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_bwrap(tmp_path, 'case "$*" in *--unshare-user*) exit 1;; esac; exit 0')
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    found = check_available.__wrapped__()
    assert found == Isolation(str(tmp_path / "bwrap"), user_namespace=False)
    assert "no user namespace" in found.describe()


def refuse(monkeypatch: pytest.MonkeyPatch) -> None:
    def unavailable() -> Isolation:
        raise SandboxUnavailableError("no bwrap on PATH: apt-get install bubblewrap")

    monkeypatch.setattr(host, "check_available", unavailable)
    monkeypatch.setattr(kit, "check_available", unavailable)


def test_a_tournament_with_local_entrants_refuses_to_start_without_the_sandbox(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    refuse(monkeypatch)
    config = parse_config(CONFIG, tmp_path / "t.toml")
    with pytest.raises(TournamentError, match="apt-get install bubblewrap"):
        run_tournament(config, resume=False, out=io.StringIO(), live=False)


def test_no_sandbox_plays_and_says_so_at_the_start(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    refuse(monkeypatch)
    config = dataclasses.replace(parse_config(CONFIG, tmp_path / "t.toml"), sandbox=False)
    out = io.StringIO()
    assert run_tournament(config, resume=False, out=out, live=False) == 0, out.getvalue()
    assert "bots without a sandbox (--no-sandbox: every bot can read the others' tokens" in out.getvalue()
    assert "limits " in out.getvalue()  # what holds the limits here, sandbox or not


def test_check_bot_refuses_without_the_sandbox(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    refuse(monkeypatch)
    args = argparse.ArgumentParser()
    kit.add_check_bot_arguments(args)
    assert kit.run_check_bot(args.parse_args(["clients.random_bot:RandomBot"])) == 2
    assert "apt-get install bubblewrap" in capsys.readouterr().err
