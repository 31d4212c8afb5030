"""An arena at work: house bots, a newcomer let in, one refused with its reason, ratings that a
rerate gives again, replays that verify; killed with SIGKILL and started again, nothing finished
is lost and nothing is half rated; and its commands."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import io
import json
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

from referee.arena.cli import leaderboard_rows
from referee.arena.config import ArenaConfig, parse_arena_config
from referee.arena.matchmaker import Match
from referee.arena.ratings import rerate
from referee.arena.runner import Arena, PairVerdict
from referee.arena.store import INTERRUPTED, ArenaStore, BotState
from referee.replay import read_replay
from referee.replay.verify import verify
from referee.tournament.config import Entrant

ROOT = Path(__file__).resolve().parents[2]
CONFIG = """
[arena]
name = "t"
store = "arena.sqlite"
output_dir = "out"
concurrency = 2
pair_every_s = 0.2

[rules]
match_mode = "fixed_rounds:1"

[clock]
decision_ms = 2000

[[house]]
name = "random"
bot = "clients.random_bot:RandomBot"

[[house]]
name = "heuristic"
bot = "clients.heuristic_bot:HeuristicBot"
"""


def config_in(folder: Path) -> ArenaConfig:
    path = folder / "arena.toml"
    path.write_text(CONFIG, encoding="utf-8")
    config = parse_arena_config(CONFIG, path)
    # The sandbox is the tournament's (tests/sandbox); here the arena's own logic is under test.
    return ArenaConfig(**{**{f: getattr(config, f) for f in config.__slots__}, "sandbox": False})


async def settle(arena: Arena, rounds: int) -> None:
    """Run the matchmaker `rounds` times, each time until its pairs are over (no clock)."""
    for _ in range(rounds):
        await arena.round()
        while arena.tasks:
            await asyncio.gather(*list(arena.tasks))


def test_newcomers_are_validated_and_the_ladder_is_rated(tmp_path: Path) -> None:
    config = config_in(tmp_path)
    store = ArenaStore(config.store)
    store.add_bot("showcase", bot="clients.showcase_bot:ShowcaseBot", workdir=str(ROOT))
    store.add_bot("quitter", bot="tests.arena.bots:QuitterBot", workdir=str(ROOT))
    out = io.StringIO()
    arena = Arena(config, store, out)

    async def body() -> None:
        await arena.start()
        try:
            await settle(arena, 6)
        finally:
            await arena.stop()

    asyncio.run(body())
    assert store.bot("showcase").state is BotState.ACTIVE, out.getvalue()
    quitter = store.bot("quitter")
    assert quitter.state is BotState.REFUSED and "process ended" in quitter.reason, quitter.reason
    pairs = store.pairs(state="finished")
    rated = [p for p in pairs if not p.validation]
    assert rated and all(p.bot_a != p.bot_b for p in pairs)
    assert {p.bot_a for p in pairs if p.validation} >= {"showcase"}
    # Ratings: one comparison per rated pair, and a rerate from the stored pairs gives the same.
    ratings, _ = rerate(store.pairs())
    assert sorted(ratings, key=lambda r: r.bot) == sorted(store.ratings(), key=lambda r: r.bot)
    assert "quitter" not in {r.bot for r in store.ratings()}
    assert sum(r.pairs for r in store.ratings()) == 2 * len(rated)
    # Every game of a finished pair: two tables, the same deal, the seats swapped; replays verify.
    for pair in pairs:
        games = store.games(pair.id)
        assert [g.a_seats for g in games] == [0, 1]
        for g in games:
            replay = read_replay(config.output_dir / "replays" / f"{g.match_id}.jsonl")
            assert verify(replay).run is not None
    rows = leaderboard_rows(store)
    assert {"bot", "games", "mu", "sigma"} <= set(rows[0])
    store.close()


def test_a_pair_that_ends_seats_its_bots_at_once_with_someone_new(tmp_path: Path) -> None:
    # An hour between rounds: after the round at the start, only pairs ending seat anyone.
    house = tuple(Entrant(f"random{i}", "clients.random_bot:RandomBot") for i in range(4))
    config = dataclasses.replace(config_in(tmp_path), pair_every_s=3600.0, house=house)
    store = ArenaStore(config.store)
    arena = Arena(config, store, io.StringIO())

    async def body() -> None:
        await arena.start()
        stop = asyncio.Event()
        runner = asyncio.create_task(arena.run(stop))
        try:

            async def four_finished() -> None:
                while len(store.pairs(state="finished")) < 4:
                    await asyncio.sleep(0.05)

            # Far longer than four short pairs take, far shorter than the hour: fails, not hangs.
            await asyncio.wait_for(four_finished(), 300)
        finally:
            stop.set()
            await runner
            await arena.stop()

    asyncio.run(body())
    pairs = store.pairs()
    assert len(pairs) >= 4
    # Between rounds a pair's two bots waited for another pair to end rather than meet again.
    last: dict[str, str] = {}
    for pair in pairs:
        assert last.get(pair.bot_a) != pair.bot_b and last.get(pair.bot_b) != pair.bot_a, pairs
        last[pair.bot_a], last[pair.bot_b] = pair.bot_b, pair.bot_a
    store.close()


def test_two_bots_with_nobody_else_wait_one_round_then_meet_again(tmp_path: Path) -> None:
    config = config_in(tmp_path)  # two house bots, and nobody else
    store = ArenaStore(config.store)
    arena = Arena(config, store, io.StringIO())

    async def body() -> list[int]:
        await arena.start()
        try:
            seated = []
            for _ in range(3):
                seated.append(len(await arena.round()))
                while arena.tasks:
                    await asyncio.gather(*list(arena.tasks))
            return seated
        finally:
            await arena.stop()

    # They meet; the round after, they wait for someone new; the round after that, they meet again.
    assert asyncio.run(body()) == [1, 0, 1]
    assert [p.state for p in store.pairs()] == ["finished", "finished"]
    store.close()


def test_sigkill_loses_no_finished_pair_and_rates_no_cut_one(tmp_path: Path) -> None:
    config = config_in(tmp_path)
    argv = [sys.executable, "-m", "referee.cli", "arena", "serve", str(config.source), "--no-sandbox"]
    process = subprocess.Popen(
        argv,
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    try:
        # Until two pairs are finished (no deadline on the arena: the test waits on what it did).
        while True:
            assert process.poll() is None, process.stderr.read().decode() if process.stderr else ""
            if config.store.exists():
                reader = ArenaStore(config.store)
                finished = len(reader.pairs(state="finished"))
                reader.close()
                if finished >= 2:
                    break
            time.sleep(0.2)
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait()
    store = ArenaStore(config.store)
    before = {p.id: p for p in store.pairs(state="finished")}
    ratings_before = sorted(store.ratings(), key=lambda r: r.bot)
    assert len(before) >= 2
    arena = Arena(config, store, io.StringIO())

    async def restart() -> None:
        await arena.start()
        await arena.stop()

    left_playing = [p.id for p in store.pairs(state="playing")]
    asyncio.run(restart())
    assert {p.id: p for p in store.pairs(state="finished")} == before
    for pair_id in left_playing:
        assert store.pair(pair_id).state == "voided" and store.pair(pair_id).reason == INTERRUPTED
    assert sorted(store.ratings(), key=lambda r: r.bot) == ratings_before
    ratings, _ = rerate(store.pairs())
    assert sorted(ratings, key=lambda r: r.bot) == ratings_before
    store.close()


def tichu(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "referee.cli", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )


def test_the_commands_register_re_key_list_and_rank(tmp_path: Path) -> None:
    store = str(tmp_path / "arena.sqlite")
    added = tichu("arena", "bot", "add", "mine", "--bot", "mybot:MyBot", "--store", store, cwd=tmp_path)
    assert added.returncode == 0 and "key (shown once" in added.stdout, added.stderr
    key_file = tmp_path / "mine.key"
    rotated = tichu(
        "arena", "bot", "rotate-key", "mine", "--key-file", str(key_file), "--store", store, cwd=tmp_path
    )
    assert rotated.returncode == 0 and "tka_" not in rotated.stdout
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    again = tichu(
        "arena", "bot", "rotate-key", "mine", "--key-file", str(key_file), "--store", store, cwd=tmp_path
    )
    assert again.returncode != 0  # never overwrites a key file
    listed = tichu("arena", "bot", "list", "--store", store, cwd=tmp_path)
    assert "mine" in listed.stdout and "validating" in listed.stdout and "tka_" not in listed.stdout
    board = tichu("arena", "leaderboard", "--json", "--store", store, cwd=tmp_path)
    assert board.returncode == 0 and json.loads(board.stdout) == []
    for bad, why in (
        (["bot", "add", "x y", "--bot", "m:C"], "a bot's name is"),
        (["bot", "add", "other", "--bot", "nocolon"], "MODULE:CLASS"),
        (["bot", "disable", "ghost"], "no bot named"),
    ):
        done = tichu("arena", *bad, "--store", store, cwd=tmp_path)
        assert done.returncode == 2 and why in done.stderr, done.stderr


def test_forfeits_in_a_row_pause_a_bot_even_across_restarts(tmp_path: Path) -> None:
    config = dataclasses.replace(config_in(tmp_path), pause_after_forfeits=2)
    path = tmp_path / "arena.sqlite"
    with contextlib.closing(ArenaStore(path)) as store:
        store.add_bot("quitter", bot="tests.arena.bots:QuitterBot", state=BotState.ACTIVE)
        store.add_bot("steady", bot="clients.random_bot:RandomBot", state=BotState.ACTIVE)
    match = Match("quitter", "steady", "hosted")
    forfeit = PairVerdict((), {"quitter": ["forfeited table 1: 10 violations"], "steady": []}, {"quitter"})
    clean = PairVerdict((), {"quitter": [], "steady": []}, set())

    def pair_ends(verdict: PairVerdict, failure: str = "") -> tuple[BotState, int, str]:
        """A pair ends (finished, or voided on a `failure`) in an arena started afresh on the
        store, as after a restart."""
        with contextlib.closing(ArenaStore(path)) as store:
            pair_id = store.start_pair(match.a, match.b, match.leaderboard, "seed", validation=False)
            Arena(config, store, io.StringIO())._end(pair_id, match, verdict, failure)
            assert store.pair(pair_id).state == ("voided" if failure else "finished")
            bot = store.bot("quitter")
            assert store.bot("steady").forfeits_in_a_row == 0
            return bot.state, bot.forfeits_in_a_row, bot.reason

    assert pair_ends(forfeit) == (BotState.ACTIVE, 1, "")
    assert pair_ends(clean) == (BotState.ACTIVE, 0, "")  # a pair without one starts the count again
    assert pair_ends(forfeit) == (BotState.ACTIVE, 1, "")
    # Voided with no forfeit (a seat never came: the start timeout), the pair played too little
    # to show clean play: the count stays where it was rather than starting again.
    assert pair_ends(clean, "table 2: seat 1 did not connect") == (BotState.ACTIVE, 1, "")
    # Voided (its other table failed), the pair still counts the forfeit it saw.
    state, count, reason = pair_ends(forfeit, "table 2: the referee failed")
    assert (state, count) == (BotState.PAUSED, 2)
    assert reason == "2 pairs in a row with a forfeit (forfeited table 1: 10 violations)"


def test_a_newcomer_s_forfeit_in_its_validation_is_not_counted_its_opponent_s_is(tmp_path: Path) -> None:
    with contextlib.closing(ArenaStore(tmp_path / "arena.sqlite")) as store:
        store.add_bot("new", state=BotState.VALIDATING)
        store.add_bot("house", bot="clients.random_bot:RandomBot", house=True, state=BotState.ACTIVE)
        arena = Arena(config_in(tmp_path), store, io.StringIO())
        both = PairVerdict(
            (), {"new": ["forfeited table 1"], "house": ["forfeited table 2"]}, {"new", "house"}
        )
        pair_id = store.start_pair("new", "house", "remote", "seed", validation=True)
        arena._end(pair_id, Match("new", "house", "remote", validation=True), both, "")
        assert (store.bot("new").state, store.bot("new").forfeits_in_a_row) == (BotState.REFUSED, 0)
        assert store.bot("house").forfeits_in_a_row == 1
