"""A person at the table, in Chromium: the seat page plays seat 0 through the relay against three
random bots (`tichu bot` processes), as `tichu play` seats them.

One test plays a whole game, from the first deal to the result: the Grand Tichu decision, the
pre-exchange Tichu question, an exchange, a Tichu call out of turn, a refused play (the referee's
reason shown), a reload mid-hand (the same seat again), and its replay verifies. Two short
matches from positions (tests/web/positions.py) make the rest certain: a wish with the Mah Jong
and a Dragon gift; a bomb window let go, a pass with plays to choose from, and a bomb played out
of turn. The person's seat has no time limit: no test waits on a deadline.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Coroutine, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import grpc
import pytest

from referee.match import MatchResult
from referee.match.records import WindowRecord
from referee.replay import read_replay
from referee.replay.verify import verify
from referee.rules import Pass, Phase, Play, State, legal_actions
from referee.rules.cards import CARD_NAMES, cards_of
from referee.rules.combos import has_bomb
from referee.server.serve import RunningServer, ServerSettings, start_server
from referee.web.app import RunningWeb, start_web
from referee.web.person import PersonClock, PersonTable, Seating, open_table
from referee.web.relay import SeatRelay, seat_url
from referee.wire.tichu.v1 import referee_pb2 as pb
from referee.wire.tichu.v1 import referee_pb2_grpc
from tests.server.support import ORGANISER, ORGANISER_METADATA
from tests.web.positions import BOMB_AND_PASS, PHOENIX_READINGS, WISH_AND_DRAGON, play_position
from tests.web.support import OVERLAPS_JS, SIZES, screenshot

pytest.importorskip("playwright")

RANDOM = "random"
# Generous: the machine that runs the suite may be busy (bots start as processes).
STEP_TIMEOUT_MS = 120_000
GAME_TIMEOUT_S = 600.0


T = TypeVar("T")


class Loop:
    """An asyncio loop in a thread of its own: the referee, its web face and the bots' processes
    run there, while Playwright's synchronous API runs in the test's thread."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="person-table", daemon=True)
        self.thread.start()

    def run(self, coro: Coroutine[Any, Any, T], timeout_s: float = 120.0) -> T:
        """Run a coroutine in the loop and wait for its value."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout_s)

    def close(self) -> None:
        """Stop the loop and its thread."""
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(30)
        self.loop.close()


@pytest.fixture(scope="module")
def loop() -> Iterator[Loop]:
    """One loop for the module's tables."""
    running = Loop()
    yield running
    running.close()


@dataclass
class Seat:
    """A running person's table and the page that plays its seat 0."""

    table: PersonTable
    page: Any
    loop: Loop
    errors: list[str]

    def state(self) -> State:
        return self.table.table.state

    def prompt(self, timeout_ms: int = STEP_TIMEOUT_MS) -> str:
        """The kind of the next decision the page shows ('' once the match is over)."""
        self.page.wait_for_function(
            "() => document.getElementById('prompt').dataset.kind !== ''"
            " || document.body.dataset.over === 'true'",
            timeout=timeout_ms,
        )
        return str(self.page.locator("#prompt").get_attribute("data-kind") or "")

    def request_id(self) -> str:
        return str(self.page.locator("#prompt").get_attribute("data-request") or "")

    def answered(self, old: str) -> None:
        """Wait until the page shows another decision than request `old` (or none)."""
        self.page.wait_for_function(
            "(old) => document.getElementById('prompt').dataset.request !== old",
            arg=old,
            timeout=STEP_TIMEOUT_MS,
        )

    def logged(self, text: str) -> None:
        """Wait until a line of the page's log says `text`."""
        self.page.wait_for_function(
            "(text) => [...document.querySelectorAll('#log li')].some(li => li.textContent.includes(text))",
            arg=text,
            timeout=STEP_TIMEOUT_MS,
        )

    def select(self, cards: list[str]) -> None:
        for card in cards:
            self.page.locator(f'#hand button[data-card="{card}"]').click()

    def choose(self, text: str) -> None:
        self.page.locator("#choices button.choice", has_text=text).first.click()


