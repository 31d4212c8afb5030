"""`tichu web PATH...`: serve finished work in a browser, offline: tournament stores (or their
folders or configs), replay folders and single replays.

Each PATH is read as what it is: a tournament config (.toml: its store, its replay folder, its
SPRT settings and signing key's public half), a store (SQLite), a replay (.jsonl, .jsonl.gz), or a
folder holding any of those (its configs and stores, and the folder itself as a replay folder when
it holds replays).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

from referee.web.archive import REPLAY_SUFFIXES, Archive
from referee.web.store_reader import info_from_config, info_from_store, prepare_store

SQLITE_MAGIC = b"SQLite format 3\x00"


class ArchiveError(ValueError):
    """A PATH that is none of the things `tichu web` serves."""


def add_web_arguments(parser: argparse.ArgumentParser) -> None:
    """`tichu web`'s arguments."""
    parser.add_argument(
        "paths",
        nargs="+",
        type=Path,
        metavar="PATH",
        help="a tournament config (.toml), its store (.sqlite) or output folder, a replay folder, "
        "or a replay",
    )
    parser.add_argument(
        "--http",
        default="127.0.0.1:8080",
        metavar="HOST:PORT",
        help="where to serve (default 127.0.0.1:8080; port 0 takes any free port)",
    )
    parser.add_argument(
        "--public-key", type=Path, metavar="KEY.pub", help="check the replays' signatures against this key"
    )


def is_store(path: Path) -> bool:
    """Whether `path` is an SQLite database (a tournament's store, by what it holds)."""
    try:
        with path.open("rb") as file:
            return file.read(16) == SQLITE_MAGIC
    except OSError:
        return False


def _is_replay(path: Path) -> bool:
    return path.is_file() and path.name.endswith(REPLAY_SUFFIXES)


def build_archive(paths: list[Path], public_key: Path | None = None) -> Archive:
    """What the paths hold, ready to serve; ArchiveError names a path that holds nothing to serve."""
    from referee.tournament.config import ConfigError, load_config

    archive = Archive()
    stores: set[Path] = set()

    def add_config(config_path: Path) -> bool:
        try:
            config = load_config(config_path)
        except ConfigError as error:
            raise ArchiveError(str(error)) from None
        if not config.database.exists() or config.database.resolve() in stores:
            return False
        prepare_store(config.database)
        stores.add(config.database.resolve())
        archive.add_tournament(info_from_config(config, public_key))
        return True

    def add_store(store: Path) -> None:
        if store.resolve() in stores:
            return
        prepare_store(store)
        stores.add(store.resolve())
        archive.add_tournament(info_from_store(store, public_key))

    for path in paths:
        if path.is_dir():
            found = False
            for config_path in sorted(path.glob("*.toml")):
                found = add_config(config_path) or found
            for store in sorted(p for p in path.rglob("*") if p.is_file() and p.suffix in (".sqlite", ".db")):
                if is_store(store) and store.resolve() not in stores:
                    add_store(store)
                    found = True
            if any(_is_replay(p) for p in path.iterdir()):
                archive.add_collection(path.resolve().name or str(path), folder=path, public_key=public_key)
                found = True
            if not found:
                raise ArchiveError(f"{path}: holds no tournament (config or store) and no replay")
        elif path.suffix == ".toml":
            if not add_config(path):
                raise ArchiveError(f"{path}: its tournament has no results yet (no store)")
        elif is_store(path):
            add_store(path)
        elif _is_replay(path):
            archive.add_collection(path.name, files=[path], public_key=public_key)
        elif not path.exists():
            raise ArchiveError(f"{path}: no such file or folder")
        else:
            raise ArchiveError(f"{path}: not a tournament config, store, replay folder or replay")
    return archive


def run_web(args: argparse.Namespace) -> int:
    """Serve the paths until interrupted; 2 for a path that holds nothing to serve."""
    from referee.tournament.store import StoreError
    from referee.web.app import create_app, parse_address, serve_app

    try:
        host, port = parse_address(args.http)
        archive = build_archive(list(args.paths), args.public_key)
    except (ArchiveError, StoreError, ValueError) as error:
        print(f"tichu web: {error}", file=sys.stderr)
        return 2
    app = create_app(archive=archive)
    for source in archive.tournaments.values():
        source.figures()  # before the first page: a large store's standings take a while

    async def serve() -> None:
        server = await serve_app(app, host, port)
        print(f"Serving {server.url}{archive.home_url()} (Ctrl-C stops)", flush=True)
        try:
            await asyncio.Event().wait()
        finally:
            await server.stop()

    try:
        asyncio.run(serve())
    except KeyboardInterrupt:
        pass
    except OSError as error:
        print(f"tichu web: {error}", file=sys.stderr)
        return 1
    return 0
