"""Hosted bots in the sandbox (referee.sandbox): a hostile entrant, written here, looks for everything
the sandbox must keep from it, in a real duplicate tournament; its forks count against its limits
and die with its game; a bot killed before it connects ends its game at once; the tables of a
board overlap in time; and the games still play to their end."""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import signal
import socket
import sys
import threading
import time
from collections.abc import Mapping
from pathlib import Path

import pytest

from referee.replay.signing import write_key_pair
from referee.sandbox import (
    NOBODY,
    PASSED_ENV,
    SOCKET_INSIDE,
    Sandbox,
    SandboxUnavailableError,
    check_available,
)
from referee.tournament.config import parse_config
from referee.tournament.process_limits import BOT_CGROUP_PREFIX, Cgroups, enforced, remove_left_behind
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
    command = json.dumps([sys.executable, str(HOSTILE), mode, "{server}", json.dumps(targets)])
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


class HostSpy:
    """What a process outside every sandbox, as the referee's own user, could read while the games
    run: the arguments and environment of every process this one started, in its PID namespace (a
    sandboxed bot's own processes, in a namespace of their own, are not looked at: their
    environment is theirs)."""

    def __init__(self) -> None:
        self.seen: set[bytes] = set()
        self._namespace = os.readlink("/proc/self/ns/pid")
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> HostSpy:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._stop.wait(0.02):
            for pid in self._descendants():
                try:
                    if os.readlink(f"/proc/{pid}/ns/pid") != self._namespace:
                        continue
                    for name in ("cmdline", "environ"):
                        self.seen.add(Path(f"/proc/{pid}/{name}").read_bytes())
                except OSError:
                    pass  # it ended while we looked

    @staticmethod
    def _descendants() -> list[int]:
        parents = {}
        for entry in os.listdir("/proc"):
            with contextlib.suppress(OSError, ValueError, IndexError):
                stat = Path(f"/proc/{entry}/stat").read_bytes()
                parents[int(entry)] = int(stat[stat.rfind(b")") + 2 :].split()[1])
        found, todo = [], [os.getpid()]
        while todo:
            pid = todo.pop()
            children = [child for child, parent in parents.items() if parent == pid]
            found += children
            todo += children
        return found

    def holding(self, secret: str) -> list[str]:
        """What it saw that holds `secret`."""
        return [
            text.replace(b"\0", b" ").decode(errors="replace")
            for text in self.seen
            if secret.encode() in text
        ]


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
    pinned = "cpuset" in enforced()
    monkeypatch.setenv("TICHU_ORGANISER_TOKEN", "the-organiser-token-must-not-reach-a-bot")
    write_key_pair(tmp_path / "keys" / "signing.pem")
    port = free_port()
    out_dir = tmp_path / "out"
    marker = f"tichu-hostile-daemon-{os.getpid()}"
    # Listening on this machine, outside the sandbox: every interface, and the abstract Unix
    # socket namespace (where, say, X11 and some daemons listen): the bot must reach neither.
    listener = socket.create_server(("0.0.0.0", 0))
    abstract = socket.socket(socket.AF_UNIX)
    abstract.bind(f"\0{marker}")
    abstract.listen()
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
        "tcp": [["127.0.0.1", port], ["127.0.0.1", listener.getsockname()[1]]],
        "abstract": [marker],
        "marker": marker,
    }
    limits = "memory_mb = 150\ncpus = [0]"
    text = tournament(tmp_path, "probe", targets, limits, listen=f'listen = "127.0.0.1:{port}"')
    config = parse_config(text, tmp_path / "t.toml")
    out = io.StringIO()
    with listener, abstract, HostSpy() as spy:
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
        # A child in a session of its own is held to the entrant's memory limit as well.
        assert report["hog_child"] == -signal.SIGKILL, report["hog_child"]
        if pinned:  # pinned by a cpuset cgroup: asking for more CPUs gets none
            assert report["cpus"] == [0], report["cpus"]
        # Its token crossed into the sandbox where no process outside it could read it.
        assert isinstance(report["token"], str) and spy.holding(report["token"]) == []
    assert [text for text in spy.seen if b"bwrap\0--args" in text], "the spy saw no bot start"
    assert spy.holding("TICHU_TOKEN=") == []
    assert survivors(marker) == [], "a daemon of the bot outlived its game"
    # The two tables of the board were played at the same time.
    spans = sorted((a.started_at or 0.0, a.ended_at or 0.0) for a in attempts)
    assert len(spans) == 2 and spans[1][0] < spans[0][1], spans
    # The referee's files are its own; the replays are published now that the board is over.
    assert (out_dir / "results.sqlite").stat().st_mode & 0o077 == 0
    logs = list((out_dir / "logs").iterdir())
    assert logs and all(p.stat().st_mode & 0o077 == 0 for p in [out_dir / "logs", *logs])
    replays = sorted((out_dir / "replays").glob("*.jsonl"))
    assert len(replays) == 2 and all(p.stat().st_mode & 0o077 == 0 for p in replays)
    assert list((out_dir / "live").glob("*.jsonl")) == []


