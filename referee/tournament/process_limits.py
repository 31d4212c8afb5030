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
- Pinning: sched_setaffinity, inherited by the process's children; and where a cpuset cgroup is
  ours to write (v2 with cpuset delegated, or v1's cpuset), that cgroup's cpuset.cpus, which the
  bot cannot widen as it can its affinity.
- Tasks: pids.max (MAX_TASKS) in the bot's cgroup, where the pids controller is ours.

`enforcement()` says, in a line the tournament prints at its start, which of these hold for the
whole process tree on this machine and which fall back to something weaker.

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
MAX_TASKS = 512  # processes and threads of one bot, all together: room for any runtime, not for a fork bomb
_PAGE = os.sysconf("SC_PAGE_SIZE")
_TICKS = os.sysconf("SC_CLK_TCK")

# Runs in the child: argv[1] is the JSON of the limits, argv[2:] the bot's command.
LAUNCHER = """\
import json, os, resource, sys
spec = json.loads(sys.argv[1])
for procs_file in spec.get("cgroups", []):
    with open(procs_file, "w") as procs:
        procs.write(str(os.getpid()))
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


def launch_argv(argv: list[str], limits: Limits, cgroup: BotCgroup | None) -> list[str]:
    """The command that starts `argv` within the limits (argv itself when there are none to set)."""
    if limits.cpu_seconds is None and not limits.cpus and cgroup is None:
        return argv
    spec = {
        "cpu_seconds": limits.cpu_seconds,
        "extra": CPU_HARD_EXTRA_S,
        "cpus": list(limits.cpus),
        "cgroups": [] if cgroup is None else cgroup.procs_files,
    }
    return [sys.executable, "-I", "-S", "-c", LAUNCHER, json.dumps(spec), *argv]


def exit_reason(
    code: int, limits: Limits, *, memory_exceeded: bool, cpu_used_s: float, tree_cpu_exceeded: bool = False
) -> str:
    """Why a process ended, as a seat's record says it: a limit, its exit code, or a signal."""
    if memory_exceeded:
        return f"memory limit of {limits.memory_mb} MiB exceeded"
    if tree_cpu_exceeded:
        return f"CPU limit of {limits.cpu_seconds} s exceeded (by its processes together)"
    if limits.cpu_seconds is not None:
        if code == -signal.SIGXCPU:
            return f"CPU limit of {limits.cpu_seconds} s exceeded (SIGXCPU)"
        if code == -signal.SIGKILL and cpu_used_s >= limits.cpu_seconds:
            return f"CPU limit of {limits.cpu_seconds} s exceeded (SIGKILL, it ignored SIGXCPU)"
    if code < 0:
        return f"killed by signal {-code}"
    return f"exited with code {code}"


# ----------------------------------------------------------------------------- cgroups


# A bot's cgroup folders are named tichu-bot-<the referee's process id>-<a count>.
BOT_CGROUP_PREFIX = "tichu-bot-"
# How long an ended bot's processes get to leave its cgroup before the folder is left for later:
# a killed process stays in its cgroup until the kernel has reaped it, and rmdir fails till then.
CGROUP_EMPTY_WAIT_S = 2.0
# Folders of ended bots that were still busy when removed: tried again before the next bot's
# cgroup is made. Without this, a long tournament left one folder per bot per game behind (3,266
# on one machine), and a hierarchy has a limit on how many it holds.
_LEFT_BEHIND: set[Path] = set()


class BotCgroup:
    """The cgroup folders that hold one bot process and everything it starts (one folder on
    cgroup v2, one per controller hierarchy on v1): its memory and task limits hold for the whole
    tree, its CPU time is the tree's, and ending it ends every process in it."""

    def __init__(self, folders: dict[str, Path], version: int) -> None:
        self.folders = folders  # controller ("memory", "pids", "cpu") -> folder; v2: one folder for all
        self.version = version

    @property
    def procs_files(self) -> list[str]:
        """The cgroup.procs files the launcher writes the bot's process id to."""
        return sorted({str(folder / "cgroup.procs") for folder in self.folders.values()})

    def oom_killed(self) -> bool:
        """Whether the kernel killed a process of the group for its memory."""
        folder = self.folders.get("memory")
        if folder is None:
            return False
        name = "memory.events" if self.version == 2 else "memory.oom_control"
        try:
            text = (folder / name).read_text()
        except OSError:
            return False
        counts = dict(line.split() for line in text.splitlines() if len(line.split()) == 2)
        if int(counts.get("oom_kill", "0")) > 0 or int(counts.get("oom_group_kill", "0")) > 0:
            return True
        if self.version == 1:  # kernels before 4.13 count no oom_kill: the limit was hit at least
            return _read_int(folder / "memory.failcnt") > 0 and int(counts.get("under_oom", "0")) > 0
        return False

    def cpu_seconds(self) -> float | None:
        """The CPU time of every process that was ever in the group, or None if not accounted."""
        folder = self.folders.get("cpu")
        if folder is None:
            return None
        if self.version == 2:
            try:
                stat = dict(line.split() for line in (folder / "cpu.stat").read_text().splitlines())
            except (OSError, ValueError):
                return None
            return int(stat.get("usage_usec", "0")) / 1e6
        usage = _read_int(folder / "cpuacct.usage", -1)
        return None if usage < 0 else usage / 1e9

    def kill(self) -> None:
        """SIGKILL every process in the group (those that left their session and process group too)."""
        for _ in range(10):  # a process may fork while it is being killed: look again
            pids = set()
            for folder in self.folders.values():
                with contextlib.suppress(OSError, ValueError):
                    pids |= {int(p) for p in (folder / "cgroup.procs").read_text().split()}
            if not pids:
                return
            for pid in pids:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)

    def empty(self) -> bool:
        """Whether no process is left in any of its folders."""
        for folder in self.folders.values():
            try:
                if (folder / "cgroup.procs").read_text().strip():
                    return False
            except OSError:
                continue  # removed already
        return True

    async def until_empty(self, wait_s: float = CGROUP_EMPTY_WAIT_S) -> None:
        """Wait, at most `wait_s`, for the processes just killed to leave the group."""
        loop = asyncio.get_running_loop()
        end = loop.time() + wait_s
        while not self.empty() and loop.time() < end:
            await asyncio.sleep(0.01)

    def remove(self) -> None:
        """Remove the folders (an empty cgroup folder is removed by rmdir); one that still holds a
        process is removed later, before the next bot's cgroup is made (remove_left_behind)."""
        _LEFT_BEHIND.update(self.folders.values())
        remove_left_behind()


