"""The processes that play a host's entrants (tournament/bots.py): commands in any language playing
real games on an in-process referee, their placeholders and environment, capped logs, and the
limits that stop a bot (memory, CPU) while the other seats and games go on.

The clocks are loose for bots that answer in milliseconds; a seat whose process was stopped
forfeits after two timeouts of 3 s, so each test is over in seconds, not minutes.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import json
import os
import shutil
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from clients.connect import MatchResult, connect
from clients.random_bot import RandomBot
from referee.match import ClockSettings
from referee.sandbox import ADDRESS_INSIDE, Sandbox
from referee.server.serve import RunningServer, start_server
from referee.server.table import Table
from referee.tournament.bots import SEAT_LOG_CAP, EntrantProcesses, Worker, build_identity
from referee.tournament.config import Entrant
from referee.tournament.process_limits import Limits, exit_reason
from tests.server.support import ORGANISER

HERE = Path(__file__).resolve().parent
COMMAND_BOT = HERE / "command_bot.py"
CLOCK = ClockSettings(
    decision_ms=3_000,
    bank_ms=0,
    window_ms=1_000,
    max_violations=2,
    heartbeat_interval_ms=5_000,
    heartbeat_timeout_ms=15_000,
    reconnect_grace_ms=3_000,
    start_timeout_ms=0,
)
ONE_DEAL = '{"match_mode": "fixed_rounds:1"}'
GAME_S = 120.0  # far beyond what a one-deal game takes, even on a loaded machine


def python_command(mode: str, *more: str) -> tuple[str, ...]:
    return (sys.executable, str(COMMAND_BOT), mode, "{server}", "{token}", *more)


@asynccontextmanager
async def referee() -> AsyncIterator[RunningServer]:
    running = await start_server("127.0.0.1:0", ORGANISER, insecure=True, resume=False)
    try:
        yield running
    finally:
        await running.stop(0)


def new_game(running: RunningServer, seed: str, clock: ClockSettings = CLOCK) -> tuple[Table, list[str]]:
    return running.service.create_match(rules_json=ONE_DEAL, clock=clock, seed=seed, match_id=seed)


async def random_bot(running: RunningServer, token: str) -> MatchResult:
    """A seat played in this process: the other seats of a game."""
    return await connect(RandomBot(), f"127.0.0.1:{running.port}", token, insecure=True)


async def until_finished(table: Table) -> None:
    await asyncio.wait_for(table.finished.wait(), GAME_S)


def test_the_node_example_plays_as_a_command_next_to_a_shared_python_worker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.server.test_node_example import NODE, NPM, ROOT, installed_example

    if NODE is None or NPM is None:
        pytest.skip("node and npm are not installed (apt-get install nodejs npm): no Node bot to run")
    folder = installed_example()
    monkeypatch.setenv("TICHU_PROTO_DIR", str(ROOT / "proto"))  # the bot's copy is not beside proto/
    node = Entrant(
        "node",
        command=("node", "bot.js", "{server}", "{token}", "--name", "{name}"),
        workdir=folder,
        pass_env=("TICHU_PROTO_DIR",),
    )
    python = Entrant("python", bot="clients.random_bot:RandomBot")

    async def scenario() -> tuple[dict[int, str], dict[int, str], Table]:
        async with referee() as running:
            address = f"127.0.0.1:{running.port}"
            # No --insecure in the command: TICHU_INSECURE=1 tells the Node bot so.
            nodes = EntrantProcesses(node, address, tmp_path / "logs")
            pythons = EntrantProcesses(python, address, tmp_path / "logs")
            table, tokens = new_game(running, "node-game")
            for seat, token in enumerate(tokens):
                side = nodes if seat % 2 == 0 else pythons
                await side.give("node-game", seat, token, f"seed/{seat}")
            await until_finished(table)
            ended = nodes.release("node-game"), pythons.release("node-game")
            await nodes.stop()
            await pythons.stop()
            return ended[0], ended[1], table

    node_ended, python_ended, table = asyncio.run(scenario())
    assert table.result is not None and not table.result.forfeit, table.result
    assert node_ended == {} and python_ended == {}
    seats = {line["seat"]: line for line in table.result.statistics()["seats"]}
    assert all(seats[s]["rejections"] == 0 and seats[s]["timeouts"] == 0 for s in (0, 2)), seats
    log = (tmp_path / "logs" / "node-game-seat0-node.log").read_text()
    assert "match node-game" in log  # the bot's standard output goes to its seat's log too
    assert build_identity(node, tmp_path) == (
        "command",
        str(folder / "bot.js"),
        hashlib.sha256((folder / "bot.js").read_bytes()).hexdigest(),
    )


def test_a_python_script_run_as_a_command_gets_its_placeholders_environment_folder_and_cpus(
    tmp_path: Path,
) -> None:
    cpus = (1,) if len(os.sched_getaffinity(0)) > 1 and 1 in os.sched_getaffinity(0) else ()
    every = "{seat}", "{name}", "{seed}", "{match_id}", "{ca_file}"
    script = Entrant("script", command=python_command("play", *every), workdir=tmp_path, cpus=cpus)
    # The other team: the worker as a command that serves many seats (it reads seat lines), and
    # a bot = entrant with a worker per seat.
    worker_command = (sys.executable, "-m", "clients.worker", "clients.random_bot:RandomBot")
    many = Entrant("many", command=(*worker_command, "--server", "{server}", "--insecure"), serves_many=True)
    one = Entrant("one", bot="clients.random_bot:RandomBot", per_seat=True)  # a worker fed one seat

    async def scenario() -> tuple[dict[int, str], Table, str]:
        async with referee() as running:
            address = f"127.0.0.1:{running.port}"
            scripts = EntrantProcesses(script, address, tmp_path / "logs")
            workers = EntrantProcesses(many, address, tmp_path / "logs")
            table, tokens = new_game(running, "script-game")
            per_seat = EntrantProcesses(one, address, tmp_path / "logs")
            for seat, token in enumerate(tokens):
                side = {0: scripts, 1: workers, 2: scripts, 3: per_seat}[seat]
                await side.give("script-game", seat, token, f"s/{seat}")
            await until_finished(table)
            ended = scripts.release("script-game") | workers.release("script-game")
            ended |= per_seat.release("script-game")
            for side in (scripts, workers, per_seat):
                await side.stop()
            return ended, table, tokens[2]

    ended, table, token = asyncio.run(scenario())
    assert table.result is not None and not table.result.forfeit and ended == {}
    assert "seat 2 starts" in (tmp_path / "logs" / "script-game-seat2-script.log").read_text()
    assert (tmp_path / "logs" / "script-game-seat3-one.log").exists()
    given = json.loads((tmp_path / "seat2.json").read_text())
    assert given["cwd"] == str(tmp_path)
    assert given["argv"][3:] == ["2", "script", "s/2", "script-game", ""]
    assert given["argv"][2] == token
    env = given["env"]
    assert env["TICHU_TOKEN"] == token and env["TICHU_SEAT"] == "2" and env["TICHU_NAME"] == "script"
    assert env["TICHU_SEED"] == "s/2" and env["TICHU_MATCH_ID"] == "script-game"
    assert env["TICHU_SERVER"] == given["argv"][1] and env["TICHU_CA_FILE"] == ""
    assert env["TICHU_INSECURE"] == "1"
    if cpus:
        assert given["cpus"] == [1]
    else:
        assert given["cpus"] == sorted(os.sched_getaffinity(0))
    kind, source, sha = build_identity(script, tmp_path)
    assert (kind, source) == ("command", str(COMMAND_BOT))
    assert sha == hashlib.sha256(COMMAND_BOT.read_bytes()).hexdigest()


def test_a_seats_log_is_capped_and_its_process_group_is_ended_with_its_game(tmp_path: Path) -> None:
    spewer = Entrant("spew", command=python_command("spew"), workdir=tmp_path)
    log = tmp_path / "logs" / "m1-seat3-spew.log"

    async def scenario() -> tuple[dict[int, str], int]:
        processes = EntrantProcesses(spewer, "127.0.0.1:9", tmp_path / "logs")
        await processes.give("m1", 3, "token", "seed")
        for _ in range(600):  # until the whole 3 MiB went through (or a minute passed)
            if (tmp_path / "child.pid").exists() and b"[truncated]" in log.read_bytes():
                break
            await asyncio.sleep(0.1)
        child = int((tmp_path / "child.pid").read_text())
        ended = processes.release("m1")
        await processes.stop()
        return ended, child

    ended, child = asyncio.run(scenario())
    assert ended == {}  # ended with its game: no early end to report
    data = log.read_bytes()
    assert data.endswith(b"\n[truncated]\n")
    assert len(data) == SEAT_LOG_CAP + len(b"\n[truncated]\n")
    # The child it started was in its process group, and went with it.
    state = Path(f"/proc/{child}/stat")
    assert not state.exists() or state.read_text().rsplit(")", 1)[1].split()[0] in ("Z", "X")


def _limited_games(
    tmp_path: Path, entrant: Entrant, clock_a: ClockSettings = CLOCK
) -> tuple[dict[int, str], dict[int, str], Table, Table]:
    """Game a (on `clock_a`): the entrant at seat 0 (where command_bot grabs), b: the entrant at
    seat 2 (plays)."""

    async def scenario() -> tuple[dict[int, str], dict[int, str], Table, Table]:
        async with referee() as running:
            processes = EntrantProcesses(entrant, f"127.0.0.1:{running.port}", tmp_path / "logs")
            games = [new_game(running, "a", clock_a), new_game(running, "b")]
            others = []
            for (_, tokens), match_id, ours in zip(games, "ab", (0, 2), strict=True):
                for seat, token in enumerate(tokens):
                    if seat == ours:
                        await processes.give(match_id, seat, token, "seed")
                    else:
                        others.append(asyncio.create_task(random_bot(running, token)))
            for table, _ in games:
                await until_finished(table)
            ended = processes.release("a"), processes.release("b")
            await processes.stop()
            await asyncio.gather(*others)
            return ended[0], ended[1], games[0][0], games[1][0]

    return asyncio.run(scenario())


def test_a_bot_over_its_memory_is_stopped_and_named_while_its_other_game_goes_on(tmp_path: Path) -> None:
    hog = Entrant("hog", command=python_command("hog"), workdir=tmp_path, memory_mb=150)
    ended_a, ended_b, a, b = _limited_games(tmp_path, hog)
    assert ended_a == {0: "memory limit of 150 MiB exceeded"}
    assert a.result is not None and a.result.forfeit and a.result.forfeiting_team == 0
    assert ended_b == {} and b.result is not None and not b.result.forfeit


def test_a_bot_over_its_cpu_time_is_stopped_and_named_while_its_other_game_goes_on(tmp_path: Path) -> None:
    # A seat's process starts Python and grpc (about 0.5 s of CPU) and plays one deal well under 1 s.
    # 3 s: the bot that plays its game must stay under it on a loaded machine (CI saw one go
    # past 1 s: starting Python and the SDK costs most of a second of CPU there).
    spinner = Entrant("spin", command=python_command("spin"), workdir=tmp_path, cpu_seconds=3)
    # The spinner's decision must not run out before its CPU does: on a loaded machine it gets a
    # small share of a core, and with 3 s a decision its game once forfeited on timeouts after 8.5 s
    # of the clock, the spinner still under 3 s of CPU and so never stopped by its limit. With 30 s
    # for its one decision it needs a tenth of a core to meet its limit first; that one timeout
    # and the bomb window after it (1 s) then forfeit the game, rather than two more of 30 s each.
    patient = dataclasses.replace(CLOCK, decision_ms=30_000, max_violations=1)
    ended_a, ended_b, a, b = _limited_games(tmp_path, spinner, patient)
    assert ended_a == {0: "CPU limit of 3 s exceeded (SIGXCPU)"}
    assert a.result is not None and a.result.forfeit and a.result.forfeiting_team == 0
    assert ended_b == {} and b.result is not None and not b.result.forfeit


def test_the_reasons_name_the_exit_code_or_the_signal() -> None:
    limits = Limits(cpu_seconds=5, memory_mb=256)
    assert exit_reason(3, limits, memory_exceeded=False, cpu_used_s=0.1) == "exited with code 3"
    assert exit_reason(-9, limits, memory_exceeded=False, cpu_used_s=0.1) == "killed by signal 9"
    assert exit_reason(-24, limits, memory_exceeded=False, cpu_used_s=5.0).startswith("CPU limit of 5 s")
    assert exit_reason(-9, limits, memory_exceeded=True, cpu_used_s=0) == "memory limit of 256 MiB exceeded"


def test_a_crashing_per_seat_process_is_restarted_and_a_missing_program_named(tmp_path: Path) -> None:
    crasher = Entrant("crash", command=(sys.executable, "-c", "import sys; sys.exit(3)"), workdir=tmp_path)
    missing = Entrant("missing", command=("no-such-program-here", "{token}"), workdir=tmp_path)

    async def scenario() -> tuple[dict[int, str], dict[int, str]]:
        crashes = EntrantProcesses(crasher, "127.0.0.1:9", tmp_path / "logs")
        absent = EntrantProcesses(missing, "127.0.0.1:9", tmp_path / "logs")
        await crashes.give("m", 1, "token", "seed")
        await absent.give("m", 2, "token", "seed")
        process = crashes._seats["m"][0]
        for _ in range(600):  # every restart used up (a minute at most)
            if process.starts > 5 and process.run is not None and process.run.process.returncode is not None:
                break
            await asyncio.sleep(0.1)
        await asyncio.sleep(0.5)
        ended = crashes.release("m"), absent.release("m")
        await crashes.stop()
        await absent.stop()
        return ended

    crashed, absent = asyncio.run(scenario())
    assert crashed == {1: "exited with code 3"}
    assert absent == {2: "cannot start no-such-program-here: no such program on PATH"}


def test_build_identity_hashes_a_bots_module_a_package_or_names_a_remote_bot(tmp_path: Path) -> None:
    import clients.random_bot

    module = Path(clients.random_bot.__file__)
    found = build_identity(Entrant("r", bot="clients.random_bot:RandomBot"), tmp_path)
    assert found == ("bot", str(module), hashlib.sha256(module.read_bytes()).hexdigest())
    kind, source, sha = build_identity(Entrant("p", bot="clients:Bot"), tmp_path)
    assert (kind, source) == ("bot", str(module.parent)) and len(sha) == 64 and sha != found[2]
    assert build_identity(Entrant("x", remote=True), tmp_path) == ("remote", "", "")
    by_file = build_identity(Entrant("f", bot="crashing_bot.py:CrashOnceBot"), HERE)  # beside base
    file = HERE / "crashing_bot.py"
    assert by_file == ("bot", str(file), hashlib.sha256(file.read_bytes()).hexdigest())
    assert build_identity(Entrant("n", bot="no_such_module_here:Bot"), tmp_path) == ("bot", "", "")
    program = shutil.which("python3")
    assert program is not None
    by_program = build_identity(Entrant("c", command=("python3", "-m", "x"), workdir=tmp_path), tmp_path)
    assert by_program[:2] == ("command", program)


def test_cpus_the_machine_does_not_have_are_refused_by_name(tmp_path: Path) -> None:
    entrant = Entrant("pinned", bot="clients.random_bot:RandomBot", cpus=(4095,))
    with pytest.raises(ValueError, match=r"entrant pinned: cpus = \[4095\].*change cpus in the config"):
        EntrantProcesses(entrant, "127.0.0.1:9", tmp_path)


def test_a_shared_worker_killed_for_a_limit_is_not_restarted_but_one_that_crashes_is(tmp_path: Path) -> None:
    read_then = (sys.executable, "-c", "import sys\nsys.stdin.readline()\n")
    spin = Entrant("spin", command=(read_then[0], "-c", read_then[2] + "while True: pass"), serves_many=True,
                   workdir=tmp_path, cpu_seconds=1)  # fmt: skip
    crash = Entrant("crash", command=(read_then[0], "-c", read_then[2] + "sys.exit(3)"), serves_many=True,
                    workdir=tmp_path)  # fmt: skip

    async def scenario() -> tuple[dict[int, str], dict[int, str], int, int]:
        spins = EntrantProcesses(spin, "127.0.0.1:9", tmp_path / "logs")
        crashes = EntrantProcesses(crash, "127.0.0.1:9", tmp_path / "logs")
        await spins.give("m", 0, "token", "seed")
        await crashes.give("m", 1, "token", "seed")
        spinner, crasher = spins.workers[0], crashes.workers[0]
        for _ in range(600):  # a minute at most: the spinner's CPU second, the crasher's restarts
            if spinner.ended and crasher.starts > 5 and crasher.ended:
                break
            await asyncio.sleep(0.1)
        await asyncio.sleep(0.5)
        ended = spins.release("m"), crashes.release("m")
        await spins.stop()
        await crashes.stop()
        return ended[0], ended[1], spinner.starts, crasher.starts

    spun, crashed, spinner_starts, crasher_starts = asyncio.run(scenario())
    assert spun == {0: "CPU limit of 1 s exceeded (SIGXCPU)"} and spinner_starts == 1
    assert crashed == {1: "exited with code 3"} and crasher_starts == 6  # restarted 5 times, then no more


def test_a_cgroup_v2_parent_is_used_only_where_memory_is_delegated_and_writable(tmp_path: Path) -> None:
    from referee.tournament.process_limits import MAX_TASKS, find_cgroups

    root = tmp_path / "cgroup"
    (root / "bots").mkdir(parents=True)
    mountinfo = tmp_path / "mountinfo"
    mountinfo.write_text(f"30 24 0:26 / {root} rw,nosuid shared:4 - cgroup2 cgroup2 rw\n")
    own = tmp_path / "self-cgroup"
    own.write_text("0::/bots\n")
    (root / "bots" / "cgroup.subtree_control").write_text("cpu\n")
    assert find_cgroups(mountinfo, own, None) is None  # no memory controller for children
    (root / "cgroup.subtree_control").write_text("cpu memory pids\n")
    found = find_cgroups(mountinfo, own, None)
    assert found is not None and found.parent == root  # the root delegates memory
    (root / "bots" / "cgroup.subtree_control").write_text("cpu memory\n")
    found = find_cgroups(mountinfo, own, None)
    assert found is not None and found.parent == root / "bots"  # its own cgroup comes first
    assert found.controllers() == {"memory", "cpu"}
    assert "weaker: no limit on tasks; pinning by affinity only" in found.describe()
    child = found.child(64 << 20)
    assert child is not None and child.version == 2
    folder = child.folders["memory"]
    assert (folder / "memory.max").read_text() == str(64 << 20)
    assert (folder / "pids.max").read_text() == str(MAX_TASKS)
    assert not child.oom_killed()
    (folder / "memory.events").write_text("low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\n")
    assert child.oom_killed()
    (folder / "cpu.stat").write_text("usage_usec 2500000\nuser_usec 2000000\nsystem_usec 500000\n")
    assert child.cpu_seconds() == 2.5
    given = tmp_path / "given"
    given.mkdir()
    (given / "cgroup.subtree_control").write_text("memory\n")
    found = find_cgroups(mountinfo, own, str(given))
    assert found is not None and found.parent == given  # $TICHU_CGROUP first


def test_cgroup_v1_hierarchies_hold_memory_tasks_and_the_tree_s_cpu_time(tmp_path: Path) -> None:
    from referee.tournament.process_limits import MAX_TASKS, find_cgroups_v1

    mounts, memberships = [], []
    for number, key in enumerate(("memory", "pids", "cpuacct", "cpuset")):
        folder = tmp_path / key / "session"
        folder.mkdir(parents=True)
        mounts.append(f"{30 + number} 24 0:{26 + number} / {tmp_path / key} rw - cgroup cgroup rw,{key}")
        memberships.append(f"{number + 2}:{key}:/session")
    (tmp_path / "cpuset" / "session" / "cpuset.mems").write_text("0\n")
    mountinfo = tmp_path / "mountinfo"
    mountinfo.write_text("\n".join(mounts) + "\n")
    own = tmp_path / "self-cgroup"
    own.write_text("\n".join(memberships) + "\n0::/\n")
    found = find_cgroups_v1(mountinfo, own)
    assert found is not None and found.controllers() == {"memory", "pids", "cpu", "cpuset"}
    assert found.describe() == (
        "limits by cgroup v1 (memory, pids, cpuacct, cpuset), for each bot's whole process tree: "
        f"memory, CPU time, {MAX_TASKS} tasks, pinning"
    )
    pinned = found.child(None, cpus=(1, 0))
    assert pinned is not None and (pinned.folders["cpuset"] / "cpuset.cpus").read_text() == "0,1"
    assert (pinned.folders["cpuset"] / "cpuset.mems").read_text() == "0"  # before any task joins
    child = found.child(64 << 20)
    assert child is not None and child.version == 1
    assert "cpuset" not in child.folders  # no pinning asked: no cpuset of its own
    assert (child.folders["memory"] / "memory.limit_in_bytes").read_text() == str(64 << 20)
    assert (child.folders["pids"] / "pids.max").read_text() == str(MAX_TASKS)
    assert len(child.procs_files) == 3  # the launcher joins every hierarchy
    (child.folders["cpu"] / "cpuacct.usage").write_text("3500000000\n")
    assert child.cpu_seconds() == 3.5
    (child.folders["memory"] / "memory.oom_control").write_text(
        "oom_kill_disable 0\nunder_oom 0\noom_kill 0\n"
    )
    assert not child.oom_killed()
    (child.folders["memory"] / "memory.oom_control").write_text(
        "oom_kill_disable 0\nunder_oom 0\noom_kill 2\n"
    )
    assert child.oom_killed()
    assert find_cgroups_v1(tmp_path / "no-mountinfo", own) is None


def test_the_limits_statement_says_what_falls_back_where_no_cgroup_holds_the_tree(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from referee.tournament.process_limits import Cgroups, enforced, enforcement

    monkeypatch.setattr(Cgroups, "find", staticmethod(lambda: None))
    assert enforced() == set()
    statement = enforcement()
    assert statement.startswith("limits without a cgroup")
    for weaker in (
        "memory by a watchdog",
        "CPU time per process only",
        "no limit on tasks",
        "pinning by affinity",
    ):
        assert weaker in statement


def test_a_sandboxed_entrant_s_seats_take_the_referee_s_sockets_in_turn(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One socket is served by one accept loop: 512 games at once through one timed out hundreds
    of decisions, through four none (docs/develop/benchmarks.md). An SDK worker's seat line names
    its socket (the fourth field); a command's lines keep their three fields."""
    lines: list[str] = []

    async def handed(worker: Worker, match_id: str, line: str, seat: int = -1) -> None:
        lines.append(line)

    monkeypatch.setattr(Worker, "give", handed)
    sandbox = Sandbox(socket=tmp_path / "referee.sock", sockets=3)
    bot = Entrant("r", bot="clients.random_bot:RandomBot", processes=2)
    command = Entrant("c", command=python_command("serve"), serves_many=True, workdir=tmp_path)

    async def scenario() -> None:
        for entrant in (bot, command):
            processes = EntrantProcesses(entrant, "127.0.0.1:9", tmp_path / "logs", sandbox=sandbox)
            for seat in range(4):
                await processes.give("m", seat, f"token{seat}", "seed")

    asyncio.run(scenario())
    assert sandbox.addresses_inside() == [ADDRESS_INSIDE, f"{ADDRESS_INSIDE}.1", f"{ADDRESS_INSIDE}.2"]
    assert lines == [
        "token0 r seed",
        f"token1 r seed {ADDRESS_INSIDE}.1",
        f"token2 r seed {ADDRESS_INSIDE}.2",
        "token3 r seed",
        *(f"token{seat} c seed" for seat in range(4)),
    ]


