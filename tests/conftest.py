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
