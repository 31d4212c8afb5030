"""MkDocs hooks (mkdocs.yml): the generated reference pages, filled in at build time."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tools.docs.reference import fill


def on_page_markdown(markdown: str, **_: Any) -> str:
    """Fill in `<!-- generated: NAME -->` (tools/docs/reference.py)."""
    return fill(markdown)