@pytest.fixture
def seat_at(loop: Loop, page: Any, tmp_path: Path) -> Iterator[Any]:
    """`seat_at(initial_state=None, seed=..., rules_json=...)`: a person's table with three random
    bots, and the page open on its seat link."""
    opened: list[PersonTable] = []

    def start(initial_state: State | None = None, seed: str = "25", rules_json: str = "") -> Seat:
        seating = Seating.of([RANDOM], RANDOM)

        async def begin() -> PersonTable:
            person = await open_table(
                seating.names("person"),
                clock=PersonClock(decision_ms=None),
                seed=seed,
                replay_dir=tmp_path,
                initial_state=initial_state,
                rules_json=rules_json,
            )
            await person.launch_bots(seating)
            return person

        person = loop.run(begin())
        opened.append(person)
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(f"page error: {error}"))
        page.on("console", lambda m: errors.append(f"console: {m.text}") if m.type == "error" else None)
        page.on("response", lambda r: errors.append(f"{r.status} {r.url}") if r.status >= 400 else None)
        page.set_default_timeout(STEP_TIMEOUT_MS)
        page.goto(person.url)
        return Seat(person, page, loop, errors)

    yield start
    for person in opened:
        loop.run(person.stop())


def result_of(seat: Seat) -> MatchResult:
    result = seat.loop.run(seat.table.table.wait(), GAME_TIMEOUT_S)
    assert result is not None
    return result


def lowest_play(state: State) -> Play | None:
    """The test person's choice on a turn: the first (lowest) play that is not a bomb; else None
    when passing is allowed, else the first play there is (a wish can leave only a bomb, or
    only a long combination: R-WISH-4; passing then does nothing, and the game would wait)."""
    legal = legal_actions(state, 0)
    plays = [a for a in legal if isinstance(a, Play)]
    plain = [p for p in plays if not has_bomb(p.cards_mask)]
    if plain:
        return plain[0]
    return None if any(isinstance(a, Pass) for a in legal) or not plays else plays[0]


def play_turn(seat: Seat, *, pass_if_can: bool = False) -> None:
    """Answer a PLAY request from the page: pass when asked to and allowed, else select the cards
    of the lowest play and press Enter (choosing the first reading if the page asks)."""
    rid = seat.request_id()
    legal = legal_actions(seat.state(), 0)
    play = lowest_play(seat.state())
    if play is None or (pass_if_can and any(isinstance(a, Pass) for a in legal)):
        seat.page.keyboard.press("p")
    else:
        seat.select([CARD_NAMES[c] for c in cards_of(play.cards_mask)])
        seat.page.keyboard.press("Enter")
        # Either the play went, or the page asks which reading (the Phoenix, the wish): wait
        # for one of the two, not for the page to have drawn its choices by the next line.
        seat.page.wait_for_function(
            "(old) => document.getElementById('prompt').dataset.request !== old"
            " || document.querySelectorAll('#choices button.choice').length > 0",
            arg=rid,
            timeout=STEP_TIMEOUT_MS,
        )
        if seat.request_id() == rid:
            seat.page.locator("#choices button.choice").first.click()
    seat.answered(rid)


def answer(seat: Seat, kind: str) -> None:
    """Any decision, the plain way: no calls, the lowest cards given, no bombs."""
    rid = seat.request_id()
    if kind == "grand_tichu":
        seat.choose("No Grand Tichu")
    elif kind == "tichu_step":
        seat.choose("No Tichu")
    elif kind == "exchange":
        exchange(seat)
    elif kind == "play":
        play_turn(seat)
        return
    elif kind == "bomb_window":
        seat.page.keyboard.press("n")
    elif kind == "dragon_gift":
        seat.page.locator("#choices button.choice").first.click()
    seat.answered(rid)


def exchange(seat: Seat) -> None:
    """Give the three lowest cards, one to each of the others, through the page."""
    hand = seat.page.locator("#hand button.card")
    for index in range(3):
        hand.first.click()
        seat.page.locator("#choices button.choice").nth(index).click()
    seat.page.locator("#send-exchange").click()


