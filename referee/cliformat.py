"""How `tichu` and its commands write --help: every option on its line, with its default."""

from __future__ import annotations

import argparse


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """argparse's help with each option's default appended, where it has one worth saying (not
    None, False or an empty list) and its help does not already say it."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        default = action.default
        if (
            "%(default)" in text
            or "default" in text
            or default in (None, False, [], (), "", argparse.SUPPRESS)
            or not action.option_strings
        ):
            return text
        return f"{text} (default: %(default)s)" if text else "(default: %(default)s)"


class HelpParser(argparse.ArgumentParser):
    """An ArgumentParser whose help shows the defaults; its subparsers are HelpParsers too."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
