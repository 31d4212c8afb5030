"""The archive's pages and their JSON: finished games, duplicate pairs, tournaments, entrants.

`archive_routes(archive)` gives the routes that `create_app` mounts. Every page has its data under
/api/... (the same figures; docs/web-archive.md lists them). A tournament's pages read its store
through read-only connections (store_reader.py) in the server's thread pool, so that a page never
holds up the runner's event loop; its figures are computed once per change of the store.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

import jinja2
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Route
from starlette.templating import Jinja2Templates

from referee.match.records import ResultRecord, record_from_json
from referee.replay.format import ReplayFormatError, parse_header
from referee.web import figures, store_reader
from referee.web.steps import replay_data
from referee.web.store_reader import GameFilter, GameView, Reader, TournamentInfo

REPLAY_SUFFIXES = (".jsonl", ".jsonl.gz")
# Every template escapes what it prints: names come from bots, entrants and configs.
TEMPLATES = Jinja2Templates(
    env=jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(Path(__file__).parent / "templates")), autoescape=True
    )
)
NO_STORE = {"cache-control": "no-store"}


# ------------------------------------------------------------------------------------------ sources


REFRESH_COST_FACTOR = 10.0
MIN_REFRESH_S = 1.0


@dataclass(frozen=True, slots=True)
class _Cached:
    """Figures computed for one version of the store, when, and what they cost."""

    token: str
    data: dict[str, Any]
    at: float  # time.monotonic() when they were computed
    cost_s: float

    def stale(self, now: float) -> bool:
        """Whether it is time to compute them again (the store has changed since)."""
        return now - self.at >= max(MIN_REFRESH_S, REFRESH_COST_FACTOR * self.cost_s)


@dataclass
class TournamentSource:
    """One tournament the archive serves: what it is, its store's reader, its cached figures."""

    tid: str
    info: TournamentInfo
    reader: Reader = field(init=False)
    _figures: _Cached | None = field(default=None, init=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False)
    _entrants: dict[str, tuple[str, dict[str, Any]]] = field(default_factory=dict, init=False)

    def __post_init__(self) -> None:
        self.reader = Reader(self.info.database)

    def figures(self) -> dict[str, Any]:
        """The tournament's figures, computed again when the store has changed: at most one
        computation at a time, and (while games finish) at most once per REFRESH_COST_FACTOR times
        what the last one cost, so that a large store's figures never take the runner's CPU."""
        db = self.reader.db()
        token = store_reader.version(db)
        cached = self._figures
        if cached is not None and (cached.token == token or not cached.stale(time.monotonic())):
            return cached.data
        if not self._lock.acquire(blocking=cached is None):
            assert cached is not None
            return cached.data  # another thread is computing them: the last ones meanwhile
        try:
            cached = self._figures
            if cached is not None and cached.token == token:
                return cached.data
            started = time.monotonic()
            views = store_reader.all_games(db, self.info.duplicate)
            data = figures.tournament_figures(
                self.info,
                views,
                store_reader.seat_stats(db, exits_only=True),
                store_reader.status_counts(db, self.info.duplicate),
                store_reader.run_state(db),
            )
            data["version"] = token
            done = time.monotonic()
            self._figures = _Cached(token, data, done, done - started)
            return data
        finally:
            self._lock.release()

    def entrant_figures(self, entrant: str) -> dict[str, Any]:
        """An entrant's figures (the entrant page's), computed again only when the store has changed."""
        db = self.reader.db()
        token = store_reader.version(db)
        cached = self._entrants.get(entrant)
        if cached is not None and cached[0] == token:
            return cached[1]
        views = store_reader.all_games(db, self.info.duplicate)
        data = figures.entrant_figures(self.info, entrant, views, store_reader.seat_stats(db, entrant))
        data["version"] = token
        self._entrants[entrant] = (token, data)
        return data

    def replay_path(self, view: GameView) -> Path | None:
        """The published replay of a game: in replay_dir, once its board is over; else None."""
        row = view.row
        if not view.published or not row.finished or not row.match_id:
            return None
        candidates = []
        if row.replay_path:
            candidates.append(Path(row.replay_path))
        if self.info.replay_dir is not None:
            candidates += [self.info.replay_dir / f"{row.match_id}{suffix}" for suffix in REPLAY_SUFFIXES]
        return next((path for path in candidates if path.is_file()), None)


