"""The processes that play a host's local entrants, and what identifies their code.

An entrant is played either by shared processes or by one process per seat:

- shared (`bot = MODULE:CLASS`, or a `command` with `serves_many = true`): `processes` long-lived
  processes that read seat lines `TOKEN NAME RNG_SEED` on their standard input, as
  `tichu tournament worker MODULE:CLASS --server ADDR` (the SDK's worker) does. One that crashes
  while it holds seats is started again (at most MAX_RESTARTS times) and handed them again.
- per seat (a `command` without serves_many, or a bot with `per_seat = true`): a process started
  when its seat is handed out and ended with its game; a command has its placeholders filled
  (referee.bot_commands), a per-seat worker is given its one seat line and then the end of its input.

Every process runs in a session (and process group) of its own, in a cgroup of its own where the
machine has one we may use (so that its limits hold for everything it starts and ending it ends
all of that), within its entrant's limits (limits.py), and, unless the organiser turned it off, in
a sandbox (referee.sandbox) where it sees no other process and none of the referee's files, and
reaches only the referee's Unix socket. Its environment is an allow-list, never the runner's.
One killed for a limit is not started again: its seats get the referee's defaults and forfeit as
the referee's clock rules say. A seat whose process is down for good before the seat connected is
reported (`on_down`), so that its game ends at once instead of at the start timeout.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import importlib.util
import os
import shutil
import signal
from collections.abc import Callable
from itertools import count
from pathlib import Path

from referee import log
from referee.bot_commands import filled, placeholder_env
from referee.sandbox import ADDRESS_INSIDE, Sandbox, bot_environment, launch
from referee.sdk_commands import sdk_argv
from referee.tournament.config import Entrant
from referee.tournament.process_limits import BotCgroup, Cgroups, Limits, Watchdog, exit_reason, launch_argv

WORKER_STOP_S = 3.0  # every game is over by then: nothing of value is left to wait for
SEAT_STOP_S = 2.0  # a per-seat process has this long after SIGTERM before SIGKILL
MAX_RESTARTS = 5  # a bot that crashes again and again is not started a sixth time
SEAT_LOG_CAP = 1 << 20  # bytes of a per-seat process's output kept in its log
WORKER_LOG_CAP = 64 << 20  # a shared worker lives the whole tournament: a larger cap
_READ_CHUNK = 1 << 16
CPU_TREE_SLACK_S = 0.5  # a tree's CPU over its limit by more than this is killed (one process: SIGXCPU first)
# Called with (match id, seat, why) when a seat's process is down for good.
DownHook = Callable[[str, int, str], None]


class _StartError(Exception):
    """A process could not be started: its program is missing or cannot be run."""


class _Output:
    """Copies a process's output into its log, up to `cap` bytes, then one "[truncated]" line.

    The pipe is read to its end even past the cap, so the process never blocks on a full pipe.
    """

    def __init__(self, stream: asyncio.StreamReader, path: Path, cap: int) -> None:
        self.stream = stream
        self.path = path
        self.cap = cap
        self.task = asyncio.create_task(self._copy())

    async def _copy(self) -> None:
        # Owner only, as every file of the referee's: a bot's log may hold what its seat saw.
        with os.fdopen(os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600), "ab") as out:
            written = out.tell()
            while chunk := await self.stream.read(_READ_CHUNK):
                if written > self.cap:
                    continue  # past the cap, and the "[truncated]" line is written
                room = self.cap - written
                out.write(chunk[:room])
                written += min(room, len(chunk))
                if len(chunk) > room:
                    out.write(b"\n[truncated]\n")
                    written = self.cap + 1
                out.flush()


class _Run:
    """One started process: its process group, its log, its watchdog entry and cgroup."""

    def __init__(self, process: asyncio.subprocess.Process, output: _Output, limits: Limits) -> None:
        self.process = process
        self.pgid = process.pid  # start_new_session: the leader of a session and group of its own
        self.output = output
        self.limits = limits
        self.cgroup: BotCgroup | None = None
        self.memory_exceeded = False
        self.tree_cpu_exceeded = False
        self.over_limit = False  # set when it ended: it was killed for one of its limits
        self.ended_by_us = False

    @classmethod
    async def start(
        cls,
        argv: list[str],
        *,
        cwd: Path | None,
        env: dict[str, str],
        log_path: Path,
        log_cap: int,
        limits: Limits,
        stdin: bool,
        output_too: bool,
        sandbox: Sandbox | None = None,
    ) -> _Run:
        """Start `argv` in its own session within `limits` (and the sandbox, if given); its
        stderr (and stdout) into log_path."""
        _check_program(argv[0], cwd, env)
        cgroups = Cgroups.find()
        cgroup = None if cgroups is None else cgroups.child(limits.memory_bytes, cpus=limits.cpus)
        log_path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        pipe = asyncio.subprocess.PIPE
        try:
            with launch(sandbox, argv, cwd=cwd or Path.cwd(), env=env) as how:
                process = await asyncio.create_subprocess_exec(
                    *launch_argv(how.argv, limits, cgroup), cwd=cwd, env=how.env, pass_fds=how.pass_fds,
                    start_new_session=True, stdin=pipe if stdin else asyncio.subprocess.DEVNULL,
                    stdout=pipe if output_too else asyncio.subprocess.DEVNULL,
                    stderr=asyncio.subprocess.STDOUT if output_too else pipe,
                )  # fmt: skip
        except OSError as error:
            if cgroup is not None:
                cgroup.remove()
            raise _StartError(f"cannot start {argv[0]}: {error.strerror or error}") from None
        stream = process.stdout if output_too else process.stderr
        assert stream is not None
        run = cls(process, _Output(stream, log_path, log_cap), limits)
        run.cgroup = cgroup
        kernel_memory = cgroup is not None and "memory" in cgroup.folders
        if limits.cpu_seconds is not None or (not kernel_memory and limits.memory_bytes is not None):
            Watchdog.get().watch(
                run.pgid,
                None if kernel_memory else limits.memory_bytes,  # else the kernel enforces it
                run._over_memory,
                cgroup=cgroup,
                cpu_limit_s=None if limits.cpu_seconds is None else limits.cpu_seconds + CPU_TREE_SLACK_S,
                on_cpu_excess=run._over_cpu,
            )
        return run

    def _over_memory(self) -> None:
        self.memory_exceeded = True
        self.signal(signal.SIGKILL)

    def _over_cpu(self) -> None:
        self.tree_cpu_exceeded = True
        self.signal(signal.SIGKILL)

    def signal(self, number: int) -> None:
        """Send a signal to the whole process group, and SIGKILL to all of its cgroup (what the bot
        started in other sessions too)."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pgid, number)
        if number == signal.SIGKILL and self.cgroup is not None:
            self.cgroup.kill()

    async def wait(self) -> str:
        """Until the process ends: why it ended early, or "" when it ended well or we ended it."""
        code = await self.process.wait()
        cpu_used_s = Watchdog.get().unwatch(self.pgid)
        if self.cgroup is not None and self.cgroup.oom_killed():
            self.memory_exceeded = True
        reason = exit_reason(
            code,
            self.limits,
            memory_exceeded=self.memory_exceeded,
            cpu_used_s=cpu_used_s,
            tree_cpu_exceeded=self.tree_cpu_exceeded,
        )
        self.over_limit = self.memory_exceeded or reason.startswith("CPU limit")
        if self.over_limit or (code != 0 and not self.ended_by_us):
            return reason
        return ""

    async def end(self, grace_s: float) -> None:
        """SIGTERM to the group, SIGKILL after `grace_s`; then wait for its output to close."""
        self.ended_by_us = True
        self.signal(signal.SIGTERM)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(self.process.wait()), grace_s)
        self.signal(signal.SIGKILL)  # its children, too, even when the leader went at SIGTERM
        await self.process.wait()
        await self.close()

    async def close(self) -> None:
        """Once the leader is gone: let the log catch up (briefly) and drop the cgroup."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(self.output.task), 1.0)
        if not self.output.task.done():
            self.output.task.cancel()  # a child outside the group holds the pipe: give up on it
        if self.cgroup is not None:
            self.cgroup.kill()  # nothing of a bot outlives it
            await self.cgroup.until_empty()
            self.cgroup.remove()

    async def write(self, lines: list[str]) -> None:
        """Seat lines on its standard input."""
        stdin = self.process.stdin
        assert stdin is not None
        try:
            stdin.write("".join(line + "\n" for line in lines).encode())
            await stdin.drain()
        except (BrokenPipeError, ConnectionResetError):
            pass  # it died just now: whoever watches it decides about its seats

    def close_input(self) -> None:
        """The end of its input: a worker finishes the seats it holds and exits."""
        if self.process.stdin is not None:
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                self.process.stdin.close()


def _check_program(program: str, cwd: Path | None, env: dict[str, str]) -> None:
    """Refuse a program that is not there, with a reason a seat's record can show."""
    if os.sep in program:
        path = Path(program) if cwd is None else cwd / program
        if not os.access(path, os.X_OK) or not path.is_file():
            raise _StartError(f"cannot start {program}: no such executable file in {cwd or Path.cwd()}")
    elif shutil.which(program, path=env.get("PATH")) is None:
        raise _StartError(f"cannot start {program}: no such program on PATH")


