"""A tournament's hosts on a Ray cluster: `tichu tournament run CONFIG --ray auto|HOST:PORT|local:N`.

Ray (the optional extra `.[ray]`) does the scheduling, the placement and the failure detection:
each host is a Ray actor pinned to its node (NodeAffinitySchedulingStrategy, not soft), by
default one per CPU the node offers, and the coordinator awaits its calls like any coroutine. A
node that dies fails the calls on its actors with RayActorError, which the coordinator turns into
HostLostError: those games are played again, as new attempts, on the hosts that remain. Ray is
imported only here and only when asked for, so a tournament on one machine never needs it.

The coordinator stays the only writer of the store and the replays: a Ray host writes each
replay to its own temporary folder and sends its text back with the outcome. A local cluster
(`local:N`) listens on loopback only and runs with Ray's token authentication (a token made for
the run); a cluster elsewhere is the organiser's, reached with the RAY_AUTH_* and RAY_TLS_*
settings of the environment, and a warning when it has no token. Either way it belongs on a
private network, and untrusted bots never join it (they connect over gRPC to the host that holds
their game, and the coordinator tells them where).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import secrets
import shutil
import signal
import socket
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from referee.server.service import Traffic
from referee.tournament.config import Entrant, TournamentConfig
from referee.tournament.host import (
    GameHost,
    GameOrder,
    GameOutcome,
    Host,
    HostError,
    HostLostError,
    RemoteSeat,
    code_hash,
)

T = TypeVar("T")
DEFAULT_GAMES_PER_HOST = 2  # one playing, one starting: enough to hide set-up, few enough to stop early
LOCAL_NODE_MEMORY = 128 * 2**20  # object store per node of a local cluster (replays are ~100 KB)
RAY_MISSING = "Ray is not installed here: `pip install 'tichu-referee[ray]'` (or `pip install ray`)"
NO_RAY_TOKEN = (
    "warning: the Ray cluster at {target} is reached without token authentication: anyone who can "
    "reach its ports can run code on it. Start every node, and this coordinator, with "
    "RAY_AUTH_MODE=token and the same RAY_AUTH_TOKEN (or RAY_AUTH_TOKEN_PATH): see the README's "
    "section on Ray"
)
# Set for a local cluster's processes (they inherit them) and its driver: token authentication,
# and loopback for every socket (on Linux, Ray would otherwise advertise the machine's address
# and listen on all interfaces).
_LOCAL_ENVIRONMENT = {"RAY_AUTH_MODE": "token", "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"}
# How long the head waits for its GCS to bind its port, per attempt. Over 300 local starts on a
# loaded 2-core machine the GCS wrote its port at most 0.53 s after it opened its log; the starts
# that missed Ray's 30 s (three CI runs) had no GCS log at all: the child never reached exec (a fork
# of a process full of gRPC threads, Ray's preexec_fn run in it). Waiting longer only delays the
# retry below, so each attempt waits a minute. Set only while the head starts: a process that joins
# later (and Ray's other waits) keep Ray's own.
GCS_PORT_WAIT_S = "60"
# A node that did not start (its raylet missed Ray's fixed 30 s to register, or the head's GCS never
# wrote its port) is started again, this many times in all.
NODE_START_ATTEMPTS = 3
NODE_START_FAILURES = ("timed out during startup", "Timed out waiting for file")
GCS_PORT_WAIT_ENV = "RAY_gcs_server_port_wait_time_s"  # Ray's own spelling


@contextmanager
def _patient_head_start() -> Iterator[None]:
    """GCS_PORT_WAIT_S for the head's start, unless the organiser chose a wait of their own."""
    chosen = os.environ.get(GCS_PORT_WAIT_ENV)
    os.environ[GCS_PORT_WAIT_ENV] = chosen or GCS_PORT_WAIT_S
    try:
        yield
    finally:
        if chosen is None:
            os.environ.pop(GCS_PORT_WAIT_ENV, None)


# One token per coordinator process, made when first needed.
_LOCAL_TOKEN: list[str] = []


