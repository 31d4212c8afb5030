"""The buf that `make buf` runs is pinned: one exact version, which the lock file holds too."""

from __future__ import annotations

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BUF = ROOT / "tools" / "buf"


def test_buf_is_pinned_to_one_version_and_locked() -> None:
    wanted = json.loads((BUF / "package.json").read_text(encoding="utf-8"))["devDependencies"][
        "@bufbuild/buf"
    ]
    assert re.fullmatch(r"\d+\.\d+\.\d+", wanted), f"pin an exact version, not {wanted!r}"
    lock = json.loads((BUF / "package-lock.json").read_text(encoding="utf-8"))["packages"]
    assert lock["node_modules/@bufbuild/buf"]["version"] == wanted
    assert lock["node_modules/@bufbuild/buf-linux-x64"]["version"] == wanted  # the binary CI runs
