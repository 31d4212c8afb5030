"""The layers of DESIGN.md §1-2, checked from the source (parsed, not imported).

- referee.match is pure: the standard library (no clocks, I/O, logging or concurrency) and
  referee.rules only; time is an argument.
- protobuf and grpc appear nowhere in referee/rules, referee/match, referee/replay or clients/,
  but in the SDK's connector and the scripted seat (the tests' and benchmarks' wire-level client);
  in referee/server, the generated stubs only in the codec, the service and serve.
- referee never imports clients (the SDK's commands reach `tichu` as entry points).
- no class of referee/ or clients/ is over MAX_CLASS_LINES lines (the generated stubs aside):
  size follows concepts, so a module may be as long as its concept, but a class that long holds
  two. The ones over it today (OVERSIZED) may shrink, never grow.
- no module imports a private name (`_x`) from a module of another package.
- replay records are read through the schema (referee/match/records.py and its field readers)
  only: nowhere else is a JSON object asked for its "kind".
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.rules.test_purity import FORBIDDEN_MODULES

ROOT = Path(__file__).resolve().parent.parent
REFEREE = ROOT / "referee"
CLIENTS = ROOT / "clients"
GENERATED = REFEREE / "wire" / "tichu"
MAX_CLASS_LINES = 500
# Classes past the bound, each with the most it may have until it is cut along its seam (issue 23:
# Match's seats and streams apart from its decisions).
OVERSIZED = {"referee/match/core.py:Match": 800}
WIRE = ("google.protobuf", "grpc", "grpc_tools", "referee.wire", "referee.server")
# The clients that speak the wire themselves: the SDK's connector and the scripted test seat;
# the tournament worker runs the connector.
WIRE_CLIENTS = {"connect.py", "scripted.py"}
# datetime turns the wall time the caller passed in into a replay's timestamps; reading the
# clock from it is refused below.
MATCH_ALLOWED_STDLIB = {"datetime"}
CLOCK_CALLS = {"now", "today", "utcnow", "time", "monotonic", "perf_counter", "process_time"}


def python_files(*folders: Path) -> Iterator[Path]:
    """The project's Python files under the folders, generated stubs aside."""
    for folder in folders:
        for path in sorted(folder.rglob("*.py")):
            if GENERATED not in path.parents:
                yield path


def tree_of(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), str(path))


def names(path: Path) -> list[tuple[int, str]]:
    """(line, module) of every import in a file; the project imports absolutely only."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree_of(path)):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"{path}:{node.lineno}: a relative import"
            found.append((node.lineno, node.module or ""))
    return found


def under(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


MATCH_FILES = sorted((REFEREE / "match").glob("*.py"))


@pytest.mark.parametrize("path", MATCH_FILES, ids=[p.name for p in MATCH_FILES])
def test_the_match_core_imports_only_the_standard_library_and_the_rules(path: Path) -> None:
    problems = []
    for line, name in names(path):
        top = name.split(".")[0]
        if under(name, "referee.rules") or under(name, "referee.match"):
            continue
        if top in sys.stdlib_module_names and (top not in FORBIDDEN_MODULES or top in MATCH_ALLOWED_STDLIB):
            continue
        problems.append(f"{path.name}:{line}: imports {name}")
    for node in ast.walk(tree_of(path)):
        if isinstance(node, ast.Attribute) and node.attr in CLOCK_CALLS:
            problems.append(f"{path.name}:{node.lineno}: reads a clock ({node.attr})")
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("open", "print")
        ):
            problems.append(f"{path.name}:{node.lineno}: does I/O ({node.func.id})")
    assert not problems, "\n".join(problems)


PURE_OF_WIRE = [
    *python_files(REFEREE / "rules", REFEREE / "match", REFEREE / "replay"),
    *(p for p in python_files(CLIENTS) if p.name not in WIRE_CLIENTS),
]


@pytest.mark.parametrize("path", PURE_OF_WIRE, ids=[str(p.relative_to(ROOT)) for p in PURE_OF_WIRE])
def test_protobuf_and_grpc_stay_in_the_shell(path: Path) -> None:
    found = [f"{path.name}:{line}: {name}" for line, name in names(path) if any(under(name, w) for w in WIRE)]
    assert not found, found


def test_the_wire_clients_are_the_ones_named() -> None:
    # The exceptions above are real: the connector and the scripted seat do speak protobuf.
    for name in WIRE_CLIENTS:
        assert any(under(module, "referee.wire") for _, module in names(CLIENTS / name)), name


def test_the_server_table_speaks_plain_values() -> None:
    # The Table feeds the Match decoded messages and hands out plain values: no protobuf there.
    found = [name for _, name in names(REFEREE / "server" / "table.py") if under(name, "referee.wire")]
    assert not found and not any(
        under(n, "google.protobuf") for _, n in names(REFEREE / "server" / "table.py")
    )


REFEREE_FILES = list(python_files(REFEREE))


@pytest.mark.parametrize("path", REFEREE_FILES, ids=[str(p.relative_to(ROOT)) for p in REFEREE_FILES])
def test_referee_never_imports_clients(path: Path) -> None:
    found = [f"{path.name}:{line}: {name}" for line, name in names(path) if under(name, "clients")]
    assert not found, found


ALL_FILES = [*python_files(REFEREE), *python_files(CLIENTS)]


@pytest.mark.parametrize("path", ALL_FILES, ids=[str(p.relative_to(ROOT)) for p in ALL_FILES])
def test_no_class_is_over_the_size_limit(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.end_lineno is not None:
            name = f"{path.relative_to(ROOT).as_posix()}:{node.name}"
            most = OVERSIZED.get(name, MAX_CLASS_LINES)
            lines = node.end_lineno - node.lineno + 1
            assert lines <= most, f"{name} has {lines} lines (at most {most}): cut it along its seam"


def test_the_oversized_classes_still_exist() -> None:
    # An entry for a class that was cut or renamed would let a new class of that name grow unchecked.
    for name in OVERSIZED:
        module, cls = name.split(":")
        classes = {
            n.name for n in ast.walk(ast.parse((ROOT / module).read_text())) if isinstance(n, ast.ClassDef)
        }
        assert cls in classes, f"{name} is gone: drop it from OVERSIZED"


def package_of(path: Path) -> str:
    """The dotted package a project file belongs to (referee/server/front.py -> referee.server)."""
    return ".".join(path.relative_to(ROOT).with_suffix("").parts[:-1])


def private_imports(tree: ast.AST, here: str) -> list[str]:
    """`module.name` for each private name (one leading underscore) that code of package `here`
    imports from a module of another package: a name private to its package is its own business."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            home = node.module.rsplit(".", 1)[0] if "." in node.module else node.module
            for alias in node.names:
                private = alias.name.startswith("_") and not alias.name.startswith("__")
                if private and home != here:
                    found.append(f"{node.module}.{alias.name}")
    return found


