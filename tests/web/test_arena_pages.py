"""The arena's pages in Chromium: the leaderboard, a bot's page with its rating chart and its
games linked to the replay viewer, the JSON beside them; at four sizes, with nothing secret."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

import pytest

from referee.arena.ratings import fresh, rate_pair
from referee.arena.store import ArenaStore, BotState, GameRow, RatingRow
from referee.arena.view import REPLAYS, ArenaView
from referee.web.app import create_app
from referee.web.archive import Archive
from tests.replay.conftest import play_recorded_match
from tests.web.support import OVERLAPS_JS, SIZES, Served, needs_browser, screenshot

BLOCKS = "header.site, main > *, h1, h2, p, table, figure"


@pytest.fixture(scope="module")
def arena_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """A store with three bots and eight rated pairs (one game's replay real), served."""
    folder = tmp_path_factory.mktemp("arena")
    replays = folder / "replays"
    played = play_recorded_match(replays, seed="arena-pages", rounds=1, match_id="arena-1-t0")
    assert played.path.exists()
    store = ArenaStore(folder / "arena.sqlite")
    keys = [store.add_bot(name, bot="m:C", state=BotState.ACTIVE) for name in ("alpha", "beta", "gamma")]
    store.add_bot("quitter", bot="m:C", state=BotState.REFUSED)
    store.set_state("quitter", BotState.REFUSED, "validation: its process ended at table 1: exit 3")
    for index in range(8):
        a, b = ("alpha", "beta") if index % 2 else ("alpha", "gamma")
        pair_id = store.start_pair(a, b, "hosted", f"s{index}", validation=False)
        points = (300 + 10 * index, 200)
        games = [
            GameRow(t, f"arena-{pair_id}-t{t}", t, points[0] // 2, points[1] // 2, "played_out", "", {}, {})
            for t in (0, 1)
        ]
        pair = replace(store.pair(pair_id), state="finished", points_a=points[0], points_b=points[1])
        before: list[RatingRow] = [store.rating(n, "hosted") or fresh(n, "hosted") for n in (a, b)]
        update = rate_pair(pair, *before)
        store.finish_pair(pair_id, games, (update.a, update.b))
    store.close()
    logs = folder / "logs"
    logs.mkdir()
    (logs / "worker-alpha-0.log").write_text("alpha <b>says</b> hello\n", encoding="utf-8")
    (logs / "arena-1-t0-seat1-beta.log").write_text("beta's private line\n", encoding="utf-8")
    archive = Archive()
    archive.add_collection(REPLAYS, folder=replays)
    view = ArenaView(folder / "arena.sqlite", replays, "test-arena", log_dir=logs)
    with Served(create_app(archive=archive, arena=view)) as url:
        yield url, "\n".join(keys)
    view.close()


def test_the_json_names_every_bot_and_no_key(arena_site: tuple[str, str]) -> None:
    url, keys = arena_site
    with urllib.request.urlopen(f"{url}/api/arena/leaderboard") as response:
        text = response.read().decode()
    board = json.loads(text)
    rows = board["boards"]["hosted"]
    assert rows[0]["bot"] == "alpha" and {"bot", "games", "mu", "sigma"} <= set(rows[0])
    assert rows[0]["games"] == 8 and rows[0]["wins"] == 8
    assert [b["bot"] for b in board["unrated"]] == ["quitter"]
    with urllib.request.urlopen(f"{url}/api/arena/bots/alpha") as response:
        bot_text = response.read().decode()
    bot = json.loads(bot_text)
    assert len(bot["history"]) == 8 and {o["bot"] for o in bot["opponents"]} == {"beta", "gamma"}
    for key in keys.split("\n"):
        assert key not in text and key not in bot_text
    assert "m:C" not in text and "m:C" not in bot_text  # a hosted bot's code is not shown


@needs_browser
def test_the_leaderboard_and_a_bot_s_page_at_every_size(
    arena_site: tuple[str, str], open_page: Callable[..., Any]
) -> None:
    url, _ = arena_site
    for name, size in SIZES.items():
        page = open_page(f"{url}/arena", size)
        assert page.locator("table.leaderboard tbody tr").count() == 3
        assert "its process ended" in page.locator("main").inner_text()
        layout = page.evaluate(OVERLAPS_JS, BLOCKS)
        assert layout["found"] == [] and not layout["wide"], (name, layout)
        screenshot(page, f"arena-leaderboard-{name}")
        page.locator("a", has_text="alpha").first.click()
        page.wait_for_selector("#arena-bot[data-chart=drawn]", state="attached", timeout=30_000)
        assert page.locator("#rating-chart canvas").count() >= 1
        layout = page.evaluate(OVERLAPS_JS, BLOCKS)
        assert layout["found"] == [] and not layout["wide"], (name, layout)
        screenshot(page, f"arena-bot-{name}")
    # The first pair's first table has a replay: its link opens the archive's viewer.
    page = open_page(f"{url}/arena/bots/alpha")
    page.locator("a", has_text="table 1").last.click()
    page.wait_for_selector("html[data-ready=true]", state="attached", timeout=30_000)
    assert "/replays/arena/arena-1-t0" in page.url


def test_an_unknown_bot_is_a_404(arena_site: tuple[str, str]) -> None:
    url, _ = arena_site
    with pytest.raises(urllib.error.HTTPError) as missing:
        urllib.request.urlopen(f"{url}/api/arena/bots/nobody")
    assert missing.value.code == 404


def test_an_owner_signs_in_with_the_key_and_sees_its_own_bot_s_logs_only(arena_site: tuple[str, str]) -> None:
    import httpx

    url, keys = arena_site
    alpha_key = keys.split("\n")[0]
    with httpx.Client(base_url=url, follow_redirects=False) as client:
        assert client.get("/api/arena/mine").status_code == 401
        assert 'name="key"' in client.get("/arena/mine").text
        same_site = {"Origin": url}
        refused = client.post("/arena/mine", data={"key": "tka_wrong"}, headers=same_site)
        assert refused.status_code == 403 and "not a key of this arena" in refused.text
        cross = client.post("/arena/mine", data={"key": alpha_key}, headers={"Sec-Fetch-Site": "cross-site"})
        assert cross.status_code == 403 and "tichu_owner" not in cross.headers.get("set-cookie", "")
        signed = client.post("/arena/mine", data={"key": alpha_key}, headers=same_site)
        assert signed.status_code == 303 and "httponly" in signed.headers["set-cookie"].lower()
        page = client.get("/arena/mine").text
        assert "alpha &lt;b&gt;says&lt;/b&gt; hello" in page and "beta&#39;s private line" not in page
        assert "beta's private line" not in page and alpha_key not in page
        mine = client.get("/api/arena/mine").json()
        assert mine["bot"] == "alpha" and [log["file"] for log in mine["logs"]] == ["worker-alpha-0.log"]
        client.post("/arena/mine/sign-out", headers=same_site)
        assert client.get("/api/arena/mine").status_code == 401
    # Nobody's public page shows a log.
    with httpx.Client(base_url=url) as client:
        assert "private line" not in client.get("/api/arena/bots/beta").text