@dataclass
class ReplayCollection:
    """Replay files the archive serves: a folder's (read again on each listing) or named ones."""

    cid: str
    title: str
    folder: Path | None = None
    files: tuple[Path, ...] = ()
    public_key: Path | None = None

    def paths(self) -> dict[str, Path]:
        """Each replay by its name in URLs (the file name without .jsonl / .jsonl.gz)."""
        found = list(self.files)
        if self.folder is not None and self.folder.is_dir():
            found += sorted(
                p for p in self.folder.iterdir() if p.is_file() and p.name.endswith(REPLAY_SUFFIXES)
            )
        return {_stem(p): p for p in found}


@dataclass
class Archive:
    """What `tichu web` (or a live tournament) serves."""

    tournaments: dict[str, TournamentSource] = field(default_factory=dict)
    collections: dict[str, ReplayCollection] = field(default_factory=dict)
    live: bool = False  # served beside a referee's live matches (its pages link to them)

    def add_tournament(self, info: TournamentInfo) -> TournamentSource:
        """Serve a tournament; its source (the id in its URLs is its name, made unique)."""
        tid = _unique(_slug(info.name), self.tournaments)
        source = TournamentSource(tid, info)
        self.tournaments[tid] = source
        return source

    def add_collection(
        self,
        title: str,
        folder: Path | None = None,
        files: Sequence[Path] = (),
        public_key: Path | None = None,
    ) -> ReplayCollection:
        """Serve a folder of replays, or some replay files."""
        cid = _unique(_slug(title), self.collections)
        collection = ReplayCollection(cid, title, folder, tuple(files), public_key)
        self.collections[cid] = collection
        return collection

    def home_url(self) -> str:
        """The page to open first: the one tournament, the one replay, or the archive's index."""
        if len(self.tournaments) == 1 and not self.collections:
            return f"/tournaments/{next(iter(self.tournaments))}"
        if len(self.collections) == 1 and not self.tournaments:
            collection = next(iter(self.collections.values()))
            paths = collection.paths()
            if collection.folder is None and len(paths) == 1:
                return f"/replays/{collection.cid}/{quote(next(iter(paths)))}"
            return f"/replays/{collection.cid}"
        return "/archive"


def _stem(path: Path) -> str:
    name = path.name
    for suffix in REPLAY_SUFFIXES:
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-") or "archive"


def _unique(slug: str, taken: dict[str, Any]) -> str:
    name, n = slug, 2
    while name in taken:
        name, n = f"{slug}-{n}", n + 1
    return name


# ------------------------------------------------------------------------------------------ helpers


def _int(request: Request, name: str, default: int) -> int:
    value = request.query_params.get(name, "")
    return int(value) if value.isdigit() and len(value) < 10 else default


def _selection(request: Request, info: TournamentInfo) -> tuple[GameFilter, dict[str, str]]:
    """The game list's filter from the query (entrant, status, forfeit), and the query kept."""
    entrant = request.query_params.get("entrant", "")
    status = request.query_params.get("status", "")
    forfeit = request.query_params.get("forfeit", "") in ("1", "on", "true")
    if entrant and entrant not in info.entrants:
        entrant = ""
    if status not in store_reader.GAME_STATUSES:
        status = ""
    teams = tuple(info.teams_of(entrant)) if entrant else ()
    kept = {
        k: v for k, v in (("entrant", entrant), ("status", status), ("forfeit", "1" if forfeit else "")) if v
    }
    return GameFilter(teams=teams, status=status, forfeit=forfeit), kept


def _tournament(archive: Archive, request: Request) -> TournamentSource:
    source = archive.tournaments.get(request.path_params["tid"])
    if source is None:
        raise HTTPException(404, "no such tournament here")
    return source


def _game_json(source: TournamentSource, view: GameView) -> dict[str, Any]:
    base = f"/tournaments/{source.tid}"
    data = view.to_json()
    published = source.replay_path(view) is not None
    data["url"] = f"{base}/games/{quote(view.row.game_id)}"
    data["board_url"] = (
        f"{base}/boards/{view.row.pairing}/{view.row.board}" if source.info.duplicate else None
    )
    data["replay_published"] = published
    data["steps_url"] = f"/api{base}/games/{quote(view.row.game_id)}/steps" if published else None
    data["download_url"] = f"{base}/games/{quote(view.row.game_id)}/replay" if published else None
    return data