@pytest.mark.parametrize("path", ALL_FILES, ids=[str(p.relative_to(ROOT)) for p in ALL_FILES])
def test_no_private_name_is_imported_across_packages(path: Path) -> None:
    found = private_imports(tree_of(path), package_of(path))
    assert not found, f"{path.relative_to(ROOT)} imports private names of another package: {found}"


def test_the_sdk_keeps_no_fold_of_its_own() -> None:
    # The one fold of events is referee.rules.observation.advance.
    assert not (CLIENTS / "view.py").exists()


def _asks_for_kind(node: ast.AST) -> bool:
    if isinstance(node, ast.Subscript):
        key = node.slice
        return isinstance(key, ast.Constant) and key.value == "kind"
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get":
        return bool(node.args) and isinstance(node.args[0], ast.Constant) and node.args[0].value == "kind"
    return False


# The engine's own JSON forms (a combination's "kind"...) are not records.
# The schema's own modules read the JSON; everything else reads typed records.
SCHEMA = {REFEREE / "match" / name for name in ("records.py", "fields.py", "summary.py")}
READERS = [p for p in ALL_FILES if p not in SCHEMA and REFEREE / "rules" not in p.parents]


@pytest.mark.parametrize("path", READERS, ids=[str(p.relative_to(ROOT)) for p in READERS])
def test_records_are_read_through_the_schema_only(path: Path) -> None:
    found = [
        f"{path.name}:{getattr(node, 'lineno', 0)}"
        for node in ast.walk(tree_of(path))
        if _asks_for_kind(node)
    ]
    assert not found, f"string-keyed record access outside referee/match/records.py: {found}"


def test_the_checks_catch_what_they_should() -> None:
    assert _asks_for_kind(ast.parse('record["kind"]').body[0].value)  # type: ignore[attr-defined]
    assert _asks_for_kind(ast.parse('record.get("kind")').body[0].value)  # type: ignore[attr-defined]
    assert not _asks_for_kind(ast.parse('record["seat"]').body[0].value)  # type: ignore[attr-defined]
    assert under("clients.bot", "clients") and not under("clientsx", "clients")
    assert package_of(REFEREE / "server" / "front.py") == "referee.server"
    # A private import across packages is caught; one inside its package, or of a public name, is not.
    code = ast.parse("from referee.rules.legal import _kind, kind\nfrom clients.bot import _x")
    assert private_imports(code, "clients") == ["referee.rules.legal._kind"]
    assert private_imports(code, "referee.rules") == ["clients.bot._x"]