def _environment(values: dict[str, str], insecure: bool, entrant: Entrant) -> dict[str, str]:
    # TICHU_INSECURE=1: the Node example (and bots modelled on it) connect without TLS.
    passed = {name: os.environ[name] for name in entrant.pass_env if name in os.environ}
    return bot_environment({**passed, **placeholder_env(values), "TICHU_INSECURE": "1" if insecure else "0"})


def _worker_argv(bot: str, server: str, ca_file: str | None, insecure: bool) -> list[str]:
    security = ["--ca-file", ca_file] if ca_file else (["--insecure"] if insecure else [])
    return sdk_argv("tournament", "worker", bot, "--server", server, *security)


class Worker:
    """One shared bot process that plays the seats given on its standard input.

    If it dies while it holds seats, it is started again (at most MAX_RESTARTS times) and handed
    those seats again: their tokens are still good, and the referee lets a seat reconnect within
    its reconnect grace, so the games go on. Past that, or when it was killed for a limit, its
    seats get the referee's defaults until their games forfeit; a later seat starts it again.
    """

    def __init__(
        self,
        entrant: Entrant,
        index: int,
        server: str,
        log_dir: Path,
        *,
        ca_file: str | None = None,
        insecure: bool = True,
        sandbox: Sandbox | None = None,
        on_down: DownHook | None = None,
    ) -> None:
        self.entrant = entrant
        self.index = index
        self.server = server
        self.sandbox = sandbox
        self.on_down = on_down
        self.log_path = log_dir / f"worker-{entrant.name}-{index}.log"
        values = {"server": server, "ca_file": ca_file or "", "name": entrant.name}
        if entrant.command:
            self.argv = filled(entrant.command, values)
        else:
            self.argv = _worker_argv(entrant.bot, server, ca_file, insecure)
        self.env = _environment(values, insecure, entrant)
        self.limits = Limits.of(entrant)
        self.run: _Run | None = None
        self.starts = 0
        self.seats: dict[str, list[tuple[int, str]]] = {}  # match id -> (seat, line) of the seats held
        self.ended: dict[str, dict[int, str]] = {}  # match id -> seat -> why its process ended
        self._starting = asyncio.Lock()  # two games handing out seats at once start one process
        self._watcher: asyncio.Task[None] | None = None
        self._stopping = False

    @property
    def process(self) -> asyncio.subprocess.Process | None:
        """The process now (or last) running."""
        return None if self.run is None else self.run.process

    async def give(self, match_id: str, line: str, seat: int = -1) -> None:
        """Hand the worker one seat (TOKEN NAME SEED) of a match."""
        self.seats.setdefault(match_id, []).append((seat, line))
        async with self._starting:
            run = await self._ensure_running(match_id, [seat])
        if run is not None:
            await run.write([line])

    def release(self, match_id: str) -> dict[int, str]:
        """The match is over: its seats need no restart; why its seats' process ended early, by seat."""
        self.seats.pop(match_id, None)
        return self.ended.pop(match_id, {})

    async def _ensure_running(self, match_id: str, seats: list[int]) -> _Run | None:
        if self.run is not None and self.run.process.returncode is None:
            return self.run
        if self.starts > MAX_RESTARTS or self._stopping:
            return None
        try:
            self.run = await _Run.start(
                self.argv, cwd=self.entrant.workdir, env=self.env, log_path=self.log_path,
                log_cap=WORKER_LOG_CAP, limits=self.limits, stdin=True, output_too=bool(self.entrant.command),
                sandbox=self.sandbox,
            )  # fmt: skip
        except _StartError as error:
            self.starts = MAX_RESTARTS + 1  # a missing program does not appear by trying again
            self.run = None
            self._note(str(error), {match_id: seats}, down=True)
            return None
        self.starts += 1
        self._watcher = asyncio.create_task(self._watch(self.run))
        return self.run

    async def _watch(self, run: _Run) -> None:
        reason = await run.wait() or "exited with code 0"  # it was to wait for the end of its input
        await run.close()
        if self._stopping:
            return
        held = {match: [seat for seat, _ in lines] for match, lines in self.seats.items() if lines}
        log.get_logger().warning(
            "worker_died",
            entrant=self.entrant.name,
            index=self.index,
            code=run.process.returncode,
            reason=reason,
            seats=sum(map(len, held.values())),
        )
        if not held:
            return  # the next seat starts it again
        if run.over_limit:
            self._note(reason, held, down=True)
            self.seats.clear()  # not handed to a new process: their games go on without them
            return
        async with self._starting:
            restarted = await self._ensure_running(next(iter(held)), [])
        if restarted is None:
            self._note(reason, held, down=True)
        else:
            self._note(f"{reason}; restarted", held)
        if restarted is not None:
            await restarted.write([line for lines in self.seats.values() for _, line in lines])

    def _note(self, reason: str, seats: dict[str, list[int]], *, down: bool = False) -> None:
        for match_id, numbers in seats.items():
            for seat in numbers:
                self.ended.setdefault(match_id, {})[seat] = reason  # the latest: is it down for good?
                if down and self.on_down is not None and seat >= 0:
                    self.on_down(match_id, seat, reason)

    async def stop(self) -> None:
        """End its input, give it a moment to finish, then kill its process group."""
        self._stopping = True
        run = self.run
        if run is not None and run.process.returncode is None:
            run.close_input()
            try:
                await asyncio.wait_for(asyncio.shield(run.process.wait()), WORKER_STOP_S)
            except TimeoutError:
                await run.end(0.0)
        if self._watcher is not None:
            await self._watcher


