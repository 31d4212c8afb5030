"""What the archive's browser tests share: an app served on 127.0.0.1:0 in a thread, the page
sizes, screenshots, and the check that no two boxes of a page overlap."""

from __future__ import annotations

import asyncio
import os
import shutil
import threading
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from starlette.types import ASGIApp

CHROMIUM = next(
    (found for name in ("chromium", "chromium-browser", "google-chrome") if (found := shutil.which(name))),
    None,
)
needs_browser = pytest.mark.skipif(
    CHROMIUM is None and not os.environ.get("CI"),
    reason="no Chromium found (Debian's `chromium`; .ci/run installs it)",
)
SCREENSHOTS = Path(__file__).resolve().parents[2] / "build" / "screenshots"
SIZES = {"phone": (360, 740), "tablet": (1024, 768), "laptop": (1400, 1000), "desktop": (1920, 1080)}


class Served:
    """An ASGI app served by uvicorn in a thread of its own, on a free port of 127.0.0.1."""

    def __init__(self, app: ASGIApp) -> None:
        config = uvicorn.Config(
            app, host="127.0.0.1", port=0, log_level="warning", access_log=False, lifespan="off"
        )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=lambda: asyncio.run(self.server.serve()), daemon=True)

    def __enter__(self) -> str:
        self.thread.start()
        for _ in range(500):
            if self.server.started:
                break
            self.thread.join(0.02)
        assert self.server.started, "the test server did not start"
        port = self.server.servers[0].sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}"

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(10)


def screenshot(page: Any, name: str) -> Path:
    """Save a full-page screenshot into build/screenshots (kept by CI as an artifact)."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path


# The boxes of the page's blocks (panels, seats, table cells, controls); no two may overlap
# unless one holds the other, and nothing may stick out past the right edge of the page.
OVERLAPS_JS = """(selector) => {
  const blocks = [...document.querySelectorAll(selector)].filter((e) => {
    const r = e.getBoundingClientRect();
    return r.width > 0 && r.height > 0 && getComputedStyle(e).visibility !== 'hidden';
  });
  const found = [];
  for (let i = 0; i < blocks.length; i++) {
    for (let j = i + 1; j < blocks.length; j++) {
      const a = blocks[i], b = blocks[j];
      if (a.contains(b) || b.contains(a)) continue;
      const r = a.getBoundingClientRect(), s = b.getBoundingClientRect();
      const dx = Math.min(r.right, s.right) - Math.max(r.left, s.left);
      const dy = Math.min(r.bottom, s.bottom) - Math.max(r.top, s.top);
      if (dx > 1 && dy > 1) found.push(`${a.outerHTML.slice(0, 80)} / ${b.outerHTML.slice(0, 80)}`);
    }
  }
  const wide = document.documentElement.scrollWidth > window.innerWidth + 1;
  return {found: found.slice(0, 5), wide, width: document.documentElement.scrollWidth};
}"""
BLOCKS = (
    "header.site, main > *, .panel, .controls > *, .seat, .centre, .v-events, .v-tricks, .v-chart, "
    "table, .filters > *, .charts figure, .pair-table, h1, h2, p"
)
