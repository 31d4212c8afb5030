"""The `tichu` commands that the bot SDK brings (entry points of the group `tichu.commands`).

Each is loaded by name when it is asked for, and imports its module only then: `tichu bot` is the
SDK's connector, `tichu tournament worker` a process that plays many seats, `tichu demo --local`
a game between the sample bots in one process.
"""

from __future__ import annotations

import argparse


class BotCommand:
    """`tichu bot MODULE:CLASS --server HOST:PORT --token TOKEN`."""

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        """The connector's arguments."""
        from clients.connect import add_bot_arguments

        add_bot_arguments(parser)

    def run(self, args: argparse.Namespace) -> int:
        """Play one match; the exit code."""
        from clients.connect import run_bot

        return run_bot(args)


class WorkerCommand:
    """`tichu tournament worker MODULE:CLASS --server HOST:PORT`."""

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        """The worker's arguments."""
        from clients.worker import add_worker_arguments

        add_worker_arguments(parser)

    def run(self, args: argparse.Namespace) -> int:
        """Play the seats given on standard input; the exit code."""
        from clients.worker import run_worker

        return run_worker(args)


class LocalDemoCommand:
    """`tichu demo --local [--seed SEED]` (its arguments are `tichu demo`'s)."""

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        """None of its own."""

    def run(self, args: argparse.Namespace) -> int:
        """Play and print one game; the exit code."""
        from clients.demo import run_local_demo

        return run_local_demo(args.seed)


BOT = BotCommand()
WORKER = WorkerCommand()
LOCAL_DEMO = LocalDemoCommand()