class _SeatProcess:
    """The process that plays one seat of one game; restarted after a crash like a worker."""

    def __init__(
        self, owner: EntrantProcesses, match_id: str, seat: int, argv: list[str], env: dict[str, str]
    ) -> None:
        self.owner = owner
        self.match_id = match_id
        self.seat = seat
        self.argv = argv
        self.env = env
        self.line = ""  # a per-seat worker's seat line; a command has its seat in its arguments
        self.log_path = owner.log_dir / f"{match_id}-seat{seat}-{owner.entrant.name}.log"
        self.run: _Run | None = None
        self.reason = ""
        self.starts = 0
        self.released = False
        self._watcher: asyncio.Task[None] | None = None

    async def start(self) -> None:
        """Start (or restart) its process; a failure to start is its reason."""
        entrant = self.owner.entrant
        try:
            self.run = await _Run.start(
                self.argv, cwd=entrant.workdir, env=self.env, log_path=self.log_path, log_cap=SEAT_LOG_CAP,
                limits=self.owner.limits, stdin=bool(self.line), output_too=True, sandbox=self.owner.sandbox,
            )  # fmt: skip
        except _StartError as error:
            self.reason = str(error)
            self.owner.log_end(self.match_id, self.seat, self.reason, down=True)
            return
        self.starts += 1
        if self.line:
            await self.run.write([self.line])
            self.run.close_input()
        self._watcher = asyncio.create_task(self._watch(self.run))

    async def _watch(self, run: _Run) -> None:
        reason = await run.wait()
        if self.released or not reason:
            return
        await run.close()
        if not run.over_limit and self.starts <= MAX_RESTARTS:
            self.owner.log_end(self.match_id, self.seat, reason)
            self.reason = f"{reason}; restarted"
            await self.start()
        else:
            self.reason = reason
            self.owner.log_end(self.match_id, self.seat, reason, down=True)

    async def end(self) -> None:
        """The game is over: end the process (and what it started)."""
        self.released = True
        if self.run is not None:
            await self.run.end(SEAT_STOP_S)
        if self._watcher is not None:
            await self._watcher