def forfeited(tmp_path: Path, mode: str, limit: str, marker: str) -> tuple[set[str], str, list[float]]:
    """A board where the hostile entrant never plays (`mode`) within `limit`: each game a forfeit
    of its team; the exit reasons stored, the run's output and each attempt's length in seconds."""
    write_key_pair(tmp_path / "keys" / "signing.pem")
    targets = {"pids": [], "files": [], "tcp": [], "marker": marker}
    config = parse_config(tournament(tmp_path, mode, targets, limit), tmp_path / "t.toml")
    out = io.StringIO()
    assert run_tournament(config, resume=False, out=out, live=False) == 0, out.getvalue()
    store = Store(config.database)
    try:
        games = store.games()
        reasons = {s.exit_reason for s in store.seat_stats() if s.exit_reason}
        lengths = [(a.ended_at or 0.0) - (a.started_at or 0.0) for a in store.attempts()]
    finally:
        store.close()
    # Ended by the host's word that the seat is gone, not by the start timeout (120 s here).
    assert [game.status for game in games] == ["finished", "finished"]
    for game in games:
        assert game.forfeit and game.forfeiting_team is not None
        assert game.players[game.forfeiting_team] == "hostile"
        assert re.search(r"seat \d was gone before it connected \(", game.reason or ""), game.reason
    return reasons, out.getvalue(), lengths


def cgroups_left_behind() -> list[Path]:
    """This process's bot cgroup folders still there once their processes have left and the
    folders left busy were tried again (as the next bot's start tries them)."""
    found = Cgroups.find()
    if found is None:
        return []
    folders = [
        f for parent in found.parent_folders() for f in parent.glob(f"{BOT_CGROUP_PREFIX}{os.getpid()}-*")
    ]

    def busy(folder: Path) -> bool:
        with contextlib.suppress(OSError):
            return bool((folder / "cgroup.procs").read_text().strip())
        return False

    while any(busy(folder) for folder in folders):
        time.sleep(0.05)  # killed: a process leaves its cgroup once the kernel has reaped it
    remove_left_behind()
    return [folder for folder in folders if folder.exists()]


def test_a_bot_s_forks_count_against_its_cpu_limit_and_die_with_it(tmp_path: Path) -> None:
    sandbox_or_skip()
    marker = f"tichu-hostile-burn-{os.getpid()}"
    reasons, output, _ = forfeited(tmp_path, "burn", "cpu_seconds = 2", marker)
    # Three children in sessions of their own spin: together they pass 2 s of CPU long before
    # any one of them would, and the whole tree is stopped for it.
    assert reasons == {"CPU limit of 2 s exceeded (by its processes together)"}, (reasons, output)
    assert survivors(marker) == [], "a spinning child outlived its game"
    # Its cgroup folders went with it (a killed tree's were left behind, one per bot per game).
    assert cgroups_left_behind() == []


def test_a_bot_killed_before_it_connects_ends_its_game_at_once_with_the_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    sandbox_or_skip()
    monkeypatch.setenv("TICHU_LOG_LEVEL", "warning")
    reasons, output, lengths = forfeited(tmp_path, "hog-first", "memory_mb = 150", "unused")
    why = "memory limit of 150 MiB exceeded"
    assert reasons == {why}  # the store's seat_stats
    # The run's output: a line as it happened, and the standings' section on forfeits.
    assert re.search(rf"seat \d \(hostile\) ended early: {why}", output), output
    assert re.search(rf"Forfeits and bots that ended early.*{why}", output, re.S), output
    # The log: the process's end and the seat's withdrawal, each with the reason.
    logged = [json.loads(line) for line in capsys.readouterr().err.splitlines() if line.startswith("{")]
    assert any(e["event"] == "bot_process_ended" and e["reason"] == why for e in logged), logged
    assert any(e["event"] == "seat_withdrawn" and why in e["reason"] for e in logged), logged
    assert cgroups_left_behind() == []
    assert lengths and max(lengths) < 10, lengths  # not the start timeout of 120 s


def test_every_socket_of_the_referee_is_bound_in_beside_the_first(tmp_path: Path) -> None:
    sandbox_or_skip()
    outside = tmp_path / "referee.sock"
    options = Sandbox(socket=outside, sockets=3).options(["true"], cwd=tmp_path, env={})
    binds = [tuple(options[i + 1 : i + 3]) for i, option in enumerate(options) if option == "--bind"]
    inside = SOCKET_INSIDE
    assert binds == [
        (str(outside), inside),
        (f"{outside}.1", f"{inside}.1"),
        (f"{outside}.2", f"{inside}.2"),
    ]
    assert Sandbox(socket=outside).addresses_inside() == [f"unix:{inside}"]
