"""Build and run the referee's gRPC server; `tichu serve` (add_serve_arguments + run_serve)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import ipaddress
import os
import re
import resource
import signal
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from referee import log
from referee.match import ClockSettings
from referee.replay.signing import KeyFileError, load_signer
from referee.server.front import RecordHook, Referee
from referee.server.heap import tune_collector
from referee.server.input_limits import MAX_RECEIVE_BYTES, MAX_SEND_BYTES
from referee.server.service import HELLO_TIMEOUT_S, REFEREE_SERVICE, RefereeService
from referee.server.tokens import WeakTokenError, check_organiser_token, stored_organiser_token, token_file

TOKEN_ENV = "TICHU_ORGANISER_TOKEN"
DEFAULT_LISTEN = "127.0.0.1:50051"
DEFAULT_REPLAY_DIR = Path("replays") / "live"
DEFAULT_FORGET_S = 3600.0
# grpc-core cancels the calls that wait for the server to take them once more than 1,000 wait
# (its default): a tournament of 500 tables, or every bot reconnecting after a network blip,
# opens 2,000 streams at once, and 217 of them failed (the bot's Hello met a cancelled call:
# INTERNAL). The referee takes each call as soon as it can, so a long queue costs little.
# The message sizes are referee.server.input_limits': a client's message past MAX_RECEIVE_BYTES is
# refused by gRPC (RESOURCE_EXHAUSTED) before the referee reads a byte of it.
# A call also waits at most 30 s (gRPC core's default) for the server to take it, then is
# cancelled (CANCELLED at the bot): under a burst of new streams a busy referee takes them
# slower than that (bench/welcome_bench.py), and a seat is better welcomed late than refused.
UNTAKEN_CALL_WAIT_S = 300
SERVER_OPTIONS = (
    ("grpc.server.max_pending_requests", 20_000),
    ("grpc.server.max_pending_requests_hard_limit", 40_000),
    ("grpc.server_max_unrequested_time_in_server", UNTAKEN_CALL_WAIT_S),
    ("grpc.max_receive_message_length", MAX_RECEIVE_BYTES),
    ("grpc.max_send_message_length", MAX_SEND_BYTES),
)


# grpc.aio takes one new call at a time per server: it asks gRPC core for the next call and waits
# for it to come back through the completion queue, which under load takes 100-300 ms. So a
# referee runs several servers on its port (SO_REUSEPORT, on by default on Linux: the kernel
# spreads the connections over them), each asking for its next call: with 200 tables playing, a
# burst of 800 new streams was welcomed within 10 s with 64 (p99 9 s) and 24 s with 16, while
# one server had welcomed 123 of them in 30 s, and gRPC core cancels a call that waits 30 s
# (bench/welcome_bench.py, docs/develop/benchmarks.md). Idle, the 64 cost nothing measurable.
DEFAULT_ACCEPT_LOOPS = 64
# Each server caps its own connections (max_connections / loops): a small cap gets fewer loops,
# so that none of them refuses a connection the cap allows while the others sit empty.
MIN_CONNECTIONS_PER_LOOP = 64


def accept_loop_count(asked: int, max_connections: int) -> int:
    """How many servers (accept loops) share the port: `asked`, but each with room for at least
    MIN_CONNECTIONS_PER_LOOP of the `max_connections`, and at least one."""
    return max(1, min(asked, max_connections // MIN_CONNECTIONS_PER_LOOP))


HTTP_ADDRESS = re.compile(r"(\[[0-9A-Fa-f:]+\]|[^\s:\[\]]*):\d{1,5}")
# Files a referee keeps for itself beside its connections: replays being written, the store,
# the logs, the bots' pipes and gRPC's own.
RESERVED_FILES = 128
MIN_CONNECTIONS = 16


def connection_capacity(open_files: int) -> int:
    """How many connections a referee with `open_files` files may hold and still write its files."""
    return max(MIN_CONNECTIONS, open_files - RESERVED_FILES)


def server_options(hello_timeout_s: float, max_connections: int | None = None) -> tuple[tuple[str, int], ...]:
    """SERVER_OPTIONS, and connection hygiene: a connection that does not finish its handshake,
    or carries no call (an HTTP/2 preface and then nothing, say), is closed after the Hello
    timeout, so idle sockets cannot use up the referee's files (a client's channel reconnects by
    itself when it next calls); past `max_connections` at once (by default what the file limit
    allows), a new connection is closed as soon as it is accepted, which a client sees as
    UNAVAILABLE and retries, while the referee keeps the files it needs."""
    timeout_ms = max(1_000, int(hello_timeout_s * 1000))
    if max_connections is None:
        max_connections = connection_capacity(resource.getrlimit(resource.RLIMIT_NOFILE)[0])
    return (
        *SERVER_OPTIONS,
        ("grpc.server_handshake_timeout_ms", timeout_ms),
        ("grpc.max_connection_idle_ms", timeout_ms),
        ("grpc.max_allowed_incoming_connections", max(1, max_connections)),
    )


def raise_file_limit() -> tuple[int, int]:
    """Raise this process's limit on open files to its hard limit (each connection is one);
    the (soft, hard) limits it then has."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
            soft = hard
    return soft, hard


