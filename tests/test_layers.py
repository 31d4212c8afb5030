"""The layers of DESIGN.md §1-2, checked from the source (parsed, not imported).

- referee.match is pure: the standard library (no clocks, I/O, logging or concurrency),
  referee.rules and orjson (pure functions) only; time is an argument.
- protobuf and grpc appear nowhere in referee/rules, referee/match, referee/replay or clients/,
  but in the SDK's codec and connector and the arena's lobby client (the scripted wire seat of the
  kit, the tests and the benchmarks is referee/scripted.py, outside the SDK);
  in referee/server, the generated stubs only in the codec, the service and serve.
- referee never imports clients (the SDK's commands reach `tichu` as entry points).
- no class of referee/ or clients/ is over MAX_CLASS_LINES lines (the generated stubs aside):
  size follows concepts, so a module may be as long as its concept, but a class that long holds
  two. The ones over it today (OVERSIZED) may shrink, never grow.
- no module re-exports another's names: a name is imported from the module that defines it (a
  package's __init__ is its front, and may gather them), and no module's __all__ lists a name it
  imported.
- no private name (`_x`) is imported from another package: what another package needs is public.
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
OVERSIZED: dict[str, int] = {}
WIRE = ("google.protobuf", "grpc", "grpc_tools", "referee.wire", "referee.server")
# The clients that speak the wire themselves: the SDK's codec and its connector (transport only)
# and the arena's lobby client; the tournament worker runs the connector.
WIRE_CLIENTS = {"codec.py", "connect.py", "arena.py"}
# Of those, the ones that read protobuf messages (the seat's play loop reads none: the codec does).
WIRE_READERS = {"codec.py", "arena.py"}
# datetime turns the wall time the caller passed in into a replay's timestamps; reading the
# clock from it is refused below.
MATCH_ALLOWED_STDLIB = {"datetime"}
# orjson makes the hash chain's bytes (referee/match/jsonbytes.py): pure functions of a value,
# with no I/O, clocks or state of their own, so the core stays a pure state machine.
MATCH_ALLOWED_THIRD_PARTY = {"orjson"}
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
        if under(name, "referee.rules") or under(name, "referee.match") or name in MATCH_ALLOWED_THIRD_PARTY:
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
    # The exceptions above are real: the codec, the connector and the lobby client do speak protobuf.
    for name in WIRE_CLIENTS:
        assert any(under(module, "referee.wire") for _, module in names(CLIENTS / name)), name


def reads_protobuf(path: Path) -> list[str]:
    """Where a module reads a protobuf message: asks its oneof, or imports the referee's codec."""
    found = []
    for node in ast.walk(tree_of(path)):
        if isinstance(node, ast.Attribute) and node.attr in ("WhichOneof", "HasField"):
            found.append(f"{path.name}:{node.lineno}: {node.attr}")
        if isinstance(node, ast.ImportFrom) and node.module and under(node.module, "referee.server"):
            found.append(f"{path.name}:{node.lineno}: from {node.module}")
    return found


SDK_FILES = [p for p in python_files(CLIENTS) if p.name not in WIRE_READERS]


@pytest.mark.parametrize("path", SDK_FILES, ids=[str(p.relative_to(ROOT)) for p in SDK_FILES])
def test_the_sdk_decodes_no_protobuf_outside_its_codec(path: Path) -> None:
    # The seat driver reads the match core's values; clients/codec.py makes them of the wire.
    found = reads_protobuf(path)
    assert not found, found


def test_the_protobuf_reader_check_catches_a_reader(tmp_path: Path) -> None:
    module = tmp_path / "reader.py"
    module.write_text("from referee.server.codec import unbundle\nkind = message.WhichOneof('kind')\n")
    assert len(reads_protobuf(module)) == 2


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


def _module_file(module: str) -> Path | None:
    """The project's file of a module (not a package's __init__), if it is one of the project's."""
    path = ROOT / (module.replace(".", "/") + ".py")
    return path if path.is_file() else None


def defined_names(path: Path) -> set[str]:
    """The names a module defines at its top level (classes, functions, assignments, also those
    inside a top-level if or try)."""
    found: set[str] = set()
    for node in tree_of(path).body:
        for inner in ast.walk(node) if isinstance(node, ast.If | ast.Try) else [node]:
            if isinstance(inner, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                found.add(inner.name)
            elif isinstance(inner, ast.Assign | ast.AnnAssign | ast.AugAssign):
                targets = inner.targets if isinstance(inner, ast.Assign) else [inner.target]
                found.update(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
    return found


def borrowed(path: Path) -> list[str]:
    """Names that `path` imports from a module that only imported them itself, and names it
    passes on (in its __all__, or `import x as x`) that it imported."""
    tree = tree_of(path)
    problems, imported = [], set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.ImportFrom) or node.module is None or node.module == "__future__":
            continue
        source = _module_file(node.module)
        for alias in node.names:
            imported.add(alias.asname or alias.name)
            if alias.asname is not None and alias.asname == alias.name:
                problems.append(f"{path.name}:{node.lineno}: passes on {alias.name} (import ... as itself)")
            elsewhere = source is not None and alias.name not in defined_names(source)
            if elsewhere and _module_file(f"{node.module}.{alias.name}") is None:
                problems.append(f"{path.name}:{node.lineno}: {alias.name} from {node.module}, not its own")
    if path.name != "__init__.py":
        for node in tree.body:
            if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
            ):
                listed = [e.value for e in getattr(node.value, "elts", []) if isinstance(e, ast.Constant)]
                problems.extend(
                    f"{path.name}: __all__ passes on {name}" for name in listed if name in imported
                )
    return problems


OWN_NAMES = [*ALL_FILES, *python_files(ROOT / "bench")]


@pytest.mark.parametrize("path", OWN_NAMES, ids=[str(p.relative_to(ROOT)) for p in OWN_NAMES])
def test_names_come_from_the_module_that_defines_them(path: Path) -> None:
    problems = borrowed(path)
    assert not problems, "\n".join(problems)


def package_of(path: Path) -> str:
    return ".".join(path.relative_to(ROOT).with_suffix("").parts[:-1])


def private_imports(path: Path) -> list[str]:
    """`from M import _x` where M is not in the importer's package."""
    found = []
    for node in ast.walk(tree_of(path)):
        if isinstance(node, ast.ImportFrom) and node.module:
            module_package = (
                node.module
                if (ROOT / node.module.replace(".", "/")).is_dir()
                else node.module.rpartition(".")[0]
            )
            for alias in node.names:
                private = alias.name.startswith("_") and not alias.name.startswith("__")
                if private and module_package != package_of(path):
                    found.append(f"{path.name}:{node.lineno}: {alias.name} from {node.module}")
    return found


@pytest.mark.parametrize("path", [*ALL_FILES], ids=[str(p.relative_to(ROOT)) for p in ALL_FILES])
def test_no_private_name_is_imported_from_another_package(path: Path) -> None:
    found = private_imports(path)
    assert not found, found


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
    assert "Match" in defined_names(REFEREE / "match" / "core.py")
    assert "Outcome" not in defined_names(REFEREE / "match" / "records.py")
