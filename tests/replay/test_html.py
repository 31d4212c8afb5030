"""`tichu replay html`: the viewer page, opened in a real headless Chromium (Playwright) and driven by keys.

The hands the page shows are checked against the rules engine's states, re-run from the replay
here in the test. The browser tests skip only when no Chromium binary is installed.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from referee.match.moves import initial_state, rerun, revealed_seed
from referee.match.records import EventRecord
from referee.replay import Replay, ReplayFormatError, read_replay
from referee.replay.format import canonical_line
from referee.replay.html import DATA_ID, render_html, write_html
from referee.rules import State, format_cards
from referee.rules.events import ExchangeSubmitted
from referee.rules.events import Played as PlayedEvent
from tests.replay.browser import Browser, find_chromium
from tests.replay.conftest import Played

CHROMIUM = find_chromium()
# CI installs Chromium (.ci/run), so there a missing browser fails the tests instead of skipping them.
needs_browser = pytest.mark.skipif(
    CHROMIUM is None and not os.environ.get("CI"),
    reason="no chromium binary found (Debian's `chromium`; .ci/run installs it)",
)
READY = "window.tichuViewer !== undefined && window.tichuViewer.ready"
GOLDEN_SIX = Path(__file__).parents[2] / "replays" / "golden" / "golden-6p-1-deal.jsonl"


@dataclass
class Page:
    """A viewer page on disk and what the engine says about its replay."""

    url: str
    replay: Replay
    events: list[EventRecord]  # the replay's event records: step i is events[i]
    states: list[State]  # the engine's state at each state version

    def hands(self, step: int) -> list[list[str]]:
        """Every seat's hand at a step, as the engine has it after the move of that step's event."""
        state = self.states[self.events[step].version]
        return [format_cards(hand).split() for hand in state.hands]

    def steps_of(self, kind: str) -> list[int]:
        """The steps whose event is of a type."""
        return [i for i, record in enumerate(self.events) if record.event.type == kind]

    def ends_round(self, step: int) -> bool:
        """Whether the move behind this step dealt a new round (the page shows the old one then)."""
        version = self.events[step].version
        return any(r.version == version and r.event.type == "round_started" for r in self.events) and (
            version > 0
        )


def make_page(replay_path: Path, out: Path) -> Page:
    """Write the page of a replay and re-run the replay for the expected states."""
    replay = read_replay(replay_path)
    write_html(replay, out)
    states = [initial_state(replay.header, revealed_seed(replay.header, replay.records))[0]]
    rerun(replay.header, replay.records, on_move=lambda _line, _record, state: states.append(state))
    events = [r for r in replay.records if isinstance(r, EventRecord)]
    return Page(out.as_uri(), replay, events, states)


@pytest.fixture(scope="module")
def page(played: Played, tmp_path_factory: pytest.TempPathFactory) -> Page:
    """The viewer page of the session's recorded match (random bots, bombs and calls)."""
    return make_page(played.path, tmp_path_factory.mktemp("html") / "viewer.html")


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """One headless Chromium for the module's tests."""
    assert CHROMIUM is not None, "CI must have Chromium: .ci/run installs Debian's `chromium`"
    with Browser(CHROMIUM) as opened:
        yield opened


def open_page(browser: Browser, url: str) -> None:
    """Load the page afresh (from a blank page, so a hash alone still reloads) until it is ready."""
    browser.navigate("about:blank")
    browser.wait_for("location.href === 'about:blank'")
    browser.navigate(url)
    browser.wait_for(READY)


def shown_hand(browser: Browser, seat: int) -> list[str]:
    """The cards the page displays in a seat's hand (dealt cards not yet seen excluded)."""
    value = browser.evaluate(
        f"[...document.querySelectorAll('[data-hand=\"{seat}\"] [data-card]:not(.unseen)')]"
        ".map((e) => e.dataset.card)"
    )
    return list(value)


def viewer(browser: Browser, name: str) -> Any:
    """A property of the page's read-only API."""
    return browser.evaluate(f"window.tichuViewer.{name}")


