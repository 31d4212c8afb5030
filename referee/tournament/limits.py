"""A bot process's share of the machine: CPU time, memory, CPU pinning; and why a process ended.

- CPU time: RLIMIT_CPU, per process, counted from its start. At the soft limit the kernel sends
  SIGXCPU (its default action ends the process); a process that catches it gets SIGKILL at the
  hard limit, CPU_HARD_EXTRA_S later.
- Memory: a child cgroup (v2) with memory.max where this machine has one we may write to;
  otherwise a watchdog that polls the resident memory of the process group every WATCH_S and
  kills the group past the limit. RLIMIT_AS is no use here (measured on Linux 6.18, x86-64,
  Python 3.11, grpcio, Node 20): a Python worker playing a game over grpc reserved 788 MB of
  address space for 47 MB resident, the Node example 1062 MB for 66 MB, and Node does not even
  start under 1 GiB of address space ("Failed to reserve virtual memory for CodeRange"). A
  limit on address space would have to be ten times the memory meant.
- Pinning: sched_setaffinity, inherited by the process's children.

The limits are set in the child by a launcher (LAUNCHER, a few lines of Python run as
`python -I -S -c`) that then execs the bot's program, so the process id stays the bot's. Not
preexec_fn: the host runs grpc threads, and code between fork and exec in a threaded process
may deadlock on a lock another thread held.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import os
import signal
import sys
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from referee.tournament.config import Entrant

CPU_HARD_EXTRA_S = 2  # a process that ignores SIGXCPU is killed this much CPU time later
WATCH_S = 0.25  # how often the watchdog reads /proc
CGROUP_ENV = "TICHU_CGROUP"  # a cgroup v2 folder, with memory in its subtree_control, to use
_PAGE = os.sysconf("SC_PAGE_SIZE")
_TICKS = os.sysconf("SC_CLK_TCK")

# Runs in the child: argv[1] is the JSON of the limits, argv[2:] the bot's command.
LAUNCHER = """\
import json, os, resource, sys
spec = json.loads(sys.argv[1])
if spec.get("cgroup"):
    with open(os.path.join(spec["cgroup"], "cgroup.procs"), "w") as procs:
        procs.write("0")
if spec.get("cpu_seconds"):
    resource.setrlimit(resource.RLIMIT_CPU, (spec["cpu_seconds"], spec["cpu_seconds"] + spec["extra"]))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
if spec.get("cpus"):
    os.sched_setaffinity(0, spec["cpus"])
try:
    os.execvp(sys.argv[2], sys.argv[2:])
except OSError as error:
    print(f"cannot start {sys.argv[2]}: {error.strerror}", file=sys.stderr)
    sys.exit(127)
"""


@dataclass(frozen=True, slots=True)
class Limits:
    """What one bot process may use."""

    cpu_seconds: int | None = None
    memory_mb: int | None = None
    cpus: tuple[int, ...] = ()

    @classmethod
    def of(cls, entrant: Entrant) -> Limits:
        """An entrant's limits."""
        return cls(entrant.cpu_seconds, entrant.memory_mb, entrant.cpus)

    @property
    def memory_bytes(self) -> int | None:
        """memory_mb in bytes."""
        return None if self.memory_mb is None else self.memory_mb << 20

    def check_cpus(self, name: str) -> None:
        """Refuse CPUs this process may not run on (the machine lacks them, or a cpuset excludes them)."""
        if not self.cpus:
            return
        usable = sorted(os.sched_getaffinity(0))
        missing = sorted(set(self.cpus) - set(usable))
        if missing:
            raise ValueError(
                f"entrant {name}: cpus = {list(self.cpus)} names CPUs {missing} that this machine does "
                f"not let it use (usable: {usable}); change cpus in the config"
            )


def launch_argv(argv: list[str], limits: Limits, cgroup: Path | None) -> list[str]:
    """The command that starts `argv` within the limits (argv itself when there are none to set)."""
    if limits.cpu_seconds is None and not limits.cpus and cgroup is None:
        return argv
    spec = {
        "cpu_seconds": limits.cpu_seconds,
        "extra": CPU_HARD_EXTRA_S,
        "cpus": list(limits.cpus),
        "cgroup": "" if cgroup is None else str(cgroup),
    }
    return [sys.executable, "-I", "-S", "-c", LAUNCHER, json.dumps(spec), *argv]


def exit_reason(code: int, limits: Limits, *, memory_exceeded: bool, cpu_used_s: float) -> str:
    """Why a process ended, as a seat's record says it: a limit, its exit code, or a signal."""
    if memory_exceeded:
        return f"memory limit of {limits.memory_mb} MiB exceeded"
    if limits.cpu_seconds is not None:
        if code == -signal.SIGXCPU:
            return f"CPU limit of {limits.cpu_seconds} s exceeded (SIGXCPU)"
        if code == -signal.SIGKILL and cpu_used_s >= limits.cpu_seconds:
            return f"CPU limit of {limits.cpu_seconds} s exceeded (SIGKILL, it ignored SIGXCPU)"
    if code < 0:
        return f"killed by signal {-code}"
    return f"exited with code {code}"


# ----------------------------------------------------------------------------- cgroup v2


