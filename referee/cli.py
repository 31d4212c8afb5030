"""The `tichu` command line: `tichu demo`, `tichu rules`."""

from __future__ import annotations

import argparse
import sys


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `tichu` console script."""
    parser = argparse.ArgumentParser(prog="tichu", description="Tichu Referee")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("demo", help="play one full game between sample random players and print it")
    sub.add_parser("rules", help="conformance: read JSON requests on stdin, answer JSON lines")
    args = parser.parse_args(argv)
    if args.command == "demo":
        from referee.demo import run_demo

        return run_demo()
    if args.command == "rules":
        from referee.conformance import serve

        return serve(sys.stdin, sys.stdout)
    return 2


if __name__ == "__main__":
    sys.exit(main())
