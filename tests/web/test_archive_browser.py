"""The archive's pages in Chromium (Playwright): the replay page's controls, a duplicate pair
stepping together, a tournament page filling in while the tournament runs, the entrant page, the
four sizes (no boxes overlap), axe, and a hostile bot name shown as text. Screenshots of each page
at 1400x1000 and 360x740 go to build/screenshots/."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from referee.web.app import create_app
from referee.web.archive import archive_routes, home_route
from referee.web.offline import build_archive
from tests.replay.conftest import play_recorded_match
from tests.tournament.support import HEURISTIC, OUTPUTS, RANDOM, REPO, SHOWCASE
from tests.web.conftest import BLOCKS, OVERLAPS_JS, SIZES, Served, needs_browser, screenshot

pytestmark = needs_browser

XSS = "<img src=x onerror=alert(1)>"
CONFIG = f"""
[tournament]
name = "webt"
seed = "web-tests"
games_per_pairing = 8
concurrency = 4
{OUTPUTS}
[rules]
preset = "tournament"
match_mode = "fixed_rounds:2"

[sprt]
stop_early = false
{RANDOM}{HEURISTIC}{SHOWCASE}"""


@dataclass
class Site:
    """The archive served over HTTP: a finished tournament and a replay folder."""

    base: str
    tournament: str  # the tournament page's path
    replays: str  # the replay folder's page
    replay: str  # a game page of the replay folder
    hostile: str  # the game page of a replay whose seat 0 has a hostile name
    game: str  # a tournament game's page
    board: str  # a duplicate pair's page
    entrant: str


@dataclass
class LiveRun:
    """A tournament that was watched while it ran, and its config."""

    config: Path
    url: str
    seen: list[tuple[int, int]]  # (games finished, page refreshes) each time the page was read


@pytest.fixture(scope="module")
def live_run(tmp_path_factory: pytest.TempPathFactory, chromium: Any) -> Iterator[LiveRun]:
    """`tichu tournament run --http 127.0.0.1:0`, its page open in Chromium from the start."""
    folder = tmp_path_factory.mktemp("live")
    config = folder / "webt.toml"
    config.write_text(CONFIG, encoding="utf-8")
    process = subprocess.Popen(
        [sys.executable, "-m", "referee.cli", "tournament", "run", str(config), "--log-lines",
         "--http", "127.0.0.1:0"],
        cwd=folder, env={**os.environ, "PYTHONPATH": str(REPO)}, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )  # fmt: skip
    assert process.stdout is not None
    url = ""
    try:
        for line in process.stdout:
            if line.startswith("Pages: "):
                url = line.split(" ", 1)[1].strip()
                break
        assert url, "the run printed no address for its pages"
        page = chromium.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(url)
        page.wait_for_selector("html[data-ready=true]", state="attached")
        seen = []
        deadline = time.monotonic() + 240
        while process.poll() is None and time.monotonic() < deadline:
            finished = int(
                page.locator("[data-progress]").inner_text().split(" games settled")[0].split(" of ")[0]
            )
            seen.append(
                (
                    finished,
                    int(page.evaluate("() => Number(document.documentElement.dataset.refreshed || 0)")),
                )
            )
            time.sleep(0.5)
        time.sleep(3)  # the page's last poll, after the last game
        final = page.locator("[data-progress]").inner_text()
        seen.append(
            (
                int(final.split(" of ")[0]),
                int(page.evaluate("() => Number(document.documentElement.dataset.refreshed || 0)")),
            )
        )
        page.close()
        process.stdout.read()
        assert process.wait(60) == 0
        yield LiveRun(config, url, seen)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


@pytest.fixture(scope="module")
def site(live_run: LiveRun, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    """The finished tournament and a folder of two replays (one with a hostile name), served offline."""
    folder = tmp_path_factory.mktemp("replays")
    # In a thread of their own: Playwright's sync API holds this thread's event loop.
    with ThreadPoolExecutor(1) as pool:
        plain = pool.submit(
            play_recorded_match, folder, seed="web-browser", rounds=3, match_id="plain"
        ).result()
        hostile = pool.submit(play_recorded_match, folder, seed="web-hostile", rounds=1, match_id="hostile",
                              names=(XSS, "east", "south", "west")).result()  # fmt: skip
    archive = build_archive([live_run.config, folder])
    tid = next(iter(archive.tournaments))
    cid = next(iter(archive.collections))
    with Served(create_app([*archive_routes(archive), home_route(archive)])) as base:
        t = f"/tournaments/{tid}"
        yield Site(
            base=base, tournament=t, replays=f"/replays/{cid}", replay=f"/replays/{cid}/{plain.path.stem}",
            hostile=f"/replays/{cid}/{hostile.path.stem}", game=f"{t}/games/p00-b0000-t0",
            board=f"{t}/boards/0/0", entrant=f"{t}/entrants/heuristic",
        )  # fmt: skip


def viewer(page: Any, name: str) -> Any:
    """A property of the page's read-only viewer API."""
    return page.evaluate(f"() => window.tichuViewer.{name}")