@contextmanager
def _local_ray_environment() -> Iterator[None]:
    """The environment of a local cluster for as long as it runs; the caller's afterwards."""
    if not _LOCAL_TOKEN:
        _LOCAL_TOKEN.append(secrets.token_urlsafe(32))
    settings = {**_LOCAL_ENVIRONMENT, "RAY_AUTH_TOKEN": _LOCAL_TOKEN[0]}
    saved = {name: os.environ.get(name) for name in settings}
    import ray._private.ray_constants as constants

    saved_flag = constants.ENABLE_RAY_CLUSTER
    os.environ.update(settings)
    # Ray reads these once, at import: the driver must see what the nodes it starts see. (The
    # same calls Ray makes itself when it turns token authentication on for a local ray.init.)
    constants.ENABLE_RAY_CLUSTER = False
    _reload_ray_settings()
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        constants.ENABLE_RAY_CLUSTER = saved_flag
        _reload_ray_settings()


def _reload_ray_settings() -> None:
    """Make this process's Ray read its settings (the authentication mode, the token) again."""
    from ray._raylet import AuthenticationTokenLoader, Config  # type: ignore[attr-defined]

    Config.initialize("")
    AuthenticationTokenLoader.instance().reset_cache()


def _retrying_start(start: Callable[[], T]) -> T:
    """Start a node of a local cluster, again after one of Ray's waits for its processes ran out
    (NODE_START_FAILURES: a loaded 2-core machine, CI runs saw both): the half-started node's
    processes, this process's children since the attempt began, are ended first."""
    for attempt in range(1, NODE_START_ATTEMPTS + 1):
        before = _children()
        try:
            return start()
        except Exception as error:
            retryable = any(failure in str(error) for failure in NODE_START_FAILURES)
            if not retryable or attempt == NODE_START_ATTEMPTS:
                raise
            for pid in _children() - before:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(1.0)
    raise AssertionError("unreachable")


def _children() -> set[int]:
    """The ids of this process's children (Linux's /proc; elsewhere none are known)."""
    me = str(os.getpid())
    found = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, IndexError):
            # The command's name is in parentheses and may hold spaces: the fields after it.
            fields = stat.read_text().rpartition(")")[2].split()
            if fields[1] == me:
                found.add(int(stat.parent.name))
    return found