PemSource = bytes | str | Path
# The services a generic client finds (grpc.health.v1 and server reflection): grpcurl, load
# balancers and container probes ask health for "" (the whole server) or for a service's name.
HEALTH_SERVICE: str = health.SERVICE_NAME
REFLECTION_SERVICE: str = reflection.SERVICE_NAME


@dataclass
class RunningServer:
    """A started server: its port, its service (matches), and how to stop it."""

    server: grpc.aio.Server
    service: RefereeService
    port: int
    address: str
    secure: bool
    health: health.aio.HealthServicer
    loopback_address: str = ""  # a plaintext port on 127.0.0.1 beside the TLS one, if asked for
    # The other accept loops on the same port(s) (ServerSettings.accept_loops); `server` is the first.
    more_servers: tuple[grpc.aio.Server, ...] = ()

    async def stop(self, grace_s: float | None = 1.0) -> None:
        """Say NOT_SERVING to health checks, stop every match, then the server (open calls get
        `grace_s` to finish)."""
        await self.health.enter_graceful_shutdown()
        await self.service.close()
        await asyncio.gather(*(server.stop(grace_s) for server in (self.server, *self.more_servers)))

    async def wait(self) -> None:
        """Wait until the server terminates."""
        await self.server.wait_for_termination()

    @property
    def plaintext_target(self) -> str:
        """Where a client on this machine reaches the referee without TLS ("" when it cannot):
        the plaintext loopback port beside a TLS one, else a plaintext port (on 127.0.0.1 when
        it listens on every address). The web face's seat pages relay through it."""
        if self.loopback_address:
            return self.loopback_address
        if self.secure:
            return ""
        host = self.address.rpartition(":")[0].strip("[]")
        return f"127.0.0.1:{self.port}" if host in ("", "0.0.0.0", "::") else self.address


def _pem(source: PemSource) -> bytes:
    """PEM bytes as given, or read from a file path."""
    return source if isinstance(source, bytes) else Path(source).read_bytes()


