"""`tichu replay verify|show|html|redact`: check a replay, read it in a terminal, make a web page,
or write the view one seat (or a spectator) may see. Each reads a replay file, or one game of an
archive as `ARCHIVE.zip:MEMBER` (referee.replay.archive); `verify ARCHIVE.zip` checks them all."""

from __future__ import annotations

import argparse
import gzip
import sys
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from referee.match.moves import ReplayMismatchError
from referee.replay.archive import (
    ArchiveError,
    is_archive,
    member_bytes,
    read_index,
    replay_members,
    sha256_hex,
    split_reference,
)
from referee.replay.format import ReplayFormatError, parse_lines, read_replay
from referee.replay.signing import KeyFileError, load_public_key


def add_replay_arguments(parser: argparse.ArgumentParser) -> None:
    """Add `tichu replay`'s subcommands to a (sub)parser."""
    sub = parser.add_subparsers(dest="replay_command", required=True)
    verify = sub.add_parser(
        "verify",
        help="check replays (files, ARCHIVE.zip:MEMBER, or every game of ARCHIVE.zip with its index's "
        "sha256): their chain, signature, seed and moves; exit 1 at a difference",
    )
    verify.add_argument("files", nargs="+", type=Path, metavar="FILE")
    verify.add_argument(
        "--public-key", type=Path, metavar="KEY.pub", help="check that this key signed each replay"
    )
    show = sub.add_parser("show", help="a replay in the terminal, round by round and trick by trick")
    show.add_argument("file", type=Path, metavar="FILE", help="a replay, or ARCHIVE.zip:MEMBER")
    show.add_argument("--seat", type=int, help="only what this seat saw")
    show.add_argument("--round", type=int, help="start at this round (1 is the first)")
    show.add_argument("--follow", action="store_true", help="keep reading a match that is still running")
    html = sub.add_parser("html", help="one self-contained HTML page to step through a replay")
    html.add_argument("file", type=Path, metavar="FILE", help="a replay, or ARCHIVE.zip:MEMBER")
    html.add_argument("-o", "--output", type=Path, required=True, metavar="OUT.html")
    redact = sub.add_parser(
        "redact", help="the replay as one seat or a spectator may see it, still verifiable"
    )
    redact.add_argument("file", type=Path, metavar="FILE", help="a replay, or ARCHIVE.zip:MEMBER")
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
    reference = split_reference(args.file)
    # A member's view goes beside its archive, named after the member.
    source = args.file if reference is None else reference[0].with_name(Path(reference[1]).name)
    out = args.output or source.with_name(source.name.removesuffix(".gz").removesuffix(".jsonl") + suffix)
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
        if is_archive(path):
            failed += _verify_archive(path, public_key)
            continue
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


def _verify_archive(archive: Path, public_key: Ed25519PublicKey | None) -> int:
    """Verify every replay of a game archive, and each against its index entry's sha256; the
    failures (a game the index lists as missing is one: the archive is not the whole tournament)."""
    from referee.replay.verify import verify

    try:
        index = read_index(archive)
        members = replay_members(archive)
    except ArchiveError as error:
        print(f"{archive}: FAILED: {error}")
        return 1
    expected: dict[str, str] = {}
    failed = 0
    for entry in index or []:
        member = entry.get("member")
        if entry.get("status") == "missing" or not member:
            print(f"{archive}: FAILED: game {entry.get('game_id')}: its replay was missing at export")
            failed += 1
        elif member not in members:
            print(f"{archive}: FAILED: game {entry.get('game_id')}: the index names {member}, not in the zip")
            failed += 1
        else:
            expected[str(member)] = str(entry.get("sha256", ""))
    for member in members:
        where = f"{archive}:{member}"
        try:
            data = member_bytes(archive, member)
            if index is not None and member not in expected:
                raise ReplayFormatError("the index does not list this replay")
            if member in expected and sha256_hex(data) != expected[member]:
                raise ReplayFormatError(
                    f"its sha256 {sha256_hex(data)[:16]}... is not the index's {expected[member][:16]}..."
                )
            lines = (gzip.decompress(data) if member.endswith(".gz") else data).splitlines(keepends=True)
            replay = parse_lines(lines, Path(where))
            verdict = verify(replay, public_key)
        except (ArchiveError, OSError, ReplayFormatError, ReplayMismatchError) as error:
            print(f"{where}: FAILED: {error}")
            failed += 1
            continue
        print(f"{where}: OK: {verdict.text}" + ("; sha256 as indexed" if member in expected else ""))
    if not members and index is None:
        print(f"{archive}: FAILED: no replay and no index in it")
        failed += 1
    return failed