class EntrantProcesses:
    """The processes that play one entrant's seats on one host."""

    def __init__(
        self,
        entrant: Entrant,
        server: str,
        log_dir: Path,
        *,
        ca_file: str | None = None,
        insecure: bool = True,
        sandbox: Sandbox | None = None,
        on_down: DownHook | None = None,
    ) -> None:
        """`server` is the referee's address outside a sandbox; inside one, bots reach it on the
        Unix socket the sandbox binds in (plaintext: it never leaves the machine)."""
        if entrant.remote:
            raise ValueError(f"entrant {entrant.name} is remote: it runs no process here")
        # Each seat connects to the next of these: inside a sandbox, the referee's sockets, each
        # on its own accept loop; outside, the one address (TCP spreads connections by itself).
        self.addresses = [server]
        if sandbox is not None:
            server, ca_file, insecure = ADDRESS_INSIDE, None, True
            self.addresses = sandbox.addresses_inside()
        self.entrant = entrant
        self.server = server
        self.log_dir = log_dir
        self.ca_file = ca_file
        self.insecure = insecure
        self.sandbox = sandbox
        self.on_down = on_down
        self.limits = Limits.of(entrant)
        self.limits.check_cpus(entrant.name)
        self.workers: list[Worker] = []
        if not entrant.one_process_per_seat:
            self.workers = [
                Worker(
                    entrant,
                    i,
                    server,
                    log_dir,
                    ca_file=ca_file,
                    insecure=insecure,
                    sandbox=sandbox,
                    on_down=on_down,
                )
                for i in range(entrant.processes)
            ]
        self._turn = count()
        self._address_turn = count()
        self._given: dict[str, list[Worker]] = {}  # match id -> the workers holding its seats
        self._seats: dict[str, list[_SeatProcess]] = {}
        self._ending: set[asyncio.Task[None]] = set()

    async def give(self, match_id: str, seat: int, token: str, rng_seed: str) -> None:
        """Play a seat: hand it to a shared process, or start the seat's own process."""
        address = self.addresses[next(self._address_turn) % len(self.addresses)]
        line = f"{token} {self.entrant.name} {rng_seed}"
        if address != self.server and not self.entrant.command:
            # The SDK worker's fourth field: the referee to connect this seat to (clients/worker.py).
            # A command's seat lines keep the three fields its documentation promises.
            line += f" {address}"
        if self.workers:
            worker = self.workers[next(self._turn) % len(self.workers)]
            self._given.setdefault(match_id, []).append(worker)
            await worker.give(match_id, line, seat)
            return
        values = {
            "server": address,
            "token": token,
            "seat": str(seat),
            "ca_file": self.ca_file or "",
            "name": self.entrant.name,
            "seed": rng_seed,
            "match_id": match_id,
        }
        env = _environment(values, self.insecure, self.entrant)
        if self.entrant.command:
            process = _SeatProcess(self, match_id, seat, filled(self.entrant.command, values), env)
        else:
            argv = _worker_argv(self.entrant.bot, address, self.ca_file, self.insecure)
            process = _SeatProcess(self, match_id, seat, argv, env)
            process.line = line
        self._seats.setdefault(match_id, []).append(process)
        await process.start()

    def release(self, match_id: str) -> dict[int, str]:
        """The game ended: end its per-seat processes; why a seat's process ended early, by seat."""
        reasons: dict[int, str] = {}
        for worker in self._given.pop(match_id, []):
            reasons.update(worker.release(match_id))
        for process in self._seats.pop(match_id, []):
            if process.reason:
                reasons[process.seat] = process.reason
            task = asyncio.create_task(process.end())
            self._ending.add(task)
            task.add_done_callback(self._ending.discard)
        return reasons

    def log_end(self, match_id: str, seat: int, reason: str, *, down: bool = False) -> None:
        """Log a seat's process that ended before its game (`down`: for good, and say so to on_down)."""
        log.get_logger().warning(
            "bot_process_ended", entrant=self.entrant.name, match_id=match_id, seat=seat, reason=reason
        )
        if down and self.on_down is not None:
            self.on_down(match_id, seat, reason)

    async def stop(self) -> None:
        """End every process: the shared ones finish their seats first (briefly), the others at once."""
        for match_id in list(self._seats):
            self.release(match_id)
        await asyncio.gather(*(w.stop() for w in self.workers), *list(self._ending))


