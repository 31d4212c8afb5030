"""The documentation's pages (docs/, and the README as the front page) for the tests that check them.

How a page's fenced code blocks are taken (tests/test_docs.py runs them):

- `python` with `>>>`: a doctest session, run and compared; one namespace per page, in order.
- `python title="NAME.py"`: a file; written to the page's scratch folder and compiled, for the
  page's `console` blocks to use.
- `console`: `$ ` lines are commands, the lines under each its output. Each command runs in bash
  in the page's scratch folder (`tichu` on PATH) and must exit 0, or N with a trailing
  `# exit N`; its output must match what is shown, where a line `...` stands for any lines and
  `...` in a line for any text. `echo '<request>' | tichu rules` runs in-process (the same code).
- `sh`: commands to copy that the tests do not run (a server that runs until stopped, another
  machine, another tool): each line must name a known program, a `tichu` line must parse with
  tichu's own parser, and a `make` line must name a Makefile target.
- `toml`, `json`: parsed. `text`, `proto`: shown as they are (outputs, diagrams, excerpts).

Any other language, or a `python` block that is neither, fails the tests.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
README = ROOT / "README.md"
# ```lang attrs\n body ```  (attrs: e.g. title="mybot.py")
FENCE = re.compile(r"^```(\w*)([^\n]*)\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)
LANGUAGES = frozenset({"python", "console", "sh", "toml", "json", "text", "proto"})


@dataclass(frozen=True, slots=True)
class Block:
    """One fenced code block of a page."""

    page: Path
    line: int  # of its first line of code (1-based)
    language: str
    attrs: str
    text: str

    @property
    def title(self) -> str:
        """The block's title="..." attribute, if any (a file's name)."""
        found = re.search(r'title="([^"]+)"', self.attrs)
        return found[1] if found else ""

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def pages() -> list[Path]:
    """Every page: the README and each Markdown file under docs/."""
    return [README, *sorted(DOCS.rglob("*.md"))]


def blocks(page: Path) -> list[Block]:
    """A page's fenced blocks, in order."""
    text = page.read_text(encoding="utf-8")
    return [
        Block(page, text.count("\n", 0, m.start(3)) + 1, m[1], m[2].strip(), m[3])
        for m in FENCE.finditer(text)
    ]


def page(name: str) -> str:
    """The text of a page under docs/ (e.g. "reference/events.md")."""
    return (DOCS / name).read_text(encoding="utf-8")


def section(name: str, title: str) -> str:
    """The text of one section of a page (its subsections included): from the heading that ends
    with `title` to the next heading of the same or a higher level."""
    text = page(name)
    found = re.search(rf"^(#+) {re.escape(title)}\n", text, re.MULTILINE)
    assert found, f"{name}: no heading {title!r}"
    rest = text[found.end() :]
    end = re.search(rf"^#{{1,{len(found[1])}}} ", rest, re.MULTILINE)
    return rest[: end.start()] if end else rest
