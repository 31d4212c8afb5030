"""The `tichu` command line: demo, play, arena, match, new-bot, serve, bot, check-bot, rules,
replay, tournament, keygen, web.

The commands that play bots (`tichu bot`, `tichu tournament worker`, `tichu demo --local`) belong
to the bot SDK, which the referee never imports: the SDK registers them as entry points of the
group `tichu.commands` (pyproject.toml), and this module finds them by name.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence

from referee.sdk_commands import external_command

# Options whose value is a secret token: base64url, which may begin with '-'.
TOKEN_OPTIONS = frozenset({"--token", "--organiser-token"})
# A word that is an option of ours rather than a token: `--name` or `--name=value`.
LONG_OPTION = re.compile(r"--[a-z][a-z0-9-]*(=.*)?", re.DOTALL)


def attach_token_values(argv: Sequence[str]) -> list[str]:
    """argv with `--token -abc` written `--token=-abc`, which argparse takes as the value.

    argparse reads a word that begins with '-' as an option, so `--token -abc` would fail with
    "expected one argument". Seat tokens handed out now never begin with '-', but older ones
    may, and so may an organiser's token. Words after a bare `--` are left alone.
    """
    out = list(argv)
    i = 0
    while i < len(out) - 1 and out[i] != "--":
        value = out[i + 1]
        if (
            out[i] in TOKEN_OPTIONS
            and value.startswith("-")
            and value != "--"
            and not LONG_OPTION.fullmatch(value)
        ):
            out[i : i + 2] = [f"{out[i]}={value}"]
        i += 1
    return out


class _Version(argparse.Action):
    """`--version`: the package's version and the protocol it speaks (imported only when asked)."""

    def __init__(self, option_strings: list[str], dest: str, **kwargs: object) -> None:
        super().__init__(option_strings, dest, nargs=0, help="print the version and exit")

    def __call__(self, parser: argparse.ArgumentParser, *args: object, **kwargs: object) -> None:
        print(version_line())  # on stdout, as argparse's own version action prints
        parser.exit()


def version_line() -> str:
    """What `tichu --version` prints: the package's version, the protocol's and the engine loaded."""
    from referee import __version__
    from referee.match import PROTOCOL_VERSION

    protocol = f"protocol tichu.v1, protocol_version {PROTOCOL_VERSION}"
    return f"tichu {__version__} ({protocol}; engine {engine_name()})"