@pytest.fixture
def clean(browser: Browser) -> Iterator[Browser]:
    """The browser, checked after the test for JavaScript exceptions and console errors."""
    browser.errors.clear()
    yield browser
    assert browser.errors == []


# --- without a browser ---------------------------------------------------------------------------


def test_the_page_is_one_small_self_contained_file(page: Page) -> None:
    html = Path(page.url.removeprefix("file://")).read_text(encoding="utf-8")
    # Nothing to fetch: no address anywhere, no external script, style, font or image.
    assert not re.search(r"https?://|src=|@import|url\(", html)
    assert html.count("<script") == 2 and "default-src 'none'" in html
    embedded = html.split(f'id="{DATA_ID}">', 1)[1].split("</script>", 1)[0]
    data = json.loads(embedded)
    assert len(data["steps"]) == len(page.events)
    assert len(data["moves"]) == len(page.states)
    assert len(html) < 1_000_000


def test_names_cannot_break_out_of_the_page(played: Played) -> None:
    replay = read_replay(played.path)
    name = "</script><!-- <b>&amp;"
    start = replay.start
    assert start is not None
    renamed = dataclasses.replace(
        start, seats=(dataclasses.replace(start.seats[0], bot_name=name), *start.seats[1:])
    )
    replay.records[replay.records.index(start)] = renamed
    html = render_html(replay)
    embedded = html.split(f'id="{DATA_ID}">', 1)[1].split("</script>", 1)[0]
    assert json.loads(embedded)["match"]["names"][0].startswith(name)


