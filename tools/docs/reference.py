"""The generated reference pages: the CLI from tichu's own argparse parsers, the protobuf messages
from proto/tichu/v1/referee.proto, and the JSON Schemas under proto/tichu/v1/schema/.

tools/docs/hooks.py puts each where a page says `<!-- generated: NAME -->`; the tests call them too.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
PROTO = ROOT / "proto" / "tichu" / "v1" / "referee.proto"
SCHEMAS = ROOT / "proto" / "tichu" / "v1" / "schema"


# ----------------------------------------------------------------------------- the CLI


def help_text(argv: list[str]) -> str:
    """What `tichu ARGV --help` prints (80 columns)."""
    from referee.cli import main

    out = io.StringIO()
    old = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = "80"
    try:
        with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):
            main([*argv, "--help"])
    finally:
        if old is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = old
    return out.getvalue()


def commands(argv: list[str] | None = None) -> Iterator[tuple[list[str], str]]:
    """Every command and subcommand of tichu, depth first, with its help."""
    argv = argv or []
    text = help_text(argv)
    yield argv, text
    # A parser with subcommands lists them as {a,b,c} in its positional arguments.
    found = re.search(r"^positional arguments:\n\s+\{([\w,-]+)\}", text, re.MULTILINE)
    for name in found[1].split(",") if found else []:
        yield from commands([*argv, name])


def cli_markdown() -> str:
    """The CLI reference: one section a command, its --help as tichu prints it."""
    parts = []
    for argv, text in commands():
        if not argv:
            parts.append(f"```text\n{text.rstrip()}\n```\n")
            continue
        level = "#" * (1 + len(argv))
        parts.append(f"{level} `tichu {' '.join(argv)}`\n\n```text\n{text.rstrip()}\n```\n")
    return "\n".join(parts)


# ----------------------------------------------------------------------------- the proto

DECLARATION = re.compile(r"^(message|enum|service) (\w+) \{(\}?)")
FIELD = re.compile(r"^\s*(?:(repeated|optional) )?([\w.]+) (\w+) = (\d+);\s*(?://\s*(.*))?$")
VALUE = re.compile(r"^\s*(\w+) = (\d+);\s*(?://\s*(.*))?$")
RPC = re.compile(r"^\s*rpc (\w+)\((stream )?(\w+)\) returns \((stream )?(\w+)\);")


def _blocks(lines: list[str]) -> Iterator[tuple[str, str, list[str], list[str]]]:
    """(kind, name, leading comment lines, body lines) of each top-level declaration."""
    comment: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        found = DECLARATION.match(line)
        if line.startswith("//"):
            comment.append(line[2:].strip())
        elif found:
            body: list[str] = []
            if not found[3]:
                depth = 1
                while depth:
                    i += 1
                    depth += lines[i].count("{") - lines[i].count("}")
                    body.append(lines[i])
                body.pop()
            yield found[1], found[2], comment, body
            comment = []
        else:
            comment = []
        i += 1


def _cell(text: str) -> str:
    return text.replace("|", "\\|").strip()


def proto_markdown() -> str:
    """Every service, message and enum of the proto, with the comments the .proto gives them."""
    lines = PROTO.read_text(encoding="utf-8").splitlines()
    header = []
    for line in lines:
        if not line.startswith("//"):
            break
        header.append(line[2:].strip())
    out = [f"From `{PROTO.relative_to(ROOT)}` (package `tichu.v1`).\n", "\n".join(header), ""]
    for kind, name, comment, body in _blocks(lines):
        out.append(f"## {kind} `{name}` {{#{name}}}\n")
        if comment and comment != header[: len(comment)]:
            out.append(" ".join(c for c in comment if not c.startswith("---")) + "\n")
        rows, pending, oneof = [], [], ""
        for line in body:
            stripped = line.strip()
            if stripped.startswith("//"):
                pending.append(stripped[2:].strip())
                continue
            if stripped.startswith("oneof "):
                oneof = stripped.split()[1]
                pending = []
                continue
            if stripped == "}":
                oneof = ""
                continue
            if kind == "service" and (rpc := RPC.match(line)):
                arrow = f"{rpc[2] or ''}{_link(rpc[3])} → {rpc[4] or ''}{_link(rpc[5])}"
                rows.append(f"| `{rpc[1]}` | {arrow} | {_cell(' '.join(pending))} |")
            elif kind == "enum" and (value := VALUE.match(line)):
                note = " ".join([*pending, value[3] or ""])
                rows.append(f"| `{value[1]}` | {value[2]} | {_cell(note)} |")
            elif field := FIELD.match(line):
                label = f"{field[1]} " if field[1] else ""
                note = " ".join([*pending, field[5] or ""])
                where = f" (oneof `{oneof}`)" if oneof else ""
                rows.append(
                    f"| `{field[3]}` | {label}{_link(field[2])} | {field[4]} | {_cell(note)}{where} |"
                )
            pending = []
        if rows:
            head = {
                "service": "| Method | Call | What |\n|---|---|---|",
                "enum": "| Value | Number | Meaning |\n|---|---|---|",
                "message": "| Field | Type | Number | Meaning |\n|---|---|---|---|",
            }[kind]
            out.append(head + "\n" + "\n".join(rows) + "\n")
    return "\n".join(out)


def _link(type_name: str) -> str:
    """A message or enum type of this file as a link to its section; a scalar as code."""
    scalars = {"string", "bool", "bytes", "int32", "int64", "uint32", "uint64", "double", "float", "sint32"}
    return f"`{type_name}`" if type_name in scalars or "." in type_name else f"[`{type_name}`](#{type_name})"


# ----------------------------------------------------------------------------- the JSON Schemas


def _kind(schema: dict[str, Any]) -> str:
    from referee.wire.schema import describe

    return describe(schema)


def schemas_markdown() -> str:
    """Each JSON Schema: what it describes, and its properties with their types."""
    out = []
    for path in sorted(SCHEMAS.glob("*.json")):
        schema = json.loads(path.read_text(encoding="utf-8"))
        out.append(f"## {schema.get('title', path.stem)} (`{path.name}`)\n")
        out.append(f"{schema.get('description', '')}\n\n`$id`: `{schema.get('$id', '')}`\n")
        out.extend(_properties(schema))
        for variant in schema.get("oneOf", []):
            const = variant.get("properties", {}).get("type", {}).get("const")
            if const:
                out.append(f"### `{const}`\n\n{variant.get('description', '')}\n")
                out.extend(_properties(variant))
        defs = schema.get("$defs", {})
        if defs:
            out.append("Definitions (`$defs`):\n\n| Name | Form | Meaning |\n|---|---|---|")
            out.extend(
                f"| `{name}` | {_cell(_kind(d))} | {_cell(d.get('description', ''))} |"
                for name, d in defs.items()
            )
            out.append("")
    return "\n".join(out)


def _properties(schema: dict[str, Any]) -> list[str]:
    properties = schema.get("properties", {})
    if not properties:
        return []
    required = set(schema.get("required", []))
    rows = [
        f"| `{name}` | {_cell(_kind(p))} | {'yes' if name in required else ''} "
        f"| {_cell(p.get('description', ''))} |"
        for name, p in properties.items()
    ]
    return ["| Property | Type | Required | Meaning |\n|---|---|---|---|", *rows, ""]


GENERATED = {"cli": cli_markdown, "proto": proto_markdown, "schemas": schemas_markdown}
MARKER = re.compile(r"<!-- generated: (\w+) -->")


def fill(markdown: str) -> str:
    """A page with each `<!-- generated: NAME -->` replaced by the reference it names."""
    return MARKER.sub(lambda m: GENERATED[m[1]](), markdown)
