"""Typed errors raised by the rules engine; each message names the rule it enforces."""

from __future__ import annotations


class RulesError(ValueError):
    """Base class of every error the rules engine raises."""

    def __init__(self, message: str, rule: str | None = None) -> None:
        super().__init__(f"{rule}: {message}" if rule else message)
        self.rule = rule
        self.detail = message


class InvalidActionError(RulesError):
    """The input is malformed: unknown cards, duplicates, a field out of range."""


class IllegalActionError(RulesError):
    """The action is well formed but the rules forbid it in this state."""
