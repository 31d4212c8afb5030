"""The web application: pages and a JSON API over the referee's front door, served by uvicorn in
the referee's own event loop (`tichu serve --http HOST:PORT`).

The live pages are spectators like any other: a match's event stream is `Table.watch(full=False)`,
the public view the Watch RPC gives (the spectator delay and the redaction included), sent to the
browser as server-sent events. No second path into a match exists here, and nothing this module
sends names a seat token, a key or a seed. Every string a bot or a config supplies reaches a page
as text: Jinja2 escapes it in the templates, and the scripts only ever set `textContent`.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import json
import secrets
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import uvicorn
from jinja2 import Environment, FileSystemLoader, select_autoescape
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import MutableHeaders
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response, StreamingResponse
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from referee import __version__
from referee.arena.view import ArenaView
from referee.match import MatchResult
from referee.match.messages import LogEntry, SeatClock
from referee.server.front import MATCH_ID, MatchEntry, Referee
from referee.web.archive import Archive, archive_routes, home_route
from referee.web.relay import SEAT_PAGE_PATH, SEAT_SOCKET_PATH, SeatRelay
from referee.web.seat import MAX_PAGE_MESSAGE_BYTES

HERE = Path(__file__).parent
# No inline script or style, nothing from another origin: a name a bot chose cannot run.
CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
SECURITY_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "Cross-Origin-Opener-Policy": "same-origin",
}
STATIC_MAX_AGE_S = 3600
# Live streams at once, per client address and in all: a page holds one.
MAX_STREAMS_PER_CLIENT = 16
MAX_STREAMS = 2_000
# A stream writes at most this often: what the match did meanwhile goes in the next write.
COALESCE_S = 0.25
# A stream sends a comment line this often while the match is quiet, so that proxies keep it.
KEEPALIVE_S = 15.0
# The home page lists at most this many finished matches, the newest first.
RECENT_FINISHED = 50
SESSION_COOKIE = "tichu_session"
OWNER_COOKIE = "tichu_owner"  # a bot owner's session in an arena (signed in with the bot's key)
# Who an organiser session belongs to (a bot owner's holds the bot's name, in its own Sessions).
ORGANISER = "organiser"
SESSION_TTL_S = 12 * 3600
MAX_SESSIONS = 1_000
MAX_FORM_BYTES = 4_096  # the sign-in form: a token of a few dozen characters


class Sessions:
    """Signed-in sessions: random ids (the cookie) that map to who signed in (the organiser, or a
    bot's owner by the bot's name) and when they expire, kept in memory only, so a restart signs
    everybody out; the oldest go first past MAX_SESSIONS."""

    def __init__(self, now: Callable[[], float] = time.monotonic) -> None:
        self._now = now
        self._open: dict[str, tuple[str, float]] = {}

    def open(self, who: str) -> str:
        """A new session of `who`; its id."""
        now = self._now()
        self._open = {sid: held for sid, held in self._open.items() if held[1] > now}
        while len(self._open) >= MAX_SESSIONS:
            del self._open[next(iter(self._open))]
        sid = secrets.token_urlsafe(32)
        self._open[sid] = (who, now + SESSION_TTL_S)
        return sid

    def holder(self, sid: str | None) -> str | None:
        """Who holds session `sid`, unless it expired (or never was)."""
        # One dict lookup by a 256-bit random key: nothing to learn from its timing.
        held = self._open.get(sid or "")
        return held[0] if held is not None and held[1] > self._now() else None

    def close(self, sid: str | None) -> None:
        """End a session."""
        self._open.pop(sid or "", None)


@dataclass(frozen=True, slots=True)
class MatchView:
    """What a page or the API shows of a match: nothing secret."""

    match_id: str
    status: str
    players: tuple[str, ...]
    connected: tuple[bool, ...]
    scores: tuple[int, int]
    round: int
    winner: int | None  # 0 or 1 once a team won; None for a draw and until the end
    reason: str

    @classmethod
    def of(cls, entry: MatchEntry) -> MatchView:
        """The view of one match as it stands."""
        table = entry.table
        seats = table.seat_info()
        result = table.result
        winner = None if result is None else result.winner
        scores = table.state.scores
        return cls(
            match_id=table.match_id,
            status=table.status,
            players=tuple(seat.bot_name for seat in seats),
            connected=tuple(seat.connected for seat in seats),
            scores=(scores[0], scores[1]),
            round=table.state.round,
            winner=winner,
            reason="" if result is None else result.reason,
        )

    def to_json(self, base: str = "") -> dict[str, Any]:
        """The API's form, with the URL of the match's page."""
        return {
            "match_id": self.match_id,
            "status": self.status,
            "players": list(self.players),
            "connected": list(self.connected),
            "scores": list(self.scores),
            "round": self.round,
            "winner": self.winner,
            "reason": self.reason,
            "url": f"{base}/matches/{self.match_id}",
        }


class _SecurityHeaders:
    """Adds SECURITY_HEADERS to every HTTP response (plain ASGI: a live page's stream passes
    through untouched, with no task or queue per chunk)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for name, value in SECURITY_HEADERS.items():
                    headers.setdefault(name, value)
            await send(message)

        await self.app(scope, receive, send_with_headers)