class Cgroups:
    """A cgroup v2 folder we may write to with the memory controller on for its children.

    Each limited process gets a child folder with memory.max (swap off, the whole group killed
    on OOM); the kernel enforces it, and its cpu.stat accounts the group's CPU time.
    """

    def __init__(self, parent: Path) -> None:
        self.parent = parent
        self._count = 0

    @staticmethod
    @functools.cache
    def find() -> Cgroups | None:
        """This machine's usable cgroup parent, or None (then the watchdog limits memory)."""
        return find_cgroups(
            Path("/proc/self/mountinfo"), Path("/proc/self/cgroup"), os.environ.get(CGROUP_ENV)
        )

    def child(self, memory_bytes: int) -> Path | None:
        """A new child cgroup holding at most `memory_bytes`; None if it cannot be made."""
        self._count += 1
        path = self.parent / f"tichu-bot-{os.getpid()}-{self._count}"
        try:
            path.mkdir()
            (path / "memory.max").write_text(str(memory_bytes))
            for name, value in (("memory.swap.max", "0"), ("memory.oom.group", "1")):
                with contextlib.suppress(OSError):  # absent without swap accounting / old kernels
                    (path / name).write_text(value)
        except OSError:
            self.remove(path)
            return None
        return path

    @staticmethod
    def oom_killed(path: Path) -> bool:
        """Whether the kernel killed a process of the child for its memory."""
        try:
            events = (path / "memory.events").read_text()
        except OSError:
            return False
        counts = dict(line.split() for line in events.splitlines() if len(line.split()) == 2)
        return int(counts.get("oom_kill", "0")) > 0 or int(counts.get("oom_group_kill", "0")) > 0

    @staticmethod
    def remove(path: Path) -> None:
        """Remove a child once its processes are gone (an empty cgroup folder is removed by rmdir)."""
        with contextlib.suppress(OSError):
            path.rmdir()


def find_cgroups(mountinfo: Path, own: Path, given: str | None) -> Cgroups | None:
    """The first usable of: the folder `given` ($TICHU_CGROUP), this process's cgroup, the root.

    Usable: cgroup v2, memory in its cgroup.subtree_control (a child of it can have memory.max),
    and a child folder can be made there. The controllers are never switched on here: that
    would change the machine's cgroups for everyone.
    """
    candidates = [Path(given)] if given else []
    try:
        mounts = [line.split() for line in mountinfo.read_text().splitlines()]
        root = next(Path(f[4]) for f in mounts if "-" in f and f[f.index("-") + 1] == "cgroup2")
        relative = next(line[3:] for line in own.read_text().splitlines() if line.startswith("0::"))
    except (OSError, StopIteration, IndexError):
        root = None
    if root is not None:
        candidates += [root / relative.lstrip("/"), root]
    for parent in candidates:
        try:
            if "memory" not in (parent / "cgroup.subtree_control").read_text().split():
                continue
            probe = parent / f"tichu-probe-{os.getpid()}"
            probe.mkdir(exist_ok=True)
            probe.rmdir()
        except OSError:
            continue
        return Cgroups(parent)
    return None


# ----------------------------------------------------------------------------- the watchdog


@dataclass(slots=True)
class _Watched:
    memory_bytes: int | None
    on_excess: Callable[[], None]
    cpu_used_s: float = 0.0


class Watchdog:
    """Reads /proc every WATCH_S for the process groups it watches: their resident memory
    (summed over the group) and the leader's CPU time; a group over its memory is reported once.

    One per event loop, shared by every entrant's processes, so /proc is read once per round.
    """

    def __init__(self) -> None:
        self._groups: dict[int, _Watched] = {}
        self._task: asyncio.Task[None] | None = None

    @classmethod
    def get(cls) -> Watchdog:
        """The running loop's watchdog."""
        loop = asyncio.get_running_loop()
        watchdog = _WATCHDOGS.get(loop)
        if watchdog is None:
            watchdog = _WATCHDOGS[loop] = cls()
        return watchdog

    def watch(self, pgid: int, memory_bytes: int | None, on_excess: Callable[[], None]) -> None:
        """Watch the group led by `pgid`; on_excess is called when it holds more than memory_bytes."""
        self._groups[pgid] = _Watched(memory_bytes, on_excess)
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self._run())

    def unwatch(self, pgid: int) -> float:
        """Stop watching the group; the leader's CPU seconds at the last look."""
        watched = self._groups.pop(pgid, None)
        return 0.0 if watched is None else watched.cpu_used_s

    async def _run(self) -> None:
        while self._groups:
            self.sample()
            await asyncio.sleep(WATCH_S)

    def sample(self) -> None:
        """One look at /proc: CPU time of each leader, memory of each group; report the excess."""
        resident: dict[int, int] = dict.fromkeys(self._groups, 0)
        for pid, group, rss_pages, cpu_ticks in _processes():
            if group in resident:
                resident[group] += rss_pages * _PAGE
                if pid == group:
                    self._groups[group].cpu_used_s = cpu_ticks / _TICKS
        for group, used in resident.items():
            watched = self._groups[group]
            if watched.memory_bytes is not None and used > watched.memory_bytes:
                watched.memory_bytes = None  # reported once; the callback kills the group
                watched.on_excess()


_WATCHDOGS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Watchdog] = weakref.WeakKeyDictionary()


def _processes() -> list[tuple[int, int, int, int]]:
    """(pid, process group, resident pages, CPU ticks) of every process /proc shows."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as stat:
                text = stat.read()
        except OSError:
            continue  # it ended while we looked
        # The command name, in parentheses, may hold spaces and parentheses: split after it.
        fields = text[text.rfind(b")") + 2 :].split()
        # From the state (field 3): pgrp is field 5, utime 14, stime 15, rss 24.
        found.append((int(entry), int(fields[2]), int(fields[21]), int(fields[11]) + int(fields[12])))
    return found