def test_the_tournament_page_fills_in_while_it_runs(live_run: LiveRun) -> None:
    finished = [f for f, _ in live_run.seen]
    refreshes = [r for _, r in live_run.seen]
    assert finished[-1] == 24, live_run.seen
    # The open page changed by itself, game by game, without a reload.
    assert finished[0] < 24 and len(set(finished)) >= 3 and refreshes[-1] >= 2, live_run.seen


def test_the_replay_page_plays_steps_and_jumps(site: Site, open_page: Callable[..., Any]) -> None:
    page = open_page(site.base + site.replay)
    count, folds = viewer(page, "stepCount"), set(viewer(page, "folds()"))
    assert folds and viewer(page, "length") == count - len(folds) and viewer(page, "step") == 0
    assert page.locator("[data-verified=true]").count() == 1
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    assert viewer(page, "position") == 2
    # Window closes are folded: stepping never lands on one, and the list does not show them.
    seen = set()
    for _ in range(60):
        page.keyboard.press("ArrowRight")
        seen.add(viewer(page, "step"))
    assert not seen & folds
    assert page.locator(".v-events li.folded").first.is_hidden()
    page.keyboard.press("End")
    assert viewer(page, "step") == count - 1
    page.keyboard.press("Home")
    assert viewer(page, "step") == 0 and page.evaluate("() => location.hash") == "#step=0"
    # Space plays and pauses; the speed can change while it plays.
    page.keyboard.press(" ")
    assert viewer(page, "playing")
    page.select_option("[data-speed]", "8")
    page.wait_for_function("() => window.tichuViewer.position >= 5")
    page.keyboard.press(" ")
    assert not viewer(page, "playing")
    stopped = viewer(page, "position")
    page.wait_for_timeout(400)
    assert viewer(page, "position") == stopped
    page.locator("[data-go=play]").click()
    assert viewer(page, "playing")
    page.locator("[data-go=play]").click()
    assert not viewer(page, "playing")
    # The slider goes anywhere; a click on an event or a hand of the score sheet goes there.
    page.locator("[data-slider]").fill("100")
    assert viewer(page, "position") == 100
    target = next(i for i in range(150, count) if i not in folds)
    page.locator(f'.v-events li[data-step="{target}"] button').click()
    assert viewer(page, "step") == target
    page.locator('[data-hand-row="1"] button').click()
    second_hand = page.evaluate("() => window.tichuViewer.round")
    assert second_hand == 1 and viewer(page, "typeAt(window.tichuViewer.step)") == "round_started"
    # Unfolded, the window closes are steps again.
    page.locator("[data-unfold]").check()
    assert viewer(page, "length") == count
    page.keyboard.press("Home")
    first_fold = min(folds)
    for _ in range(first_fold):
        page.keyboard.press("ArrowRight")
    assert viewer(page, "step") == first_fold and viewer(page, f"typeAt({first_fold})") == "window_closed"
    assert page.locator(".v-events li.folded").first.is_visible()
    # Every hand is shown by default; a seat's view hides the others'.
    assert all(viewer(page, f"hands({seat})") is not None for seat in range(4))
    page.keyboard.press("2")
    assert viewer(page, "hands(0)") is None and viewer(page, "hands(2)") is not None


def test_the_public_view_and_the_replay_file(site: Site, open_page: Callable[..., Any]) -> None:
    page = open_page(site.base + site.replay + "?view=public")
    assert page.locator("[data-hand] [data-card]").count() == 0
    assert "public view" in page.locator("[data-notice]").inner_text()
    page.keyboard.press("End")
    assert "won" in page.locator("[data-meta]").inner_text()
    link = page.locator("[data-download]").get_attribute("href")
    assert link is not None
    body = page.request.get(site.base + link).body()
    assert body.startswith(b'{"kind":"header"') and body.count(b"\n") > 100