@dataclass(frozen=True, slots=True)
class ServerSettings:
    """How a referee server runs: where it listens and how securely, its matches' clocks, its
    replays, its bounds. Each default is `start_server`'s; `tichu serve` fills them from its options."""

    address: str = "127.0.0.1:0"  # port 0 picks a free port
    organiser_token: str = ""
    tls_cert: PemSource | None = None
    tls_key: PemSource | None = None
    insecure: bool = False  # plaintext, which only this asks for
    defaults: ClockSettings | None = None
    now: Callable[[], float] = time.monotonic
    wall: Callable[[], float] = time.time
    on_record: RecordHook | None = None
    replay_dir: Path | None = None
    resume: bool = True
    forget_finished_after_s: float | None = None
    keep_records: bool = False
    signing_key: Path | None = None
    reflection_enabled: bool = True
    hello_timeout_s: float = HELLO_TIMEOUT_S
    plaintext_loopback: bool = False
    unix_socket: Path | None = None
    # More Unix sockets, each served by the next accept loop (a sandbox's: referee.sandbox).
    more_unix_sockets: tuple[Path, ...] = ()
    max_connections: int | None = None
    # grpc.aio servers on the same port, each taking new calls: see DEFAULT_ACCEPT_LOOPS.
    accept_loops: int = DEFAULT_ACCEPT_LOOPS
    # More services on the same port, each registered by a function of the server before it
    # starts, with its full name for reflection (the arena's lobby: referee.arena.lobby).
    services: tuple[tuple[str, Callable[[grpc.aio.Server], None]], ...] = ()


