"""Every test starts from the logging configuration the previous one found.

Code under test may configure structlog for its process (the tournament runner sets the level
to `error`); without this, a later test in the same worker would lose the warnings it checks.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import structlog


@pytest.fixture(autouse=True)
def _keep_the_logging_configuration() -> Iterator[None]:
    saved = structlog.get_config()
    yield
    structlog.configure(**saved)


def pytest_report_header() -> str:
    """Which build of the engine this run tests."""
    import referee.rules

    return f"rules engine: {'compiled (mypyc)' if referee.rules.COMPILED else 'pure Python'}"


def pytest_sessionstart(session: pytest.Session) -> None:
    """A run that asks for the compiled engine (make test-compiled) refuses to test the pure one."""
    import os

    import referee.rules

    if os.environ.get("TICHU_EXPECT_COMPILED") == "1" and not referee.rules.COMPILED:
        raise pytest.UsageError(f"TICHU_EXPECT_COMPILED=1, but {referee.rules.__file__} is pure Python")