class LocalCluster:
    """A Ray cluster of N nodes on this machine: every socket on 127.0.0.1, token authentication
    on, each node given its share of the cores; the driver joins it with `ray.init(address)`."""

    def __init__(self, nodes: int, *, cpus_per_node: int = 0) -> None:
        from ray.cluster_utils import Cluster

        self._environment = _local_ray_environment()
        self._environment.__enter__()
        try:
            self.node_args: dict[str, Any] = {
                "num_cpus": cpus_per_node or max(1, (os.cpu_count() or 1) // nodes),
                "object_store_memory": LOCAL_NODE_MEMORY,
                "node_ip_address": "127.0.0.1",
                "include_dashboard": False,
            }
            with _patient_head_start():
                self._cluster = _retrying_start(
                    lambda: Cluster(initialize_head=True, head_node_args=dict(self.node_args))
                )
            for _ in range(nodes - 1):
                _retrying_start(lambda: self._cluster.add_node(**self.node_args))
            self._cluster.wait_for_nodes()
        except BaseException:
            self._environment.__exit__(*sys.exc_info())
            raise
        self.address: str = self._cluster.address

    def add_node(self) -> Any:
        """One more node, like the others; its Ray node handle."""
        node = _retrying_start(lambda: self._cluster.add_node(**self.node_args))
        self._cluster.wait_for_nodes()
        return node

    def remove_node(self, node: Any) -> None:
        """Take a node away, as a machine that died."""
        self._cluster.remove_node(node)

    def shutdown(self) -> None:
        """Stop every node and give the caller its environment back."""
        try:
            self._cluster.shutdown()  # type: ignore[no-untyped-call]
        finally:
            self._environment.__exit__(None, None, None)


@dataclass(frozen=True, slots=True)
class RayTarget:
    """Which cluster: `auto` (the one `ray start` made here), an address, or a local one of N nodes."""

    address: str  # "auto", "HOST:PORT", or "" for a local cluster
    local_nodes: int = 0

    def __str__(self) -> str:
        return f"local:{self.local_nodes}" if self.local_nodes else self.address


def parse_ray_target(text: str) -> RayTarget:
    """`auto`, `HOST:PORT` or `local:N` (N from 1 to 16); ValueError with what is expected."""
    if text == "auto":
        return RayTarget("auto")
    local = re.fullmatch(r"local:(\d+)", text)
    if local:
        nodes = int(local.group(1))
        if not 1 <= nodes <= 16:
            raise ValueError(f"--ray local:N takes 1 to 16 nodes, not {nodes}")
        return RayTarget("", nodes)
    if re.fullmatch(r"[^\s:]+:\d{1,5}|\[[0-9a-fA-F:]+\]:\d{1,5}", text):
        return RayTarget(text)
    raise ValueError(f"--ray takes auto, HOST:PORT (the head's GCS address) or local:N, not {text!r}")


class _HostActor:
    """The body of a Ray host actor: a GameHost on its node's event loop."""

    def __init__(self, config: TournamentConfig, name: str, capacity: int, listen: str) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="tichu-host-"))
        self.host = GameHost(
            config,
            name,
            listen=listen,
            replay_dir=self.folder / "replays",
            log_dir=self.folder / "logs",
            send_replays=True,
            capacity=capacity,
        )

    async def start(self, expected_code: str, advertise: str) -> tuple[str, str]:
        """Start the referee and bots unless this node runs other code; (address, its code hash)."""
        found = code_hash()
        if found != expected_code:
            return "", found
        return await self.host.start(advertise), found

    async def logs(self) -> str:
        """Where this host's bots' logs are, on its machine."""
        return self.host.logs

    async def isolation(self) -> str:
        """How this host's bots are walled in and held to their limits, on its machine."""
        return self.host.isolation

    async def open(self, order: GameOrder) -> list[RemoteSeat]:
        """GameHost.open."""
        return await self.host.open(order)

    async def admit(self, entrant: Entrant) -> None:
        """GameHost.admit (an arena's bot, let in while the host runs)."""
        await self.host.admit(entrant)

    async def dismiss(self, name: str) -> None:
        """GameHost.dismiss."""
        await self.host.dismiss(name)

    async def finish(self, match_id: str) -> GameOutcome:
        """GameHost.finish."""
        return await self.host.finish(match_id)

    async def traffic(self) -> Traffic:
        """The host's referee traffic."""
        return self.host.traffic

    async def stop(self) -> None:
        """Stop the host and remove its replays (the coordinator has them); its bots' logs stay
        on this machine, in the folder the coordinator printed."""
        await self.host.stop()
        shutil.rmtree(self.folder / "replays", ignore_errors=True)


class RayHost:
    """The coordinator's handle on one host actor."""

    def __init__(self, actor: Any, name: str, capacity: int, node_id: str) -> None:
        self.actor = actor
        self.name = name
        self.capacity = capacity
        self.node_id = node_id
        self.address = ""
        self.logs = ""
        self.isolation = ""
        self.lost = False

    async def _call(self, method: str, *args: Any) -> Any:
        import ray.exceptions

        try:
            return await getattr(self.actor, method).remote(*args)
        except (ray.exceptions.RayActorError, ray.exceptions.ActorUnavailableError) as error:
            self.lost = True
            first_line = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
            raise HostLostError(first_line) from None

    async def open(self, order: GameOrder) -> list[RemoteSeat]:
        """Create the game on the actor's referee."""
        seats: list[RemoteSeat] = await self._call("open", order)
        return seats

    async def finish(self, match_id: str) -> GameOutcome:
        """The game's outcome from the actor."""
        outcome: GameOutcome = await self._call("finish", match_id)
        return outcome

    async def admit(self, entrant: Entrant) -> None:
        """Let a local entrant in on the actor's host (an arena's hosted bot)."""
        await self._call("admit", entrant)

    async def dismiss(self, name: str) -> None:
        """End a local entrant's processes on the actor's host."""
        await self._call("dismiss", name)