def test_a_whole_game_as_a_person_against_three_random_bots(seat_at: Any) -> None:
    seat = seat_at(seed="person-25")
    page = seat.page
    # The Grand Tichu decision, and the pre-exchange Tichu question.
    assert seat.prompt() == "grand_tichu"
    assert page.locator("#hand button.card").count() == 8
    answer(seat, "grand_tichu")
    assert seat.prompt() == "tichu_step"
    answer(seat, "tichu_step")
    # The exchange: one card for each of the three others.
    assert seat.prompt() == "exchange"
    page.wait_for_function("() => document.querySelectorAll('#hand button.card').length === 14")
    answer(seat, "exchange")
    kind = seat.prompt()
    while kind == "bomb_window":
        answer(seat, kind)
        kind = seat.prompt()
    assert kind == "play"
    # A refused play: a card the person does not hold; the referee's reason is shown in words.
    held = {CARD_NAMES[c] for c in cards_of(seat.state().hands[0])}
    other = next(CARD_NAMES[c] for c in cards_of(seat.state().hands[1]) if CARD_NAMES[c] not in held)
    page.locator("details summary").click()
    page.fill("#typed-action", f"play {other}")
    page.press("#typed-action", "Enter")
    refusal = page.locator("#refusal")
    refusal.wait_for(state="visible")
    assert "The referee refused that" in refusal.inner_text()
    assert "hold" in refusal.inner_text() or "R-" in refusal.inner_text()
    # A Tichu call, out of turn, before the person's first card.
    page.keyboard.press("Escape")
    assert page.locator("#tichu").is_visible()
    page.locator("#tichu").click()
    page.wait_for_function("() => document.getElementById('my-calls').textContent.includes('TICHU')")
    assert seat.state().calls[0] == 1
    play_turn(seat)
    # A reload mid-hand: the page reconnects to the same seat, and the game goes on.
    hand_before = page.locator("#hand button.card").count()
    page.reload()
    page.wait_for_function("() => document.querySelectorAll('#hand button.card').length > 0")
    assert page.locator("#hand button.card").count() == hand_before
    assert "(seat 0" in page.locator("#me").inner_text()
    # The rest of the game, to its result.
    deadline = time.monotonic() + GAME_TIMEOUT_S
    while (kind := seat.prompt(timeout_ms=120_000)) != "":
        assert time.monotonic() < deadline, "the game did not end in time"
        answer(seat, kind)
    page.wait_for_function("() => document.getElementById('status').textContent.includes('Match over')")
    result = result_of(seat)
    assert seat.state().phase is Phase.GAME_OVER
    assert max(result.scores) >= 1000 and not result.forfeit
    assert page.locator("#status").inner_text().startswith("Match over.")
    # The replay: the person's seat marked in its header, and every move verified.
    assert seat.table.replay_path is not None
    replay = read_replay(seat.table.replay_path)
    assert [s.person for s in replay.header.seats] == [True, False, False, False]
    run = verify(replay).run
    assert run is not None and run.moves > 0


def test_a_wish_with_the_mah_jong_and_a_dragon_gift(seat_at: Any) -> None:
    seat = seat_at(play_position(WISH_AND_DRAGON, 0))
    page = seat.page
    assert seat.prompt() == "play"
    # The Mah Jong: the page asks which rank to wish for.
    rid = seat.request_id()
    seat.select(["MJ"])
    page.keyboard.press("Enter")
    page.wait_for_function("() => document.getElementById('prompt-text').textContent.includes('wish')")
    seat.choose("wishing for 9")
    seat.answered(rid)
    page.wait_for_function("() => document.getElementById('wish').textContent.includes('9')")
    # The Dragon on the next single (or lead): nobody beats it, and its trick is the person's to give.
    kind = seat.prompt()
    while kind != "dragon_gift":
        if kind == "play":
            rid = seat.request_id()
            seat.select(["DRG"])
            page.keyboard.press("Enter")
            seat.answered(rid)
        else:
            answer(seat, kind)
        kind = seat.prompt()
    choices = page.locator("#choices button.choice")
    assert choices.count() == 2
    texts = [choices.nth(i).inner_text() for i in range(2)]
    assert all("seat 1" in t or "seat 3" in t for t in texts)
    rid = seat.request_id()
    choices.first.click()
    seat.answered(rid)
    seat.logged("Dragon trick")
    while (kind := seat.prompt()) != "":
        answer(seat, kind)
    result_of(seat)
    replay = read_replay(seat.table.replay_path) if seat.table.replay_path else None
    assert replay is not None and verify(replay).run is not None