async def start_server(
    settings: ServerSettings | str = "127.0.0.1:0", organiser_token: str = "", **options: Any
) -> RunningServer:
    """Start a referee with `settings` (or, as programs written before ServerSettings do, an
    address, the organiser token and any other field as a keyword): on `address`, with TLS
    from a certificate and key, plaintext only with `insecure=True`. With `replay_dir`, every
    match's replay is written there as it is played, and (with `resume`) the unfinished ones
    found there continue.
    `forget_finished_after_s` drops finished matches from memory that long after they end;
    `keep_records` keeps each table's records in memory too (`Table.records`, for tests);
    with `signing_key` (an Ed25519 private key file, `tichu keygen`) every match's replay is signed.
    grpc.health.v1 always answers; server reflection unless `reflection_enabled=False`. A Play
    stream that sends no Hello within `hello_timeout_s` is ended. With TLS, `plaintext_loopback`
    also opens a plaintext port on 127.0.0.1 (RunningServer.loopback_address) for bots on this
    machine only: a tournament host's own workers, while remote bots come in over TLS.
    `unix_socket` also listens, plaintext, on that Unix socket: the one way out of the sandbox
    that a host's bots run in (referee.sandbox); `more_unix_sockets` on those too, each on the
    next accept loop (round the loops again if there are more sockets than loops).
    `max_connections` caps the connections held at once (by default, what the file limit allows:
    `connection_capacity`). `accept_loops` grpc.aio servers share the port, each taking new calls
    (`accept_loop_count`: fewer under a small cap); a connection's streams all go to the server
    the kernel gave that connection."""
    if isinstance(settings, str):
        settings = ServerSettings(settings, organiser_token, **options)
    elif organiser_token or options:
        raise TypeError("start_server takes a ServerSettings or an address with keywords, not both")
    address, organiser_token = settings.address, settings.organiser_token
    tls_cert, tls_key, insecure = settings.tls_cert, settings.tls_key, settings.insecure
    plaintext_loopback, unix_socket = settings.plaintext_loopback, settings.unix_socket
    hello_timeout_s = settings.hello_timeout_s
    if (tls_cert is None) != (tls_key is None):
        raise ValueError("TLS needs both a certificate and its key")
    if tls_cert is None and not insecure:
        raise ValueError("give a TLS certificate and key, or ask for plaintext with insecure=True")
    referee = Referee(
        organiser_token,
        settings.defaults,
        now=settings.now,
        wall=settings.wall,
        on_record=settings.on_record,
        replay_dir=settings.replay_dir,
        forget_finished_after_s=settings.forget_finished_after_s,
        keep_records=settings.keep_records,
        sign=None if settings.signing_key is None else load_signer(settings.signing_key),
    )
    service = RefereeService(referee, hello_timeout_s=hello_timeout_s)
    max_connections = settings.max_connections
    if max_connections is None:
        max_connections = connection_capacity(resource.getrlimit(resource.RLIMIT_NOFILE)[0])
    loops = accept_loop_count(settings.accept_loops, max_connections)
    # Each server holds its share of the connections allowed, so that together they hold no more.
    grpc_options = server_options(hello_timeout_s, max(1, max_connections // loops))
    servers = [grpc.aio.server(options=grpc_options) for _ in range(loops)]
    health_servicer = health.aio.HealthServicer()
    names = (REFEREE_SERVICE, *(name for name, _ in settings.services), HEALTH_SERVICE, REFLECTION_SERVICE)
    for server in servers:
        service.attach(server)
        for _, register in settings.services:
            register(server)
        health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
        if settings.reflection_enabled:
            reflection.enable_server_reflection(names, server)
    credentials = None
    if tls_cert is not None and tls_key is not None:
        credentials = grpc.ssl_server_credentials([(_pem(tls_key), _pem(tls_cert))])
    host = address.rsplit(":", 1)[0]
    loopback = ""

    def bind(server: grpc.aio.Server, where: str) -> int:
        if credentials is None:
            return int(server.add_insecure_port(where))
        return int(server.add_secure_port(where, credentials))

    try:
        first = servers[0]
        port = bind(first, address)
        if port and credentials is not None and plaintext_loopback:
            loopback_port = first.add_insecure_port("127.0.0.1:0")
            loopback = f"127.0.0.1:{loopback_port}" if loopback_port else ""
    except RuntimeError as error:  # grpcio raises this when it cannot bind, e.g. the port is in use
        raise OSError(f"cannot listen on {address}: {error}") from None
    if not port or (plaintext_loopback and tls_cert is not None and not loopback):
        raise OSError(f"cannot listen on {address}" + ("" if port else " (or on a loopback port)"))
    # The others join the first's port (and loopback port). Where the system does not share a
    # port (no SO_REUSEPORT), the referee runs with the servers that could.
    for count, server in enumerate(servers[1:], start=1):
        holds_port = joined = False
        with contextlib.suppress(RuntimeError):  # grpcio's way of saying it could not bind
            holds_port = bind(server, f"{host}:{port}") == port
            joined = holds_port and (
                not loopback or server.add_insecure_port(loopback) == int(loopback.rsplit(":", 1)[1])
            )
        if not joined:
            # A server that holds the port must run, or the kernel would queue connections on
            # it that nobody takes; one that holds nothing is dropped, and so are the rest.
            kept = count + 1 if holds_port else count
            log.get_logger().warning("accept_loops_reduced", asked=loops, running=kept)
            servers = servers[:kept]
            break
    # A Unix socket has no SO_REUSEPORT (a second bind would take the path from the first): each
    # is served by one of the servers that run, the first by the first, the next by the next.
    unix_sockets = [] if unix_socket is None else [unix_socket, *settings.more_unix_sockets]
    for index, path in enumerate(unix_sockets):
        bound = False
        with contextlib.suppress(RuntimeError):  # grpcio's way of saying it could not bind
            bound = bool(servers[index % len(servers)].add_insecure_port(f"unix:{path}"))
        if not bound:
            raise OSError(f"cannot listen on the Unix socket {path}")
    if settings.resume:
        # Before the port opens, so that no returning bot finds its token unknown.
        service.resume_unfinished()
    for server in servers:
        await server.start()
    for name in ("", REFEREE_SERVICE):
        await health_servicer.set(name, health_pb2.HealthCheckResponse.SERVING)
    log.get_logger().info(
        "server_started", address=f"{host}:{port}", tls=tls_cert is not None, accept_loops=loops
    )
    return RunningServer(
        servers[0],
        service,
        port,
        f"{host}:{port}",
        tls_cert is not None,
        health_servicer,
        loopback,
        tuple(servers[1:]),
    )


def add_serve_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the options of `tichu serve` to a (sub)parser."""
    parser.add_argument("--listen", default=DEFAULT_LISTEN, help=f"host:port (default {DEFAULT_LISTEN})")
    parser.add_argument(
        "--organiser-token",
        default=None,
        help=f"the organisers' secret for CreateMatch, ListMatches and full Watch, 128 bits or more "
        f"(default: ${TOKEN_ENV}, else one made once and kept in ~/.config/tichu/organiser-token)",
    )
    parser.add_argument("--tls-cert", type=Path, help="PEM certificate chain")
    parser.add_argument("--tls-key", type=Path, help="PEM private key")
    parser.add_argument("--insecure", action="store_true", help="plaintext, without TLS (local use only)")
    parser.add_argument(
        "--plaintext-loopback",
        action="store_true",
        help="with TLS, also a plaintext port on 127.0.0.1, for this machine's clients only (the web "
        "face's seat pages relay through it)",
    )
    parser.add_argument(
        "--replay-dir",
        type=Path,
        default=DEFAULT_REPLAY_DIR,
        help=f"where replays are written, and unfinished matches resumed from (default {DEFAULT_REPLAY_DIR})",
    )
    parser.add_argument(
        "--no-resume", action="store_true", help="do not continue the unfinished matches of --replay-dir"
    )
    parser.add_argument(
        "--signing-key",
        type=Path,
        metavar="KEY",
        help="sign every match's replay with this Ed25519 private key (tichu keygen --out KEY)",
    )
    parser.add_argument(
        "--forget-finished-after-s",
        type=float,
        default=DEFAULT_FORGET_S,
        metavar="S",
        help=f"forget a finished match S seconds after it ends (default {DEFAULT_FORGET_S:g})",
    )
    parser.add_argument(
        "--no-reflection",
        action="store_true",
        help="do not answer gRPC server reflection (grpc.health.v1 always answers)",
    )
    clocks = parser.add_argument_group("clock defaults (a CreateMatch may override each)")
    base = ClockSettings()
    for field in dataclasses.fields(ClockSettings):
        flag = "--" + field.name.replace("_", "-")
        if field.type in (bool, "bool"):
            clocks.add_argument(flag, action="store_true", default=getattr(base, field.name))
        else:
            clocks.add_argument(
                flag,
                type=int,
                default=getattr(base, field.name),
                metavar="N",
                help=f"default {getattr(base, field.name)}",
            )
    parser.add_argument(
        "--http",
        metavar="HOST:PORT",
        default="",
        help="also serve the web face there: the live matches in a browser (e.g. 127.0.0.1:8080)",
    )
    parser.add_argument(
        "--max-connections",
        type=int,
        default=0,
        metavar="N",
        help="connections held at once, at most (default: what the open-file limit allows)",
    )
    parser.add_argument(
        "--accept-loops",
        type=int,
        default=DEFAULT_ACCEPT_LOOPS,
        metavar="N",
        help="gRPC servers sharing the port, each taking new streams: more welcome a burst of bots "
        f"to a busy referee sooner (default {DEFAULT_ACCEPT_LOOPS}; fewer under a small --max-connections)",
    )
    parser.add_argument(
        "--gc-defaults",
        action="store_true",
        help="leave Python's garbage collector as it starts (nothing frozen, its own thresholds), to "
        "debug memory; by default the start-up heap is frozen and full collections are rare",
    )
    parser.add_argument("--log-format", choices=("auto", "json", "console"), default="auto")


def _loopback(address: str) -> bool:
    """Whether host:port names this machine's loopback (127.0.0.0/8, ::1, localhost)."""
    host = address.rsplit(":", 1)[0].strip("[]")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def run_serve(args: argparse.Namespace) -> int:
    """Run `tichu serve` until SIGINT or SIGTERM; the exit code."""
    log.configure(json=None if args.log_format == "auto" else args.log_format == "json")
    token = args.organiser_token or os.environ.get(TOKEN_ENV, "")
    if not token:
        path = token_file()
        try:
            token, made = stored_organiser_token(path)
        except OSError as error:
            print(f"tichu serve: give --organiser-token or set {TOKEN_ENV} ({error})", file=sys.stderr)
            return 2
        if made:  # shown this once: it is in the file (owner only) from now on
            print(
                f"tichu serve: no --organiser-token or ${TOKEN_ENV}: a new organiser token is saved in "
                f"{path} (mode 0600); organisers send 'authorization: Bearer <token>':\n{token}",
                file=sys.stderr,
            )
        else:
            print(f"tichu serve: the organiser token is the one saved in {path}", file=sys.stderr)
    try:
        check_organiser_token(token)
    except WeakTokenError as error:
        print(f"tichu serve: {error}", file=sys.stderr)
        return 2
    if (args.tls_cert is None) != (args.tls_key is None):
        print("tichu serve: --tls-cert and --tls-key go together", file=sys.stderr)
        return 2
    if args.tls_cert is None and not args.insecure:
        print("tichu serve: give --tls-cert and --tls-key, or --insecure for plaintext", file=sys.stderr)
        return 2
    if args.tls_cert is None and not _loopback(args.listen):
        print(
            f"tichu serve: WARNING: plaintext on {args.listen}, which is not a loopback address: anyone "
            "on the network can read the seat tokens and the organiser token; give --tls-cert and --tls-key",
            file=sys.stderr,
        )
    if args.http and not HTTP_ADDRESS.fullmatch(args.http):
        print(
            f"tichu serve: --http takes HOST:PORT (e.g. 127.0.0.1:8080), not {args.http!r}", file=sys.stderr
        )
        return 2
    defaults = ClockSettings(**{f.name: getattr(args, f.name) for f in dataclasses.fields(ClockSettings)})
    files, _ = raise_file_limit()
    capacity = connection_capacity(files)
    max_connections = min(args.max_connections, capacity) if args.max_connections else capacity
    print(
        f"tichu serve: up to {max_connections:,} connections at once (open files: {files:,}; "
        "further ones are closed as they arrive)",
        file=sys.stderr,
    )
    try:
        settings = ServerSettings(
            args.listen,
            token,
            tls_cert=args.tls_cert,
            tls_key=args.tls_key,
            insecure=args.insecure and args.tls_cert is None,
            plaintext_loopback=args.plaintext_loopback and args.tls_cert is not None,
            defaults=defaults,
            replay_dir=args.replay_dir,
            resume=not args.no_resume,
            forget_finished_after_s=args.forget_finished_after_s,
            signing_key=args.signing_key,
            reflection_enabled=not args.no_reflection,
            max_connections=max_connections,
            accept_loops=args.accept_loops,
        )
        asyncio.run(_serve(settings, args.http, tune=not args.gc_defaults))
    except (OSError, KeyFileError) as error:
        print(f"tichu serve: {error}", file=sys.stderr)
        return 1
    return 0


async def _serve(settings: ServerSettings, http: str, tune: bool = True) -> None:
    running = await start_server(settings)
    if tune:  # once the server (and every match it resumed) is in memory: see referee.server.heap
        collector = tune_collector()
        log.get_logger().info("collector_tuned", thresholds=collector.thresholds, frozen=collector.frozen)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError):  # signal handlers are POSIX-only
            loop.add_signal_handler(sig, stop.set)
    print(
        f"tichu referee listening on {running.address} ({'TLS' if running.secure else 'plaintext'})",
        file=sys.stderr,
    )
    web = None
    if http:
        from referee.web.app import parse_address, start_web
        from referee.web.relay import SeatRelay

        # Person seats (CreateMatch.person_seats) play from the seat page, which relays to this
        # referee's Play stream as any client would: through a plaintext port of this machine.
        target = running.plaintext_target
        relay = SeatRelay(target) if target else None
        web = await start_web(running.service.referee, *parse_address(http), seats=relay)
        print(f"tichu web face on {web.url}/", file=sys.stderr)
        if relay is None:
            print(
                "tichu serve: no seat pages for person seats: with TLS they need --plaintext-loopback",
                file=sys.stderr,
            )
    await stop.wait()
    log.get_logger().info("server_stopping")
    if web is not None:
        await web.stop()
    await running.stop()
