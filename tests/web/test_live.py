"""The web face in Chromium (issue 24): a live match seen from its first hand to its result,
names shown as text, the pages' headers, and no secret in anything a viewer can fetch."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import re
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import Dialog, Page, expect

from referee.rules import OFFICIAL
from referee.web import app
from referee.web.app import CONTENT_SECURITY_POLICY
from tests.server.support import ORGANISER, join, random_policy
from tests.web.live import LiveReferee, live_referee

ONE_DEAL = dataclasses.replace(OFFICIAL, match_mode="fixed_rounds:1")
HOSTILE = "<img src=x onerror=alert(1)>"
NAMES = [HOSTILE, "Beta & <b>bold</b>", "gamma", "delta"]
SCREENSHOTS = Path(__file__).resolve().parents[2] / "build" / "screenshots"
SIZES = {"1400x1000": (1400, 1000), "360x740": (360, 740), "1024x768": (1024, 768), "1920x1080": (1920, 1080)}
SCROLL_WIDTH = "() => document.documentElement.scrollWidth - window.innerWidth"
# The boxes that must not overlap one another at any size.
LAYOUT = (".seat", ".trick", ".side", ".events")


@pytest.fixture
def live() -> Iterator[LiveReferee]:
    with live_referee() as running:
        yield running


def play(live: LiveReferee, tokens: tuple[str, ...], name: str) -> None:
    """Seat four random bots and play the match to its end, in the referee's loop."""

    async def seated() -> None:
        bots = await join(live.ref, list(tokens), [random_policy(f"{name}/{s}") for s in range(4)])
        await asyncio.gather(*(bot.play() for bot in bots))

    live.start(seated())


def overlaps(page: Page, selectors: tuple[str, ...]) -> list[str]:
    """Pairs of visible elements (of the selectors) whose boxes overlap."""
    boxes = []
    for selector in selectors:
        for index, handle in enumerate(page.query_selector_all(selector)):
            box = handle.bounding_box()
            if box is not None and box["width"] > 0 and box["height"] > 0:
                boxes.append((f"{selector}[{index}]", box))
    found = []
    for i, (name_a, a) in enumerate(boxes):
        for name_b, b in boxes[i + 1 :]:
            apart = (
                a["x"] + a["width"] <= b["x"] + 0.5
                or b["x"] + b["width"] <= a["x"] + 0.5
                or a["y"] + a["height"] <= b["y"] + 0.5
                or b["y"] + b["height"] <= a["y"] + 0.5
            )
            if not apart:
                found.append(f"{name_a} / {name_b}")
    return found


def test_a_live_match_is_seen_from_its_first_hand_to_its_result(live: LiveReferee, page: Page) -> None:
    dialogs: list[str] = []

    def refuse(dialog: Dialog) -> None:
        dialogs.append(dialog.message)
        dialog.dismiss()

    page.on("dialog", refuse)
    script_errors: list[str] = []
    page.on("pageerror", lambda error: script_errors.append(str(error)))
    entry = live.call(lambda: live.front.create(ONE_DEAL, seed="web", bot_names=NAMES, match_id="web-live"))

    response = page.goto(f"{live.url}/matches/web-live")
    assert response is not None and response.status == 200
    assert response.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
    assert response.headers["x-content-type-options"] == "nosniff"
    expect(page.locator("#status")).to_have_text("waiting")
    # Every name is text: the hostile one shows as its characters and runs nothing.
    expect(page.locator(".seat .name").nth(0)).to_have_text(HOSTILE)
    expect(page.locator(".seat .name").nth(1)).to_have_text(NAMES[1])

    play(live, entry.tokens, "web-live")
    expect(page.locator("#events li").first).to_contain_text("Hand 1 begins", timeout=120_000)
    expect(page.locator("#result")).to_be_visible(timeout=300_000)
    result = live.call(lambda: entry.table.result)
    assert result is not None
    expect(page.locator("#result")).to_contain_text(f"{result.scores[0]} : {result.scores[1]}")
    expect(page.locator("#score-a")).to_have_text(str(result.scores[0]))
    expect(page.locator("#score-b")).to_have_text(str(result.scores[1]))
    expect(page.locator("#sheet tr")).to_have_count(1)
    expect(page.locator("#status")).to_have_text("finished")
    assert dialogs == [] and script_errors == []
    assert page.locator(".seat .name img").count() == 0

    for size, (width, height) in SIZES.items():
        page.set_viewport_size({"width": width, "height": height})
        assert overlaps(page, LAYOUT) == [], size
        assert page.evaluate(SCROLL_WIDTH) <= 1, f"the table is wider than the window at {size}"
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=SCREENSHOTS / f"live-table-{size}.png", full_page=True)
    page.goto(f"{live.url}/")
    for size, (width, height) in SIZES.items():
        page.set_viewport_size({"width": width, "height": height})
        assert overlaps(page, ("header.site", "main > *")) == [], size
        assert page.evaluate(SCROLL_WIDTH) <= 1, f"the home page is wider than the window at {size}"
        page.screenshot(path=SCREENSHOTS / f"live-home-{size}.png", full_page=True)