# ----------------------------------------------------------------------------- build identity


def build_identity(entrant: Entrant, base: Path) -> tuple[str, str, str]:
    """(kind, source, sha256) of what plays for the entrant: "bot", "command" or "remote"; the file
    (or package folder) hashed; its sha256 in hex. Source and hash are "" when nothing is found.

    A bot's module is found, not run (a submodule's parent packages are imported); a package is
    hashed over its .py files; a bot given as path/to/file.py:Class by that file (in the current
    folder, where its worker runs, else in `base`). A command is hashed by the first of its
    arguments that is a file in its folder (`workdir`, else `base`: the script, e.g. bot.js), or
    else by its program.
    """
    if entrant.remote:
        return ("remote", "", "")
    if entrant.bot:
        module = entrant.bot.split(":", 1)[0]
        if module.endswith(".py"):  # a file, as clients.connect.load_bot takes it: from the worker's folder
            path = Path(module) if Path(module).is_file() else base / module
            return ("bot", *((str(path), _file_sha(path)) if path.is_file() else ("", "")))
        return ("bot", *_module_identity(module))
    return ("command", *_command_identity(entrant.command, entrant.workdir or base))


def _module_identity(module: str) -> tuple[str, str]:
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return ("", "")
    if spec is None:
        return ("", "")
    if spec.submodule_search_locations:
        digest = hashlib.sha256()
        folders = [Path(p) for p in spec.submodule_search_locations]
        for folder in folders:
            for path in sorted(folder.rglob("*.py")):
                digest.update(path.relative_to(folder).as_posix().encode() + b"\0")
                digest.update(path.read_bytes() + b"\0")
        return (str(folders[0]), digest.hexdigest())
    if spec.origin is None or not Path(spec.origin).is_file():
        return ("", "")  # built in, or frozen
    return (spec.origin, _file_sha(Path(spec.origin)))


def _command_identity(command: tuple[str, ...], folder: Path) -> tuple[str, str]:
    for arg in command[1:]:
        if "{" in arg or arg.startswith("-"):
            continue
        path = folder / arg
        if path.is_file():
            return (str(path), _file_sha(path))
    program = str(folder / command[0]) if os.sep in command[0] else shutil.which(command[0])
    if program is None or not Path(program).is_file():
        return ("", "")
    return (program, _file_sha(Path(program)))


def _file_sha(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as data:
        while chunk := data.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()
