"""Server tests log at INFO as JSON lines (pytest captures them); capture_logs sees every event."""

from __future__ import annotations

from referee import log

log.configure(json=True, level="INFO", force=True)
