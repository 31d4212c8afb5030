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
    from referee.cli import engine_name

    return f"rules engine: {engine_name()}"


def pytest_sessionstart(session: pytest.Session) -> None:
    """A run that asks for one build of the engine (make test-pure, make test-compiled) refuses the other.

    `make demo` and `make fast` leave the compiled modules in the tree, where Python prefers them
    to the sources: without this, the pure suite could run compiled and nobody would know.
    """
    import os

    import referee.rules
    import referee.rules.game

    if os.environ.get("TICHU_EXPECT_COMPILED") == "1" and not referee.rules.COMPILED:
        raise pytest.UsageError(f"TICHU_EXPECT_COMPILED=1, but {referee.rules.__file__} is pure Python")
    if os.environ.get("TICHU_EXPECT_PURE") == "1" and referee.rules.COMPILED:
        raise pytest.UsageError(
            f"TICHU_EXPECT_PURE=1, but {referee.rules.game.__file__} is compiled: `make pure` removes it"
        )
    if referee.rules.COMPILED and (stale := edited_since_compiled()):
        raise pytest.UsageError(
            f"{', '.join(stale)} changed after the engine was compiled, which would test the old code:"
            " `make fast` compiles it again, `make pure` removes the compiled modules"
        )


def edited_since_compiled() -> list[str]:
    """The engine's sources newer than the modules compiled from them (make demo's, make fast's)."""
    from pathlib import Path

    import referee.rules

    rules = Path(referee.rules.__file__ or "").parent
    return [
        str(source)
        for source in sorted(rules.glob("*.py"))
        for module in rules.glob(f"{source.stem}.*.so")
        if source.stat().st_mtime > module.stat().st_mtime
    ]