def remove_left_behind() -> None:
    """Remove the folders of ended bots whose processes have left; keep the others for later."""
    for folder in list(_LEFT_BEHIND):
        try:
            folder.rmdir()
        except FileNotFoundError:
            pass
        except OSError:
            continue  # still busy
        _LEFT_BEHIND.discard(folder)


def remove_stale(parent: Path, prefix: str = BOT_CGROUP_PREFIX) -> int:
    """Remove the empty folders `prefix`<pid>... under `parent` that a process no longer running
    made (a referee killed before it could remove them), and the stale bot folders inside them;
    the number removed. A folder that still holds a process is never removed: rmdir refuses it."""
    removed = 0
    for folder in parent.glob(f"{prefix}*"):
        owner = folder.name.removeprefix(prefix).split("-")[0]
        if not owner.isdigit() or _running(int(owner)):
            continue
        removed += remove_stale(folder)  # bots' folders made inside it (a bench's meter)
        try:
            folder.rmdir()
        except OSError:
            continue
        removed += 1
    return removed


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's
    return True


def _read_int(path: Path, default: int = 0) -> int:
    try:
        return int(path.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return default


class Cgroups:
    """A cgroup v2 folder we may write to with the memory controller on for its children.

    Each bot process gets a child folder with memory.max (swap off, the whole group killed on
    OOM) and pids.max where the pids controller is on; the kernel enforces both, and its cpu.stat
    accounts the group's CPU time.
    """

    def __init__(self, parent: Path) -> None:
        self.parent = parent
        self._count = 0

    @staticmethod
    @functools.cache
    def find() -> Cgroups | CgroupsV1 | None:
        """This machine's usable cgroups (v2 first, else v1), or None (then the watchdog limits memory)."""
        v2 = find_cgroups(Path("/proc/self/mountinfo"), Path("/proc/self/cgroup"), os.environ.get(CGROUP_ENV))
        found = v2 or find_cgroups_v1(Path("/proc/self/mountinfo"), Path("/proc/self/cgroup"))
        # Once per process, at first use: what referees that were killed left behind here.
        for parent in () if found is None else found.parent_folders():
            remove_stale(parent)
        return found

    def parent_folders(self) -> list[Path]:
        """The folders its bots' cgroups are made in."""
        return [self.parent]

    def controllers(self) -> set[str]:
        """The controllers its children have ("cpu" stands for cpu.stat, which v2 always keeps)."""
        try:
            found = set((self.parent / "cgroup.subtree_control").read_text().split())
        except OSError:
            found = set()
        return (found & {"memory", "pids", "cpuset"}) | {"cpu"}

    def describe(self) -> str:
        """Where the limits are enforced (see enforcement())."""
        return _statement(f"cgroup v2 ({self.parent})", self.controllers())

    def child(
        self, memory_bytes: int | None, tasks: int = MAX_TASKS, cpus: tuple[int, ...] = ()
    ) -> BotCgroup | None:
        """A new child cgroup holding at most `memory_bytes` and `tasks`, on `cpus` (all if none);
        None if it cannot be made."""
        remove_left_behind()
        self._count += 1
        path = self.parent / f"{BOT_CGROUP_PREFIX}{os.getpid()}-{self._count}"
        try:
            path.mkdir()
            if memory_bytes is not None:
                (path / "memory.max").write_text(str(memory_bytes))
            if cpus and "cpuset" in self.controllers():
                (path / "cpuset.cpus").write_text(_cpu_list(cpus))
            for name, value in (
                ("memory.swap.max", "0"),
                ("memory.oom.group", "1"),
                ("pids.max", str(tasks)),
            ):
                with contextlib.suppress(OSError):  # absent without swap accounting, pids, or on old kernels
                    (path / name).write_text(value)
        except OSError:
            with contextlib.suppress(OSError):
                path.rmdir()
            return None
        return BotCgroup({"memory": path, "pids": path, "cpu": path}, version=2)


class CgroupsV1:
    """cgroup v1 hierarchies we may write to (memory, pids, cpuacct), under this process's own cgroup."""

    def __init__(self, parents: dict[str, Path]) -> None:
        self.parents = parents  # "memory" / "pids" / "cpu" -> the folder children are made in
        self._count = 0

    def controllers(self) -> set[str]:
        """The hierarchies its children are made in ("cpu" stands for cpuacct)."""
        return set(self.parents)

    def parent_folders(self) -> list[Path]:
        """The folders its bots' cgroups are made in, one per hierarchy."""
        return list(self.parents.values())

    def describe(self) -> str:
        """Where the limits are enforced (see enforcement())."""
        names = {"cpu": "cpuacct"}
        controllers = ", ".join(names.get(c, c) for c in self.parents)
        return _statement(f"cgroup v1 ({controllers})", self.controllers())

    def child(
        self, memory_bytes: int | None, tasks: int = MAX_TASKS, cpus: tuple[int, ...] = ()
    ) -> BotCgroup | None:
        """A new child in each hierarchy (cpuset only for `cpus`); None if a memory limit is asked
        and its child cannot be made."""
        remove_left_behind()
        self._count += 1
        name = f"{BOT_CGROUP_PREFIX}{os.getpid()}-{self._count}"
        folders: dict[str, Path] = {}
        for controller, parent in self.parents.items():
            if controller == "cpuset" and not cpus:
                continue  # a v1 cpuset child takes no task before its CPUs and memory nodes are set
            path = parent / name
            try:
                path.mkdir()
                if controller == "memory" and memory_bytes is not None:
                    (path / "memory.limit_in_bytes").write_text(str(memory_bytes))
                    with contextlib.suppress(OSError):  # swap accounting may be off
                        (path / "memory.memsw.limit_in_bytes").write_text(str(memory_bytes))
                if controller == "pids":
                    (path / "pids.max").write_text(str(tasks))
                if controller == "cpuset":
                    (path / "cpuset.mems").write_text((parent / "cpuset.mems").read_text().strip())
                    (path / "cpuset.cpus").write_text(_cpu_list(cpus))
            except OSError:
                with contextlib.suppress(OSError):
                    path.rmdir()
                if controller == "memory" and memory_bytes is not None:
                    BotCgroup(folders, 1).remove()
                    return None
                continue
            folders[controller] = path
        return BotCgroup(folders, version=1) if folders else None


def find_cgroups_v1(mountinfo: Path, own: Path) -> CgroupsV1 | None:
    """The v1 hierarchies (memory, pids, cpuacct, cpuset) where this process may make a child of its
    own cgroup."""
    try:
        mounts = [line.split() for line in mountinfo.read_text().splitlines()]
        memberships = [line.split(":", 2) for line in own.read_text().splitlines()]
    except OSError:
        return None
    parents: dict[str, Path] = {}
    for controller, key in (("memory", "memory"), ("pids", "pids"), ("cpu", "cpuacct"), ("cpuset", "cpuset")):
        mount = next(
            (
                Path(f[4])
                for f in mounts
                if "-" in f and f[f.index("-") + 1] == "cgroup" and key in f[-1].split(",")
            ),
            None,
        )
        relative = next((m[2] for m in memberships if len(m) == 3 and key in m[1].split(",")), None)
        if mount is None or relative is None:
            continue
        parent = mount / relative.lstrip("/")
        probe = parent / f"tichu-probe-{os.getpid()}"
        try:
            probe.mkdir(exist_ok=True)
            probe.rmdir()
        except OSError:
            continue
        parents[controller] = parent
    return CgroupsV1(parents) if parents else None


def enforcement() -> str:
    """Which of a bot's limits hold for its whole process tree on this machine, and what stands in
    for the others: one line for the organiser."""
    found = Cgroups.find()
    if found is None:
        return _statement("", set())
    return found.describe()


def enforced() -> set[str]:
    """The controllers that hold a bot's whole tree here: "memory", "cpu" (its CPU time), "pids"
    and "cpuset" (its pinning), those this machine lets us use."""
    found = Cgroups.find()
    return set() if found is None else found.controllers()


def _statement(where: str, controllers: set[str]) -> str:
    """`where` holds `controllers`: what that enforces for the whole tree, and what falls back."""
    held, weaker = [], []
    if "memory" in controllers:
        held.append("memory")
    else:
        weaker.append(
            f"memory by a watchdog that reads the tree every {WATCH_S} s (it can overshoot in between)"
        )
    if "cpu" in controllers:
        held.append("CPU time")
    else:
        weaker.append("CPU time per process only (RLIMIT_CPU: each child counts its own)")
    if "pids" in controllers:
        held.append(f"{MAX_TASKS} tasks")
    else:
        weaker.append("no limit on tasks")
    if "cpuset" in controllers:
        held.append("pinning")
    else:
        weaker.append("pinning by affinity only (a bot may widen it)")
    if not where:
        return (
            "limits without a cgroup (none here that this process may write: v2 with the memory "
            "controller delegated, or v1's memory): " + "; ".join(weaker)
        )
    text = f"limits by {where}, for each bot's whole process tree: {', '.join(held)}"
    return text + (f"; weaker: {'; '.join(weaker)}" if weaker else "")


def _cpu_list(cpus: tuple[int, ...]) -> str:
    return ",".join(str(cpu) for cpu in sorted(cpus))


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
    cgroup: BotCgroup | None = None
    cpu_limit_s: float | None = None  # the whole tree's CPU time, read from its cgroup
    on_cpu_excess: Callable[[], None] | None = None
    cpu_used_s: float = 0.0


class Watchdog:
    """Reads /proc every WATCH_S for the processes it watches: the resident memory of each
    leader and every process descended from it (a child in a session of its own included), the
    leader's CPU time, and the whole tree's CPU time where a cgroup accounts it; a tree over its
    memory or CPU is reported once.

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

    def watch(
        self,
        pid: int,
        memory_bytes: int | None,
        on_excess: Callable[[], None],
        *,
        cgroup: BotCgroup | None = None,
        cpu_limit_s: float | None = None,
        on_cpu_excess: Callable[[], None] | None = None,
    ) -> None:
        """Watch the tree led by `pid`: on_excess when it holds more than memory_bytes,
        on_cpu_excess when its cgroup's CPU time passes cpu_limit_s."""
        self._groups[pid] = _Watched(memory_bytes, on_excess, cgroup, cpu_limit_s, on_cpu_excess)
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self._run())

    def unwatch(self, pid: int) -> float:
        """Stop watching the tree; the CPU seconds at the last look (the tree's where a cgroup counts it)."""
        watched = self._groups.pop(pid, None)
        if watched is None:
            return 0.0
        tree = None if watched.cgroup is None else watched.cgroup.cpu_seconds()
        return watched.cpu_used_s if tree is None else max(tree, watched.cpu_used_s)

    async def _run(self) -> None:
        while self._groups:
            self.sample()
            await asyncio.sleep(WATCH_S)

    def sample(self) -> None:
        """One look at /proc: CPU time of each leader, memory of each tree; report the excess."""
        processes = _processes()
        children: dict[int, list[int]] = {}
        for pid, parent, _, _ in processes:
            children.setdefault(parent, []).append(pid)
        stats = {pid: (rss, ticks) for pid, _, rss, ticks in processes}
        for leader, watched in list(self._groups.items()):
            if leader not in stats:
                continue
            watched.cpu_used_s = stats[leader][1] / _TICKS
            if watched.memory_bytes is not None:
                resident, todo = 0, [leader]
                while todo:
                    pid = todo.pop()
                    resident += stats.get(pid, (0, 0))[0] * _PAGE
                    todo.extend(children.get(pid, ()))
                if resident > watched.memory_bytes:
                    watched.memory_bytes = None  # reported once; the callback kills the tree
                    watched.on_excess()
            if watched.cpu_limit_s is not None and watched.cgroup is not None and watched.on_cpu_excess:
                used = watched.cgroup.cpu_seconds()
                if used is not None and used > watched.cpu_limit_s:
                    watched.cpu_used_s = used
                    watched.cpu_limit_s = None  # reported once
                    watched.on_cpu_excess()


_WATCHDOGS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Watchdog] = weakref.WeakKeyDictionary()


def _processes() -> list[tuple[int, int, int, int]]:
    """(pid, parent pid, resident pages, CPU ticks) of every process /proc shows."""
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
        # From the state (field 3): ppid is field 4, utime 14, stime 15, rss 24.
        found.append((int(entry), int(fields[1]), int(fields[21]), int(fields[11]) + int(fields[12])))
    return found