@pytest.mark.parametrize("sandboxed", [False, True], ids=["plain", "sandboxed"])
def test_an_ended_bot_s_cgroup_is_removed_once_its_processes_have_left(
    tmp_path: Path, sandboxed: bool
) -> None:
    """An ended bot's cgroup folders go with it, its children that left its session included
    (tests/sandbox/test_sandbox.py holds a killed tree's folders to it too)."""
    from referee.sandbox import SandboxUnavailableError, check_available
    from referee.tournament.bots import _Run
    from referee.tournament.process_limits import Cgroups

    if Cgroups.find() is None:
        pytest.skip("no cgroup this process may write to on this machine")
    sandbox = None
    if sandboxed:
        try:
            check_available()
        except SandboxUnavailableError as error:
            if os.environ.get("CI"):
                raise  # CI installs bubblewrap: a missing sandbox there is a failure, not a skip
            pytest.skip(str(error))
        sandbox = Sandbox(socket=tmp_path / "referee.sock")
    # A bot whose children spin in sessions of their own, so that the group holds more than the
    # leader and its process group.
    spin = "import os, time\nif os.fork() == 0:\n    os.setsid()\n    while True: pass\ntime.sleep(600)"
    argv = [sys.executable, "-c", spin]

    async def scenario() -> list[Path]:
        run = await _Run.start(
            argv, cwd=tmp_path, env=dict(os.environ), log_path=tmp_path / "bot.log", log_cap=1 << 16,
            limits=Limits(memory_mb=512), stdin=False, output_too=False, sandbox=sandbox,
        )  # fmt: skip
        assert run.cgroup is not None
        folders = list(run.cgroup.folders.values())
        assert all(folder.is_dir() for folder in folders)
        await run.end(grace_s=0.1)
        return folders

    folders = asyncio.run(scenario())
    assert [folder for folder in folders if folder.exists()] == []


