"""The `tichu` commands that come with the bot SDK (`tichu bot`, `tichu tournament worker`,
`tichu demo --local`), found by name among the entry points the SDK registers (the group
`tichu.commands`, pyproject.toml): the referee never imports the SDK's modules.

`sdk_argv` is how the referee starts one as a process of its own (the tournament's workers,
check-bot's bots): through `tichu`'s own entry, so that whatever package provides the command runs.
"""

from __future__ import annotations

import argparse
import sys
from importlib.metadata import entry_points
from typing import Protocol

COMMAND_GROUP = "tichu.commands"


class Command(Protocol):
    """A command another package adds to `tichu`: its arguments and how it runs."""

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        """Add the command's arguments to its (sub)parser."""

    def run(self, args: argparse.Namespace) -> int:
        """Run the command; its exit code."""


def external_command(name: str) -> Command:
    """The command `name` that an installed package registered; SystemExit if none did."""
    for entry in entry_points(group=COMMAND_GROUP, name=name):
        command: Command = entry.load()
        return command
    raise SystemExit(
        f"tichu: the command {name!r} comes with the bot SDK (the clients package), which is not "
        "installed here: pip install the project (make demo does)"
    )


def sdk_argv(*words: str) -> list[str]:
    """The argv of `tichu WORDS...` run by this Python (the command comes from its entry point)."""
    return [sys.executable, "-m", "referee.cli", *words]