def test_the_home_page_and_the_api_list_the_matches_and_no_secret(live: LiveReferee, page: Page) -> None:
    entry = live.call(lambda: live.front.create(ONE_DEAL, seed="home", bot_names=NAMES, match_id="web-home"))
    page.goto(live.url + "/")
    row = page.locator('#live tr[data-match="web-home"]')
    expect(row).to_contain_text(HOSTILE)
    play(live, entry.tokens, "web-home")
    # The list refreshes by itself: the match moves to the finished ones when it ends.
    expect(page.locator('#finished tr[data-match="web-home"]')).to_be_visible(timeout=300_000)
    expect(page.locator('#live tr[data-match="web-home"]')).to_have_count(0)
    page.locator('#finished tr[data-match="web-home"] a').click()
    expect(page).to_have_url(f"{live.url}/matches/web-home")

    api = page.request.get(f"{live.url}/api/matches")
    listed = api.json()
    assert [m["match_id"] for m in listed["finished"]] == ["web-home"] and listed["live"] == []
    assert listed["finished"][0]["players"] == NAMES
    assert listed["finished"][0]["url"] == "/matches/web-home"
    # The finished match's whole stream, as a page reads it: events, the result, the end.
    stream = page.request.get(f"{live.url}/matches/web-home/events").text()
    assert (
        stream.startswith("event: seats")
        and "event: result" in stream
        and stream.endswith("event: end\ndata: {}\n\n")
    )
    one = page.request.get(f"{live.url}/api/matches/web-home").text()
    everything = api.text() + stream + one + page.content()
    for token in entry.tokens:
        assert token not in everything
    header = live.call(lambda: entry.table.match.header)
    assert header.sealed_seed and header.sealed_seed not in everything
    # A hidden card never reaches a viewer: no private event is in the stream.
    kinds = {
        json.loads(line[6:])["event"]["type"] for line in stream.splitlines() if line.startswith('data: {"v"')
    }
    assert kinds and not kinds & {"cards_dealt", "exchange_submitted", "cards_received"}


def test_unknown_pages_and_matches_are_404_pages(live: LiveReferee, page: Page) -> None:
    for path in ("/matches/nope", "/matches/%3Cscript%3E", "/no/such/page"):
        response = page.goto(live.url + path)
        assert response is not None and response.status == 404, path
        assert response.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
    assert page.request.get(f"{live.url}/api/matches/nope").status == 404
    static = page.request.get(f"{live.url}/static/table.js")
    assert static.status == 200 and "max-age" in static.headers["cache-control"]