def test_cgroup_folders_left_busy_or_by_a_dead_referee_are_removed_later(tmp_path: Path) -> None:
    import subprocess

    from referee.tournament import process_limits
    from referee.tournament.process_limits import BotCgroup, remove_left_behind, remove_stale

    # A plain folder stands in for a cgroup: rmdir refuses it while it holds something.
    busy = tmp_path / "tichu-bot-1-1"
    busy.mkdir()
    (busy / "task").write_text("")
    BotCgroup({"cpu": busy}, version=1).remove()
    assert busy.is_dir() and busy in process_limits._LEFT_BEHIND
    remove_left_behind()
    assert busy.is_dir()  # still busy: kept for the next time
    (busy / "task").unlink()
    remove_left_behind()
    assert not busy.exists() and busy not in process_limits._LEFT_BEHIND

    ended = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], check=True, capture_output=True, text=True
    )
    dead = int(ended.stdout)
    stale, ours, held = (tmp_path / f"tichu-bot-{pid}-1" for pid in (dead, os.getpid(), f"{dead}-2"))
    other = tmp_path / "someone-else-1"
    for folder in (stale, ours, held, other):
        folder.mkdir()
    (held / "task").write_text("")  # a process still in it
    (stale / f"tichu-bot-{dead}-3").mkdir()  # a bot's, made inside (as in a bench's cgroup)
    assert remove_stale(tmp_path) == 2
    assert not stale.exists() and ours.is_dir() and held.is_dir() and other.is_dir()
