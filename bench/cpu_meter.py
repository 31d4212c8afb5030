"""CPU time of a bench's process tree, sandboxed bots included (sandbox_bench, tournament_bench)."""

from __future__ import annotations

import os
import resource
from pathlib import Path

from referee.tournament.process_limits import remove_stale

PREFIX = "tichu-sandbox-bench-"


class CpuMeter:
    """CPU time of this process and everything it starts. A sandboxed bot is not a child this
    process reaps (it runs under bwrap's namespace init, and is killed with its namespace), so
    getrusage misses it: where a cgroup v1 cpuacct hierarchy is writable, this process moves into
    a cgroup of its own first, whose usage counts every descendant, the bots' own cgroups (made
    inside it) included."""

    def __init__(self) -> None:
        self.usage: Path | None = None
        own = next(
            (line.split(":", 2)[2] for line in Path("/proc/self/cgroup").read_text().splitlines()
             if "cpuacct" in line.split(":", 2)[1].split(",")),
            None,
        )  # fmt: skip
        root = Path("/sys/fs/cgroup/cpuacct")
        if own is None or not root.is_dir():
            return
        parent = root / own.lstrip("/")
        # A bench cannot remove the cgroup it is in: each run removes those of runs that ended.
        remove_stale(parent, PREFIX)
        folder = parent / f"{PREFIX}{os.getpid()}"
        try:
            folder.mkdir(exist_ok=True)
            (folder / "cgroup.procs").write_text(str(os.getpid()))
        except OSError:
            return
        self.usage = folder / "cpuacct.usage"

    @property
    def source(self) -> str:
        """What the figures count."""
        return "a cgroup's cpuacct.usage" if self.usage else "getrusage (sandboxed bots are missed)"

    def seconds(self) -> float:
        """CPU seconds so far."""
        if self.usage is not None:
            return int(self.usage.read_text()) / 1e9
        own = resource.getrusage(resource.RUSAGE_SELF)
        children = resource.getrusage(resource.RUSAGE_CHILDREN)
        return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime
