"""The optional compiled build of the rules engine; everything else is in pyproject.toml.

`make fast` (TICHU_COMPILE=1) compiles referee/rules with mypyc into extension modules beside the
sources, which Python then imports in place of them. Without TICHU_COMPILE the install is pure
Python and needs no C compiler. The pure sources stay the reference: the suite runs on both.
"""

from __future__ import annotations

import os
from pathlib import Path

from setuptools import setup

# events.py stays pure: mypyc gives a dataclass's ClassVar a field of its own (mypyc/mypyc#1122),
# which breaks every event class; the package __init__ stays pure so that it can load the
# shared library that holds the compiled modules.
PURE_MODULES = {"__init__.py", "events.py"}


def compiled_rules() -> list[object]:
    """The mypyc extension modules of referee/rules, when TICHU_COMPILE=1 asks for them."""
    if os.environ.get("TICHU_COMPILE") != "1":
        return []
    from mypyc.build import mypycify

    here = Path(__file__).parent
    sources = sorted(str(p.relative_to(here)) for p in (here / "referee" / "rules").glob("*.py"))
    # The shared library lives outside referee/rules: inside it, loading the package would
    # need the library, and the library the package.
    return list(
        mypycify(
            [s for s in sources if Path(s).name not in PURE_MODULES],
            group_name="referee.compiled_rules",
            opt_level="3",
        )
    )


setup(ext_modules=compiled_rules())