def test_a_window_let_go_a_pass_and_a_bomb_out_of_turn(seat_at: Any) -> None:
    seat = seat_at(play_position(BOMB_AND_PASS, 3))
    page = seat.page
    # Seat 3 leads; the person holds a bomb: the window asks, and the person lets it go.
    assert seat.prompt() == "bomb_window"
    assert not page.locator("#bomb").is_disabled()
    rid = seat.request_id()
    page.keyboard.press("n")
    seat.answered(rid)
    # The person's turn: plays to choose from, and a pass.
    assert seat.prompt() == "play"
    assert lowest_play(seat.state()) is not None
    assert not page.locator("#pass").is_disabled()
    play_turn(seat, pass_if_can=True)
    seat.logged("seat 0 (you) passes")
    # The window after the pass: not the person's turn (seat 1's is next), and the person bombs.
    assert seat.prompt() == "bomb_window"
    assert seat.state().turn != 0
    rid = seat.request_id()
    page.keyboard.press("b")
    seat.answered(rid)
    seat.logged("(you) BOMBS out of turn with 9j 9s 9p 9t")
    while (kind := seat.prompt()) != "":
        answer(seat, kind)
    result_of(seat)
    replay = read_replay(seat.table.replay_path) if seat.table.replay_path else None
    assert replay is not None and verify(replay).run is not None
    # The bomb is in the replay: a window resolved by seat 0's bomb of nines, out of turn.
    bombs = [
        answer
        for record in replay.records
        if isinstance(record, WindowRecord) and record.bomb == 0
        for seat, answer in record.answers
        if seat == 0
    ]
    assert [str(b) for b in bombs] == ["play 9j 9s 9p 9t"]


def test_the_phoenix_s_readings_are_asked(seat_at: Any) -> None:
    seat = seat_at(play_position(PHOENIX_READINGS, 0))
    page = seat.page
    assert seat.prompt() == "play"
    rid = seat.request_id()
    seat.select(["PHX", "5j", "6s", "7p", "8t"])
    page.keyboard.press("Enter")
    page.wait_for_function("() => document.getElementById('prompt-text').textContent.includes('reading')")
    readings = page.locator("#choices button.choice")
    texts = sorted(readings.nth(i).inner_text() for i in range(readings.count()))
    assert len(texts) == 2 and "the Phoenix as 4" in texts[0] and "the Phoenix as 9" in texts[1], texts
    seat.choose("the Phoenix as 9")
    seat.answered(rid)
    seat.logged("[straight] (phoenix as 9)")
    while (kind := seat.prompt()) != "":
        answer(seat, kind)
    result_of(seat)
    replay = read_replay(seat.table.replay_path) if seat.table.replay_path else None
    assert replay is not None and verify(replay).run is not None


def seat_page_at(chromium: Any, url: str, size: tuple[int, int], errors: list[str]) -> Any:
    """A page of `size` on `url`, collecting its script and console errors (CSP refusals too)."""
    page = chromium.new_page(viewport={"width": size[0], "height": size[1]})
    page.on("pageerror", lambda error: errors.append(f"page error: {error}"))
    page.on("console", lambda m: errors.append(f"console: {m.text}") if m.type == "error" else None)
    page.set_default_timeout(STEP_TIMEOUT_MS)
    page.goto(url)
    return page


# The seat page's blocks: none may overlap another (unless it holds it) at any size.
SEAT_BLOCKS = (
    "header.site, .seat-bar, .seats, .seat-box, .trick, .prompt, .mine, .hand, .actions > button, "
    ".sheet, .log, h1, h2"
)


