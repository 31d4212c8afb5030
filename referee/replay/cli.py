"""`tichu replay verify|show|html`: check a replay, read it in a terminal, or make a web page."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from referee.match.moves import ReplayMismatchError, rerun
from referee.replay.format import ReplayFormatError, read_replay


def add_replay_arguments(parser: argparse.ArgumentParser) -> None:
    """Add `tichu replay`'s subcommands to a (sub)parser."""
    sub = parser.add_subparsers(dest="replay_command", required=True)
    verify = sub.add_parser("verify", help="re-run replays through the rules engine; exit 1 at a difference")
    verify.add_argument("files", nargs="+", type=Path, metavar="FILE")
    show = sub.add_parser("show", help="a replay in the terminal, round by round and trick by trick")
    show.add_argument("file", type=Path, metavar="FILE")
    show.add_argument("--seat", type=int, help="only what this seat saw")
    show.add_argument("--round", type=int, help="start at this round (1 is the first)")
    show.add_argument("--follow", action="store_true", help="keep reading a match that is still running")
    html = sub.add_parser("html", help="one self-contained HTML page to step through a replay")
    html.add_argument("file", type=Path, metavar="FILE")
    html.add_argument("-o", "--output", type=Path, required=True, metavar="OUT.html")


def run_replay(args: argparse.Namespace) -> int:
    """Run a `tichu replay` subcommand; the exit code."""
    if args.replay_command == "verify":
        return verify_files(args.files)
    if args.replay_command == "show":
        from referee.replay.show import show

        return show(args.file, seat=args.seat, round_number=args.round, follow=args.follow)
    from referee.replay.html import write_html

    try:
        write_html(read_replay(args.file), args.output)
    except (OSError, ReplayFormatError) as error:
        print(f"tichu replay html: {error}", file=sys.stderr)
        return 1
    print(f"wrote {args.output}")
    return 0


def verify_files(paths: list[Path]) -> int:
    """Verify each replay, one line each; 0 if every one verifies."""
    failed = 0
    for path in paths:
        try:
            replay = read_replay(path)
            run = rerun(replay.header, replay.records)
        except OSError as error:
            print(f"{path}: cannot read: {error}")
            failed += 1
            continue
        except (ReplayFormatError, ReplayMismatchError) as error:
            print(f"{path}: FAILED: {error}")
            failed += 1
            continue
        state = "finished" if replay.result is not None else "unfinished (verified so far)"
        cut = "; its last line was cut off and is ignored" if replay.truncated else ""
        print(
            f"{path}: OK: {run.moves} moves and {len(run.events)} events re-run, "
            f"scores {list(run.state.scores)}, {state}{cut}"
        )
    return 1 if failed else 0
