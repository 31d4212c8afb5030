"""A host: one referee and its entrants' bot processes, playing the games a coordinator sends it.

The tournament's coordinator (runner.py) decides what is played and keeps the store; a host only
plays. It runs an in-process referee (start_server) with the bot workers beside it, and for each
game order creates the match, hands the seats to the workers (or to remote bots, through the
coordinator), waits for the end and sends back a `GameOutcome`: the match core's MatchResult as it
made it (its outcome, each round's score, each seat's statistics), the seats' early exits, the
host's name and, for a host on another machine, the replay itself. One host runs inside the
coordinator's process when the tournament is not on Ray; on Ray each host is an actor pinned to
its node (cluster.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import hashlib
import importlib.util
import secrets
import shutil
import socket
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import grpc

from referee.match.clock import ClockSettings
from referee.match.messages import MatchResult
from referee.match.outcome import Termination
from referee.replay.signing import KeyFileError
from referee.rules import RulesError
from referee.sandbox import NO_SANDBOX, Sandbox, SandboxUnavailableError, check_available
from referee.server.front import MatchExistsError
from referee.server.serve import RunningServer, ServerSettings, start_server
from referee.server.service import Traffic
from referee.server.table import Table
from referee.tournament.bots import EntrantProcesses
from referee.tournament.config import Entrant, TournamentConfig
from referee.tournament.process_limits import enforcement

# The Unix sockets a host's sandboxed bots reach its referee on, each on its own accept loop (a
# loop serves its connections' calls one at a time). 512 one-deal games at once at a 200 ms limit
# (docs/develop/benchmarks.md, "512 games at once"): through one socket 183 and 1,021 of about
# 44,000 decisions timed out; through 2, 4 (twice) and 8, none; through 16, 322 and 888 (every
# seat's connection costs the referee CPU: four workers then hold 64).
SANDBOX_SOCKETS = 4
# What a host must share with its coordinator to play the same games the same way: the
# referee (rules, match, server, replay) and the sample bots and SDK that local entrants run.
CODE_PACKAGES = ("referee", "clients")


class HostError(Exception):
    """A host cannot play (its referee did not start, or it runs other code than its coordinator)."""


@dataclass(frozen=True, slots=True)
class GameOrder:
    """One game for a host to play: the match to create and who sits where."""

    game_id: str
    match_id: str
    seed: str
    salt: str
    players: tuple[str, ...]  # the entrant at each seat
    rng_seeds: tuple[str, ...]  # each seat's bot's seed (local entrants)


@dataclass(frozen=True, slots=True)
class RemoteSeat:
    """A seat that a remote entrant plays: where to connect and the line to hand its worker."""

    game_id: str
    match_id: str
    seat: int
    entrant: str
    server: str
    line: str  # TOKEN NAME RNG_SEED, as `tichu tournament worker` reads it


@dataclass(frozen=True, slots=True)
class GameOutcome:
    """What a host sends back for a game order."""

    game_id: str
    match_id: str
    host: str
    started_at: float  # wall time
    ended_at: float
    result: MatchResult | None  # None: the game did not finish (then `failure` says why)
    failure: str = ""
    exit_reasons: dict[int, str] = field(default_factory=dict)  # seat -> why its bot ended early
    replay_text: str | None = None  # only from a host whose replays are not the coordinator's files


def code_hash(packages: Iterable[str] = CODE_PACKAGES) -> str:
    """SHA-256 over the Python source of the packages this process imports (paths and bytes).

    A coordinator and its hosts compare it before any game: a node that was set up from another
    checkout would play by other rules or other bots, and its results would not belong in the
    tournament."""
    digest = hashlib.sha256()
    for package in packages:
        # Found, not imported: the referee does not import the SDK (clients), it hashes it.
        spec = importlib.util.find_spec(package)
        if spec is None or spec.origin is None:
            digest.update(f"{package}: not installed\0".encode())
            continue
        root = Path(spec.origin).parent
        for path in sorted(root.rglob("*.py")):
            digest.update(path.relative_to(root.parent).as_posix().encode() + b"\0")
            digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


class GameHost:
    """A referee and the bot processes of the local entrants, playing game orders."""

    def __init__(
        self,
        config: TournamentConfig,
        name: str = "",
        *,
        listen: str | None = None,
        replay_dir: Path | None = None,
        log_dir: Path | None = None,
        send_replays: bool = False,
        capacity: int = 1,
        services: tuple[tuple[str, Callable[[grpc.aio.Server], None]], ...] = (),
    ) -> None:
        self.config = config
        self.name = name or socket.gethostname()
        self.listen = config.listen if listen is None else listen
        self.replay_dir = config.replay_dir if replay_dir is None else replay_dir
        self.log_dir = config.output_dir / "logs" if log_dir is None else log_dir
        self.send_replays = send_replays
        self.capacity = capacity  # games in flight at once (the coordinator keeps to it)
        self.services = services  # more gRPC services on the referee's port (an arena's lobby)
        self.running: RunningServer | None = None
        self.bots: dict[str, EntrantProcesses] = {}
        self._games: dict[str, tuple[GameOrder, Table, float]] = {}
        self._tables: dict[
            str, Table
        ] = {}  # the games opened and not finished: a bot gone for good withdraws
        self._socket_dir: Path | None = None
        self._bot_sandbox: Sandbox | None = None
        self._refused: dict[str, GameOutcome] = {}
        self._advertised = ""
        self._traffic = Traffic()
        self.address = ""
        self.logs = str(self.log_dir)  # where bots connect, once started
        self.isolation = ""  # how its bots are walled in and held to their limits, once started

    @property
    def traffic(self) -> Traffic:
        """The referee's Play streams so far, kept after it stopped (the bench reads it then)."""
        return self._traffic if self.running is None else self.running.service.traffic

    async def start(self, advertise: str = "") -> str:
        """Start the referee and the bot processes; the address bots connect to.

        `advertise` is the host name remote bots reach this machine by (a Ray node's address);
        the referee's own listen address is used when it is empty."""
        token = secrets.token_urlsafe(24)
        sandbox = self._sandbox()
        try:
            # The referee writes each match's replay to replay_dir/<match_id>.jsonl. An
            # interrupted game is played again from its first deal under a new match id, so the
            # referee must not continue old matches from their replays by itself (resume=False).
            settings = ServerSettings(
                self.listen,
                token,
                tls_cert=self.config.tls_cert,
                tls_key=self.config.tls_key,
                insecure=self.config.tls_cert is None,
                # With TLS for the remote bots, this host's own bots still talk plaintext on
                # loopback: they are on this machine, and need no certificate for its name.
                plaintext_loopback=self.config.tls_cert is not None,
                defaults=self.config.clock,
                replay_dir=self.replay_dir,
                resume=False,
                signing_key=self.config.signing_key,
                unix_socket=None if sandbox is None else sandbox.socket,
                more_unix_sockets=() if sandbox is None else tuple(sandbox.socket_paths()[1:]),
                services=self.services,
            )
            self.running = await start_server(settings)
        except (OSError, KeyFileError) as error:
            self._remove_socket_dir()
            raise HostError(f"cannot start the referee: {error}") from None
        address = self.running.address
        if advertise:
            address = f"{advertise}:{self.running.port}"
        local = self.running.loopback_address or self.running.address
        self._bot_sandbox = sandbox
        try:
            self.bots = {
                entrant.name: EntrantProcesses(
                    entrant, local, self.log_dir, sandbox=sandbox, on_down=self._seat_down
                )
                for entrant in self.config.entrants
                if not entrant.remote
            }
        except ValueError as error:  # limits this machine cannot apply (its CPUs, say)
            await self.running.stop()
            self.running = None
            self._remove_socket_dir()
            raise HostError(f"host {self.name}: {error}") from None
        self._advertised = self.address = address
        return address

    async def admit(self, entrant: Entrant) -> None:
        """Let a local entrant in while the host runs (an arena's newcomer, or a new version of a
        bot: its old processes end first); its processes start when its first seat comes."""
        assert self.running is not None, "start() first"
        old = self.bots.pop(entrant.name, None)
        if old is not None:
            await old.stop()
        local = self.running.loopback_address or self.running.address
        self.bots[entrant.name] = EntrantProcesses(
            entrant, local, self.log_dir, sandbox=self._bot_sandbox, on_down=self._seat_down
        )

    async def dismiss(self, name: str) -> None:
        """End a local entrant's processes (a bot disabled in an arena)."""
        processes = self.bots.pop(name, None)
        if processes is not None:
            await processes.stop()

    async def check_entrants(self, timeout_s: float) -> dict[str, str]:
        """Before any game: each local entrant's bots take the four seats of a scratch match of
        their own, all at once; why each entrant that could not failed (its process's end and
        the last lines of its log), by name. A bot that loads and connects passes; one that
        cannot be found or loaded, or exits, fails within seconds; one that stays and never
        connects, after `timeout_s`."""
        assert self.running is not None, "start() first"
        checks = [self._check(name, processes, timeout_s) for name, processes in self.bots.items()]
        return {name: why for name, why in await asyncio.gather(*checks) if why}

    async def _check(self, name: str, processes: EntrantProcesses, timeout_s: float) -> tuple[str, str]:
        assert self.running is not None
        match_id = f"check-{name}-{secrets.token_hex(3)}"
        config = self.config
        entry = self.running.service.referee.create(
            config.rules,
            clock=config.clock,
            seed=f"check-{name}",
            bot_names=[name] * len(order_seats(config)),
            match_id=match_id,
        )
        table, tokens = entry.table, entry.tokens
        self._tables[match_id] = table
        why = ""
        try:
            for seat, token in enumerate(tokens):
                await processes.give(match_id, seat, token, f"check/{name}/{seat}")
            deadline = time.monotonic() + timeout_s
            while not all(seat.connected for seat in table.seat_info()):
                if table.finished.is_set():  # a seat was withdrawn: its process is down for good
                    why = "its process ended before it connected"
                    break
                if time.monotonic() > deadline:
                    why = f"it did not connect within {timeout_s:g} s"
                    break
                await asyncio.sleep(0.05)
        finally:
            self._tables.pop(match_id, None)
            await table.stop("the entrant check is over")
            exits = processes.release(match_id)
            self.running.service.forget(match_id)
            with contextlib.suppress(OSError):
                (self.replay_dir / f"{match_id}.jsonl").unlink()
        if not why:
            return name, ""
        # Each seat's last word; a process restarted after a crash is not the end of the story.
        ended = sorted({reason for reason in exits.values() if not reason.endswith("restarted")})
        tail = _log_tail(
            [*self.log_dir.glob(f"{match_id}-seat*.log"), *self.log_dir.glob(f"worker-{name}-*.log")]
        )
        return name, "; ".join(ended or [why]) + (f": {tail}" if tail else "")

    def _sandbox(self) -> Sandbox | None:
        """The sandbox of this host's bots (None: none asked for, or no local entrant); the
        private folders it hides are made here, mode 0700, before any bot starts."""
        config = self.config
        if all(entrant.remote for entrant in config.entrants):
            return None
        if not config.sandbox:
            self.isolation = f"bots without a sandbox (--no-sandbox: {NO_SANDBOX}); {enforcement()}"
            return None
        try:
            isolation = check_available()
        except SandboxUnavailableError as error:
            raise HostError(str(error)) from None
        self.isolation = f"bots in a sandbox ({isolation.describe()}); {enforcement()}"
        # Made now, so that each is masked: a folder made later inside one a bot may read would show.
        for folder in (self.replay_dir, self.log_dir, config.live_dir, config.replay_dir):
            folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        # Outside every folder a bot can read: the socket is bound into each sandbox by itself.
        self._socket_dir = Path(tempfile.mkdtemp(prefix="tichu-referee-"))
        token_files = [config.source.parent / e.token_file for e in config.entrants if e.token_file]
        hidden = [
            # Not the whole output_dir: it may be the bots' own folder, and what else it holds
            # (standings, seed commitments) is published anyway.
            self.replay_dir,
            self.log_dir,
            config.live_dir,
            config.replay_dir,
            # The store and SQLite's files beside it (the run holds it open: they exist by now).
            *(
                config.database.with_name(config.database.name + end)
                for end in ("", "-wal", "-shm", "-journal")
            ),
            config.source,
            self._socket_dir,
            *token_files,
            *(path for path in (config.signing_key, config.tls_key, config.tls_cert) if path is not None),
        ]
        socket_path = self._socket_dir / "referee.sock"
        return Sandbox(socket=socket_path, hidden=tuple(hidden), sockets=SANDBOX_SOCKETS)

    def _remove_socket_dir(self) -> None:
        if self._socket_dir is not None:
            shutil.rmtree(self._socket_dir, ignore_errors=True)
            self._socket_dir = None

    def _seat_down(self, match_id: str, seat: int, reason: str) -> None:
        """A seat's bot process is down for good: its game need not wait for its clocks."""
        table = self._tables.get(match_id)
        if table is not None and not table.finished.is_set():
            table.withdraw(seat, reason)

    async def open(self, order: GameOrder) -> list[RemoteSeat]:
        """Create the game's match and hand its local seats to the bot processes; the seats
        that remote entrants play (the coordinator tells them where to connect)."""
        assert self.running is not None, "start() first"
        started = time.time()
        config = self.config
        try:
            # Through the referee's front door: the host runs the referee in its own process.
            entry = self.running.service.referee.create(
                config.rules,
                clock=game_clock(config),
                seed=order.seed,
                bot_names=list(order.players),
                match_id=order.match_id,
                salt=order.salt,
            )
            table, tokens = entry.table, entry.tokens
        except (MatchExistsError, RulesError, ValueError) as error:
            self._refused[order.match_id] = self._outcome(
                order, started, None, f"the referee refused it: {error}"
            )
            return []
        self._games[order.match_id] = (order, table, started)
        self._tables[order.match_id] = table
        remote: list[RemoteSeat] = []
        for seat, (player, seat_token) in enumerate(zip(order.players, tokens, strict=True)):
            processes = self.bots.get(player)
            if processes is not None:
                await processes.give(order.match_id, seat, seat_token, order.rng_seeds[seat])
            else:
                line = f"{seat_token} {player} {order.rng_seeds[seat]}"
                remote.append(RemoteSeat(order.game_id, order.match_id, seat, player, self._advertised, line))
        return remote

    async def finish(self, match_id: str) -> GameOutcome:
        """Wait for an opened game's end (or stop it at the tournament's timeouts); its outcome."""
        assert self.running is not None, "start() first"
        refused = self._refused.pop(match_id, None)
        if refused is not None:
            return refused
        order, table, started = self._games.pop(match_id)
        try:
            failure = await self._await_end(match_id, table)
        finally:
            self._tables.pop(match_id, None)
            exits: dict[int, str] = {}
            for processes in self.bots.values():
                exits.update(processes.release(match_id))
        result = table.result
        if result is not None and result.outcome.termination is Termination.NO_SHOW:
            # Its seats' bots never all came: no result to keep; resume plays the game again.
            waited_s = game_clock(self.config).start_timeout_ms / 1000
            failure, result = f"not every seat connected within {waited_s:g} s", None
        outcome = self._outcome(
            order,
            started,
            result,
            failure or ("" if result is not None else "the game did not finish"),
            exits,
        )
        # A referee keeps every table it made (a few MB each) unless told to drop it; the
        # result goes back to the coordinator and the replay is on disk, so the host lets it go.
        self.running.service.forget(match_id)
        return outcome

    def _outcome(
        self,
        order: GameOrder,
        started: float,
        result: MatchResult | None,
        failure: str,
        exits: dict[int, str] | None = None,
    ) -> GameOutcome:
        replay_text = None
        path = self.replay_dir / f"{order.match_id}.jsonl"
        if self.send_replays and path.exists():
            replay_text = path.read_text(encoding="utf-8")
            path.unlink()  # the coordinator keeps it now; a host's disk holds no tournament
        return GameOutcome(
            game_id=order.game_id,
            match_id=order.match_id,
            host=self.name,
            started_at=started,
            ended_at=time.time(),
            result=result,
            failure=failure,
            exit_reasons={seat: why for seat, why in (exits or {}).items() if why},
            replay_text=replay_text,
        )

    async def _await_end(self, match_id: str, table: Table) -> str:
        """Until the game ends: its own start timeout (the tournament's start_timeout_s) ends a
        game whose seats do not all come, and one that runs past the tournament's game timeout is
        stopped without a result: why, or "" when it ended by itself."""
        assert self.running is not None
        limit_s = self.config.game_timeout_s
        await self.running.service.referee.finished(match_id, limit_s)
        if table.finished.is_set():
            return ""
        why = f"the game ran over the tournament's {limit_s:g} s"
        await table.stop(why)
        return why

    async def stop(self) -> None:
        """End the bot processes, then the referee."""
        await asyncio.gather(*(processes.stop() for processes in self.bots.values()))
        if self.running is not None:
            await self.running.stop()
            self._traffic = self.running.service.traffic
            self.running = None
        self._remove_socket_dir()


