"""The tournament page (issue 24): standings, progress and games from the store, served while
`tichu tournament run --http` plays, and read from a finished store the same way."""

from __future__ import annotations

import asyncio
import io
import json
import secrets
import socket
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
import structlog
from playwright.sync_api import Page, expect

from referee.server.front import Referee
from referee.tournament.config import TournamentConfig, parse_config
from referee.tournament.runner import run_tournament
from referee.tournament.store import Store
from referee.tournament.web import TournamentView
from referee.web.app import RunningWeb, start_web
from tests.tournament.support import HEURISTIC, OUTPUTS, RANDOM, SHOWCASE

CONFIG = f"""
[tournament]
name = "webcup"
seed = "web-seed"
games_per_pairing = 4
concurrency = 2
{OUTPUTS}
[rules]
match_mode = "fixed_rounds:1"

[sprt]
stop_early = false
{RANDOM}{HEURISTIC}{SHOWCASE}"""
GAMES = 12
T = TypeVar("T")


def _config(folder: Path) -> TournamentConfig:
    folder.mkdir(parents=True, exist_ok=True)
    return parse_config(CONFIG, folder / "t.toml")


def _in_a_thread(run: Callable[[], T]) -> T:
    """Call `run` in a thread of its own: Playwright's sync API keeps an event loop running in
    this one, and a tournament runs its own with asyncio.run."""
    result: list[T] = []
    errors: list[BaseException] = []

    def body() -> None:
        try:
            result.append(run())
        except BaseException as error:
            errors.append(error)

    thread = threading.Thread(target=body, daemon=True)
    thread.start()
    thread.join()
    if errors:
        raise errors[0]
    return result[0]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> TournamentConfig:
    """A small tournament, played to its end."""
    config = _config(tmp_path_factory.mktemp("webcup"))
    out = io.StringIO()
    # The runner sets the process's log level; a module fixture runs outside the autouse one
    # that gives each test the configuration it found (tests/conftest.py).
    saved = structlog.get_config()
    try:
        code = _in_a_thread(lambda: run_tournament(config, resume=False, out=out, live=False))
    finally:
        structlog.configure(**saved)
    assert code == 0, out.getvalue()
    return config


@pytest.fixture
def served(finished: TournamentConfig) -> Iterator[str]:
    """The finished tournament's page, served from its store by a web face of its own."""
    ready: list[tuple[asyncio.AbstractEventLoop, RunningWeb, asyncio.Event]] = []

    async def body() -> None:
        store = Store(finished.database)
        stop = asyncio.Event()
        try:
            view = TournamentView(finished, store)
            web = await start_web(Referee(secrets.token_urlsafe(32)), tournament=view.snapshot)
            ready.append((asyncio.get_running_loop(), web, stop))
            await stop.wait()
            await web.stop()
        finally:
            store.close()

    thread = threading.Thread(target=lambda: asyncio.run(body()), daemon=True)
    thread.start()
    while not ready:
        assert thread.is_alive(), "the web face did not start"
        time.sleep(0.02)
    loop, web, stop = ready[0]
    try:
        yield web.url
    finally:
        loop.call_soon_threadsafe(stop.set)
        thread.join(30)


def test_the_page_of_a_finished_tournament(served: str, page: Page) -> None:
    page.goto(f"{served}/tournament")
    expect(page.locator("#progress")).to_contain_text(f"{GAMES} of {GAMES} games finished")
    expect(page.locator("#standings tbody tr")).to_have_count(3)
    teams = page.locator("#standings tbody tr td:nth-child(2)").all_text_contents()
    assert sorted(teams) == ["heuristic", "random", "showcase"]
    expect(page.locator("#games tbody tr")).to_have_count(GAMES)
    # Its games are over and the referee holds none: no game links to a live page.
    assert page.locator("#games a").count() == 0
    data = page.request.get(f"{served}/api/tournament").json()
    assert data["name"] == "webcup" and data["progress"]["finished"] == GAMES
    assert all(game["status"] == "finished" and game["scores"] for game in data["games"])
    # An interval that cannot be computed yet says so in words: never inf or nan.
    assert all("inf" not in row["elo"] and "nan" not in row["elo"] for row in data["standings"])
    page.set_viewport_size({"width": 360, "height": 740})
    page.screenshot(path=_screenshots() / "tournament-360x740.png", full_page=True)
    page.set_viewport_size({"width": 1400, "height": 1000})
    page.screenshot(path=_screenshots() / "tournament-1400x1000.png", full_page=True)


def _screenshots() -> Path:
    folder = Path(__file__).resolve().parents[2] / "build" / "screenshots"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def test_tournament_run_with_http_serves_the_page_while_it_plays(tmp_path: Path) -> None:
    config = _config(tmp_path / "live")
    port = _free_port()
    seen: list[dict[str, Any]] = []
    done = threading.Event()

    def poll() -> None:
        while not done.is_set():
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/tournament", timeout=30) as answer:
                    seen.append(json.load(answer))
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass
            time.sleep(0.02)

    poller = threading.Thread(target=poll, daemon=True)
    poller.start()
    out = io.StringIO()
    try:
        code = _in_a_thread(
            lambda: run_tournament(config, resume=False, out=out, live=False, http=f"127.0.0.1:{port}")
        )
    finally:
        done.set()
        poller.join(60)
    assert code == 0, out.getvalue()
    assert f"Web face: http://127.0.0.1:{port}/tournament" in out.getvalue()
    assert seen, "the page never answered while the tournament ran"
    assert all(data["name"] == "webcup" and data["progress"]["games"] == GAMES for data in seen)
    # The run is over: the web face is closed with it.
    with pytest.raises((urllib.error.URLError, ConnectionError)):
        urllib.request.urlopen(f"http://127.0.0.1:{port}/api/tournament", timeout=5)
