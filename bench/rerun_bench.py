"""How long re-running a replay takes, in two source trees side by side: `tichu replay verify`,
the HTML viewer's data and the web game page's data (which also verifies).

Run `.venv/bin/python bench/rerun_bench.py --baseline /work/main` from a worktree: it starts one
worker process per tree (this one and the baseline), each with that tree's `referee` first on its
path and the replays already read, and asks them in turn, alternating, to run each operation on
each replay once per repeat: `verify` (referee.replay.verify: the chain, then the moves' re-run
through the rules engine), `html` (referee.replay.html.build_data) and `page`
(referee.web.steps.page_data: the check and the viewer's data). A worker
measures its own CPU time with the garbage collector on; the figures are medians and the ratio of
the two, which a loaded machine changes far less than the absolute times; the ratio of the fastest
runs, the least disturbed by other work, is printed too. Without --baseline it
measures this tree alone. Default replays: the golden ones in replays/golden.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
GOLDEN = sorted((REPO / "replays" / "golden").glob("*.jsonl"))


OPERATIONS = ("verify", "html", "page")


def worker(tree: Path, files: list[Path]) -> None:
    """Answer each line on stdin (an operation and a replay's index) with its CPU ms."""
    sys.path.insert(0, str(tree))
    import referee
    from referee.replay.format import read_replay
    from referee.replay.html import build_data
    from referee.replay.verify import verify
    from referee.web.steps import page_data

    operations: dict[str, Callable[[Any], object]] = {"verify": verify, "html": build_data, "page": page_data}
    replays = [read_replay(path) for path in files]
    for operation in operations.values():
        operation(replays[0])  # the first run pays for lazy imports and caches: not measured
    print(f"ready {Path(referee.__file__).parent.parent}", flush=True)
    for command in sys.stdin:
        name, index = command.split()
        operation, replay = operations[name], replays[int(index)]
        started = time.process_time()
        operation(replay)
        print(f"{(time.process_time() - started) * 1000:.3f}", flush=True)


def _start(tree: Path, files: list[Path]) -> subprocess.Popen[str]:
    command = [sys.executable, __file__, "--worker", str(tree), *map(str, files)]
    process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=tree)
    assert process.stdout is not None
    # The worker names the tree its `referee` came from: an installed copy must not stand in.
    if process.stdout.readline().strip() != f"ready {tree}":
        _stop(process)
        raise SystemExit(f"the worker for {tree} did not start with that tree's referee")
    return process


def _stop(process: subprocess.Popen[str]) -> None:
    """End a worker: it stops at the end of its input."""
    assert process.stdin is not None
    process.stdin.close()
    process.wait()


def _ask(process: subprocess.Popen[str], operation: str, index: int) -> float:
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(f"{operation} {index}\n")
    process.stdin.flush()
    return float(process.stdout.readline())


def main(argv: list[str] | None = None) -> int:
    """Measure and print the figures, and the command that reproduces them."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", type=Path, help="replays to verify (default: the golden ones)")
    parser.add_argument("--baseline", type=Path, help="another source tree to measure side by side")
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--worker", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    files = [path.resolve() for path in args.files] or GOLDEN
    if args.worker is not None:
        worker(args.worker, files)
        return 0
    trees = {"this tree": REPO}
    if args.baseline is not None:
        trees["baseline"] = args.baseline.resolve()
    workers: dict[str, subprocess.Popen[str]] = {}
    try:
        for name, tree in trees.items():
            workers[name] = _start(tree, files)
        for operation in OPERATIONS:
            for index, path in enumerate(files):
                times: dict[str, list[float]] = {name: [] for name in workers}
                order = list(workers.items())
                for _ in range(args.repeats):  # alternating: the machine's load falls on both alike
                    for name, process in order:
                        times[name].append(_ask(process, operation, index))
                    order.reverse()  # and neither is always the one that runs first
                median = {name: statistics.median(values) for name, values in times.items()}
                fastest = {name: min(values) for name, values in times.items()}
                figures = ", ".join(f"{name} {ms:.1f} ms" for name, ms in median.items())
                ratio = ""
                if "baseline" in median:
                    ratio = (
                        f", x{median['this tree'] / median['baseline']:.3f} of the baseline"
                        f" (fastest runs: x{fastest['this tree'] / fastest['baseline']:.3f})"
                    )
                print(f"{operation} {path.name}: median CPU {figures}{ratio} ({args.repeats} runs each)")
    finally:
        for process in workers.values():
            _stop(process)
    load = os.getloadavg()
    print(f"Load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f} on {os.cpu_count()} cores")
    given = "".join(f" {path}" for path in args.files)
    baseline = "" if args.baseline is None else f" --baseline {args.baseline}"
    print(f"Reproduce: .venv/bin/python bench/rerun_bench.py{given}{baseline} --repeats {args.repeats}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
