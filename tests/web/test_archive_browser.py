"""The archive's pages in Chromium (Playwright): the replay page's controls, a duplicate pair
stepping together, a tournament page filling in while the tournament runs, the entrant page, the
four sizes (no boxes overlap), axe, and a hostile bot name shown as text. Screenshots of each page
at 1400x1000 and 360x740 go to build/screenshots/."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from referee.tournament.config import describe, parse_config
from referee.tournament.schedule import build_schedule
from referee.tournament.store import Store
from referee.web.app import create_app
from referee.web.offline import build_archive
from tests.replay.conftest import play_recorded_match
from tests.tournament.results import match_result
from tests.tournament.support import HEURISTIC, OUTPUTS, RANDOM, REPO, SHOWCASE
from tests.web.support import BLOCKS, OVERLAPS_JS, SIZES, Served, needs_browser, screenshot

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
class Played:
    """A tournament played to its end, and its config."""

    config: Path


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Played:
    """`tichu tournament run` of CONFIG, to its end."""
    folder = tmp_path_factory.mktemp("played")
    config = folder / "webt.toml"
    config.write_text(CONFIG, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "referee.cli", "tournament", "run", str(config), "--log-lines"],
        cwd=folder, env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True, text=True,
        check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    return Played(config)


@pytest.fixture(scope="module")
def site(played: Played, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    """The finished tournament and a folder of two replays (one with a hostile name), served offline."""
    folder = tmp_path_factory.mktemp("replays")
    # In a thread of their own: Playwright's sync API holds this thread's event loop.
    with ThreadPoolExecutor(1) as pool:
        plain = pool.submit(
            play_recorded_match, folder, seed="web-browser", rounds=3, match_id="plain"
        ).result()
        hostile = pool.submit(play_recorded_match, folder, seed="web-hostile", rounds=1, match_id="hostile",
                              names=(XSS, "east", "south", "west")).result()  # fmt: skip
    archive = build_archive([played.config, folder])
    tid = next(iter(archive.tournaments))
    cid = next(iter(archive.collections))
    with Served(create_app(archive=archive)) as base:
        t = f"/tournaments/{tid}"
        yield Site(
            base=base, tournament=t, replays=f"/replays/{cid}", replay=f"/replays/{cid}/{plain.path.stem}",
            hostile=f"/replays/{cid}/{hostile.path.stem}", game=f"{t}/games/p00-b0000-t0",
            board=f"{t}/boards/0/0", entrant=f"{t}/entrants/heuristic",
        )  # fmt: skip


def viewer(page: Any, name: str) -> Any:
    """A property of the page's read-only viewer API."""
    return page.evaluate(f"() => window.tichuViewer.{name}")


def test_the_tournament_page_fills_in_while_it_runs(tmp_path: Path, open_page: Callable[..., Any]) -> None:
    """An open page follows its store without a reload: each board's two tables are shown once
    both have ended (the page polls; the test waits for what it must show, with no deadline)."""
    config = parse_config(CONFIG, tmp_path / "webt.toml")
    schedule = build_schedule(config)
    config.database.parent.mkdir(parents=True, exist_ok=True)
    store = Store(config.database)
    store.initialise(config.fingerprint(), dict(describe(config)), schedule)
    run = store.start_run("run", 1)
    archive = build_archive([config.database])
    tid = next(iter(archive.tournaments))
    total = len(schedule)

    def settled(page: Any, count: int) -> None:
        page.wait_for_function(
            "(n) => document.querySelector('[data-progress]').innerText.startsWith(n + ' of ')",
            arg=count,
            timeout=600_000,  # a guard against a page that never follows, not a pace to keep
        )

    with Served(create_app(archive=archive)) as base:
        page = open_page(f"{base}/tournaments/{tid}")
        settled(page, 0)
        for done, spec in enumerate(schedule[:6], start=1):
            store.mark_started(
                spec.game_id, run, f"m-{spec.game_id}", str(tmp_path / f"{spec.game_id}.jsonl")
            )
            store.mark_finished(spec.game_id, match_result(300, 100, hands=2), spec.players)
            if done % 2 == 0:  # the board's second table: both are published
                settled(page, done)
        assert page.locator("[data-progress]").inner_text().startswith(f"6 of {total}")
        refreshed = int(page.evaluate("() => Number(document.documentElement.dataset.refreshed || 0)"))
        assert refreshed >= 3
    store.close()


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
