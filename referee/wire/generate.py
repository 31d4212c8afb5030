"""Regenerate the committed gRPC stubs from proto/ (`make proto`); tests check they are current."""

from __future__ import annotations

import sys
from pathlib import Path

from grpc_tools import protoc

ROOT = Path(__file__).resolve().parents[2]
PROTO_DIR = ROOT / "proto"
PROTOS = ["tichu/v1/referee.proto"]
# protoc writes imports relative to the proto root; the stubs live inside the referee package.
IMPORT_FIX = ("from tichu.v1 import", "from referee.wire.tichu.v1 import")


def generate(out_dir: Path) -> None:
    """Write the stubs for every proto into out_dir (a copy of referee/wire's layout)."""
    for proto in PROTOS:
        code = protoc.main(
            [
                "grpc_tools.protoc",
                f"-I{PROTO_DIR}",
                f"--python_out={out_dir}",
                f"--pyi_out={out_dir}",
                f"--grpc_python_out={out_dir}",
                str(PROTO_DIR / proto),
            ]
        )
        if code != 0:
            raise SystemExit(f"protoc failed on {proto}")
    for path in out_dir.rglob("*_pb2_grpc.py"):
        path.write_text(path.read_text().replace(*IMPORT_FIX))
    for package in {p.parent for p in out_dir.rglob("*_pb2.py")}:
        for folder in [package, *package.relative_to(out_dir).parents]:
            init = out_dir / folder / "__init__.py" if not folder.is_absolute() else folder / "__init__.py"
            if not init.exists():
                init.write_text("")


if __name__ == "__main__":
    generate(Path(__file__).resolve().parent)
    sys.exit(0)