def game_clock(config: TournamentConfig) -> ClockSettings:
    """A game's clocks: the config's, with the tournament's start_timeout_s as the match's own
    start timeout unless the config gives one (a game whose seats do not all come then ends with
    a NO_SHOW termination, which the host does not keep as a result)."""
    if config.clock.start_timeout_ms:
        return config.clock
    return dataclasses.replace(config.clock, start_timeout_ms=max(1, round(config.start_timeout_s * 1000)))


def order_seats(config: TournamentConfig) -> range:
    """The seats of one of the tournament's tables."""
    return range(config.rules.players)


def _log_tail(paths: Iterable[Path], lines: int = 3) -> str:
    """The last lines of the newest of these logs, on one line (what a bot said before it ended)."""
    found = [path for path in paths if path.is_file()]
    if not found:
        return ""
    newest = max(found, key=lambda path: path.stat().st_mtime)
    text = [line.strip() for line in newest.read_text(encoding="utf-8", errors="replace").splitlines()]
    distinct = list(dict.fromkeys(line for line in text if line))  # a restarted bot says it again
    return " | ".join(distinct[-lines:])


class HostLostError(Exception):
    """A host stopped answering (its process or its node died): its games must be played elsewhere."""


class Host(Protocol):
    """What the coordinator plays games on: a GameHost here, or one on a Ray node."""

    name: str
    address: str
    capacity: int
    logs: str  # where its bots' logs are, on its machine
    isolation: str  # how its bots are walled in and held to their limits, on its machine

    async def open(self, order: GameOrder) -> list[RemoteSeat]:
        """Create the game and seat the local bots; the seats remote bots play."""
        ...

    async def finish(self, match_id: str) -> GameOutcome:
        """The game's outcome, once it is over; HostLostError if the host is gone."""
        ...


