"""The reference bot in another language, examples/node: a JavaScript bot that keeps no state
plays whole games on a real referee against the sample Python bots, with no rejection.

Its packages come from `npm ci` (the committed package-lock.json), installed once per lockfile
under build/node-example/ and reused; the bot loads proto/ at run time."""

from __future__ import annotations

import asyncio
import fcntl
import hashlib
import io
import os
import shutil
import signal
import subprocess
from pathlib import Path

import pytest

from clients.connect import MatchResult, connect
from clients.heuristic_bot import HeuristicBot
from clients.random_bot import RandomBot
from referee.checkbot.checks import all_checks
from referee.checkbot.kit import Settings, run_kit
from referee.match.records import DecisionRecord
from tests.server.support import referee, run

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "node"
NODE, NPM = shutil.which("node"), shutil.which("npm")

# CI installs Node (.ci/run), so there a missing node or npm fails the test instead of skipping it.
pytestmark = pytest.mark.skipif(
    (NODE is None or NPM is None) and not os.environ.get("CI"),
    reason="node and npm are not installed, so the Node example bot cannot be played "
    "(.ci/run installs Debian's nodejs and npm; locally: apt-get install nodejs npm)",
)


def installed_example() -> Path:
    """A copy of examples/node with its packages installed (npm ci), reused while the lockfile
    is the same; the copy of bot.js is refreshed when it changed.

    The suite's workers share the folder: one installs it while the others wait on a file lock.
    (Without the lock, a worker that finished its own install second replaced the folder while
    the first one's bots were loading from it, and they never connected.)"""
    lock = (EXAMPLE / "package-lock.json").read_bytes()
    folder = ROOT / "build" / "node-example" / hashlib.sha256(lock).hexdigest()[:16]
    folder.parent.mkdir(parents=True, exist_ok=True)
    with open(folder.with_name(folder.name + ".lock"), "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        if not (folder / "node_modules" / ".package-lock.json").exists():
            staging = folder.with_name(folder.name + f".{os.getpid()}")
            shutil.rmtree(staging, ignore_errors=True)
            staging.mkdir(parents=True)
            for name in ("package.json", "package-lock.json"):
                shutil.copy(EXAMPLE / name, staging / name)
            assert NPM is not None
            done = subprocess.run(
                [NPM, "ci", "--no-audit", "--no-fund", "--ignore-scripts"],
                check=False,
                cwd=staging,
                capture_output=True,
                text=True,
                timeout=600,
            )
            assert done.returncode == 0, f"npm ci failed:\n{done.stdout}\n{done.stderr}"
            shutil.rmtree(folder, ignore_errors=True)
            staging.rename(folder)
        bot = (EXAMPLE / "bot.js").read_bytes()
        if not (folder / "bot.js").exists() or (folder / "bot.js").read_bytes() != bot:
            # Replaced whole: another worker's bots may be reading it right now.
            (folder / "bot.js.new").write_bytes(bot)
            os.replace(folder / "bot.js.new", folder / "bot.js")
    return folder


def test_the_node_example_keeps_no_state_and_plays_a_whole_game_with_no_rejection() -> None:
    assert NODE is not None and NPM is not None, "CI must have Node: .ci/run installs Debian's nodejs and npm"
    folder = installed_example()
    node_seats = (0, 2)  # one team of the Node bot, against the sample bots

    async def scenario() -> tuple[list[tuple[int, bytes, bytes]], MatchResult, list[DecisionRecord]]:
        async with referee() as ref:
            response = await ref.create(rules_json='{"target_score": 500}', seed="node-example")
            tokens = list(response.seat_tokens)
            assert ref.server is not None
            server = f"127.0.0.1:{ref.server.port}"
            processes = []
            for seat in node_seats:
                env = {
                    **os.environ,
                    "TICHU_TOKEN": tokens[seat],
                    "TICHU_PROTO_DIR": str(ROOT / "proto"),  # what the bot reads: the proto alone
                }
                process = await asyncio.create_subprocess_exec(
                    str(NODE),
                    str(folder / "bot.js"),
                    server,
                    "--insecure",
                    "--name",
                    f"node{seat}",
                    env=env,
                    stdout=asyncio.subprocess.PIPE,
                    stderr=asyncio.subprocess.PIPE,
                )
                processes.append(process)
            python_bots = [connect(RandomBot(), server, tokens[1], insecure=True)]
            python_bots.append(connect(HeuristicBot(), server, tokens[3], insecure=True))
            results = await asyncio.gather(*python_bots)
            outputs = []
            for process in processes:
                out, err = await asyncio.wait_for(process.communicate(), 60)
                assert process.returncode is not None
                outputs.append((process.returncode, out, err))
            records = [r for r in ref.table(response.match_id).records if isinstance(r, DecisionRecord)]
            return outputs, results[0], records

    outputs, result, records = run(scenario(), 240)
    for code, out, err in outputs:
        assert code == 0, f"the Node bot exited {code}:\n{err.decode()}"
        assert b"rejected" not in err, err.decode()
        assert out.decode().startswith("match "), out.decode()
    assert not result.forfeit and max(result.scores) >= 500  # the game was played to its end
    seats = {line["seat"]: line for line in result.summary["seats"]}
    for seat in node_seats:
        assert seats[seat]["rejections"] == 0 and seats[seat]["timeouts"] == 0, seats[seat]
        asked = [r for r in records if r.seat == seat and not r.by_referee]
        assert len(asked) > 20, f"seat {seat} answered only {len(asked)} requests"


def test_the_node_example_passes_every_check_of_tichu_check_bot(monkeypatch: pytest.MonkeyPatch) -> None:
    # The kit gives the command the environment of this process, TICHU_* added.
    assert NODE is not None and NPM is not None, "CI must have Node: .ci/run installs Debian's nodejs and npm"
    folder = installed_example()
    monkeypatch.setenv("TICHU_PROTO_DIR", str(ROOT / "proto"))
    command = [NODE, str(folder / "bot.js"), "{server}", "{token}", "--insecure"]
    report = run_kit(command, "examples/node", Settings(parallel=4))
    assert report.passed, report.render()
    assert report.exit_code == 0 and len(report.outcomes) == len(all_checks())


def test_the_node_example_waits_in_an_arena_s_lobby_plays_its_seats_and_leaves(tmp_path: Path) -> None:
    """`node bot.js --arena HOST:PORT --key-file FILE`: validated against a house bot through the
    lobby, then Ctrl-C leaves, finishing what it plays."""
    assert NODE is not None and NPM is not None, "CI must have Node: .ci/run installs Debian's nodejs and npm"
    from referee.arena.runner import Arena
    from referee.arena.store import ArenaStore, BotState
    from tests.arena.test_arena import config_in, settle

    folder = installed_example()
    config = config_in(tmp_path)
    store = ArenaStore(config.store)
    key_file = tmp_path / "node.key"
    key_file.write_text(store.add_bot("node-bot") + "\n", encoding="utf-8")
    arena = Arena(config, store, io.StringIO())

    async def scenario() -> tuple[int, bytes, bytes]:
        address = await arena.start()
        env = {**os.environ, "TICHU_PROTO_DIR": str(ROOT / "proto")}
        process = await asyncio.create_subprocess_exec(
            str(NODE),
            str(folder / "bot.js"),
            "--arena",
            address,
            "--key-file",
            str(key_file),
            "--insecure",
            env=env,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        try:
            while "node-bot" not in arena.lobby.ready():
                assert process.returncode is None
                await asyncio.sleep(0.05)
            await settle(arena, 1)  # its validation pair, against a house bot
            process.send_signal(signal.SIGINT)
            out, err = await asyncio.wait_for(process.communicate(), 60)
        finally:
            await arena.stop()
        assert process.returncode is not None
        return process.returncode, out, err

    code, out, err = run(scenario(), 240)
    assert code == 0, err.decode()
    assert b"in the lobby as node-bot" in err and b"rejected" not in err, err.decode()
    assert out.decode().count("match ") == 4, out.decode()  # its four seats of the pair
    assert store.bot("node-bot").state is BotState.ACTIVE, store.bot("node-bot").reason
    store.close()
