"""Tournaments on a Ray cluster of two nodes on this machine (the [ray] extra; `make test` installs it).

The bars of the distributed runner: the same seeded tournament stores the same score for every
game in one process and on Ray, and the Ray run used both nodes; a node killed in the middle of
a run costs nothing but time: its games are played again as new attempts on the node that is
left, and the standings equal those of an undisturbed run.
"""

from __future__ import annotations

import asyncio
import io
import re
import shutil
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from referee.tournament import cluster
from referee.tournament.cluster import LocalCluster, RayFleet, RayTarget, parse_ray_target
from referee.tournament.config import TournamentConfig, parse_config
from referee.tournament.host import GameOrder, Host, RemoteSeat
from referee.tournament.report import format_table
from referee.tournament.runner import run_tournament, stored_standings
from referee.tournament.store import Store
from tests.tournament.support import HEURISTIC, OUTPUTS, RANDOM

ray = pytest.importorskip("ray", reason="Ray is the [ray] extra: pip install -e '.[ray]' (make test does)")

CONFIG = f"""
[tournament]
name = "ray"
seed = "ray-seed"
games_per_pairing = 8        # four duplicate board pairs
concurrency = 4
{OUTPUTS}
[rules]
match_mode = "fixed_rounds:1"

[sprt]
stop_early = false
{RANDOM}{HEURISTIC}"""


def _config(folder: Path, text: str = CONFIG) -> TournamentConfig:
    folder.mkdir(parents=True, exist_ok=True)
    return parse_config(text, folder / "t.toml")


def _node_config(monkeypatch: pytest.MonkeyPatch) -> str:
    """CONFIG with the Node example bot (examples/node, a command) in RandomBot's place."""
    from tests.server.test_node_example import NODE, NPM, ROOT, installed_example

    if NODE is None or NPM is None:
        pytest.skip("node and npm are not installed (apt-get install nodejs npm): no Node bot to run")
    folder = installed_example()
    # The bot's copy is not beside proto/; set before Ray starts its nodes, which inherit it.
    monkeypatch.setenv("TICHU_PROTO_DIR", str(ROOT / "proto"))
    node = (
        f'\n[[entrants]]\nname = "node"\ncommand = "node bot.js {{server}} {{token}}"\nworkdir = "{folder}"\n'
    )
    return CONFIG.replace(RANDOM, node)


def _scores(config: TournamentConfig) -> dict[str, tuple[int | None, int | None]]:
    store = Store(config.database)
    try:
        return {row.game_id: (row.score_even, row.score_odd) for row in store.games()}
    finally:
        store.close()


def _standings(config: TournamentConfig) -> str:
    store = Store(config.database)
    try:
        return format_table(stored_standings(config, store.games()), config.duplicate)
    finally:
        store.close()


def _play_here(folder: Path, text: str = CONFIG) -> TournamentConfig:
    config = _config(folder, text)
    out = io.StringIO()
    assert run_tournament(config, resume=False, out=out, live=False) == 0, out.getvalue()
    return config


def test_parse_ray_target() -> None:
    assert parse_ray_target("auto") == RayTarget("auto")
    assert parse_ray_target("10.0.0.5:6379") == RayTarget("10.0.0.5:6379")
    assert parse_ray_target("local:3") == RayTarget("", 3)
    for wrong in ("local:0", "local:x", "10.0.0.5", ""):
        with pytest.raises(ValueError, match="--ray"):
            parse_ray_target(wrong)