def _games_json(
    source: TournamentSource, page: store_reader.GamePage, kept: dict[str, str]
) -> dict[str, Any]:
    def link(number: int) -> str:
        return "?" + urlencode({**kept, "page": str(number)})

    return {
        "games": [_game_json(source, view) for view in page.games],
        "total": page.total,
        "page": page.page,
        "pages": page.pages,
        "per_page": page.per_page,
        "filter": kept,
        "previous": link(page.page - 1) if page.page > 1 else None,
        "next": link(page.page + 1) if page.page < page.pages else None,
    }


def _page(archive: Archive, request: Request, template: str, context: dict[str, Any]) -> Response:
    return TEMPLATES.TemplateResponse(request, f"archive/{template}", {**context, "live": archive.live})


def _embed(data: Any) -> str:
    """JSON for a <script type="application/json"> element: no `</script>` can end it early."""
    return json.dumps(data, separators=(",", ":")).replace("<", "\\u003c")


# ------------------------------------------------------------------------------------------ routes


def archive_routes(archive: Archive) -> list[BaseRoute]:
    """The archive's pages and JSON API."""

    async def index(request: Request) -> Response:
        return _page(archive, request, "index.html", {"archive": _index_json(archive)})

    async def index_api(request: Request) -> Response:
        return JSONResponse(_index_json(archive))

    async def tournament_data(request: Request) -> dict[str, Any]:
        source = _tournament(archive, request)
        selection, kept = _selection(request, source.info)
        page = _int(request, "page", 1)

        def read() -> dict[str, Any]:
            data = dict(source.figures())
            db = source.reader.db()
            # The counts are read afresh on every request: the figures may lag a large store's.
            data["progress"] = figures.progress(
                store_reader.status_counts(db, source.info.duplicate), store_reader.run_state(db)
            )
            data["version"] = store_reader.version(db)
            games = store_reader.game_page(db, source.info.duplicate, selection, page)
            failures, failures_total = store_reader.failures(db)
            skipped, skipped_total = store_reader.skipped(db)
            data["games"] = _games_json(source, games, kept)
            data["failures"] = {"total": failures_total, "latest": [f.to_json() for f in failures]}
            data["skipped"] = {
                "total": skipped_total,
                "latest": [{"game_id": g, "reason": why} for g, why in skipped],
            }
            data["entrants"] = [
                {"name": name, "url": f"/tournaments/{source.tid}/entrants/{quote(name)}"}
                for name in source.info.entrants
            ]
            data["url"] = f"/tournaments/{source.tid}"
            return data

        return await run_in_threadpool(read)

    async def tournament(request: Request) -> Response:
        data = await tournament_data(request)
        source = _tournament(archive, request)
        return _page(
            archive,
            request,
            "tournament.html",
            {
                "t": data,
                "tid": source.tid,
                "charts": _embed(data["series"]),
                "statuses": store_reader.GAME_STATUSES,
            },
        )

    async def tournament_api(request: Request) -> Response:
        return JSONResponse(await tournament_data(request), headers=NO_STORE)

    async def games_api(request: Request) -> Response:
        source = _tournament(archive, request)
        selection, kept = _selection(request, source.info)
        page = _int(request, "page", 1)
        per_page = _int(request, "per_page", store_reader.PAGE_SIZE)

        def read() -> dict[str, Any]:
            db = source.reader.db()
            games = store_reader.game_page(db, source.info.duplicate, selection, page, per_page)
            return _games_json(source, games, kept)

        return JSONResponse(await run_in_threadpool(read), headers=NO_STORE)

    async def version_api(request: Request) -> Response:
        source = _tournament(archive, request)
        token = await run_in_threadpool(lambda: store_reader.version(source.reader.db()))
        return JSONResponse({"version": token}, headers=NO_STORE)

    async def entrant_data(request: Request) -> dict[str, Any]:
        source = _tournament(archive, request)
        name = request.path_params["entrant"]
        if name not in source.info.entrants:
            raise HTTPException(404, "no such entrant in this tournament")
        page = _int(request, "page", 1)
        selection = GameFilter(teams=tuple(source.info.teams_of(name)))

        def read() -> dict[str, Any]:
            data = dict(source.entrant_figures(name))
            games = store_reader.game_page(source.reader.db(), source.info.duplicate, selection, page)
            data["games"] = _games_json(source, games, {})
            data["tournament"] = {"name": source.info.name, "url": f"/tournaments/{source.tid}"}
            data["against"] = [
                {**row, "url": f"/tournaments/{source.tid}/entrants/{quote(row['opponent'])}"}
                for row in data["against"]
            ]
            return data

        return await run_in_threadpool(read)

    async def entrant(request: Request) -> Response:
        data = await entrant_data(request)
        return _page(archive, request, "entrant.html", {"e": data, "tid": _tournament(archive, request).tid})

    async def entrant_api(request: Request) -> Response:
        return JSONResponse(await entrant_data(request), headers=NO_STORE)

    def _find_game(request: Request) -> tuple[TournamentSource, GameView]:
        source = _tournament(archive, request)
        view = store_reader.game(source.reader.db(), source.info.duplicate, request.path_params["game_id"])
        if view is None:
            raise HTTPException(404, "no such game in this tournament")
        return source, view

    async def game_page(request: Request) -> Response:
        source, view = await run_in_threadpool(_find_game, request)
        data = _game_json(source, view)
        public = request.query_params.get("view") == "public"
        steps = data["steps_url"] and (data["steps_url"] + ("?view=public" if public else ""))
        return _page(
            archive,
            request,
            "game.html",
            {
                "title": f"Game {view.row.game_id}",
                "game": data,
                "steps_url": steps,
                "download_url": data["download_url"],
                "public": public,
                "crumbs": [(source.info.name, f"/tournaments/{source.tid}")],
                "view_links": bool(data["steps_url"]),
            },
        )

    async def game_api(request: Request) -> Response:
        source, view = await run_in_threadpool(_find_game, request)
        return JSONResponse(_game_json(source, view), headers=NO_STORE)

    async def game_steps_api(request: Request) -> Response:
        source, view = await run_in_threadpool(_find_game, request)
        path = source.replay_path(view)
        if path is None:
            raise HTTPException(404, "this game's replay is not published")
        public = request.query_params.get("view") == "public"
        return await _steps_response(path, source.info.public_key, public)

    async def game_download(request: Request) -> Response:
        source, view = await run_in_threadpool(_find_game, request)
        path = source.replay_path(view)
        if path is None:
            raise HTTPException(404, "this game's replay is not published")
        return FileResponse(path, filename=path.name, media_type="application/octet-stream")

    async def board_data(request: Request) -> tuple[TournamentSource, dict[str, Any]]:
        source = _tournament(archive, request)
        pairing, number = request.path_params["pairing"], request.path_params["board"]
        views = await run_in_threadpool(
            lambda: store_reader.board(source.reader.db(), source.info.duplicate, pairing, number)
        )
        if not views:
            raise HTTPException(404, "no such board in this tournament")
        first, second = source.info.pairing_firsts.get(pairing, ("", ""))
        return source, {
            "pairing": pairing,
            "board": number,
            "teams": [first, second],
            "tables": [_game_json(source, view) for view in views],
            "tournament": {"name": source.info.name, "url": f"/tournaments/{source.tid}"},
        }

    async def board(request: Request) -> Response:
        source, data = await board_data(request)
        return _page(
            archive,
            request,
            "pair.html",
            {"b": data, "crumbs": [(source.info.name, f"/tournaments/{source.tid}")]},
        )

    async def board_api(request: Request) -> Response:
        _, data = await board_data(request)
        return JSONResponse(data, headers=NO_STORE)

    def _collection(request: Request) -> ReplayCollection:
        collection = archive.collections.get(request.path_params["cid"])
        if collection is None:
            raise HTTPException(404, "no such replay folder here")
        return collection

    def _replay_file(request: Request) -> tuple[ReplayCollection, str, Path]:
        collection = _collection(request)
        name = request.path_params["name"]
        path = collection.paths().get(name)
        if path is None:
            raise HTTPException(404, "no such replay here")
        return collection, name, path

    async def collection_page(request: Request) -> Response:
        collection = _collection(request)
        listing = await run_in_threadpool(_listing, collection)
        return _page(archive, request, "replays.html", {"c": listing})

    async def collection_api(request: Request) -> Response:
        return JSONResponse(await run_in_threadpool(_listing, _collection(request)), headers=NO_STORE)

    async def replay_page(request: Request) -> Response:
        collection, name, _ = _replay_file(request)
        public = request.query_params.get("view") == "public"
        base = f"/replays/{collection.cid}/{quote(name)}"
        return _page(
            archive,
            request,
            "game.html",
            {
                "title": f"Replay {name}",
                "game": None,
                "steps_url": f"/api{base}/steps" + ("?view=public" if public else ""),
                "download_url": f"{base}/download",
                "public": public,
                "crumbs": [(collection.title, f"/replays/{collection.cid}")],
                "view_links": True,
            },
        )

    async def replay_steps(request: Request) -> Response:
        collection, _, path = _replay_file(request)
        return await _steps_response(
            path, collection.public_key, request.query_params.get("view") == "public"
        )

    async def replay_download(request: Request) -> Response:
        _, _, path = _replay_file(request)
        return FileResponse(path, filename=path.name, media_type="application/octet-stream")

    t = "/tournaments/{tid}"
    return [
        Route("/archive", index),
        Route("/api/archive", index_api),
        Route(t, tournament),
        Route(f"/api{t}", tournament_api),
        Route(f"/api{t}/games", games_api),
        Route(f"/api{t}/version", version_api),
        Route(t + "/entrants/{entrant}", entrant),
        Route("/api" + t + "/entrants/{entrant}", entrant_api),
        Route(t + "/games/{game_id}", game_page),
        Route("/api" + t + "/games/{game_id}", game_api),
        Route("/api" + t + "/games/{game_id}/steps", game_steps_api),
        Route(t + "/games/{game_id}/replay", game_download),
        Route(t + "/boards/{pairing:int}/{board:int}", board),
        Route("/api" + t + "/boards/{pairing:int}/{board:int}", board_api),
        Route("/replays/{cid}", collection_page),
        Route("/api/replays/{cid}", collection_api),
        Route("/replays/{cid}/{name}", replay_page),
        Route("/api/replays/{cid}/{name}/steps", replay_steps),
        Route("/replays/{cid}/{name}/download", replay_download),
    ]