def test_the_organiser_signs_in_with_the_token_and_sees_every_hand(live: LiveReferee, page: Page) -> None:
    entry = live.call(
        lambda: live.front.create(ONE_DEAL, seed="organiser", bot_names=NAMES, match_id="web-org")
    )
    page.goto(f"{live.url}/sign-in")
    page.fill("#token", "not-the-token")
    page.click("text=Sign in")
    expect(page.locator(".error")).to_contain_text("not the organiser token")
    assert not [c for c in page.context.cookies() if c["name"] == "tichu_session"]
    # A sign-in posted from another site is refused, token or not.
    forged = page.request.post(
        f"{live.url}/sign-in", form={"token": ORGANISER}, headers={"Origin": "http://evil.example"}
    )
    assert forged.status == 403
    # A body past the form's bound is not read.
    assert page.request.post(f"{live.url}/sign-in", form={"token": "x" * 10_000}).status == 403

    page.fill("#token", ORGANISER)
    page.click("text=Sign in")
    expect(page.locator("header.site")).to_contain_text("Sign out")
    cookie = next(c for c in page.context.cookies() if c["name"] == "tichu_session")
    assert cookie["httpOnly"] and cookie["sameSite"] == "Strict" and ORGANISER not in cookie["value"]

    page.goto(f"{live.url}/matches/web-org")
    expect(page.locator(".note")).to_contain_text("every hand")
    play(live, entry.tokens, "web-org")
    expect(page.locator("#result")).to_be_visible(timeout=300_000)
    # The organiser's page was dealt every hand: a dealt card shows in the event list.
    expect(page.locator("#events li", has_text="is dealt").first).to_be_visible()
    stream = page.request.get(f"{live.url}/matches/web-org/events").text()
    assert '"type":"cards_dealt"' in stream

    page.click("text=Sign out")
    expect(page.locator("header.site")).to_contain_text("Organiser sign-in")
    public = page.request.get(f"{live.url}/matches/web-org/events").text()
    assert '"type":"cards_dealt"' not in public and "event: result" in public


def serious_violations(page: Page) -> list[str]:
    """axe-core's serious and critical findings on the page as it stands."""
    results = Axe().run(page)
    found = results.response["violations"]
    return [
        f"{v['id']} ({v['impact']}): {[n['target'] for n in v['nodes']][:3]}"
        for v in found
        if v["impact"] in ("serious", "critical")
    ]


def test_the_pages_pass_axe_with_no_serious_violation(live: LiveReferee, page: Page) -> None:
    entry = live.call(lambda: live.front.create(ONE_DEAL, seed="axe", bot_names=NAMES, match_id="web-axe"))
    play(live, entry.tokens, "web-axe")
    page.goto(f"{live.url}/matches/web-axe")
    expect(page.locator("#result")).to_be_visible(timeout=300_000)
    for size in ((1400, 1000), (360, 740)):
        page.set_viewport_size({"width": size[0], "height": size[1]})
        for path in ("/", "/matches/web-axe", "/sign-in", "/matches/nope"):
            page.goto(live.url + path)
            if path == "/matches/web-axe":
                expect(page.locator("#result")).to_be_visible(timeout=60_000)
            assert serious_violations(page) == [], (path, size)


def test_a_quiet_stream_is_kept_alive_and_still_follows_the_match(
    live: LiveReferee, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A keep-alive (a comment line while nothing happens) must not end the match's view."""
    monkeypatch.setattr(app, "KEEPALIVE_S", 0.1)
    entry = live.call(
        lambda: live.front.create(ONE_DEAL, seed="quiet", bot_names=NAMES, match_id="web-quiet")
    )
    host, port = live.url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=300) as stream:
        stream.sendall(f"GET /matches/web-quiet/events HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
        received = b""
        while received.count(b": still here") < 3:  # nobody has joined: only keep-alives come
            received += stream.recv(1 << 16)
        assert b"event: event" not in received and b"event: end" not in received
        play(live, entry.tokens, "web-quiet")
        while b"event: end" not in received:
            chunk = stream.recv(1 << 16)
            assert chunk, "the stream ended before the match did"
            received += chunk
    assert b"event: result" in received and b'"type":"round_started"' in received


def test_the_seat_being_waited_for_shows_its_clock(live: LiveReferee, page: Page) -> None:
    entry = live.call(
        lambda: live.front.create(ONE_DEAL, seed="clock", bot_names=NAMES, match_id="web-clock")
    )

    async def seated() -> None:
        # Seat 0 connects and never answers: the match waits for it at each of its decisions.
        policies = [None, *(random_policy(f"web-clock/{s}") for s in range(1, 4))]
        bots = await join(live.ref, list(entry.tokens), policies)
        await asyncio.gather(*(bot.play() for bot in bots[1:]))

    live.start(seated())
    page.goto(f"{live.url}/matches/web-clock")
    waited = page.locator('.seat[data-seat="0"] [data-role="clock"]')
    expect(waited).to_have_text(re.compile(r"^(Grand Tichu\?|Tichu\?|to \w+.*) \d+ s"), timeout=120_000)
    expect(page.locator('.seat[data-seat="0"]')).to_have_class(re.compile("is-asked"))
    live.run(entry.table.stop("the test is over"))