class _CachedStatic(StaticFiles):
    """The assets, with a cache lifetime: they change only with a release."""

    def file_response(self, *args: Any, **kwargs: Any) -> Response:
        response = super().file_response(*args, **kwargs)
        response.headers["Cache-Control"] = f"public, max-age={STATIC_MAX_AGE_S}"
        return response


class _StreamSlots:
    """Counts open live streams per client address and in all, and refuses one past the limits."""

    def __init__(self, per_client: int, total: int) -> None:
        self.per_client = per_client
        self.total = total
        self._open: Counter[str] = Counter()

    @contextlib.contextmanager
    def take(self, client: str) -> Iterator[bool]:
        """Yields whether a slot was free (and holds it until the block ends)."""
        free = self._open[client] < self.per_client and sum(self._open.values()) < self.total
        if free:
            self._open[client] += 1
        try:
            yield free
        finally:
            if free:
                self._open[client] -= 1
                if not self._open[client]:
                    del self._open[client]


def _views(front: Referee) -> tuple[list[MatchView], list[MatchView]]:
    """The live matches (waiting or running) and the latest finished ones, newest first."""
    live: list[MatchView] = []
    finished: list[MatchView] = []
    for entry in front:
        view = MatchView.of(entry)
        (finished if view.status == "finished" else live).append(view)
    return live, finished[::-1][:RECENT_FINISHED]


def _same_origin(request: Request) -> bool:
    """Whether a form was posted from this site's own pages, as the browser tells: its
    Sec-Fetch-Site, else its Origin. A client that is no browser sends neither, and cannot be
    made to post by another site, so it passes."""
    site = request.headers.get("sec-fetch-site")
    if site is not None:
        return site in ("same-origin", "none")  # "none": the user's own action (typed, bookmarked)
    origin = request.headers.get("origin")
    return origin is None or origin == f"{request.url.scheme}://{request.url.netloc}"


async def _bounded_body(request: Request, most: int) -> bytes:
    """The request's body, or b"" when it is longer than `most` bytes (read no further)."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > most:
        return b""
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > most:
            return b""
    return body


def _signed_in(request: Request, to: str, cookie: str, sid: str) -> Response:
    """A redirect to `to` that sets a session's cookie: HTTP only, same site, secure over HTTPS."""
    response = RedirectResponse(to, status_code=303)
    secure = request.url.scheme == "https"
    response.set_cookie(
        cookie, sid, max_age=SESSION_TTL_S, httponly=True, samesite="strict", secure=secure, path="/"
    )
    return response


def _sse(kind: str, data: dict[str, Any]) -> str:
    """One server-sent event; JSON never holds a raw line break, so one data line suffices."""
    return f"event: {kind}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n"


def _sse_item(item: LogEntry | MatchResult) -> str:
    """One event of the match (its JSON as the match made it, not parsed again per viewer), or
    the result."""
    if isinstance(item, MatchResult):
        return _sse("result", _result_json(item))
    return f'event: event\ndata: {{"v":{item.state_version},"event":{item.json}}}\n\n'


def _clock_json(clock: SeatClock) -> dict[str, Any]:
    return {
        "seat": clock.seat,
        "kind": clock.kind,
        "used_s": round(clock.used_s, 2),
        "limit_s": clock.limit_s,
        "bank_s": round(clock.bank_s, 2),
    }


def _result_json(result: MatchResult) -> dict[str, Any]:
    return {
        "winner": result.winner,
        "termination": result.outcome.termination.value,
        "scores": list(result.scores),
        "reason": result.reason,
        "forfeiting_team": result.forfeiting_team,
        "hands": result.hands,
    }


TournamentSource = Callable[[], dict[str, Any]]


