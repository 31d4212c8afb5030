"""Bot commands in any language: placeholders filled per argument, the same values in TICHU_* variables.

A command is split into arguments first (shlex, no shell), then each `{name}` in an argument is
replaced, so a value with spaces stays one argument. `tichu check-bot` and the tournament's
command entrants share these names.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

# placeholder -> the environment variable that carries the same value
PLACEHOLDERS = {
    "server": "TICHU_SERVER",
    "token": "TICHU_TOKEN",
    "seat": "TICHU_SEAT",
    "ca_file": "TICHU_CA_FILE",
    "name": "TICHU_NAME",
    "seed": "TICHU_SEED",
    "match_id": "TICHU_MATCH_ID",
}
# A bot that runs on the Python SDK with SDK_REPORT_ENV=stderr in its environment writes each answer
# the SDK had to replace (an exception, an illegal or malformed answer) to its standard error as a
# line of SDK_REPORT_PREFIX and a JSON object (clients.bot.Replacement); `tichu check-bot` reads them.
SDK_REPORT_ENV = "TICHU_SDK_REPORT"
SDK_REPORT_PREFIX = "tichu-sdk-replacement "
# What only one seat has: a command that serves many seats reads them on its standard input.
PER_SEAT = frozenset({"token", "seat", "seed", "match_id"})
_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


def filled(command: Sequence[str], values: Mapping[str, str]) -> list[str]:
    """The command with each placeholder ({server}, {token}, {seat}, {ca_file}, ...) replaced."""
    out = []
    for arg in command:
        text = arg
        for key, value in values.items():
            text = text.replace("{" + key + "}", value)
        out.append(text)
    return out


def placeholder_env(values: Mapping[str, str]) -> dict[str, str]:
    """The TICHU_* variables that carry the placeholders' values."""
    return {PLACEHOLDERS[key]: value for key, value in values.items() if key in PLACEHOLDERS}


def placeholders_in(command: Sequence[str]) -> list[str]:
    """The names of every `{name}` in the command's arguments, in order (known or not)."""
    return [match.group(1) for arg in command for match in _PLACEHOLDER.finditer(arg)]
