"""`tichu arena`: serve an arena, register its bots, print its leaderboard, rate it again.

tichu arena serve [CONFIG] [--store PATH] [--listen HOST:PORT] [--http HOST:PORT]
                  [--ray auto|HOST:PORT|local:N [--hosts-per-node K]]
tichu arena bot add NAME (--bot MODULE:CLASS | --command CMD) [--key-file FILE]
tichu arena bot rotate-key NAME [--key-file FILE]
tichu arena bot disable NAME | enable NAME | list
tichu arena leaderboard [--json]
tichu arena rerate
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import shlex
import signal
import sys
import time
from pathlib import Path
from typing import Any, TextIO

from referee import log
from referee.arena.config import ArenaConfig, load_arena_config, with_overrides
from referee.arena.ratings import PROVISIONAL_SIGMA, rerate
from referee.arena.store import ArenaStore, ArenaStoreError, BotState
from referee.arena.view import rating_json
from referee.tournament.config import BOT_SPEC, ConfigError

DEFAULT_STORE = Path("arena.sqlite")


def add_arena_arguments(parser: argparse.ArgumentParser) -> None:
    """The subcommands of `tichu arena`."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--store", type=Path, help=f"the arena's state (default: the config's, else {DEFAULT_STORE})"
    )
    sub = parser.add_subparsers(dest="arena_command", required=True, metavar="COMMAND")
    serve = sub.add_parser(
        "serve", parents=[common], help="run the arena: referee, matchmaker, ratings (and web face)"
    )
    serve.add_argument("config", nargs="?", type=Path, help="the arena's TOML config (default: none)")
    serve.add_argument("--listen", default="", metavar="HOST:PORT", help="the referee's gRPC address")
    serve.add_argument("--http", default="", metavar="HOST:PORT", help="serve the web face there")
    serve.add_argument("--no-sandbox", action="store_true", help="run hosted bots without the sandbox")
    ray = serve.add_argument_group("on a Ray cluster (pip install 'tichu-referee[ray]')")
    ray.add_argument(
        "--ray",
        default="",
        metavar="auto|HOST:PORT|local:N",
        help="play the pairs of hosted bots on the hosts of a Ray cluster, as tournaments do: the "
        "one `ray start` joined here (auto), the head at HOST:PORT, or N local nodes (to try it out)",
    )
    ray.add_argument(
        "--hosts-per-node", type=int, default=None, metavar="K", help="hosts per node (its CPUs)"
    )
    bot = sub.add_parser("bot", help="register, re-key, disable and list bots")
    bots = bot.add_subparsers(dest="bot_command", required=True, metavar="ACTION")
    add = bots.add_parser(
        "add",
        parents=[common],
        help="register a bot (hosted with --bot or --command, else remote) and print its key once",
    )
    add.add_argument("name")
    what = add.add_mutually_exclusive_group()
    what.add_argument("--bot", metavar="MODULE:CLASS", help="a Python Bot class the arena runs")
    # Not dest "command": `tichu`'s own parser keeps the subcommand's name there.
    what.add_argument(
        "--command", dest="program", metavar="CMD", help="a program in any language the arena runs"
    )
    add.add_argument("--key-file", type=Path, help="write the key to this new file (mode 0600)")
    rotate = bots.add_parser(
        "rotate-key", parents=[common], help="a new key for a bot (the old one stops working)"
    )
    rotate.add_argument("name")
    rotate.add_argument("--key-file", type=Path, help="write the key to this new file (mode 0600)")
    for action, words in (("disable", "take a bot out of play"), ("enable", "put a bot back in play")):
        bots.add_parser(action, parents=[common], help=words).add_argument("name")
    bots.add_parser("list", parents=[common], help="every bot, its state and why")
    board = sub.add_parser("leaderboard", parents=[common], help="the ratings, best first")
    board.add_argument("--json", action="store_true", help="a JSON list of rows")
    sub.add_parser("rerate", parents=[common], help="recompute every rating from the stored pairs")