def create_app(
    front: Referee | None = None,
    *,
    title: str = "Tichu Referee",
    tournament: TournamentSource | None = None,
    archive: Archive | None = None,
    seats: SeatRelay | None = None,
    arena: ArenaView | None = None,
) -> Starlette:
    """The web application over a referee's matches (and the tournament it plays, if given:
    a function that returns its standings, progress and games as referee.tournament.web does),
    over finished work (`archive`: stores and replay folders), with or without a referee, and
    the seat page a person plays from (`seats`: the relay to the referee's Play stream), and an
    arena's leaderboards and bots' pages (`arena`)."""
    templates = Environment(
        loader=FileSystemLoader(HERE / "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        auto_reload=False,
    )
    slots = _StreamSlots(MAX_STREAMS_PER_CLIENT, MAX_STREAMS)
    sessions = Sessions()

    def organiser(request: Request) -> bool:
        return sessions.holder(request.cookies.get(SESSION_COOKIE)) == ORGANISER

    def page(request: Request, name: str, status_code: int = 200, **context: Any) -> HTMLResponse:
        body = templates.get_template(name).render(
            title=title,
            version=__version__,
            organiser=organiser(request),
            tournament_page=tournament is not None,
            archive_page=archive is not None,
            arena_page=arena is not None,
            **context,
        )
        return HTMLResponse(body, status_code=status_code)

    async def not_found(request: Request, error: Exception) -> Response:
        return page(request, "missing.html", status_code=404, match_id="")

    def live_routes(front: Referee) -> list[BaseRoute]:
        """The live matches' pages, their API and the organiser's sign-in."""

        def entry_of(request: Request) -> MatchEntry | None:
            match_id = str(request.path_params["match_id"])
            return front.entry(match_id) if MATCH_ID.fullmatch(match_id) else None

        async def home(request: Request) -> Response:
            live, finished = _views(front)
            return page(request, "home.html", live=live, finished=finished)

        async def api_matches(request: Request) -> Response:
            live, finished = _views(front)
            return JSONResponse(
                {"live": [v.to_json() for v in live], "finished": [v.to_json() for v in finished]}
            )

        async def api_match(request: Request) -> Response:
            entry = entry_of(request)
            if entry is None:
                return JSONResponse({"error": "no such match"}, status_code=404)
            view = MatchView.of(entry)
            header = entry.table.match.header
            return JSONResponse(
                {**view.to_json(), "players_count": header.config.players, "config": header.config.to_json()}
            )

        async def match_page(request: Request) -> Response:
            entry = entry_of(request)
            if entry is None:
                return page(
                    request,
                    "missing.html",
                    status_code=404,
                    match_id=str(request.path_params["match_id"])[:64],
                )
            full = organiser(request)
            return page(
                request, "match.html", match=MatchView.of(entry), players_count=entry.table.players, full=full
            )

        async def match_events(request: Request) -> Response:
            entry = entry_of(request)
            if entry is None:
                return JSONResponse({"error": "no such match"}, status_code=404)
            client = request.client.host if request.client else "?"
            table = entry.table
            # The organiser sees every event at once, hands included; anyone else the public view.
            full = organiser(request)

            async def stream() -> AsyncIterator[str]:
                with slots.take(client) as free:
                    if not free:
                        yield _sse("refused", {"why": "too many live pages open from this address"})
                        return
                    names = [seat.bot_name for seat in table.seat_info()]
                    yield _sse("seats", {"players": names, "count": table.players, "full": full})
                    batches = table.watch_batches(full=full)
                    following: asyncio.Future[list[LogEntry | MatchResult]] | None = None
                    try:
                        while True:
                            # The same pending step across keep-alives: a timeout must not cancel
                            # (and so end) the match's view.
                            following = following or asyncio.ensure_future(anext(batches))
                            done, _ = await asyncio.wait({following}, timeout=KEEPALIVE_S)
                            if not done:
                                yield ": still here\n\n"
                                continue
                            step, following = following, None
                            try:
                                batch = step.result()
                            except StopAsyncIteration:
                                yield _sse("end", {})
                                return
                            # One write for everything the match did since the last one: a busy
                            # table changes hundreds of times a second, a viewer needs a few.
                            clocks = [_clock_json(c) for c in table.clocks(full)]
                            yield "".join(_sse_item(i) for i in batch) + _sse("clock", {"clocks": clocks})
                            await asyncio.sleep(COALESCE_S)
                    finally:
                        if following is not None:
                            following.cancel()

            headers = {"Cache-Control": "no-store", "X-Accel-Buffering": "no"}
            return StreamingResponse(stream(), media_type="text/event-stream", headers=headers)

        async def tournament_page(request: Request) -> Response:
            if tournament is None:
                return page(request, "missing.html", status_code=404, match_id="")
            return page(request, "tournament.html", data=tournament())

        async def api_tournament(request: Request) -> Response:
            if tournament is None:
                return JSONResponse({"error": "this server plays no tournament"}, status_code=404)
            return JSONResponse(tournament())

        async def sign_in_page(request: Request) -> Response:
            return page(request, "sign_in.html", failed=False)

        async def sign_in(request: Request) -> Response:
            if not _same_origin(request):
                return page(
                    request, "sign_in.html", status_code=403, failed=True, why="a form from another site"
                )
            body = await _bounded_body(request, MAX_FORM_BYTES)
            token = (parse_qs(body.decode("utf-8", "replace")).get("token") or [""])[0].strip()
            if not token or not hmac.compare_digest(token.encode(), front.organiser_token):
                return page(
                    request, "sign_in.html", status_code=403, failed=True, why="not the organiser token"
                )
            return _signed_in(request, "/", SESSION_COOKIE, sessions.open(ORGANISER))

        async def sign_out(request: Request) -> Response:
            if _same_origin(request):
                sessions.close(request.cookies.get(SESSION_COOKIE))
            response = RedirectResponse("/", status_code=303)
            response.delete_cookie(SESSION_COOKIE, path="/")
            return response

        return [
            Route("/", home),
            Route("/sign-in", sign_in_page, methods=["GET"]),
            Route("/sign-in", sign_in, methods=["POST"]),
            Route("/sign-out", sign_out, methods=["POST"]),
            Route("/api/matches", api_matches),
            Route("/tournament", tournament_page),
            Route("/api/tournament", api_tournament),
            Route("/api/matches/{match_id}", api_match),
            Route("/matches/{match_id}", match_page),
            Route("/matches/{match_id}/events", match_events),
        ]

    async def seat_page(request: Request) -> Response:
        # The page reads its seat token from the link's fragment; nothing of it is cached.
        response = page(request, "seat/seat.html", socket_path=SEAT_SOCKET_PATH)
        response.headers["Cache-Control"] = "no-store"
        return response

    def arena_routes(view: ArenaView) -> list[BaseRoute]:
        """The arena's leaderboards and bots' pages, and their JSON."""

        async def leaderboard(request: Request) -> Response:
            data = await run_in_threadpool(view.leaderboards)
            return page(request, "arena/leaderboard.html", data=data)

        async def leaderboard_api(request: Request) -> Response:
            return JSONResponse(
                await run_in_threadpool(view.leaderboards), headers={"Cache-Control": "no-store"}
            )

        async def bot_page(request: Request) -> Response:
            bot = await run_in_threadpool(view.bot, str(request.path_params["name"])[:64])
            if bot is None:
                return page(request, "missing.html", status_code=404, match_id="")
            return page(request, "arena/bot.html", bot=bot)

        async def bot_api(request: Request) -> Response:
            bot = await run_in_threadpool(view.bot, str(request.path_params["name"])[:64])
            if bot is None:
                return JSONResponse({"error": "no such bot"}, status_code=404)
            return JSONResponse(bot, headers={"Cache-Control": "no-store"})

        owners = Sessions()

        def owned(request: Request) -> str | None:
            return owners.holder(request.cookies.get(OWNER_COOKIE))

        async def mine(request: Request) -> Response:
            name = owned(request)
            if name is None:
                return page(request, "arena/owner_sign_in.html", why="")
            data = await run_in_threadpool(view.owner, name)
            response = page(request, "arena/owner.html", bot=data)
            response.headers["Cache-Control"] = "no-store"
            return response

        async def mine_api(request: Request) -> Response:
            name = owned(request)
            if name is None:
                return JSONResponse({"error": "sign in with the bot's key at /arena/mine"}, status_code=401)
            return JSONResponse(
                await run_in_threadpool(view.owner, name), headers={"Cache-Control": "no-store"}
            )

        async def mine_sign_in(request: Request) -> Response:
            if not _same_origin(request):
                return page(
                    request, "arena/owner_sign_in.html", status_code=403, why="a form from another site"
                )
            body = await _bounded_body(request, MAX_FORM_BYTES)
            key = (parse_qs(body.decode("utf-8", "replace")).get("key") or [""])[0].strip()
            name = await run_in_threadpool(view.owner_of, key) if key else None
            if name is None:
                return page(
                    request, "arena/owner_sign_in.html", status_code=403, why="not a key of this arena"
                )
            return _signed_in(request, "/arena/mine", OWNER_COOKIE, owners.open(name))

        async def mine_sign_out(request: Request) -> Response:
            if _same_origin(request):
                owners.close(request.cookies.get(OWNER_COOKIE))
            response = RedirectResponse("/arena", status_code=303)
            response.delete_cookie(OWNER_COOKIE, path="/")
            return response

        return [
            Route("/arena", leaderboard),
            Route("/api/arena/leaderboard", leaderboard_api),
            Route("/arena/bots/{name}", bot_page),
            Route("/api/arena/bots/{name}", bot_api),
            Route("/arena/mine", mine, methods=["GET"]),
            Route("/arena/mine", mine_sign_in, methods=["POST"]),
            Route("/arena/mine/sign-out", mine_sign_out, methods=["POST"]),
            Route("/api/arena/mine", mine_api),
        ]

    routes: list[BaseRoute] = []
    if front is not None:
        routes += live_routes(front)
    if seats is not None:
        routes += [Route(SEAT_PAGE_PATH, seat_page, methods=["GET"]), *seats.routes()]
    if arena is not None:
        routes += arena_routes(arena)
    if archive is not None:
        archive.live = front is not None
        routes += archive_routes(archive)
        if front is None:
            routes.append(home_route(archive))
    routes.append(Mount("/static", app=_CachedStatic(directory=HERE / "static"), name="static"))
    return Starlette(
        routes=routes,
        middleware=[Middleware(_SecurityHeaders)],
        exception_handlers={404: not_found},
    )


class _InLoopServer(uvicorn.Server):
    """uvicorn in the caller's event loop, leaving the process's signals to the caller."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


@dataclass
class RunningWeb:
    """A started web face: its URL, and how to stop it."""

    url: str
    server: uvicorn.Server
    task: asyncio.Task[None]
    seats: SeatRelay | None = None

    async def stop(self) -> None:
        """Close the listening socket, the open pages' streams and the seat pages' channel."""
        self.server.should_exit = True
        self.server.force_exit = True  # live streams never end by themselves
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.wait_for(self.task, 10)
        if self.seats is not None:
            await self.seats.close()


async def start_web(
    front: Referee | None,
    host: str = "127.0.0.1",
    port: int = 0,
    *,
    tournament: TournamentSource | None = None,
    archive: Archive | None = None,
    seats: SeatRelay | None = None,
    arena: ArenaView | None = None,
) -> RunningWeb:
    """Serve the web face on host:port (0: a free port) in this event loop; it runs until stopped
    (a seat relay given is closed with it)."""
    app = create_app(front, tournament=tournament, archive=archive, seats=seats, arena=arena)
    web = await serve_app(app, host, port)
    web.seats = seats
    return web


async def serve_app(app: ASGIApp, host: str = "127.0.0.1", port: int = 0) -> RunningWeb:
    """Serve an ASGI app with uvicorn in this event loop (the process keeps its signals); OSError
    when the address cannot be had."""
    # The seat page's socket: websockets' sans-I/O protocol (its older one is deprecated), with
    # the relay's own bound on a message's size as the protocol's too.
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level="warning",
        lifespan="off",
        access_log=False,
        ws="websockets-sansio",
        ws_max_size=MAX_PAGE_MESSAGE_BYTES,
    )
    server = _InLoopServer(config)
    task = asyncio.create_task(server.serve())
    while not server.started:
        if task.done():
            with contextlib.suppress(SystemExit):  # uvicorn exits when it cannot bind
                task.result()
            raise OSError(f"the web face could not listen on {host}:{port}")
        await asyncio.sleep(0.02)
    bound = server.servers[0].sockets[0].getsockname()
    shown = f"[{host}]" if ":" in host else host
    return RunningWeb(f"http://{shown}:{bound[1]}", server, task)


def parse_address(text: str) -> tuple[str, int]:
    """HOST:PORT (or :PORT) as (host, port); ValueError naming the form when it is not one."""
    host, _, port = text.rpartition(":")
    if not port.isdigit() or int(port) > 65535:
        raise ValueError(f"give HOST:PORT, e.g. 127.0.0.1:8080 (port 0: any free one), not {text!r}")
    return host.strip("[]") or "127.0.0.1", int(port)


__all__ = [
    "CONTENT_SECURITY_POLICY",
    "MatchView",
    "RunningWeb",
    "create_app",
    "parse_address",
    "serve_app",
    "start_web",
]