class RayFleet:
    """Hosts on every alive node of a Ray cluster, started and stopped with the run."""

    def __init__(
        self, target: RayTarget, *, hosts_per_node: int = 0, games_per_host: int = DEFAULT_GAMES_PER_HOST
    ) -> None:
        self.target = target
        self.hosts_per_node = hosts_per_node
        self.games_per_host = games_per_host
        self.hosts: list[RayHost] = []
        self.primary_address = ""  # every game names its host's referee to remote bots
        self._cluster: LocalCluster | None = None
        self._traffic = Traffic()

    async def start(self, config: TournamentConfig) -> list[Host]:
        """Connect to (or start) the cluster and start a host on every node; HostError if none can play."""
        try:
            import ray
            from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy
        except ImportError:
            raise HostError(RAY_MISSING) from None
        # On this thread: Ray sets signal handlers as it starts a node, which only the main thread may.
        self._connect(ray)
        expected = code_hash()
        remote_entrants = any(entrant.remote for entrant in config.entrants)
        # Bots on the host's own machine reach it on loopback; remote bots need the node's address.
        listen = "0.0.0.0:0" if remote_entrants else "127.0.0.1:0"
        actor_class = ray.remote(_HostActor)
        starting = []
        nodes: list[dict[str, Any]] = ray.nodes()  # type: ignore[no-untyped-call]
        for node in sorted(nodes, key=lambda n: str(n["NodeID"])):
            if not node.get("Alive"):
                continue
            node_id = str(node["NodeID"])
            cpus = int(node.get("Resources", {}).get("CPU", 1))
            count = self.hosts_per_node or max(1, cpus)
            for index in range(count):
                name = f"{node.get('NodeManagerHostname') or socket.gethostname()}/{node_id[:8]}/{index}"
                actor = actor_class.options(
                    # A host is one referee process: one CPU, so Ray places one per core.
                    num_cpus=min(1, cpus),
                    scheduling_strategy=NodeAffinitySchedulingStrategy(node_id, soft=False),
                    max_restarts=0,  # a host that died is lost; its games go to the others
                ).remote(config, name, self.games_per_host, listen)
                host = RayHost(actor, name, self.games_per_host, node_id)
                advertise = str(node.get("NodeManagerAddress") or "") if remote_entrants else ""
                starting.append((host, host.actor.start.remote(expected, advertise)))
        if not starting:
            raise HostError(f"the Ray cluster at {self.target} has no alive node")
        for host, started in starting:
            address, found = await started
            if not address:
                raise HostError(
                    f"host {host.name} runs other code than this coordinator (hash {found[:12]}, "
                    f"here {expected[:12]}): install the same release (or checkout) on every node"
                )
            host.address = address
            host.logs = await host.actor.logs.remote()
            host.isolation = await host.actor.isolation.remote()
            self.hosts.append(host)
        return list(self.hosts)

    def _connect(self, ray: Any) -> None:
        if self.target.local_nodes:
            self._cluster = LocalCluster(self.target.local_nodes)
            address = self._cluster.address
        else:
            address = self.target.address
            if os.environ.get("RAY_AUTH_MODE") != "token":
                print(NO_RAY_TOKEN.format(target=self.target), file=sys.stderr)
        try:
            ray.init(address=address, log_to_driver=False, logging_level="ERROR", configure_logging=True)
        except ConnectionError as error:
            self._disconnect(ray)
            raise HostError(f"cannot reach the Ray cluster at {self.target}: {error}") from None

    async def stop(self) -> None:
        """Stop the hosts that are left, disconnect, and end a local cluster."""
        import ray

        for host in self.hosts:
            if host.lost:
                continue
            try:
                self._traffic = _add_traffic(self._traffic, await host.actor.traffic.remote())
                await asyncio.wait_for(host.actor.stop.remote(), 30)
            except Exception:  # a host that fails to stop is killed below all the same
                pass
            ray.kill(host.actor)
        self.hosts = []
        self._disconnect(ray)

    def _disconnect(self, ray: Any) -> None:
        ray.shutdown()
        if self._cluster is not None:
            self._cluster.shutdown()
            self._cluster = None

    def traffic(self) -> Traffic:
        """The traffic of the hosts stopped so far."""
        return self._traffic

    def describe(self, config: TournamentConfig) -> str:
        """`on Ray (local:2): 2 hosts, 2 games each at a time`."""
        hosts = f"{len(self.hosts)} hosts" if self.hosts else "a host per CPU"
        return f"on Ray ({self.target}): {hosts}, {self.games_per_host} games each at a time"


def _add_traffic(total: Traffic, more: Traffic) -> Traffic:
    return Traffic(
        writes=total.writes + more.writes,
        sent=total.sent + more.sent,
        received=total.received + more.received,
    )
