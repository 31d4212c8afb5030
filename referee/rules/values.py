"""Pickling and copying of the engine's frozen values, the same in the pure and compiled builds.

A compiled frozen dataclass refuses the attribute writes of the default pickle and copy
protocol, so each value class rebuilds itself from its fields instead (`__reduce__`).
"""

from __future__ import annotations

import dataclasses
from typing import Any


def field_values(value: Any) -> tuple[Any, ...]:
    """The dataclass's field values, in field order: the arguments that rebuild it."""
    return tuple(getattr(value, field.name) for field in dataclasses.fields(value))