def test_a_node_whose_start_hung_is_killed_and_started_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """A head whose GCS never wrote its port (the child stuck before exec: three CI runs, no GCS
    log) is retried; what the failed attempt left running is killed first."""
    monkeypatch.setattr("referee.tournament.cluster.time.sleep", lambda seconds: None)
    stuck: list[subprocess.Popen[bytes]] = []
    gcs_missed = "Timed out waiting for file /tmp/ray/session_x/gcs_server_port_0123abcd"

    def start() -> str:
        if not stuck:
            stuck.append(subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"]))
            raise RuntimeError(gcs_missed)
        return "node"

    assert cluster._retrying_start(start) == "node"
    assert stuck[0].wait(timeout=60) == -signal.SIGKILL

    calls: list[str] = []

    def never(message: str) -> Any:
        calls.append(message)
        raise RuntimeError(message)

    with pytest.raises(RuntimeError, match="gcs_server_port"):
        cluster._retrying_start(lambda: never(gcs_missed))
    assert len(calls) == cluster.NODE_START_ATTEMPTS
    calls.clear()
    with pytest.raises(RuntimeError, match="another failure"):
        cluster._retrying_start(lambda: never("another failure"))
    assert len(calls) == 1  # not a start that timed out: no second attempt


def test_ray_local_two_nodes_stores_the_scores_of_one_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # One entrant is not Python: the Node example bot, run as a command on each host.
    text = _node_config(monkeypatch)
    here = _play_here(tmp_path / "here", text)
    config = _config(tmp_path / "ray", text)
    fleet = RayFleet(RayTarget("", 2))
    out = io.StringIO()
    assert run_tournament(config, resume=False, out=out, live=False, fleet=fleet) == 0, out.getvalue()
    assert _scores(config) == _scores(here)
    assert None not in {score for pair in _scores(config).values() for score in pair}
    store = Store(config.database)
    try:
        hosts = {game.host for game in store.games()}
    finally:
        store.close()
    # The store names each game's host (machine/node/index): both nodes played.
    assert len({host.split("/")[1] for host in hosts}) == 2, hosts
    # Each host's bots' logs stay on its machine, where the coordinator said they are.
    folders = re.findall(r"^Host \S+: referee on \S+, bot logs in (\S+)$", out.getvalue(), re.M)
    assert len(folders) == 2 and all(any(Path(f).glob("*-node.log")) for f in folders), folders
    for folder in folders:
        shutil.rmtree(Path(folder).parent)
    assert _standings(config) == _standings(here)
    store = Store(config.database)
    try:
        assert {"node", "heuristic"} == {p for game in store.games() for p in game.players}
    finally:
        store.close()


class _NodeKiller(RayFleet):
    """A fleet that takes the worker node away right after its host opened its first game."""

    def __init__(self, target: RayTarget, cluster: Any, worker: Any) -> None:
        super().__init__(target)
        self._test_cluster = cluster
        self.worker = worker
        self.killed = threading.Event()

    async def start(self, config: TournamentConfig) -> list[Host]:
        hosts = await super().start(config)
        for host in self.hosts:
            if host.node_id == self.worker.node_id:
                opened = host.open

                async def open_then_kill(order: GameOrder, opened: Any = opened) -> list[RemoteSeat]:
                    seats: list[RemoteSeat] = await opened(order)
                    if not self.killed.is_set():
                        self.killed.set()
                        await asyncio.to_thread(self._test_cluster.remove_node, self.worker)
                    return seats

                host.open = open_then_kill  # type: ignore[method-assign]
        return hosts


def test_a_killed_node_s_games_are_played_again_as_new_attempts(tmp_path: Path) -> None:
    here = _play_here(tmp_path / "here")
    cluster = LocalCluster(1, cpus_per_node=1)
    try:
        worker = cluster.add_node()
        config = _config(tmp_path / "ray")
        fleet = _NodeKiller(RayTarget(cluster.address), cluster, worker)
        out = io.StringIO()
        code = run_tournament(config, resume=False, out=out, live=False, fleet=fleet)
    finally:
        cluster.shutdown()
    assert fleet.killed.is_set()
    assert code == 0, out.getvalue()
    assert "lost" in out.getvalue()
    store = Store(config.database)
    try:
        games = store.games()
        attempts = store.attempts()
    finally:
        store.close()
    assert {game.status for game in games} == {"finished"}
    lost = [a for a in attempts if a.outcome == "lost"]
    assert lost, attempts
    worker_node = fleet.worker.node_id[:8]
    assert all(worker_node in a.host and "lost" in (a.failure_reason or "") for a in lost)
    by_game = {game.game_id: game for game in games}
    for attempt in lost:  # each lost game was played again, as a later attempt, on the other node
        game = by_game[attempt.game_id]
        assert game.attempts > attempt.attempt and worker_node not in game.host
    assert _scores(config) == _scores(here)
    assert _standings(config) == _standings(here)


def test_a_host_that_runs_other_code_refuses_to_play(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from referee.tournament.cluster import _HostActor
    from referee.tournament.host import code_hash

    package = tmp_path / "somebot"
    package.mkdir()
    (package / "__init__.py").write_text("X = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    before = code_hash(["somebot"])
    (package / "__init__.py").write_text("X = 2\n")
    assert code_hash(["somebot"]) != before  # a changed file changes the hash
    assert code_hash(["somebot", "referee"]) != code_hash(["somebot"])

    actor = _HostActor(_config(tmp_path / "host"), "h", 1, "127.0.0.1:0")
    address, found = asyncio.run(actor.start("0" * 64, ""))
    assert (address, found) == ("", code_hash())  # it started nothing, and says what it runs
    assert actor.host.running is None
    asyncio.run(actor.stop())
    assert not (actor.folder / "replays").exists()  # the coordinator has them; the logs stay
    shutil.rmtree(actor.folder)


def _descendants(pid: int) -> set[int]:
    """The processes under `pid`, from /proc."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    found: set[int] = set()
    frontier = {pid}
    while frontier:
        frontier = {child for child, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def _listening_addresses(pids: set[int]) -> set[str]:
    """The local address (IP part, as /proc writes it) of every listening TCP socket of `pids`."""
    inodes: set[str] = set()
    for pid in pids:
        try:
            for fd in Path(f"/proc/{pid}/fd").iterdir():
                target = str(fd.readlink()) if fd.is_symlink() else ""
                if target.startswith("socket:["):
                    inodes.add(target[8:-1])
        except OSError:
            continue
    addresses = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] == "0A" and fields[9] in inodes:  # 0A: LISTEN
                addresses.add(fields[1].rsplit(":", 1)[0])
    return addresses


# 127.0.0.1, ::1 and ::ffff:127.0.0.1, as /proc writes them
LOOPBACK = {"0100007F", "00000000000000000000000001000000", "0000000000000000FFFF00000100007F"}


def test_a_local_cluster_listens_on_loopback_only_and_refuses_a_process_without_its_token() -> None:
    """Issue 29, part 4: `--ray local:N` is reachable from this machine only, and only with the token."""
    import os
    import subprocess
    import sys

    cluster = LocalCluster(1, cpus_per_node=1)
    try:
        listening = _listening_addresses(_descendants(os.getpid()))
        assert listening and listening <= LOOPBACK, listening
        join = (
            f"import ray; ray.init(address={cluster.address!r}); "
            "print(ray.get(ray.remote(lambda: 'ran').remote()))"
        )
        # A process on this machine that knows the address (and sets what makes Ray use loopback).
        environment = {k: v for k, v in os.environ.items() if not k.startswith("RAY_AUTH")}
        attempts = {
            "without a token": environment,
            "with another token": {**environment, "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": "x" * 43},
        }
        for label, env in attempts.items():
            joined = subprocess.run(
                [sys.executable, "-c", join],
                check=False,
                env=env,
                capture_output=True,
                text=True,
                timeout=120,
            )
            told = (label, joined.stdout, joined.stderr[-2000:])
            assert joined.returncode != 0 and "ran" not in joined.stdout, told
            assert "Failed to connect" in joined.stderr or "nauthenticated" in joined.stderr, told
        # The driver of this process, which has the token, is let in.
        ray.init(address=cluster.address, log_to_driver=False, logging_level="ERROR")
        try:
            assert ray.get(ray.remote(lambda: "ran").remote()) == "ran"
        finally:
            ray.shutdown()
    finally:
        cluster.shutdown()
    assert "RAY_AUTH_TOKEN" not in os.environ  # the caller's environment is given back
