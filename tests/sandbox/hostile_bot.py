"""A hostile entrant for the sandbox tests: it looks around, then plays its seat as RandomBot.

    python hostile_bot.py MODE SERVER TARGETS_JSON      (its seat token in $TICHU_TOKEN)

probe: before playing, write what it could reach as one JSON line (prefixed REPORT) on its
standard error, which is its seat's log: the processes it sees and may signal, every seat token
it can read in another process's environment or arguments, the referee's files it can open, its
environment, the TCP addresses and abstract Unix sockets it can connect to, whether a child of
its own in a session of its own may hold more memory than the entrant's limit (it is killed if
not), the CPUs it may run on once it asked for all of them, its own token (the test looks for
it outside the sandbox), and a daemon it leaves behind in a session of its own (its marker in
TARGETS_JSON["marker"]), which must not outlive its game.
burn: start three children in sessions of their own that spin, and wait: together they pass the
entrant's CPU limit long before one of them would, and only that limit ends them.
hog-first: take memory without end before connecting: it never plays.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

MODE, SERVER, TARGETS = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
TOKEN = os.environ["TICHU_TOKEN"]
HOG_S = 30  # how long a child over the memory limit is waited for, before the bot gives up on it
TOKEN_IN_TEXT = re.compile(rb"TICHU_TOKEN=([A-Za-z0-9_-]+)|--token[= ]([A-Za-z0-9_-]+)")


def look_around() -> dict[str, Any]:
    """Everything this process can see or touch beyond its own seat."""
    pids = sorted(int(entry) for entry in os.listdir("/proc") if entry.isdigit())
    signalable = []
    for pid in [*pids, *TARGETS["pids"]]:
        try:
            os.kill(pid, 0)
            signalable.append(pid)
        except (ProcessLookupError, PermissionError):
            pass
    tokens = set()
    for pid in pids:
        for name in ("environ", "cmdline"):
            with contextlib.suppress(OSError):
                data = Path(f"/proc/{pid}/{name}").read_bytes().replace(b"\0", b" ")
                for match in TOKEN_IN_TEXT.finditer(data):
                    tokens.add((match.group(1) or match.group(2)).decode())
    readable = []
    for path in TARGETS["files"]:
        try:
            target = Path(path)
            # A masked folder is an empty one, a masked file an empty one: nothing read.
            if target.is_dir() and os.listdir(target):
                readable.append(f"{path}: {sorted(os.listdir(target))}")
            elif target.is_file() and target.read_bytes():
                readable.append(f"{path}: {len(target.read_bytes())} bytes")
        except OSError:
            pass
    reachable = []
    for host, port in TARGETS["tcp"]:
        with socket.socket() as probe:
            probe.settimeout(2)
            try:
                probe.connect((host, port))
                reachable.append(f"{host}:{port}")
            except OSError:
                pass
    for name in TARGETS.get("abstract", []):
        with socket.socket(socket.AF_UNIX) as probe:
            probe.settimeout(2)
            try:
                probe.connect("\0" + name)
                reachable.append(f"@{name}")
            except OSError:
                pass
    daemon = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(600)", TARGETS["marker"]],
        start_new_session=True,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    return {
        "pids": pids,
        "signalable": signalable,
        "tokens_seen": sorted(tokens - {TOKEN}),
        "readable": readable,
        "reachable": reachable,
        "environment": sorted(os.environ),
        "daemon": daemon.pid,
        "uid": os.getuid(),
        "hog_child": hog_child(),
        "cpus": widened_affinity(),
        "token": TOKEN,
    }


def widened_affinity() -> list[int]:
    """The CPUs it may run on after it asked for every CPU of the machine."""
    with contextlib.suppress(OSError):
        os.sched_setaffinity(0, range(os.cpu_count() or 1))
    return sorted(os.sched_getaffinity(0))


def hog_child() -> int | None:
    """A child in a session of its own takes 400 MB and keeps it: its exit code (-9 when the
    entrant's memory limit killed it), or None if it still held that memory HOG_S later."""
    hog = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import time; m = [bytearray(b'1') * (8 << 20) for _ in range(50)]; time.sleep(600)",
        ],
        start_new_session=True,
        stdin=subprocess.DEVNULL,
    )
    try:
        return hog.wait(HOG_S)
    except subprocess.TimeoutExpired:
        hog.kill()
        return None


def main() -> None:
    if os.environ.get("TICHU_MATCH_ID", "").startswith("check-"):
        # The tournament's entrant check before the first game: behave, to be let in. (A bot can
        # pass that check and cheat later: the check is for mistakes, the sandbox for cheats.)
        play()
        return
    if MODE == "hog-first":
        blocks = [bytearray(b"\x01") * (8 << 20) for _ in range(200)]  # 1.6 GB, written: resident
        time.sleep(600 + len(blocks))
    if MODE == "probe":
        print("REPORT " + json.dumps(look_around()), file=sys.stderr, flush=True)
    if MODE == "burn":
        for _ in range(3):
            subprocess.Popen(
                [sys.executable, "-c", "while True: pass", TARGETS["marker"]],
                start_new_session=True,
                stdin=subprocess.DEVNULL,
            )
        time.sleep(600)  # it never plays: only its limit can end it
    play()


def play() -> None:
    """Play the seat as RandomBot."""
    from clients.connect import connect
    from clients.random_bot import RandomBot

    asyncio.run(connect(RandomBot(), SERVER, TOKEN, insecure=True))


if __name__ == "__main__":
    main()
