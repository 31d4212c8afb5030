"""Hosted bots in the sandbox (referee.sandbox): a hostile entrant, written here, looks for everything
the sandbox must keep from it, in a real duplicate tournament; its forks count against its limits
and die with its game; a bot killed before it connects ends its game at once; the tables of a
board overlap in time; and the games still play to their end."""

from __future__ import annotations

import io
import json
import os
import re
import socket
import sys
from collections.abc import Mapping
from pathlib import Path

import pytest

from referee.replay.signing import write_key_pair
from referee.sandbox import NOBODY, PASSED_ENV, SandboxUnavailableError, check_available
from referee.tournament.config import parse_config
from referee.tournament.runner import run_tournament
from referee.tournament.store import Store
from tests.tournament.support import OUTPUTS, RANDOM

HOSTILE = Path(__file__).resolve().parent / "hostile_bot.py"


def sandbox_or_skip() -> bool:
    """Whether the bot runs as nobody in a user namespace; skip where bubblewrap cannot run."""
    try:
        return check_available().user_namespace
    except SandboxUnavailableError as error:
        if os.environ.get("CI"):
            raise  # CI installs bubblewrap: a missing sandbox there is a failure, not a skip
        pytest.skip(str(error))


def free_port() -> int:
    """A TCP port nothing listens on now (the referee takes it next)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def tournament(
    tmp_path: Path, mode: str, targets: Mapping[str, object], extra: str = "", listen: str = ""
) -> str:
    """A duplicate board of the hostile entrant (a process per seat) against RandomBot."""
    command = json.dumps([sys.executable, str(HOSTILE), mode, "{server}", "{token}", json.dumps(targets)])
    return f"""
[tournament]
seed = "sandbox-{mode}"
games_per_pairing = 2
{OUTPUTS}
signing_key = "keys/signing.pem"
{listen}
[rules]
match_mode = "fixed_rounds:1"
[clock]
decision_ms = 20000
bank_ms = 0
max_violations = 2
reconnect_grace_ms = 5000
[sprt]
stop_early = false

[[entrants]]
name = "hostile"
command = {command}
{extra}
{RANDOM}"""


def survivors(marker: str) -> list[int]:
    """The processes on this machine whose command line holds `marker`."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if marker.encode() in Path(f"/proc/{entry}/cmdline").read_bytes():
                    found.append(int(entry))
            except OSError:
                pass
    return found


def reports(logs: Path) -> list[dict[str, object]]:
    """The hostile seats' REPORT lines, from their logs."""
    found = []
    for path in sorted(logs.glob("*hostile*.log")):
        for line in path.read_text(errors="replace").splitlines():
            if line.startswith("REPORT "):
                found.append(json.loads(line[len("REPORT ") :]))
    return found


