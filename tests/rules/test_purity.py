"""The rules engine is pure: standard library only, and no clocks, I/O, logging or hidden randomness.

Seeded, replayable rounds (R-DEAL-1) and a referee that can run the engine anywhere depend on
it. Every module of referee/rules/ is parsed (not imported) and its imports are checked:

- each import is from the standard library (sys.stdlib_module_names) or from referee.rules;
- none is a module that reads clocks, does I/O, logs, or starts threads or processes;
- randomness is only ever a seeded random.Random (the module-level random functions share one
  generator seeded from the operating system);
- the builtins that do I/O or import by name (open, print, input, breakpoint, __import__) are
  not called;
- the modules import one another without a cycle, and none is over MAX_LINES lines long (a
  module that outgrows that holds more than one concern, DESIGN.md §1).
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

RULES_DIR = Path(__file__).resolve().parents[2] / "referee" / "rules"
RULES_FILES = sorted(RULES_DIR.glob("*.py"))
PACKAGE = "referee.rules"

# Clocks, I/O, logging, concurrency, operating-system access and import machinery.
FORBIDDEN_MODULES = frozenset(
    {
        "time",
        "datetime",
        "zoneinfo",
        "logging",
        "asyncio",
        "socket",
        "ssl",
        "select",
        "selectors",
        "threading",
        "_thread",
        "multiprocessing",
        "concurrent",
        "subprocess",
        "signal",
        "os",
        "pathlib",
        "io",
        "shutil",
        "tempfile",
        "glob",
        "fileinput",
        "sqlite3",
        "http",
        "urllib",
        "secrets",
        "uuid",
        "importlib",
        "builtins",
    }
)
FORBIDDEN_CALLS = frozenset({"open", "print", "input", "breakpoint", "__import__"})


def imported_modules(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, absolute module name) of every import in a module of referee/rules/."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0:
                found.append((node.lineno, node.module or ""))
            else:
                # Relative: level 1 is referee.rules itself, level 2 is referee, and so on.
                base = PACKAGE.split(".")[: len(PACKAGE.split(".")) - node.level + 1]
                found.append((node.lineno, ".".join([*base, *([node.module] if node.module else [])])))
    return found


# The compiled build's class attributes (mypyc_attr): allowed only where a failed import falls
# back to the standard library, so the pure engine never needs the package.
COMPILER_HINTS = frozenset({"mypy_extensions"})


def imports_with_fallback(tree: ast.AST) -> set[tuple[int, str]]:
    """(line, module) of the imports inside a `try` whose handler catches ImportError."""
    guarded: set[tuple[int, str]] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Try) and any(
            isinstance(handler.type, ast.Name) and handler.type.id == "ImportError"
            for handler in node.handlers
        ):
            for statement in node.body:
                guarded.update(imported_modules(statement))
    return guarded


def is_rules_module(name: str) -> bool:
    return name == PACKAGE or name.startswith(PACKAGE + ".")


def test_the_rules_package_is_found() -> None:
    names = {path.name for path in RULES_FILES}
    expected = {"__init__.py", "cards.py", "combos.py", "actions.py", "events.py", "config.py", "state.py"}
    modules = {"legal.py", "round.py", "game.py", "defaults.py", "observation.py", "playout.py"}
    assert expected | modules <= names


@pytest.mark.parametrize("path", RULES_FILES, ids=lambda path: path.name)
def test_imports_are_stdlib_or_rules_only(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    problems = []
    guarded = imports_with_fallback(tree)
    for line, name in imported_modules(tree):
        top = name.split(".")[0]
        if is_rules_module(name) or (top in COMPILER_HINTS and (line, name) in guarded):
            continue
        if top not in sys.stdlib_module_names:
            problems.append(f"{path.name}:{line}: {name} is neither the standard library nor {PACKAGE}")
        elif top in FORBIDDEN_MODULES:
            problems.append(f"{path.name}:{line}: {name} (clocks, I/O, logging or concurrency)")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("path", RULES_FILES, ids=lambda path: path.name)
def test_no_io_builtins_and_only_seeded_randomness(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    problems = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in FORBIDDEN_CALLS:
            problems.append(f"{path.name}:{node.lineno}: calls {node.func.id}()")
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id == "random"
            and node.attr != "Random"
        ):
            problems.append(f"{path.name}:{node.lineno}: random.{node.attr} (use a seeded random.Random)")
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module == "random":
            unseeded = [alias.name for alias in node.names if alias.name != "Random"]
            if unseeded:
                problems.append(f"{path.name}:{node.lineno}: from random import {', '.join(unseeded)}")
    assert not problems, "\n".join(problems)


def test_the_checks_catch_forbidden_code() -> None:
    """The checks above reject what they are meant to reject."""
    tree = ast.parse(
        "import time\nimport os.path\nfrom datetime import date\nfrom . import cards\n"
        "from ..demo import main\nimport numpy\nfrom referee.rules.cards import Card\n"
    )
    names = [name for _, name in imported_modules(tree)]
    assert names == [
        "time",
        "os.path",
        "datetime",
        "referee.rules",
        "referee.demo",
        "numpy",
        "referee.rules.cards",
    ]
    assert [is_rules_module(name) for name in names] == [False, False, False, True, False, False, True]
    assert "numpy" not in sys.stdlib_module_names
    assert {"time", "os", "datetime"} <= FORBIDDEN_MODULES


def rules_imports(tree: ast.AST) -> set[str]:
    """The modules of referee.rules that a module imports, `referee.rules` itself for the package."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module == PACKAGE:
            # `from referee.rules import cards` names a module, not a name of the package's __init__.
            names = {f"{PACKAGE}.{alias.name}" for alias in node.names}
            modules = names & set(MODULES)
            found |= modules
            if modules != names:
                found.add(PACKAGE)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            found |= {name for _, name in imported_modules(node) if is_rules_module(name)}
    return found


def module_name(path: Path) -> str:
    return PACKAGE if path.stem == "__init__" else f"{PACKAGE}.{path.stem}"


MODULES = [module_name(path) for path in RULES_FILES]


def import_graph() -> dict[str, set[str]]:
    """Each module of referee/rules/ and the modules of the package it imports (any import, even
    one inside a function, counts: a cycle that only a late import breaks is still a tangle)."""
    graph = {}
    for path in RULES_FILES:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        graph[module_name(path)] = rules_imports(tree) - {module_name(path)}
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle of `graph` as [a, b, ..., a], or None if it is acyclic."""
    done: set[str] = set()
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        if node in path:
            return [*path[path.index(node) :], node]
        if node in done:
            return None
        path.append(node)
        for after in sorted(graph.get(node, ())):
            cycle = visit(after)
            if cycle is not None:
                return cycle
        path.pop()
        done.add(node)
        return None

    for node in sorted(graph):
        cycle = visit(node)
        if cycle is not None:
            return cycle
    return None


def test_the_modules_import_one_another_without_a_cycle() -> None:
    graph = import_graph()
    assert graph[f"{PACKAGE}.game"] >= {f"{PACKAGE}.legal", f"{PACKAGE}.round"}
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle or ())


def test_the_cycle_check_finds_cycles() -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": set()}) is None
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"a"}}) == ["a", "a"]
    tree = ast.parse(
        "from referee.rules import legal\nfrom referee.rules import Card\nimport referee.rules.game\n"
    )
    assert rules_imports(tree) == {f"{PACKAGE}.legal", PACKAGE, f"{PACKAGE}.game"}