def test_the_cli_writes_the_page(played: Played, tmp_path: Path) -> None:
    out = tmp_path / "deep" / "page.html"
    done = subprocess.run(
        [sys.executable, "-m", "referee.cli", "replay", "html", str(played.path), "-o", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert out.read_text(encoding="utf-8") == render_html(read_replay(played.path))


def test_a_replay_that_does_not_verify_makes_no_page(played: Played, tmp_path: Path) -> None:
    lines = played.path.read_text(encoding="utf-8").splitlines(keepends=True)
    dealt = next(i for i, line in enumerate(lines) if '"cards_dealt"' in line)
    record = json.loads(lines[dealt])
    record["event"]["cards"] = "2j"  # not what the engine deals
    lines[dealt] = canonical_line(record).decode()  # in the referee's byte form: only its content lies
    tampered = tmp_path / "tampered.jsonl"
    tampered.write_text("".join(lines), encoding="utf-8")
    out = tmp_path / "page.html"
    done = subprocess.run(
        [sys.executable, "-m", "referee.cli", "replay", "html", str(tampered), "-o", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 1
    assert f"tichu replay html: {tampered}: does not verify: line {dealt + 1}:" in done.stderr
    assert "Traceback" not in done.stderr and not out.exists()


# --- in Chromium ---------------------------------------------------------------------------------


@needs_browser
def test_the_page_loads_offline_without_errors(page: Page, clean: Browser) -> None:
    open_page(clean, page.url)
    assert viewer(clean, "stepCount") == len(page.events)
    assert viewer(clean, "step") == 0 and viewer(clean, "seat") is None
    assert clean.evaluate("document.querySelectorAll('.seat[data-seat]').length") == 4
    assert clean.evaluate("document.title").endswith(page.replay.match_id)
    # The page asked for nothing but itself.
    assert {url.split("#")[0] for url in clean.requests if url != "about:blank"} == {page.url}


@needs_browser
def test_arrow_keys_step_through_events_and_rounds(page: Page, clean: Browser) -> None:
    open_page(clean, page.url)
    clean.press("ArrowRight", 30)
    assert viewer(clean, "step") == 30
    clean.press("ArrowLeft", 12)
    assert viewer(clean, "step") == 18
    assert clean.evaluate("location.hash") == "#step=18"
    assert clean.evaluate("document.querySelector('#events li.current').dataset.step") == "18"
    clean.press("End")
    assert viewer(clean, "step") == len(page.events) - 1
    clean.press("ArrowRight")  # nothing after the last event
    assert viewer(clean, "step") == len(page.events) - 1
    clean.press("Home")
    assert viewer(clean, "step") == 0
    clean.press("ArrowLeft")
    assert viewer(clean, "step") == 0
    starts = page.steps_of("round_started")
    assert len(starts) >= 2
    clean.press("ArrowDown")
    assert viewer(clean, "step") == starts[1]
    clean.press("ArrowRight", 3)
    clean.press("ArrowUp")  # back to the start of this round first
    assert viewer(clean, "step") == starts[1]
    clean.press("ArrowUp")
    assert viewer(clean, "step") == starts[0]
    clean.press("PageDown", 2)  # past the last round's start, Down goes to the last event
    assert viewer(clean, "step") == (starts[2] if len(starts) > 2 else len(page.events) - 1)
    clean.press("PageUp")
    assert viewer(clean, "step") == starts[1]


@needs_browser
def test_the_hands_shown_are_the_engines_at_each_chosen_step(page: Page, clean: Browser) -> None:
    # Plays a third and two thirds into the match that do not end a round (see the next test).
    played = [step for step in page.steps_of("played") if not page.ends_round(step)]
    chosen = [
        page.steps_of("cards_dealt")[3],  # the first eight cards each, during Grand Tichu
        page.steps_of("exchange_completed")[0],
        played[len(played) // 3],
        played[2 * len(played) // 3],
        len(page.events) - 1,  # game over: the hands as the last round ended
    ]
    for step in chosen:
        open_page(clean, f"{page.url}#step={step}")
        assert viewer(clean, "step") == step
        expected = page.hands(step)
        for seat in range(4):
            assert shown_hand(clean, seat) == expected[seat], f"step {step}, seat {seat}"
            assert clean.evaluate(f"window.tichuViewer.hands({seat})") == expected[seat]
        # The cards on the table are the engine's current trick, play by play.
        trick = page.states[page.events[step].version].trick
        shown = clean.evaluate(
            "[...document.querySelectorAll('[data-trick-play]')].map((p) => [Number(p.dataset.trickPlay),"
            " [...p.querySelectorAll('[data-card]')].map((c) => c.dataset.card)])"
        )
        assert shown == [[seat, format_cards(cards).split()] for seat, cards, _ in trick]


@needs_browser
def test_a_rounds_closing_events_show_the_hands_as_the_round_ended(page: Page, clean: Browser) -> None:
    step = page.steps_of("round_scored")[0]
    version = page.events[step].version
    before = page.states[version - 1]
    played = 0
    for record in page.events:
        if record.version == version and isinstance(record.event, PlayedEvent):
            played |= record.event.cards
    open_page(clean, f"{page.url}#step={step}")
    for seat in range(4):
        assert shown_hand(clean, seat) == format_cards(before.hands[seat] & ~played).split()
    assert viewer(clean, "round") == before.round  # not yet the next deal


@needs_browser
def test_a_seat_view_shows_only_that_seats_cards(page: Page, clean: Browser) -> None:
    step = page.steps_of("played")[5]
    expected = page.hands(step)
    open_page(clean, f"{page.url}#step={step}")
    clean.press("1")
    assert viewer(clean, "seat") == 1
    assert clean.evaluate("location.hash") == f"#step={step}&seat=1"
    assert shown_hand(clean, 1) == expected[1]
    for seat in (0, 2, 3):
        assert shown_hand(clean, seat) == []
        assert clean.evaluate(f"window.tichuViewer.hands({seat})") is None
        count = clean.evaluate(f"document.querySelector('[data-hand=\"{seat}\"] [data-count]').dataset.count")
        assert int(count) == len(expected[seat])
    # No card that another seat holds is drawn anywhere on the page.
    drawn = set(clean.evaluate("[...document.querySelectorAll('[data-card]')].map((e) => e.dataset.card)"))
    assert drawn and not drawn & {card for seat in (0, 2, 3) for card in expected[seat]}
    # Just after the deal, the other seats' dealt cards are not in the event log either.
    clean.press("Home")
    clean.press("ArrowRight", 4)
    log = clean.evaluate("document.getElementById('events').textContent")
    assert "seat 1 is dealt" in log
    assert not re.search(r"seat [023] is dealt", log) and log.count("(private to seat") == 3
    # The current event is seat 3's deal: the table's caption does not tell it either.
    assert clean.evaluate("document.getElementById('table').textContent").count("(private to seat 3)") == 1
    # Nor another seat's exchange, given as a decision whose answer only that seat knows.
    given = next(
        i for i, r in enumerate(page.events) if isinstance(r.event, ExchangeSubmitted) and r.event.seat == 0
    )
    clean.evaluate(f"location.hash = '#step={given}&seat=1'")
    clean.wait_for(f"window.tichuViewer.step === {given}")
    move = clean.evaluate("document.getElementById('move').textContent")
    assert "seat 0: (not shown in this seat's view)" in move
    clean.press("0")
    assert "seat 0: exchange" in clean.evaluate("document.getElementById('move').textContent")
    clean.press("a")
    assert viewer(clean, "seat") is None
    assert shown_hand(clean, 0) == page.hands(given)[0]


@needs_browser
def test_a_link_opens_its_step_and_view(page: Page, clean: Browser) -> None:
    step = page.steps_of("trick_won")[2]
    open_page(clean, f"{page.url}#step={step}&seat=2")
    assert (viewer(clean, "step"), viewer(clean, "seat")) == (step, 2)
    assert shown_hand(clean, 2) == page.hands(step)[2]
    assert clean.evaluate("document.querySelector('#views [aria-pressed=\"true\"]').dataset.view") == "2"
    # A new hash on the open page moves it too, and a step past the end means the last one.
    clean.evaluate("location.hash = '#step=7'")
    clean.wait_for("window.tichuViewer.step === 7")
    assert viewer(clean, "seat") is None
    clean.evaluate("location.hash = '#step=99999&seat=9'")
    clean.wait_for(f"window.tichuViewer.step === {len(page.events) - 1}")
    assert viewer(clean, "seat") is None


@needs_browser
def test_a_match_that_never_started_shows_its_deal(played: Played, tmp_path: Path, clean: Browser) -> None:
    # A tichu-replay/1 header shows its seed, so the deal can be drawn before the match starts...
    lines = GOLDEN_SIX.read_text(encoding="utf-8").splitlines(keepends=True)
    waiting = tmp_path / "waiting.jsonl"
    waiting.write_text(lines[0], encoding="utf-8")
    page = make_page(waiting, tmp_path / "waiting.html")
    # ...a tichu-replay/2 one commits to it: no page shows its deal before the seed is revealed.
    hidden = tmp_path / "hidden.jsonl"
    hidden.write_bytes(played.path.read_bytes().splitlines(keepends=True)[0])
    with pytest.raises(ReplayFormatError, match="not yet revealed"):
        write_html(read_replay(hidden), tmp_path / "hidden.html")
    open_page(clean, page.url)
    assert viewer(clean, "stepCount") == 1
    assert shown_hand(clean, 0) == format_cards(page.states[0].hands[0]).split()
    clean.press("ArrowRight")
    clean.press("ArrowDown")
    assert viewer(clean, "step") == 0


@needs_browser
def test_a_six_player_match_seats_six(tmp_path: Path, clean: Browser) -> None:
    six = make_page(GOLDEN_SIX, tmp_path / "six.html")
    step = six.steps_of("played")[10]
    open_page(clean, f"{six.url}#step={step}")
    assert clean.evaluate("document.querySelectorAll('.seat[data-seat]').length") == 6
    for seat in range(6):
        assert shown_hand(clean, seat) == six.hands(step)[seat]
    clean.press("5")
    assert viewer(clean, "seat") == 5
