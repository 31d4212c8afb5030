"""How a hosted bot runs: inside a bubblewrap sandbox, reaching only its referee.

Every bot process that the referee starts for an organiser (a tournament's entrants, the bot that
`tichu check-bot` grades, the arena's hosted bots) runs through `Sandbox.wrap`, which puts it in
bubblewrap (`bwrap`, the sandbox Flatpak uses) with:

- its own PID namespace: it sees and signals only its own processes, and when its first process
  ends the kernel ends every process it left behind (daemons and new sessions included);
- its own IPC and UTS namespaces, and its own user namespace where it runs as an unprivileged
  user (`nobody`) when the machine allows user namespaces;
- its own network namespace with no interface but loopback: the one way out is the referee's
  Unix socket, bound in at SOCKET_INSIDE (bots connect to ADDRESS_INSIDE), and the sockets beside
  it when the referee has more than one (`Sandbox.sockets`);
- a read-only view of the system (/usr, the libraries, a few files of /etc), of the Python that
  runs the SDK and of the bot's own folder; a private, empty /tmp (also its HOME);
- none of the referee's files: the folders and files named `hidden` (the store, replays, logs,
  keys, the config) are masked wherever a readable folder would otherwise show them.

Files are masked, not protected by their mode: a process that runs as root outside its user
namespace (as bwrap makes it, mapped to `nobody` inside) is still their owner to the kernel.

The environment is an allow-list (`bot_environment`): the seat's own TICHU_* values, PATH, LANG
and the Python variables the SDK needs, never the runner's environment (an organiser token in it
would reach every bot). It crosses into the sandbox on a pipe, never in bwrap's arguments or
environment (`Sandbox.launch`): outside the sandbox, /proc shows every process's arguments to
every user of the machine and its environment to its user; inside, only the bot's own processes
see it. The limits of limits.py (CPU, memory, pinning) are set before bwrap starts, so they hold
for the whole sandbox.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import importlib.util
import os
import shutil
import subprocess
import sys
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

SOCKET_INSIDE = "/run/tichu/referee.sock"
ADDRESS_INSIDE = f"unix:{SOCKET_INSIDE}"
HOME_INSIDE = "/tmp"
NOBODY = 65534
PIPE_BYTES = 1 << 16  # what a pipe holds unless it is made larger (Linux)
# What a bot's process inherits from the runner's environment, beside its own TICHU_* values.
PASSED_ENV = (
    "PATH",
    "LANG",
    "LC_ALL",
    "TZ",
    "PYTHONPATH",  # the compiled engine's tree, when the suite runs on it
    "PYTHONDONTWRITEBYTECODE",
    "PYTHONUNBUFFERED",
    "PYTHONHASHSEED",
    "TICHU_LOG_LEVEL",
    "TICHU_PROTO_DIR",  # where the Node example (and bots modelled on it) load the protocol from
)
# The system a program needs to run, read-only: binaries, libraries, and a few files of /etc
# (never all of it: /etc/shadow and host keys would be readable to a process that owns them).
SYSTEM_TREES = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/opt")
SYSTEM_FILES = (
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/alternatives",
    "/etc/passwd",
    "/etc/group",
    "/etc/nsswitch.conf",
    "/etc/hosts",
    "/etc/localtime",
    "/etc/ssl",
    "/etc/ca-certificates",
    "/etc/mime.types",
    "/etc/os-release",
)
NO_SANDBOX = "every bot can read the others' tokens and the referee's files, and signal their processes"
INSTALL_HINT = (
    "bubblewrap is needed to run hosted bots in a sandbox (Debian/Ubuntu: apt-get install bubblewrap; "
    "Fedora: dnf install bubblewrap), and the kernel must allow namespaces; "
    f"--no-sandbox runs them without one ({NO_SANDBOX})"
)


class SandboxUnavailableError(RuntimeError):
    """bubblewrap is missing or cannot make namespaces here: say what to install."""


def socket_paths(first: Path, count: int) -> list[Path]:
    """`first` and the `count - 1` sockets beside it (`referee.sock`, `referee.sock.1`, ...)."""
    return [first, *(first.with_name(f"{first.name}.{i}") for i in range(1, count))]


@dataclass(frozen=True, slots=True)
class Sandbox:
    """The walls around the bot processes of one referee: what they may read and where they reach it."""

    socket: Path  # the referee's Unix socket, outside the sandbox
    readable: tuple[Path, ...] = ()  # beside the system, the Python and the SDK: read-only
    hidden: tuple[Path, ...] = ()  # the referee's files: masked wherever a readable folder holds them
    # The referee's Unix sockets, `socket` and those beside it (socket_paths), each served by its
    # own accept loop: a loop serves its connections' streams one call at a time, so the bots'
    # seats spread over them (tournament/bots.py) as TCP connections spread over the port's loops.
    sockets: int = 1

    def socket_paths(self) -> list[Path]:
        """The referee's Unix sockets outside the sandbox."""
        return socket_paths(self.socket, self.sockets)

    def addresses_inside(self) -> list[str]:
        """Where the bots reach those sockets: ADDRESS_INSIDE first."""
        return [f"unix:{path}" for path in socket_paths(Path(SOCKET_INSIDE), self.sockets)]

    @contextlib.contextmanager
    def launch(self, argv: list[str], *, cwd: Path, env: Mapping[str, str]) -> Iterator[Launch]:
        """How to start `argv` in the sandbox, in folder `cwd` (read-only inside), with exactly the
        environment `env`: bwrap's options, `env` among them, go through a pipe (`--args`), and
        bwrap starts with an empty environment. Start the process inside the `with`."""
        options = self.options(argv, cwd=cwd, env=env)
        data = b"".join(option.encode() + b"\0" for option in options)
        read, write = os.pipe()
        try:
            if len(data) > PIPE_BYTES:  # written before bwrap runs: the pipe must hold it all
                fcntl.fcntl(write, fcntl.F_SETPIPE_SZ, len(data))
            with os.fdopen(write, "wb") as pipe:
                pipe.write(data)
            yield Launch([check_available().bwrap, "--args", str(read), "--", *argv], {}, (read,))
        finally:
            os.close(read)  # the child holds its own copy; bwrap reads it to the end and closes it

    def options(self, argv: list[str], *, cwd: Path, env: Mapping[str, str]) -> list[str]:
        """bwrap's options for `argv` in folder `cwd` with environment `env` (what the pipe carries)."""
        isolation = check_available()
        args = ["--die-with-parent", "--new-session"]
        if isolation.user_namespace:
            args += ["--unshare-user", "--uid", str(NOBODY), "--gid", str(NOBODY)]
            if isolation.disable_userns:
                args += ["--disable-userns"]  # no nested user namespace: less of the kernel to reach
        args += ["--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-net", "--unshare-cgroup-try"]
        args += ["--hostname", "tichu-bot", "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]
        mounted: list[Path] = []
        for tree in _system_paths():
            args += _bind(tree)
            mounted.append(tree)
        own_files = [Path(arg) for arg in argv if Path(arg).is_absolute() and Path(arg).exists()]
        own = [
            path if path.is_dir() else path.parent for path in own_files
        ]  # a script, and its folder's modules
        readable = [*_python_paths(), *_python_path_entries(), *self.readable, *own, cwd.resolve()]
        for tree in _minimal_cover(readable):
            args += ["--ro-bind", str(tree), str(tree)]
            mounted.append(tree)
        for private in sorted({p.resolve() for p in self.hidden}):
            if private.exists() and any(_within(private, tree) for tree in mounted):
                args += (
                    ["--tmpfs", str(private)]
                    if private.is_dir()
                    else ["--ro-bind", "/dev/null", str(private)]
                )
        args += ["--dir", str(Path(SOCKET_INSIDE).parent)]
        inside = socket_paths(Path(SOCKET_INSIDE), self.sockets)
        for outside, within in zip(self.socket_paths(), inside, strict=True):
            args += ["--bind", str(outside), str(within)]
        args += ["--chdir", str(cwd.resolve()), "--clearenv"]
        for name, value in env.items():
            args += ["--setenv", name, value]
        return args


@dataclass(frozen=True, slots=True)
class Launch:
    """How to start one process: its command line and environment outside the sandbox, and the
    descriptors it must inherit (subprocess's pass_fds)."""

    argv: list[str]
    env: dict[str, str]
    pass_fds: tuple[int, ...] = ()


@contextlib.contextmanager
def launch(
    sandbox: Sandbox | None, argv: list[str], *, cwd: Path, env: Mapping[str, str]
) -> Iterator[Launch]:
    """How to start a bot: in `sandbox` (Sandbox.launch), or, with None, as it is."""
    if sandbox is None:
        yield Launch(list(argv), dict(env))
        return
    with sandbox.launch(argv, cwd=cwd, env=env) as how:
        yield how


@dataclass(frozen=True, slots=True)
class Isolation:
    """What this machine's bubblewrap can do."""

    bwrap: str  # its path (bots start with an empty environment: no PATH to look it up in)
    user_namespace: bool  # the bot runs as nobody in a user namespace of its own
    disable_userns: bool = False  # and may not make another one (bubblewrap 0.8 and later)

    def describe(self) -> str:
        """What the sandbox is on this machine, in a few words."""
        user = (
            "a user namespace as nobody, "
            if self.user_namespace
            else "no user namespace (the kernel refuses one), "
        )
        return f"bubblewrap: {user}own PID, IPC and network namespaces, the referee only by its Unix socket"


@functools.cache
def check_available() -> Isolation:
    """Whether bubblewrap works here (and with a user namespace); SandboxUnavailableError if not."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        raise SandboxUnavailableError(f"no bwrap on PATH: {INSTALL_HINT}")
    base = ["--unshare-pid", "--unshare-ipc", "--unshare-net", "--ro-bind", "/", "/", "--proc", "/proc"]
    user = ["--unshare-user", "--uid", str(NOBODY), "--gid", str(NOBODY)]
    tries = (
        (Isolation(bwrap, True, True), [*user, "--disable-userns", *base]),
        (Isolation(bwrap, True), [*user, *base]),
        (Isolation(bwrap, False), base),
    )
    errors = []
    for isolation, options in tries:
        try:
            # In a session of its own: bwrap's namespace init may outlive it briefly, and on a
            # machine whose init does not reap it, it would stay in the caller's process group.
            done = subprocess.run(
                [bwrap, *options, "--", "true"],
                capture_output=True,
                timeout=30,
                check=False,
                start_new_session=True,
            )
        except (OSError, subprocess.TimeoutExpired) as error:
            errors.append(str(error))
            continue
        if done.returncode == 0:
            return isolation
        errors.append(done.stderr.decode(errors="replace").strip())
    raise SandboxUnavailableError(f"bwrap cannot make namespaces here ({'; '.join(errors)}): {INSTALL_HINT}")


def bot_environment(values: Mapping[str, str], source: Mapping[str, str] | None = None) -> dict[str, str]:
    """A bot process's whole environment: the allow-listed variables of `source` (the runner's
    environment by default) and the seat's own `values` (TICHU_*)."""
    source = os.environ if source is None else source
    env = {name: source[name] for name in PASSED_ENV if name in source}
    env.setdefault("PATH", os.defpath)
    env["HOME"] = HOME_INSIDE
    env.update(values)
    return env