def run_arena(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """Run `tichu arena ...`; the exit code."""
    out = out or sys.stdout
    try:
        if args.arena_command == "serve":
            config = with_overrides(
                load_arena_config(args.config),
                store=args.store,
                listen=args.listen,
                http=args.http,
                sandbox=not args.no_sandbox,
                ray=args.ray,
                hosts_per_node=args.hosts_per_node,
            )
            return _serve(config, out)
        store = ArenaStore(args.store or DEFAULT_STORE)
        try:
            return _command(args, store, out)
        finally:
            store.close()
    except (ConfigError, ArenaStoreError, ValueError) as error:
        print(f"tichu arena: {error}", file=sys.stderr)
        return 2


def _command(args: argparse.Namespace, store: ArenaStore, out: TextIO) -> int:
    if args.arena_command == "leaderboard":
        rows = leaderboard_rows(store)
        if args.json:
            print(json.dumps(rows, indent=2), file=out)
        else:
            print(_table(rows), file=out)
        return 0
    if args.arena_command == "rerate":
        ratings, history = rerate(store.pairs())
        before = {(r.bot, r.leaderboard): (r.mu, r.sigma) for r in store.ratings()}
        store.replace_ratings(ratings, history)
        changed = sum(1 for r in ratings if before.get((r.bot, r.leaderboard)) != (r.mu, r.sigma))
        print(f"rerated {len(ratings)} rating(s) from the stored pairs; {changed} differed", file=out)
        return 0
    action = args.bot_command
    if action == "add":
        command = tuple(shlex.split(args.program)) if args.program else ()
        if args.bot and not BOT_SPEC.fullmatch(args.bot):
            raise ValueError(f"--bot is MODULE:CLASS, e.g. mybot:MyBot, not {args.bot!r}")
        if args.program is not None and not command:
            raise ValueError("--command is a program and its arguments, not an empty string")
        key = store.add_bot(args.name, bot=args.bot or "", command=command, workdir=str(Path.cwd()))
        _hand_out(key, args.key_file, out)
        print(f"registered {args.name}: it plays a validation pair, then joins the ladder", file=out)
        if not args.bot and not command:
            print(
                "it joins from its own machine: tichu bot MODULE:CLASS --arena HOST:PORT --key-file FILE",
                file=out,
            )
    elif action == "rotate-key":
        _hand_out(store.rotate_key(args.name), args.key_file, out)
    elif action == "disable":
        store.set_state(args.name, BotState.DISABLED, "disabled by its owner or the organiser")
    elif action == "enable":
        state = store.bot(args.name).state
        if state is BotState.REFUSED:
            raise ValueError(f"{args.name} failed its validation: register it again under a new name")
        store.set_state(args.name, BotState.ACTIVE if state is not BotState.VALIDATING else state)
    elif action == "list":
        for bot in store.bots():
            what = bot.bot or shlex.join(bot.command) or "remote"
            because = f" ({bot.reason})" if bot.reason else ""
            house = " house" if bot.house else ""
            print(
                f"{bot.name:24} {bot.kind}{house:6} {bot.state.value:10} v{bot.version} {what}{because}",
                file=out,
            )
    return 0


def _hand_out(key: str, key_file: Path | None, out: TextIO) -> None:
    """Print the key once, or write it to a new file only its owner can read."""
    if key_file is None:
        print(f"key (shown once; keep it secret): {key}", file=out)
        return
    descriptor = os.open(key_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        handle.write(key + "\n")
    print(f"key written to {key_file} (mode 0600)", file=out)


def leaderboard_rows(store: ArenaStore) -> list[dict[str, Any]]:
    """The leaderboard as JSON rows, best conservative score first on each board."""
    bots = {bot.name: bot for bot in store.bots()}
    return [rating_json(rating, bots.get(rating.bot)) for rating in store.ratings()]


def _table(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return "no rated pairs yet"
    lines = [
        f"{'#':>3} {'bot':24} {'board':7} {'score':>7} {'mu':>7} {'sigma':>6} {'games':>5}  W-D-L   margin"
    ]
    for rank, row in enumerate(rows, 1):
        mark = "?" if row["provisional"] else " "
        lines.append(
            f"{rank:>3} {row['bot']:24} {row['leaderboard']:7} {row['score']:>7.2f}{mark}{row['mu']:>6.2f} "
            f"{row['sigma']:>6.2f} {row['games']:>5}  {row['wins']}-{row['draws']}-{row['losses']}  "
            f"{row['average_margin']:>+7.1f}"
        )
    lines.append(f"? provisional: sigma still at or above {PROVISIONAL_SIGMA:g}")
    return "\n".join(lines)


def _serve(config: ArenaConfig, out: TextIO) -> int:
    log.configure(level=os.environ.get("TICHU_LOG_LEVEL", "warning"))
    return asyncio.run(_serve_async(config, out))


async def _serve_async(config: ArenaConfig, out: TextIO) -> int:
    from referee.arena.runner import Arena
    from referee.tournament.host import HostError

    store = ArenaStore(config.store)
    arena = Arena(config, store, out)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(sig, stop.set)
    web = None
    try:
        try:
            address = await arena.start()
        except HostError as error:
            print(f"tichu arena: {error}", file=sys.stderr)
            return 1
        print(f"arena {config.name!r}: referee on {address}, store {config.store}", file=out, flush=True)
        if arena.ray_hosts:
            print(
                f"arena: pairs of hosted bots on {len(arena.ray_hosts)} Ray host(s) ({config.ray}); "
                "pairs with a remote bot here",
                file=out,
                flush=True,
            )
        if config.http:
            web = await _start_web(arena, config)
            print(f"arena web face on {web.url}/arena", file=out, flush=True)
        started = time.monotonic()
        await arena.run(stop)
        print(f"arena stopping after {time.monotonic() - started:.0f} s", file=out, flush=True)
        return 0
    finally:
        if web is not None:
            await web.stop()
        await arena.stop()
        store.close()


async def _start_web(arena: Any, config: ArenaConfig) -> Any:
    """The web face: the arena's live games (the referee's public view), its leaderboards and
    bots' pages, and every finished game's replay (the archive's viewer)."""
    from referee.arena.view import REPLAYS, ArenaView
    from referee.web.app import parse_address, start_web
    from referee.web.archive import Archive

    assert arena.host is not None and arena.host.running is not None
    archive = Archive()
    replays = arena.replay_dir
    replays.mkdir(parents=True, exist_ok=True)
    collection = archive.add_collection(REPLAYS, folder=replays)
    assert collection.cid == REPLAYS
    view = ArenaView(config.store, replays, config.name, log_dir=config.output_dir / "logs")
    host, port = parse_address(config.http)
    return await start_web(arena.host.running.service.referee, host, port, archive=archive, arena=view)


__all__ = ["add_arena_arguments", "leaderboard_rows", "run_arena"]