class Fleet(Protocol):
    """The hosts of a run: started before the first game, stopped after the last."""

    primary_address: str  # the referee remote workers were started against, if there is one

    async def start(self, config: TournamentConfig) -> list[Host]:
        """Start every host (HostError if one cannot play)."""
        ...

    async def stop(self) -> None:
        """Stop every host that still runs."""
        ...

    def traffic(self) -> Traffic:
        """The Play streams' traffic so far, over every host that can tell."""
        ...

    def describe(self, config: TournamentConfig) -> str:
        """Where and how many games run at once, for the banner."""
        ...


class LocalFleet:
    """One host in this process: the tournament's referee on `config.listen`, its replays
    written straight to `config.replay_dir`, `config.concurrency` games at once."""

    def __init__(self) -> None:
        self.host: GameHost | None = None
        self.primary_address = ""

    async def start(self, config: TournamentConfig) -> list[Host]:
        """Start the one host."""
        self.host = GameHost(config, capacity=config.concurrency, replay_dir=config.live_dir)
        self.primary_address = await self.host.start()
        return [self.host]

    async def stop(self) -> None:
        """Stop it."""
        if self.host is not None:
            await self.host.stop()

    def traffic(self) -> Traffic:
        """Its referee's traffic."""
        return Traffic() if self.host is None else self.host.traffic

    def describe(self, config: TournamentConfig) -> str:
        """`8 at a time`."""
        return f"{config.concurrency} at a time"