def test_a_duplicate_pair_steps_together(site: Site, open_page: Callable[..., Any]) -> None:
    page = open_page(site.base + site.board)
    assert page.locator(".pair-table").count() == 2
    page.keyboard.press("ArrowDown")  # the next hand, at both tables
    rounds = page.evaluate("() => window.tichuViewer.steps.map((s, i) => window.tichuViewer.typeAt(s, i))")
    assert rounds == ["round_started", "round_started"]
    for _ in range(25):
        page.keyboard.press("ArrowRight")
    hands = page.evaluate(
        "() => [0, 1].map((v) => [...document.querySelectorAll('.pair-table')][v]"
        ".querySelector('[data-centre] .phase').textContent.split(' \\u00B7 ')[0])"
    )
    assert hands[0] == hands[1] == "hand 2"
    page.keyboard.press("End")
    ends = page.evaluate("() => window.tichuViewer.steps.map((s, i) => window.tichuViewer.typeAt(s, i))")
    assert ends == ["game_over", "game_over"]


def test_the_entrant_page(site: Site, open_page: Callable[..., Any]) -> None:
    page = open_page(site.base + site.entrant)
    assert page.locator("[data-entrant]").inner_text() == "heuristic"
    assert {a.inner_text() for a in page.locator("table.against td:first-child a").all()} == {
        "random",
        "showcase",
    }
    assert int(page.locator("[data-timeouts]").inner_text()) >= 0
    assert "per decision: median" in page.locator("ul.facts").inner_text()
    assert page.locator("table.games tbody tr").count() == 16
    page.locator("table.games tbody tr a").first.click()
    page.wait_for_selector("html[data-ready=true]", state="attached")
    assert "/games/" in page.url


def test_the_tournament_page_links_and_filters(site: Site, open_page: Callable[..., Any]) -> None:
    page = open_page(site.base + site.tournament)
    assert page.locator("table.standings tbody tr").count() == 3
    assert "inf" not in page.locator("main").inner_text()
    assert "every game is settled" in page.locator("[data-eta]").inner_text()
    assert (
        page.locator("[data-chart=llr] canvas").count() == 1
        and page.locator("[data-chart=elo] canvas").count() == 1
    )
    page.select_option("select[name=entrant]", "random")
    page.locator(".filters button").click()
    page.wait_for_selector("html[data-ready=true]", state="attached")
    assert (
        "entrant=random" in page.url
        and page.locator("[data-games-total]").get_attribute("data-games-total") == "16"
    )
    page.locator("table.games tbody tr td:first-child a").first.click()
    page.wait_for_selector("html[data-ready=true]", state="attached")
    assert viewer(page, "stepCount") > 10


PAGES = ("tournament", "entrant", "game", "board", "replays", "replay")


@pytest.mark.parametrize("size", list(SIZES))
def test_no_boxes_overlap_at_each_size(site: Site, open_page: Callable[..., Any], size: str) -> None:
    for name in PAGES:
        page = open_page(site.base + getattr(site, name), SIZES[size])
        if name in ("game", "replay", "board"):
            page.keyboard.press("End")  # the longest trick and score sheet
        result = page.evaluate(OVERLAPS_JS, BLOCKS)
        assert result["found"] == [], (name, size, result)
        assert not result["wide"], (name, size, result["width"])
        if size in ("phone", "laptop"):
            width, height = SIZES[size]
            screenshot(page, f"{name}-{width}x{height}")


def test_axe_finds_nothing_serious(site: Site, open_page: Callable[..., Any]) -> None:
    from axe_playwright_python.sync_playwright import Axe

    axe = Axe()
    for name in PAGES:
        page = open_page(site.base + getattr(site, name))
        results = axe.run(page)
        serious = [
            (v["id"], v["impact"], [n["target"] for n in v["nodes"]][:3])
            for v in results.response["violations"]
            if v["impact"] in ("serious", "critical")
        ]
        assert serious == [], (name, serious)


def test_a_hostile_bot_name_is_shown_as_text(site: Site, open_page: Callable[..., Any]) -> None:
    dialogs: list[str] = []
    for url in (site.hostile, site.replays):
        page = open_page(site.base + url)

        def refuse(dialog: Any) -> None:
            dialogs.append(dialog.message)
            dialog.dismiss()

        page.on("dialog", refuse)
        page.wait_for_timeout(300)
        assert page.locator("main img").count() == 0
        assert XSS in page.locator("main").inner_text()
    assert dialogs == []
    assert re.search(r"&lt;img src=x", page.content())