def test_a_hostile_entrant_sees_reads_signals_and_reaches_nothing_of_the_others(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    as_nobody = sandbox_or_skip()
    monkeypatch.setenv("TICHU_ORGANISER_TOKEN", "the-organiser-token-must-not-reach-a-bot")
    write_key_pair(tmp_path / "keys" / "signing.pem")
    port = free_port()
    out_dir = tmp_path / "out"
    marker = f"tichu-hostile-daemon-{os.getpid()}"
    targets = {
        "pids": [os.getpid(), os.getppid()],  # the referee (this process), and its parent
        "files": [
            str(out_dir / "results.sqlite"),
            str(out_dir / "replays"),
            str(out_dir / "live"),
            str(out_dir / "logs"),
            str(tmp_path / "keys" / "signing.pem"),
            str(tmp_path / "t.toml"),
        ],
        "tcp": [["127.0.0.1", port]],
        "marker": marker,
    }
    config = parse_config(
        tournament(tmp_path, "probe", targets, listen=f'listen = "127.0.0.1:{port}"'), tmp_path / "t.toml"
    )
    out = io.StringIO()
    assert run_tournament(config, resume=False, out=out, live=False) == 0, out.getvalue()
    store = Store(config.database)
    try:
        games = store.games()
        attempts = store.attempts()
    finally:
        store.close()
    # The games still play to their end, nobody forfeits.
    assert [game.status for game in games] == ["finished", "finished"]
    assert not any(game.forfeit for game in games)
    assert [a.sandboxed for a in attempts] == [True, True]  # each attempt's record says so
    found = reports(out_dir / "logs")
    assert len(found) == 4, "the hostile entrant sat at two seats of each table"
    allowed_env = {*PASSED_ENV, "HOME", "PWD", "TICHU_INSECURE"} | {
        f"TICHU_{n.upper()}" for n in ("server", "token", "seat", "ca_file", "name", "seed", "match_id")
    }
    for report in found:
        pids = report["pids"]
        assert isinstance(pids, list) and len(pids) < 10, f"it sees other processes: {pids}"
        assert os.getpid() not in pids and os.getppid() not in pids
        signalable = report["signalable"]
        assert isinstance(signalable, list) and set(signalable) <= set(pids), (
            "it may signal a process of another"
        )
        assert report["tokens_seen"] == [], "it read another seat's token"
        assert report["readable"] == [], "it read the referee's files"
        assert report["reachable"] == [], "it reached an address other than the referee's socket"
        environment = report["environment"]
        assert isinstance(environment, list) and "TICHU_ORGANISER_TOKEN" not in environment
        assert set(environment) <= allowed_env, set(environment) - allowed_env
        if as_nobody:
            assert report["uid"] == NOBODY
    assert survivors(marker) == [], "a daemon of the bot outlived its game"
    # The two tables of the board were played at the same time.
    spans = sorted((a.started_at or 0.0, a.ended_at or 0.0) for a in attempts)
    assert len(spans) == 2 and spans[1][0] < spans[0][1], spans
    # The referee's files are its own; the replays are published now that the board is over.
    assert (out_dir / "results.sqlite").stat().st_mode & 0o077 == 0
    replays = sorted((out_dir / "replays").glob("*.jsonl"))
    assert len(replays) == 2 and all(p.stat().st_mode & 0o077 == 0 for p in replays)
    assert list((out_dir / "live").glob("*.jsonl")) == []


def forfeited(tmp_path: Path, mode: str, limit: str, marker: str) -> tuple[set[str], str]:
    """A board where the hostile entrant never plays (`mode`) within `limit`: each game a forfeit
    of its team; the exit reasons stored and the run's output."""
    write_key_pair(tmp_path / "keys" / "signing.pem")
    targets = {"pids": [], "files": [], "tcp": [], "marker": marker}
    config = parse_config(tournament(tmp_path, mode, targets, limit), tmp_path / "t.toml")
    out = io.StringIO()
    assert run_tournament(config, resume=False, out=out, live=False) == 0, out.getvalue()
    store = Store(config.database)
    try:
        games = store.games()
        reasons = {s.exit_reason for s in store.seat_stats() if s.exit_reason}
    finally:
        store.close()
    # Ended by the host's word that the seat is gone, not by the start timeout (120 s here).
    assert [game.status for game in games] == ["finished", "finished"]
    for game in games:
        assert game.forfeit and game.forfeiting_team is not None
        assert game.players[game.forfeiting_team] == "hostile"
        assert re.search(r"seat \d was gone before it connected \(", game.reason or ""), game.reason
    return reasons, out.getvalue()


def test_a_bot_s_forks_count_against_its_cpu_limit_and_die_with_it(tmp_path: Path) -> None:
    sandbox_or_skip()
    marker = f"tichu-hostile-burn-{os.getpid()}"
    reasons, output = forfeited(tmp_path, "burn", "cpu_seconds = 2", marker)
    # Three children in sessions of their own spin: together they pass 2 s of CPU long before
    # any one of them would, and the whole tree is stopped for it.
    assert reasons == {"CPU limit of 2 s exceeded (by its processes together)"}, (reasons, output)
    assert survivors(marker) == [], "a spinning child outlived its game"


def test_a_bot_killed_before_it_connects_ends_its_game_at_once_with_the_reason(tmp_path: Path) -> None:
    sandbox_or_skip()
    reasons, output = forfeited(tmp_path, "hog-first", "memory_mb = 150", "unused")
    assert reasons == {"memory limit of 150 MiB exceeded"}
    assert "memory limit of 150 MiB exceeded" in output
