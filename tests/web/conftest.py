"""The web face's browser tests: Playwright driving Debian's Chromium (Playwright cannot download
its own browser here), given to it as its executable."""

from __future__ import annotations

import shutil
from typing import Any

import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args: dict[str, Any]) -> dict[str, Any]:
    """pytest-playwright's launch arguments, with Debian's Chromium as the browser."""
    if CHROMIUM is None:
        pytest.skip("Chromium is not installed (apt-get install chromium): no browser to test the pages in")
    return {**browser_type_launch_args, "executable_path": CHROMIUM}