def test_the_seat_page_fits_a_phone_and_a_desktop(seat_at: Any) -> None:
    seat = seat_at(seed="layout")
    page = seat.page
    assert seat.prompt() == "grand_tichu"
    # A second page on the same seat is refused while the first holds it: sizes are tried on one.
    for name, size in SIZES.items():
        page.set_viewport_size({"width": size[0], "height": size[1]})
        page.wait_for_function("() => document.querySelectorAll('#hand button.card').length === 8")
        layout = page.evaluate(OVERLAPS_JS, SEAT_BLOCKS)
        assert layout["found"] == [] and not layout["wide"], (name, layout)
        # Every card and choice can be reached without scrolling sideways.
        for button in page.locator("#hand button.card, #choices button.choice").all():
            box = button.bounding_box()
            assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= size[0] + 1, name
        screenshot(page, f"seat-{name}")
    assert seat.errors == []


def test_a_wrong_link_is_refused_in_words_and_not_asked_again(seat_at: Any, chromium: Any) -> None:
    seat = seat_at(seed="wrong-link")
    errors: list[str] = []
    url = seat.table.url.rpartition("#")[0] + "#not-a-seat-token"
    page = seat_page_at(chromium, url, SIZES["laptop"], errors)
    try:
        page.wait_for_function("() => document.body.dataset.closed === '4001'")
        assert "the referee refused the seat" in page.locator("#status").inner_text()
        # The person's own seat is untouched: its page still plays it.
        assert seat.prompt() == "grand_tichu"
    finally:
        page.close()
    # A page with no token at all says what it needs.
    page = seat_page_at(chromium, url.rpartition("#")[0], SIZES["laptop"], errors)
    try:
        assert "needs the seat link" in page.locator("#status").inner_text()
    finally:
        page.close()


def test_a_person_seat_made_over_the_wire_plays_from_its_link(loop: Loop, page: Any, tmp_path: Path) -> None:
    """CreateMatch(person_seats=...) on a referee with its web face, as `tichu serve --http` runs
    one: the organiser hands out /seat#TOKEN, and the page plays that seat; bad seats are refused."""

    async def begin() -> tuple[RunningServer, RunningWeb, list[str], str]:
        running = await start_server(
            ServerSettings("127.0.0.1:0", ORGANISER, insecure=True, replay_dir=tmp_path, resume=False)
        )
        web = await start_web(running.service.referee, seats=SeatRelay(running.plaintext_target))
        async with grpc.aio.insecure_channel(running.address) as channel:
            stub = referee_pb2_grpc.RefereeStub(channel)  # type: ignore[no-untyped-call]
            for bad, why in (([6], "0 to 5"), ([4], "seats 0-3"), ([1, 1], "distinct")):
                with pytest.raises(grpc.aio.AioRpcError) as refused:
                    await stub.CreateMatch(
                        pb.CreateMatchRequest(person_seats=bad, match_id="p-bad"), metadata=ORGANISER_METADATA
                    )
                assert refused.value.code() is grpc.StatusCode.INVALID_ARGUMENT
                assert why in (refused.value.details() or ""), refused.value.details()
            made = await stub.CreateMatch(
                pb.CreateMatchRequest(person_seats=[2], match_id="p-wire", bot_names=["a", "b", "Ann", "d"]),
                metadata=ORGANISER_METADATA,
            )
        return running, web, list(made.seat_tokens), made.match_id

    running, web, tokens, match_id = loop.run(begin())
    try:
        header = running.service.tables[match_id].match.header
        assert [s.person for s in header.seats] == [False, False, True, False] and header.has_person
        page.goto(seat_url(web.url, tokens[2]))
        page.wait_for_function("() => document.getElementById('me').textContent.includes('seat 2')")
        page.wait_for_function("() => document.querySelectorAll('#hand button.card').length === 8")
        replay = read_replay(tmp_path / f"{match_id}.jsonl")
        assert [s.person for s in replay.header.seats] == [False, False, True, False]
    finally:

        async def end() -> None:
            await web.stop()
            await running.stop(0)

        loop.run(end())