def _system_paths() -> list[Path]:
    return [Path(p) for p in (*SYSTEM_TREES, *SYSTEM_FILES) if os.path.lexists(p)]


def _bind(path: Path) -> list[str]:
    """Bind a system path as it is: a symbolic link (/bin -> usr/bin) stays one."""
    if path.is_symlink():
        return ["--symlink", os.readlink(path), str(path)]
    return ["--ro-bind", str(path), str(path)]


@functools.cache
def _python_paths() -> tuple[Path, ...]:
    """The Python that runs the SDK and the SDK's code: the interpreter's prefixes, every folder
    on its path that exists, and the packages' folders (an editable install points elsewhere)."""
    found = {Path(sys.prefix), Path(sys.base_prefix), Path(sys.executable).resolve().parent.parent}
    for name in ("referee", "clients"):
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.submodule_search_locations:
            for folder in spec.submodule_search_locations:
                found.add(Path(folder))
                found.add(Path(folder).parent / "proto")  # the protocol, which bots in other languages load
    return tuple(p.resolve() for p in found if p.exists())


def _python_path_entries() -> list[Path]:
    """The folders $PYTHONPATH names now (a bot's modules may live there: read at each start)."""
    return [
        Path(p).resolve()
        for p in os.environ.get("PYTHONPATH", "").split(os.pathsep)
        if p and Path(p).exists()
    ]


def _minimal_cover(paths: Iterable[Path]) -> list[Path]:
    """The paths with every one inside another left out (binding the outer one shows it)."""
    unique = sorted({p for p in paths if p.exists()}, key=lambda p: len(p.parts))
    kept: list[Path] = []
    for path in unique:
        if path == Path("/") or any(_within(path, outer) for outer in kept):
            continue
        kept.append(path)
    return kept


def _within(path: Path, tree: Path) -> bool:
    return path == tree or tree in path.parents
