"""`tichu replay verify|show|html|redact`: check a replay, read it in a terminal, make a web page,
or write the view one seat (or a spectator) may see."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from referee.match.moves import ReplayMismatchError
from referee.replay.format import ReplayFormatError, read_replay
from referee.replay.signing import KeyFileError, load_public_key


def add_replay_arguments(parser: argparse.ArgumentParser) -> None:
    """Add `tichu replay`'s subcommands to a (sub)parser."""
    sub = parser.add_subparsers(dest="replay_command", required=True)
    verify = sub.add_parser(
        "verify", help="check replays: their chain, signature, seed and moves; exit 1 at a difference"
    )
    verify.add_argument("files", nargs="+", type=Path, metavar="FILE")
    verify.add_argument(
        "--public-key", type=Path, metavar="KEY.pub", help="check that this key signed each replay"
    )
    show = sub.add_parser("show", help="a replay in the terminal, round by round and trick by trick")
    show.add_argument("file", type=Path, metavar="FILE")
    show.add_argument("--seat", type=int, help="only what this seat saw")
    show.add_argument("--round", type=int, help="start at this round (1 is the first)")
    show.add_argument("--follow", action="store_true", help="keep reading a match that is still running")
    html = sub.add_parser("html", help="one self-contained HTML page to step through a replay")
    html.add_argument("file", type=Path, metavar="FILE")
    html.add_argument("-o", "--output", type=Path, required=True, metavar="OUT.html")
    redact = sub.add_parser(
        "redact", help="the replay as one seat or a spectator may see it, still verifiable"
    )
    redact.add_argument("file", type=Path, metavar="FILE")
    view = redact.add_mutually_exclusive_group(required=True)
    view.add_argument("--seat", type=int, help="what this seat was told")
    view.add_argument("--public", action="store_true", help="what a spectator was told")
    redact.add_argument(
        "-o", "--output", type=Path, metavar="OUT.jsonl", help="default: FILE.seatN / FILE.public"
    )


def run_replay(args: argparse.Namespace) -> int:
    """Run a `tichu replay` subcommand; the exit code."""
    if args.replay_command == "verify":
        try:
            key = None if args.public_key is None else load_public_key(args.public_key)
        except (OSError, KeyFileError) as error:
            print(f"tichu replay verify: {error}", file=sys.stderr)
            return 2
        return verify_files(args.files, key)
    if args.replay_command == "show":
        from referee.replay.show import show

        return show(args.file, seat=args.seat, round_number=args.round, follow=args.follow)
    if args.replay_command == "redact":
        return _redact(args)
    from referee.replay.html import write_html

    try:
        write_html(read_replay(args.file), args.output)
    except (OSError, ReplayFormatError) as error:
        print(f"tichu replay html: {error}", file=sys.stderr)
        return 1
    print(f"wrote {args.output}")
    return 0


def _redact(args: argparse.Namespace) -> int:
    from referee.replay.redact import redact

    seat = None if args.public else args.seat
    suffix = ".public.jsonl" if seat is None else f".seat{seat}.jsonl"
    out = args.output or args.file.with_name(
        args.file.name.removesuffix(".gz").removesuffix(".jsonl") + suffix
    )
    try:
        withheld = redact(args.file, out, seat)
    except (OSError, ReplayFormatError) as error:
        print(f"tichu replay redact: {error}", file=sys.stderr)
        return 1
    view = "the public view" if seat is None else f"seat {seat}'s view"
    print(f"wrote {out}: {view}, {withheld} lines withheld")
    return 0


def verify_files(paths: list[Path], public_key: Ed25519PublicKey | None = None) -> int:
    """Verify each replay, one line each; 0 if every one verifies."""
    from referee.replay.verify import verify

    failed = 0
    for path in paths:
        try:
            replay = read_replay(path)
            verdict = verify(replay, public_key)
        except OSError as error:
            print(f"{path}: cannot read: {error}")
            failed += 1
            continue
        except (ReplayFormatError, ReplayMismatchError) as error:
            print(f"{path}: FAILED: {error}")
            failed += 1
            continue
        cut = "; its last line was cut off and is ignored" if replay.truncated else ""
        print(f"{path}: OK: {verdict.text}{cut}")
    return 1 if failed else 0
