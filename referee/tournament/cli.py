"""`tichu tournament run|resume|standings|export CONFIG.toml` and `tichu tournament worker MODULE:CLASS`."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from referee.tournament.config import TournamentConfig


def add_tournament_arguments(parser: argparse.ArgumentParser, worker_args: bool = True) -> None:
    """The subcommands of `tichu tournament` (`worker_args`: with those of `tichu tournament worker`)."""
    sub = parser.add_subparsers(dest="action", required=True)
    for name, text in (
        ("run", "start a tournament: write its schedule and play every game"),
        ("resume", "continue an interrupted tournament; finished games are not played again"),
        ("standings", "print the standings of the stored games and write the CSV and HTML files"),
    ):
        action = sub.add_parser(name, help=text)
        action.add_argument("config", type=Path, metavar="CONFIG.toml")
        if name != "standings":
            shown = action.add_mutually_exclusive_group()
            shown.add_argument(
                "--progress", dest="live", action="store_const", const=True, help="a live progress bar"
            )
            shown.add_argument(
                "--log-lines", dest="live", action="store_const", const=False, help="plain progress lines"
            )
            action.add_argument(
                "--no-sandbox",
                action="store_true",
                help="run the local entrants' bots without the sandbox (bubblewrap): each may then read "
                "the others' tokens and the referee's files; every attempt's record says so",
            )
            action.add_argument(
                "--http",
                metavar="HOST:PORT",
                default="",
                help="serve the tournament's web face there while it runs (e.g. 127.0.0.1:8080)",
            )
            ray = action.add_argument_group("on a Ray cluster (pip install 'tichu-referee[ray]')")
            ray.add_argument(
                "--ray",
                metavar="auto|HOST:PORT|local:N",
                help="play on the hosts of a Ray cluster: the one `ray start` joined here (auto), the "
                "head at HOST:PORT, or a local cluster of N nodes on this machine (to try it out)",
            )
            ray.add_argument(
                "--hosts-per-node", type=int, default=0, metavar="K", help="hosts per node (its CPUs)"
            )
            ray.add_argument(
                "--games-per-host", type=int, default=2, metavar="G", help="games in flight per host (2)"
            )
    export = sub.add_parser(
        "export", help="every finished game's replay in one zip with an index (tichu replay verify reads it)"
    )
    export.add_argument("config", type=Path, metavar="CONFIG.toml")
    export.add_argument("--out", type=Path, metavar="FILE.zip", help="default: <output_dir>/<name>-games.zip")
    worker = sub.add_parser("worker", help="play the seats whose tokens arrive on standard input")
    if worker_args:
        # The worker is the bot SDK's (clients.worker), loaded only when it is asked for.
        from referee.sdk_commands import external_command

        external_command("worker").add_arguments(worker)


def run_tournament_command(args: argparse.Namespace) -> int:
    """Dispatch `tichu tournament ...`; 2 for a bad config, 1 when games could not be played."""
    if args.action == "worker":
        from referee.sdk_commands import external_command

        return external_command("worker").run(args)
    from referee.tournament.config import ConfigError, load_config
    from referee.tournament.runner import TournamentError, run_tournament, write_standings
    from referee.tournament.store import Store

    try:
        config = load_config(args.config)
    except ConfigError as error:
        print(f"tichu tournament: {error}", file=sys.stderr)
        return 2
    if args.action in ("standings", "export") and not config.database.exists():
        print(f"tichu tournament: no results yet at {config.database}", file=sys.stderr)
        return 1
    if args.action == "export":
        return _export(config, args.out)
    if args.action == "standings":
        store = Store(config.database)
        try:
            print(write_standings(config, store))
        finally:
            store.close()
        return 0
    from referee.server.serve import HTTP_ADDRESS

    if args.http and not HTTP_ADDRESS.fullmatch(args.http):
        print(
            f"tichu tournament: --http takes HOST:PORT, e.g. 127.0.0.1:8080, not {args.http!r}",
            file=sys.stderr,
        )
        return 2
    if args.no_sandbox:
        config = dataclasses.replace(config, sandbox=False)
        print("tichu tournament: --no-sandbox: the bots run without a sandbox", file=sys.stderr)
    fleet = None
    if args.ray:
        from referee.tournament.cluster import RayFleet, parse_ray_target

        try:
            target = parse_ray_target(args.ray)
            if args.hosts_per_node < 0 or args.games_per_host < 1:
                raise ValueError("--hosts-per-node takes 0 or more, --games-per-host 1 or more")
        except ValueError as error:
            print(f"tichu tournament: {error}", file=sys.stderr)
            return 2
        fleet = RayFleet(target, hosts_per_node=args.hosts_per_node, games_per_host=args.games_per_host)
    try:
        return run_tournament(
            config,
            resume=args.action == "resume",
            out=sys.stdout,
            live=args.live,
            fleet=fleet,
            http=args.http,
        )
    except TournamentError as error:
        print(f"tichu tournament: {error}", file=sys.stderr)
        return 1


def _export(config: TournamentConfig, out: Path | None) -> int:
    """Write the archive; 1 when some finished game's replay was not found (each is named)."""
    from referee.tournament.export import export_games

    try:
        report = export_games(config, out)
    except OSError as error:
        print(f"tichu tournament export: {error}", file=sys.stderr)
        return 1
    for game_id in report.missing:
        print(f"tichu tournament export: game {game_id}: its replay file is missing", file=sys.stderr)
    lacking = f", {len(report.missing)} without their replay (listed as missing)" if report.missing else ""
    print(f"wrote {report.path}: {report.games} finished games{lacking}")
    return 1 if report.missing else 0