def engine_name() -> str:
    """Which build of the rules engine this process loaded: the wheel's default or the fallback."""
    import referee.rules

    return "compiled (mypyc)" if referee.rules.COMPILED else "pure Python"


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `tichu` console script."""
    from referee.cliformat import HelpParser  # its subparsers, and theirs, show their defaults

    parser = HelpParser(prog="tichu", description="Tichu Referee: rules engine, referee and bots")
    parser.add_argument("--version", action=_Version)
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="a referee on localhost and four bot processes play one full game")
    demo.add_argument("--local", action="store_true", help="no network: sample bots in this process")
    demo.add_argument("--seed", help="the deal's seed (default: $TICHU_DEMO_SEED or 2024)")
    demo.add_argument(
        "--http",
        metavar="HOST:PORT",
        default="",
        help="watch the game in a browser: serve the web face there (e.g. 127.0.0.1:8080) until Ctrl-C",
    )
    arena = sub.add_parser("arena", help="a standing, rated arena that bots join: serve, bot, leaderboard")
    play = sub.add_parser(
        "play", help="play a seat from your browser against bots (tichu play mybot:MyBot: against your bot)"
    )
    match = sub.add_parser(
        "match",
        help="play your bot on a local referee against sample bots (or other bots), in one command",
        usage="tichu match [OPTIONS] [BOT ...] [-- CMD ARGS... [-- CMD ARGS...]]",
    )
    new_bot = sub.add_parser("new-bot", help="write a starter bot NAME.py that runs, and a test for it")
    serve = sub.add_parser("serve", help="run the gRPC referee")
    bot = sub.add_parser("bot", help="play a Bot subclass (MODULE:CLASS) on a referee")
    check_bot = sub.add_parser(
        "check-bot",
        help="the conformance and chaos kit: grade a bot (MODULE:CLASS, or -- CMD ARGS...)",
        usage="tichu check-bot [OPTIONS] (MODULE:CLASS | -- CMD ARGS...)",
    )
    rules = sub.add_parser("rules", help="conformance: read JSON requests on stdin, answer JSON lines")
    replay = sub.add_parser("replay", help="verify, show or make a web page of a replay")
    tournament = sub.add_parser("tournament", help="run, resume or report a tournament between bots")
    keygen = sub.add_parser(
        "keygen", help="an Ed25519 key pair to sign replays with (tichu serve --signing-key)"
    )
    web = sub.add_parser(
        "web", help="browse finished work offline: tournament stores, replay folders, replays"
    )
    # Importing grpc is slow: each command imports only what it needs.
    if argv is None:
        argv = sys.argv[1:]
    command = argv[0] if argv else ""
    bot_command: list[str] = []  # check-bot: the bot's own command line, after "--"
    bot_commands: list[list[str]] = []  # match: the bots' command lines, each after a "--"
    if command == "arena":
        from referee.arena.cli import add_arena_arguments

        add_arena_arguments(arena)
    elif command == "play":
        from referee.web.person import add_play_arguments

        add_play_arguments(play)
    elif command == "match":
        from referee.play import add_match_arguments, split_commands

        add_match_arguments(match)
        argv, bot_commands = split_commands(argv)
    elif command == "new-bot":
        from referee.newbot import add_new_bot_arguments

        add_new_bot_arguments(new_bot)
    elif command == "rules":
        from referee.conformance import describe_ops

        rules.description = describe_ops()
    elif command == "serve":
        from referee.server.serve import add_serve_arguments

        add_serve_arguments(serve)
    elif command == "bot":
        external_command("bot").add_arguments(bot)
    elif command == "check-bot":
        from referee.checkbot.kit import add_check_bot_arguments, split_command

        add_check_bot_arguments(check_bot)
        argv, bot_command = split_command(argv)
    elif command == "tournament":
        from referee.tournament.cli import add_tournament_arguments

        add_tournament_arguments(tournament, worker_args=argv[1:2] == ["worker"])
    elif command == "replay":
        from referee.replay.cli import add_replay_arguments

        add_replay_arguments(replay)
    elif command == "keygen":
        from referee.replay.signing import add_keygen_arguments

        add_keygen_arguments(keygen)
    elif command == "web":
        from referee.web.offline import add_web_arguments

        add_web_arguments(web)
    args = parser.parse_args(attach_token_values(argv))
    if args.command == "demo":
        if args.local:
            return external_command("demo-local").run(args)
        from referee.demo import run_match_demo
        from referee.server.serve import HTTP_ADDRESS

        if args.http and not HTTP_ADDRESS.fullmatch(args.http):
            parser.error(f"--http takes HOST:PORT, e.g. 127.0.0.1:8080, not {args.http!r}")
        return run_match_demo(args.seed, http=args.http)
    if args.command == "arena":
        from referee.arena.cli import run_arena

        return run_arena(args)
    if args.command == "play":
        from referee.web.person import run_play

        return run_play(args)
    if args.command == "match":
        from referee.play import run_match

        args.bot_commands = bot_commands
        return run_match(args)
    if args.command == "new-bot":
        from referee.newbot import run_new_bot

        return run_new_bot(args)
    if args.command == "serve":
        from referee.server.serve import run_serve

        return run_serve(args)
    if args.command == "bot":
        return external_command("bot").run(args)
    if args.command == "check-bot":
        from referee.checkbot.kit import run_check_bot

        args.bot_command = bot_command
        return run_check_bot(args)
    if args.command == "tournament":
        from referee.tournament.cli import run_tournament_command

        return run_tournament_command(args)
    if args.command == "rules":
        from referee.conformance import serve as serve_rules

        return serve_rules(sys.stdin, sys.stdout)
    if args.command == "replay":
        from referee.replay.cli import run_replay

        return run_replay(args)
    if args.command == "keygen":
        from referee.replay.signing import run_keygen

        return run_keygen(args)
    if args.command == "web":
        from referee.web.offline import run_web

        return run_web(args)
    return 2


if __name__ == "__main__":
    sys.exit(main())