def home_route(archive: Archive) -> Route:
    """`/`: to the page to open first (for `tichu web`, which serves no live matches)."""

    async def home(request: Request) -> Response:
        return RedirectResponse(archive.home_url(), status_code=307)

    return Route("/", home)


async def _steps_response(path: Path, public_key: Path | None, public: bool) -> Response:
    try:
        data = await run_in_threadpool(replay_data, path, public_key, public)
    except (OSError, ReplayFormatError) as error:
        return JSONResponse({"error": f"cannot read the replay: {error}"}, status_code=422)
    return JSONResponse(data)


def _index_json(archive: Archive) -> dict[str, Any]:
    return {
        "tournaments": [
            {
                "id": s.tid,
                "name": s.info.name,
                "url": f"/tournaments/{s.tid}",
                "api": f"/api/tournaments/{s.tid}",
            }
            for s in archive.tournaments.values()
        ],
        "replays": [
            {"id": c.cid, "title": c.title, "url": f"/replays/{c.cid}", "api": f"/api/replays/{c.cid}"}
            for c in archive.collections.values()
        ],
    }


def _listing(collection: ReplayCollection) -> dict[str, Any]:
    """A replay folder's games: each file's match, players and result, read from its first and last lines."""
    games = []
    for name, path in collection.paths().items():
        entry: dict[str, Any] = {
            "name": name,
            "file": path.name,
            "url": f"/replays/{collection.cid}/{quote(name)}",
            "api": f"/api/replays/{collection.cid}/{quote(name)}/steps",
        }
        entry.update(_summary(path))
        games.append(entry)
    return {"id": collection.cid, "title": collection.title, "games": games}


def _summary(path: Path) -> dict[str, Any]:
    """The match id, the seats' bot names and the result of a replay file, or why it cannot be read."""
    import gzip

    try:
        opener = gzip.open if path.name.endswith(".gz") else open
        with opener(path, "rb") as file:
            first = file.readline(1_000_000)
            last = b""
            for line in file:
                last = line
        header = parse_header(first, str(path))
    except (OSError, ReplayFormatError) as error:
        return {"error": str(error)}
    result = ""
    try:
        record = record_from_json(json.loads(last)) if last else None
        if isinstance(record, ResultRecord):
            result = record.outcome.reason
    except (ValueError, UnicodeDecodeError):  # not JSON, or not a record (RecordError)
        pass
    return {
        "match_id": header.match_id,
        "players": [seat.bot_name for seat in header.seats],
        "created_at": header.created_at,
        "result": result or "unfinished",
    }
