"""`tichu replay html`: one self-contained web page (no network) to step through a replay.

The rules engine re-runs the replay here, in Python, and the page embeds what each step shows
(every seat's hand, the trick, calls, the wish, scores) as compact JSON; the page's script only
draws it, so no rule is implemented twice. A step is one event record of the replay and shows
the game as it stands after the move that produced that event (the state version the record
names); the events that close a round, which the engine makes in the same move as the next
deal, show the table as that round ended.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

from referee.match.moves import ReplayMismatchError, Rerun, SeedHiddenError, apply_move, rerun
from referee.match.records import CallRecord, DecisionRecord, EventRecord, Move, ViolationRecord, WindowRecord
from referee.match.visitor import ReplayVisitor
from referee.replay.format import Replay, ReplayFormatError
from referee.replay.text import describe
from referee.rules import DecisionKind, Decline, Event, State, without_next_deal
from referee.rules.cards import CARD_NAMES, mask_points, rank_name
from referee.rules.events import DragonGiven, LeadPassed, Passed, Played, RoundScored, RoundStarted, TrickWon

# Versions of the data embedded in the page: bump when its shape changes.
DATA_VERSION = 1
# The page's script reads its data from this element.
DATA_ID = "tichu-replay-data"


def _hex(mask: int) -> str:
    """A card mask as hex: bit i is card i of CARD_NAMES (JSON numbers lose bits past 2**53)."""
    return format(mask, "x")


def _snapshot(state: State) -> list[Any]:
    """What the page shows of one state, as a positional list (field order: see VIEWER_JS).

    The page gets the first state whole and every later one as [[position, value], ...] of the
    fields that changed since the state before it."""
    trick = [[seat, _hex(cards), combo.describe()] for seat, cards, combo in state.trick]
    exchange = [[[to, card] for to, card in gifts] if gifts is not None else None for gifts in state.exchange]
    received = [[[giver, card] for giver, card in got] for got in state.received]
    return [
        state.round,
        state.dealer,
        state.phase.value,
        state.turn,
        rank_name(state.wish) if state.wish else "",
        state.gift,
        [_hex(hand) for hand in state.hands],
        [_hex(unseen) for unseen in state.unseen],
        list(state.calls),
        list(state.out),
        trick,
        state.top_seat,
        state.passed,
        [mask_points(pile) for pile in state.piles],
        list(state.scores),
        list(state.window),
        exchange,
        received,
    ]


def _round_end(before: State, move: Move) -> State:
    """The table as the round that `move` ends stands before the next deal."""
    state, _ = apply_move(without_next_deal(before), move)
    return state


# Decisions whose answer the other seats are not told when it is made (R-INFO-1).
_SECRET_DECISIONS = frozenset({DecisionKind.GRAND_TICHU, DecisionKind.TICHU_STEP, DecisionKind.EXCHANGE})


def _move(move: Move) -> list[Any]:
    """A move as the page shows it: [seat or -1, what, think ms, bank left ms or None, t_ms,
    1 if a seat view of another seat must not show what it was]."""
    t_ms = round(move.t_ms)
    if isinstance(move, DecisionRecord):
        secret = int(move.decision in _SECRET_DECISIONS)
        return [move.seat, str(move.action), move.time_used_ms, move.bank_left_ms, t_ms, secret]
    if isinstance(move, ViolationRecord):
        secret = int(move.decision in _SECRET_DECISIONS)
        return [move.seat, f"timed out: {move.default}", None, 0, t_ms, secret]
    if isinstance(move, CallRecord):
        return [move.seat, f"calls {move.action}", None, None, t_ms, 0]
    bombs = [f"seat {seat}: {action}" for seat, action in move.answers if not isinstance(action, Decline)]
    what = "bomb window: " + ("; ".join(bombs) if bombs else "every seat declines")
    # A bomb that was not applied (R-BOMB-9) shows cards its owner still holds.
    think = max((used for _, used in move.times_ms), default=None)
    return [-1, what, think, None, t_ms, int(bool(bombs))]


class _Tricks:
    """The finished tricks of each round, as lines of text, read from the public events."""

    def __init__(self) -> None:
        self.rounds: list[dict[str, Any]] = []
        self.plays: list[str] = []

    def add(self, event: Event, step: int) -> None:
        if isinstance(event, RoundStarted):
            self.rounds.append({"start": step, "dealer": event.dealer, "tricks": [], "score": None})
            self.plays = []
        elif not self.rounds:
            return  # a replay that starts from a given position has no round_started at first
        elif isinstance(event, Played | Passed):
            self.plays.append(describe(event))
        elif isinstance(event, TrickWon | DragonGiven | LeadPassed):
            self.rounds[-1]["tricks"].append({"plays": self.plays, "end": describe(event)})
            self.plays = []
        elif isinstance(event, RoundScored):
            self.rounds[-1]["score"] = {
                "card_points": list(event.card_points),
                "call_points": list(event.call_points),
                "bonus_points": list(event.bonus_points),
                "round_points": list(event.round_points),
                "totals": list(event.totals),
                "step": step,
            }

    @property
    def done(self) -> int:
        """How many tricks of the current round are finished."""
        return len(self.rounds[-1]["tricks"]) if self.rounds else 0


class ViewerData(ReplayVisitor):
    """Collects what the page shows as the replay re-runs: a snapshot of every state, every
    move, a step per event record, the tricks and each seat's think times (build_data's visitor;
    give it to verify to check a replay and build its page in one re-run)."""

    def __init__(self) -> None:
        self.snapshots: list[list[Any]] = []
        self.at_version: list[int] = []  # the index in `snapshots` of each state version
        self.round_ends: dict[int, int] = {}  # version -> the index of the snapshot of the round it ended
        self.moves: list[list[Any] | None] = [None]
        self.steps: list[list[Any]] = []
        self.tricks = _Tricks()
        self.dealt = -1  # the last version whose move dealt a new round
        self.think: list[list[list[float]]] = []
        self.run: Rerun | None = None  # set once every record re-ran

    def begin_game(self, state: State) -> None:
        self.think = [[] for _ in range(state.config.players)]
        self.at_version.append(len(self.snapshots))
        self.snapshots.append(_snapshot(state))

    def visit_move(self, line: int, move: Move, before: State, after: State) -> None:
        if after.round != before.round:
            self.round_ends[len(self.at_version)] = len(self.snapshots)
            self.snapshots.append(_snapshot(_round_end(before, move)))
        self.at_version.append(len(self.snapshots))
        self.snapshots.append(_snapshot(after))
        self.moves.append(_move(move))

    # A move record names the version it was made at; its events carry the next one.
    def visit_decision(self, record: DecisionRecord) -> None:
        self.think[record.seat].append([record.version + 1, float(record.time_used_ms)])

    def visit_window(self, record: WindowRecord) -> None:
        for seat_number, used in record.times_ms:
            self.think[seat_number].append([record.version + 1, float(used)])

    def visit_event(self, record: EventRecord) -> None:
        # Its move came before it, so the snapshot of its version is there already.
        event, version, owner = record.event, record.version, record.private_to
        steps, tricks = self.steps, self.tricks
        if owner is None:
            tricks.add(event, len(steps))
        if isinstance(event, RoundStarted):
            self.dealt = version
        # The events that close a round precede, in the same move, the next round's deal.
        ends = self.round_ends
        shown = ends[version] if version in ends and self.dealt != version else self.at_version[version]
        seat = getattr(event, "seat", -1)
        steps.append(
            [
                version,
                shown,
                -1 if owner is None else owner,
                round(record.t_ms),
                max(len(tricks.rounds) - 1, 0),
                tricks.done,
                seat if isinstance(seat, int) else -1,
                event.type,
                describe(event),
            ]
        )

    def end_game(self, run: Rerun) -> None:
        self.run = run

    def data(self, replay: Replay) -> dict[str, Any]:
        """The page's data, once `replay` (the one re-run) re-ran to its end."""
        run = self.run
        if run is None:
            raise ValueError("the replay has not been re-run to its end")
        snapshots, steps = self.snapshots, self.steps
        if not steps:
            # A match that never started: one step, the position it was created with.
            steps.append([0, 0, -1, 0, 0, 0, -1, "", "no event yet: the match has not started"])
        # Most of a state is as it was one move before: ship only the fields that changed.
        states: list[Any] = [snapshots[0]]
        for previous, snapshot in itertools.pairwise(snapshots):
            states.append([[i, value] for i, value in enumerate(snapshot) if value != previous[i]])
        config = run.state.config  # a game's rules do not change as it is played
        result = replay.result
        lines = result.summary if result is not None and result.summary else run.tally.summary()
        return {
            "v": DATA_VERSION,
            "match": {
                "id": replay.match_id,
                "created_at": replay.header.created_at,
                "players": config.players,
                "names": replay.seat_names(),
                "target": config.target_score,
                "mode": config.match_mode,
                "result": None if result is None else result.reason,
                "truncated": replay.truncated,
            },
            "cards": list(CARD_NAMES),
            "states": states,
            "moves": self.moves,
            "steps": steps,
            "rounds": self.tricks.rounds,
            "think": self.think,
            "summary": [line.to_json() for line in lines],
        }


def build_data(replay: Replay) -> dict[str, Any]:
    """Everything the page shows, per step, re-derived from the replay by the rules engine."""
    viewer = ViewerData()
    # A replay whose seed is not revealed yet raises SeedHiddenError: its deals are unknown; one
    # that does not verify raises ReplayMismatchError: a page of it would show wrong hands.
    rerun(replay.header, replay.records, visitor=viewer)
    return viewer.data(replay)


def _embed(data: dict[str, Any]) -> str:
    """JSON that is safe inside a <script> element: no `</script>` or `<!--` can end it early."""
    # `<` occurs only inside JSON strings, where \u003c is the same character.
    return json.dumps(data, separators=(",", ":"), ensure_ascii=True).replace("<", "\\u003c")


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


def render_html(replay: Replay) -> str:
    """The viewer page of `replay`: one HTML document with its data, style and script inline."""
    data = build_data(replay)
    title = _escape(f"Tichu replay {replay.match_id}")
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        # The page must work offline and never reach out: forbid every load but its own inline parts.
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        "style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">\n"
        f"<title>{title}</title>\n<style>\n{VIEWER_CSS}</style>\n</head>\n<body>\n"
        f"{VIEWER_BODY}"
        f'<script type="application/json" id="{DATA_ID}">{_embed(data)}</script>\n'
        f"<script>\n{VIEWER_JS}</script>\n</body>\n</html>\n"
    )


def write_html(replay: Replay, out: Path) -> None:
    """Write the viewer page of `replay` to `out`; ReplayFormatError if the replay does not verify."""
    try:
        page = render_html(replay)
    except ReplayMismatchError as error:
        # `tichu replay html` reports a ReplayFormatError as a message, not as a traceback.
        raise ReplayFormatError(f"{replay.path or 'replay'}: does not verify: {error}") from error
    except SeedHiddenError as error:
        raise ReplayFormatError(f"{replay.path or 'replay'}: {error} (not yet revealed)") from error
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(page, encoding="utf-8")


VIEWER_CSS = """
:root { --felt: #2f6b4f; --ink: #1d2330; --muted: #6b7280; --line: #d7dbe2; --hi: #fff4c2; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.4 system-ui, sans-serif; color: var(--ink); background: #f4f5f7; }
header, nav, main, section.panel { margin: 0 auto; max-width: 1280px; padding: 6px 12px; }
h1 { font-size: 18px; margin: 8px 0 2px; }
h2 { font-size: 14px; margin: 4px 0; text-transform: uppercase; letter-spacing: .04em; color: var(--muted); }
#meta { color: var(--muted); }
nav { display: flex; flex-wrap: wrap; gap: 6px; align-items: center; position: sticky; top: 0;
  background: #f4f5f7; z-index: 2; border-bottom: 1px solid var(--line); }
nav button { font: inherit; padding: 2px 8px; border: 1px solid var(--line); border-radius: 4px;
  background: #fff; cursor: pointer; }
nav button[aria-pressed="true"] { background: var(--ink); color: #fff; }
#slider { flex: 1 1 260px; }
#position { font-variant-numeric: tabular-nums; min-width: 16em; }
main { display: grid; grid-template-columns: minmax(0, 3fr) minmax(0, 2fr); gap: 12px; }
#table { position: relative; height: 520px; background: var(--felt); border-radius: 18px; }
.seat { position: absolute; transform: translate(-50%, -50%); width: 31%; background: #fffdf7;
  border-radius: 8px; padding: 5px 7px; box-shadow: 0 1px 3px #0005; }
.seat.turn { outline: 3px solid #f5c542; }
.seat.out { opacity: .75; }
.seat .who { font-weight: 600; display: flex; gap: 6px; flex-wrap: wrap; align-items: baseline; }
.seat .who small { font-weight: 400; color: var(--muted); }
.badge { font-size: 11px; padding: 0 5px; border-radius: 8px; background: #e5e7eb; font-weight: 600; }
.badge.call { background: #b91c1c; color: #fff; }
.badge.turn { background: #f5c542; }
.hand { display: flex; flex-wrap: wrap; gap: 2px; min-height: 26px; margin-top: 3px; }
.count { color: var(--muted); font-style: italic; }
.note { font-size: 12px; color: var(--muted); }
.card { display: inline-block; min-width: 27px; padding: 2px 3px; text-align: center; border-radius: 4px;
  border: 1px solid #9ca3af; background: #fff; font-weight: 700; font-size: 13px; line-height: 18px; }
.card i { font-style: normal; font-size: 11px; margin-left: 1px; }
.card.s-j { color: #047857; } .card.s-s { color: #111827; } .card.s-p { color: #1d4ed8; }
.card.s-t { color: #b91c1c; } .card.sp { background: #fde68a; color: #7c2d12; }
.card.unseen { opacity: .45; border-style: dashed; }
#centre { position: absolute; left: 50%; top: 50%; transform: translate(-50%, -50%); width: 36%;
  color: #fff; text-align: center; }
#centre .play { margin: 3px 0; }
#centre .play.top .card { border-color: #f5c542; box-shadow: 0 0 0 2px #f5c542; }
#centre .phase { font-size: 12px; opacity: .85; }
#centre .wish { font-weight: 700; color: #fde68a; }
aside { display: flex; flex-direction: column; gap: 8px; min-width: 0; }
aside section, section.panel > div { background: #fff; border: 1px solid var(--line); border-radius: 8px;
  padding: 6px 8px; }
#events, #tricks { margin: 0; padding-left: 3.4em; max-height: 250px; overflow-y: auto; font-size: 13px; }
#events li.current { background: var(--hi); font-weight: 600; }
#events li.hidden { color: var(--muted); font-style: italic; }
#tricks li { margin-bottom: 2px; }
#tricks .end { color: var(--muted); }
section.panel { display: grid; grid-template-columns: minmax(0, 2fr) minmax(0, 3fr); gap: 12px; }
#summary td:first-child { white-space: nowrap; }
#summary th { font-weight: 600; font-size: 12px; }
table { border-collapse: collapse; font-size: 13px; font-variant-numeric: tabular-nums; }
th, td { padding: 1px 8px; border-bottom: 1px solid var(--line); text-align: right; }
th:first-child, td:first-child { text-align: left; }
tr.current td { background: var(--hi); }
svg text { font-size: 10px; fill: var(--muted); }
.think-row { display: flex; align-items: center; gap: 6px; }
.think-row span { width: 11em; font-size: 12px; overflow: hidden; white-space: nowrap; }
#help { color: var(--muted); font-size: 12px; }
kbd { border: 1px solid var(--line); border-radius: 3px; padding: 0 3px; background: #fff; }
"""

VIEWER_BODY = """<header><h1 id="title">Tichu replay</h1><div id="meta"></div></header>
<nav id="controls" aria-label="steps">
<button data-go="home" title="first event (Home)">first</button>
<button data-go="prev-round" title="previous round (Up, PageUp)">&#x00AB; round</button>
<button data-go="prev" title="previous event (Left)">&#x2039;</button>
<input type="range" id="slider" min="0" max="0" value="0" aria-label="step">
<button data-go="next" title="next event (Right)">&#x203A;</button>
<button data-go="next-round" title="next round (Down, PageDown)">round &#x00BB;</button>
<button data-go="end" title="last event (End)">last</button>
<span id="position"></span><span id="views"></span>
</nav>
<main>
<section id="table" aria-label="the table"><div id="centre"></div></section>
<aside>
<section><h2>Events</h2><ol id="events"></ol></section>
<section><h2>Tricks this round</h2><ol id="tricks"></ol></section>
</aside>
</main>
<section class="panel">
<div><h2>Score</h2><div id="chart"></div><table id="scores"></table></div>
<div><h2>Timing</h2><div id="move"></div><div id="think"></div><table id="summary"></table></div>
</section>
<section class="panel"><p id="help"><kbd>&#x2190;</kbd> <kbd>&#x2192;</kbd> previous / next event,
<kbd>&#x2191;</kbd> <kbd>&#x2193;</kbd> (or PageUp / PageDown) previous / next round, <kbd>Home</kbd>
<kbd>End</kbd>, <kbd>0</kbd>&#x2013;<kbd>5</kbd> view as that seat, <kbd>a</kbd> all seats.
The address (<code>#step=120&amp;seat=2</code>) links to the moment shown.</p></section>
"""

VIEWER_JS = r"""
"use strict";
(() => {
  const timings = {start: performance.now()};
  const data = JSON.parse(document.getElementById("tichu-replay-data").textContent);
  timings.parsed = performance.now();
  const match = data.match;
  const players = match.players;
  const steps = data.steps;
  // Every state but the first comes as the fields that changed since the one before.
  const states = [data.states[0]];
  for (let i = 1; i < data.states.length; i++) {
    const state = states[i - 1].slice();
    for (const [field, value] of data.states[i]) state[field] = value;
    states.push(state);
  }
  timings.expanded = performance.now();
  // Field positions in a state snapshot and a step (see _snapshot and build_data in html.py).
  const S = {round: 0, dealer: 1, phase: 2, turn: 3, wish: 4, gift: 5, hands: 6, unseen: 7, calls: 8,
    out: 9, trick: 10, top: 11, passed: 12, points: 13, scores: 14, window: 15, exchange: 16, received: 17};
  const T = {version: 0, state: 1, private: 2, tMs: 3, round: 4, tricks: 5, seat: 6, type: 7, text: 8};
  const SUITS = {j: "\u25C6", s: "\u2660", p: "\u25A0", t: "\u2605"};
  const CALLS = ["", "Tichu", "Grand Tichu"];
  const $ = (id) => document.getElementById(id);
  const esc = (text) => String(text).replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);

  let current = 0;
  let view = null; // null: every seat's cards; a number: what that seat may see
  let ready = false;
  let readyMs = null;

  // A card mask in hex (bit i = card i) to card names, lowest card first.
  function cardsOf(hex) {
    const out = [];
    for (let i = 0; i < hex.length; i++) {
      const nibble = parseInt(hex[hex.length - 1 - i], 16);
      for (let b = 0; b < 4; b++) {
        if (nibble & (1 << b)) out.push(data.cards[i * 4 + b]);
      }
    }
    return out;
  }

  function cardHtml(name, extra) {
    const suit = name.slice(-1);
    const cls = SUITS[suit] && name.length <= 3 ? `s-${suit}` : "sp";
    const face = cls === "sp" ? name : `${name.slice(0, -1)}<i>${SUITS[suit]}</i>`;
    return `<span class="card ${cls}${extra ? " " + extra : ""}" data-card="${esc(name)}">${face}</span>`;
  }

  const cardsHtml = (names, extra) => names.map((n) => cardHtml(n, extra)).join("");
  const canSee = (seat) => view === null || view === seat;
  const stateAt = (index) => states[steps[index][T.state]];
  const seatLabel = (seat) => `seat ${seat}`;

  // Where each seat sits: the viewer's seat (or seat 0) at the bottom, the next one on the right.
  function position(seat) {
    const k = (seat - (view === null ? 0 : view) + players) % players;
    const angle = Math.PI / 2 - (k * 2 * Math.PI) / players;
    return [50 + 34 * Math.cos(angle), 50 + 39 * Math.sin(angle)];
  }

  function renderSeat(st, seat) {
    const hand = cardsOf(st[S.hands][seat]);
    const unseen = cardsOf(st[S.unseen][seat]);
    const place = st[S.out].indexOf(seat);
    const turn = st[S.turn] === seat && (st[S.phase] === "play") && place < 0;
    const [x, y] = position(seat);
    const badges = [];
    if (st[S.calls][seat]) badges.push(`<span class="badge call">${CALLS[st[S.calls][seat]]}</span>`);
    if (place >= 0) badges.push(`<span class="badge">out ${place + 1}.</span>`);
    if (turn) badges.push('<span class="badge turn">to play</span>');
    if (st[S.gift] === seat) badges.push('<span class="badge turn">gives the Dragon</span>');
    if (st[S.passed] & (1 << seat)) badges.push('<span class="badge">passed</span>');
    let cards;
    if (canSee(seat)) {
      cards = cardsHtml(hand) + cardsHtml(view === null ? unseen : [], "unseen");
    } else {
      const noun = hand.length === 1 ? "card" : "cards";
      cards = `<span class="count" data-count="${hand.length}">${hand.length} ${noun}</span>`;
    }
    if (unseen.length && !(canSee(seat) && view === null)) {
      cards += ` <span class="note">+${unseen.length} not yet seen</span>`;
    }
    let notes = "";
    if (canSee(seat)) {
      const gave = st[S.exchange][seat];
      if (gave) {
        const list = gave.map(([to, c]) => `${cardHtml(data.cards[c])} to ${to}`).join(", ");
        notes += `<div class="note">passes ${list}</div>`;
      }
      const got = st[S.received][seat];
      if (got.length) {
        const list = got.map(([from, c]) => `${cardHtml(data.cards[c])} from ${from}`).join(", ");
        notes += `<div class="note">received ${list}</div>`;
      }
    }
    const team = "AB"[seat % 2];
    return `<div class="seat${turn ? " turn" : ""}${place >= 0 ? " out" : ""}" data-seat="${seat}"
      style="left:${x.toFixed(1)}%;top:${y.toFixed(1)}%">
      <div class="who">${seatLabel(seat)} <small>${esc(match.names[seat] || "")} \u00B7 team ${team}
      \u00B7 ${st[S.points][seat]} pts won</small>${badges.join("")}</div>
      <div class="hand" data-hand="${seat}" data-size="${hand.length}">${cards}</div>${notes}</div>`;
  }

  function renderCentre(st, step) {
    const plays = st[S.trick].map(([seat, hex, what], i, all) => {
      const top = i === all.length - 1 ? " top" : "";
      return `<div class="play${top}" data-trick-play="${seat}">${seatLabel(seat)}: ` +
        `${cardsHtml(cardsOf(hex))} <span class="note">${esc(what)}</span></div>`;
    }).join("");
    const wished = esc(st[S.wish]);
    const wish = wished ? `<div class="wish" data-wish="${wished}">wish: ${wished}</div>` : "";
    const win = st[S.window].length ? '<div class="phase">bomb window open</div>' : "";
    const phase = st[S.phase].replace(/_/g, " ");
    return `<div class="phase">round ${st[S.round] + 1} \u00B7 ${phase} \u00B7 dealer ` +
      `seat ${st[S.dealer]}</div>${wish}${win}` +
      `<div data-trick>${plays || '<span class="note">no cards on the table</span>'}</div>` +
      `<div class="phase">A ${st[S.scores][0]} \u00B7 B ${st[S.scores][1]}</div>` +
      `<div class="phase">${esc(eventText(steps[step]))}</div>`;
  }

  function hidden(step) {
    const owner = step[T.private];
    return owner >= 0 && view !== null && owner !== view;
  }

  function eventText(step) {
    if (hidden(step)) return `(private to seat ${step[T.private]})`;
    return step[T.text];
  }

  function renderEvents() {
    const first = Math.max(0, current - 14);
    const rows = [];
    for (let i = first; i <= current; i++) {
      const step = steps[i];
      const cls = [i === current ? "current" : "", hidden(step) ? "hidden" : ""].join(" ").trim();
      const time = (step[T.tMs] / 1000).toFixed(2);
      rows.push(`<li value="${i}" class="${cls}" data-step="${i}">` +
        `<span class="note">${time} s</span> ${esc(eventText(step))}</li>`);
    }
    const list = $("events");
    list.innerHTML = rows.join("");
    list.scrollTop = list.scrollHeight;
  }

  function renderTricks() {
    const step = steps[current];
    const round = data.rounds[step[T.round]];
    const done = round ? round.tricks.slice(0, step[T.tricks]) : [];
    $("tricks").innerHTML = done.map((trick, i) =>
      `<li data-trick-index="${i}">${esc(trick.plays.join("; "))} <span class="end">\u2192 ` +
      `${esc(trick.end)}</span></li>`).join("") || '<li class="note">none finished yet</li>';
    $("tricks").scrollTop = $("tricks").scrollHeight;
  }

  function scoredRounds() {
    return data.rounds.filter((round) => round.score && round.score.step <= current);
  }

  let scoresShown = -1;
  function renderScores() {
    const rounds = scoredRounds();
    if (rounds.length === scoresShown) return; // the table and chart change once a round
    scoresShown = rounds.length;
    const rows = rounds.map((round, i) => {
      const sc = round.score;
      const mark = i === rounds.length - 1 ? ' class="current"' : "";
      return `<tr${mark}><td>${i + 1}</td><td>${sc.card_points.join(" / ")}</td>` +
        `<td>${sc.call_points.join(" / ")}</td><td>${sc.bonus_points.join(" / ")}</td>` +
        `<td>${sc.round_points.join(" / ")}</td><td>${sc.totals[0]}</td><td>${sc.totals[1]}</td></tr>`;
    });
    $("scores").innerHTML = "<tr><th>round</th><th>cards A/B</th><th>calls</th><th>bonus</th>" +
      `<th>round</th><th>A</th><th>B</th></tr>${rows.join("")}`;
    $("chart").innerHTML = chartSvg(rounds);
  }

  // The totals after each round, as two lines; the x axis spans the whole match so it never jumps.
  function chartSvg(rounds) {
    const all = data.rounds.filter((round) => round.score);
    const width = 420, height = 150, pad = 28;
    const totals = all.flatMap((round) => round.score.totals);
    const top = Math.max(match.target || 0, ...totals, 100);
    const bottom = Math.min(0, ...totals);
    const x = (i) => pad + (i * (width - pad - 8)) / Math.max(1, all.length);
    const y = (v) => height - 16 - ((v - bottom) * (height - 26)) / (top - bottom);
    const line = (team) => [`${x(0)},${y(0)}`].concat(rounds.map((round, i) =>
      `${x(i + 1).toFixed(1)},${y(round.score.totals[team]).toFixed(1)}`)).join(" ");
    const goal = match.target;
    const target = match.mode === "to_target"
      ? `<line x1="${pad}" x2="${width - 8}" y1="${y(goal)}" y2="${y(goal)}" stroke="#9ca3af"` +
        ` stroke-dasharray="4 3"/><text x="${width - 8}" y="${y(goal) - 3}" text-anchor="end">${goal}</text>`
      : "";
    return `<svg width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" role="img"` +
      ` aria-label="score over time">` +
      `<line x1="${pad}" x2="${width - 8}" y1="${y(0)}" y2="${y(0)}" stroke="#d1d5db"/>${target}` +
      `<text x="2" y="${y(0) + 3}">0</text><text x="${pad}" y="${height - 2}">rounds</text>` +
      `<polyline points="${line(0)}" fill="none" stroke="#2563eb" stroke-width="2" data-team="A"/>` +
      `<polyline points="${line(1)}" fill="none" stroke="#dc2626" stroke-width="2" data-team="B"/>` +
      `<text x="${pad + 4}" y="10" style="fill:#2563eb">\u25A0 team A</text>` +
      `<text x="${pad + 54}" y="10" style="fill:#dc2626">\u25A0 team B</text></svg>`;
  }

  // Think time of every decision per seat, drawn once; a marker shows where the current step is.
  const lastVersion = data.moves.length - 1;
  const thinkTop = Math.max(1, ...data.think.flat().map((p) => p[1]));
  function thinkSvg(seat) {
    const width = 300, height = 36;
    const path = data.think[seat].map(([v, ms]) => {
      const x = ((v / Math.max(1, lastVersion)) * width).toFixed(1);
      return `M${x} ${height}V${(height - (Math.sqrt(ms / thinkTop) * (height - 2))).toFixed(1)}`;
    }).join("");
    return `<svg width="${width}" height="${height}" data-think="${seat}" aria-label="think times">` +
      `<path d="${path}" stroke="#4b5563" stroke-width="1"/>` +
      `<line class="marker" x1="0" x2="0" y1="0" y2="${height}" stroke="#dc2626"/></svg>`;
  }

  function renderThinkOnce() {
    const rows = [];
    for (let seat = 0; seat < players; seat++) {
      rows.push(`<div class="think-row"><span>${seatLabel(seat)} ${esc(match.names[seat] || "")}</span>` +
        `${thinkSvg(seat)}</div>`);
    }
    $("think").innerHTML = rows.join("") +
      `<div class="note">think time per decision (square-root scale, top ${thinkTop.toFixed(1)} ms)</div>`;
    const summary = data.summary || [];
    const head = "<tr><th>seat</th><th>decisions</th><th>p50 ms</th><th>p99 ms</th><th>time-outs</th>" +
      "<th>rejected</th><th>T calls/ won</th><th>GT calls/ won</th><th>bombs</th><th>points</th></tr>";
    $("summary").innerHTML = head + summary.map((s) => `<tr><td>${s.seat} ${esc(s.bot_name || "")}</td>` +
      `<td>${s.decisions}</td><td>${s.think_ms_p50}</td><td>${s.think_ms_p99}</td><td>${s.timeouts}</td>` +
      `<td>${s.rejections}</td><td>${s.tichu_calls}/${s.tichu_won}</td>` +
      `<td>${s.grand_tichu_calls}/${s.grand_tichu_won}</td><td>${s.bombs_played}</td>` +
      `<td>${s.points_won}</td></tr>`).join("");
  }

  function renderTiming() {
    const version = steps[current][T.version];
    const x = ((version / Math.max(1, lastVersion)) * 300).toFixed(1);
    for (const marker of document.querySelectorAll("#think .marker")) {
      marker.setAttribute("x1", x);
      marker.setAttribute("x2", x);
    }
    const move = data.moves[version];
    let text = "the deal (no decision yet)";
    if (move) {
      const [seat, what, ms, bank, , secret] = move;
      const who = seat >= 0 ? seatLabel(seat) : "the table";
      const hide = secret && view !== null && view !== seat;
      text = `${who}: ${esc(hide ? "(not shown in this seat's view)" : what)}`;
      if (ms !== null && ms !== undefined) text += ` in ${ms} ms`;
      if (bank !== null && bank !== undefined) text += ` (bank ${(bank / 1000).toFixed(1)} s left)`;
    }
    $("move").innerHTML = `<div data-move="${version}">state ${version}: ${text}</div>`;
  }

  function renderTable() {
    const st = stateAt(current);
    const seats = [];
    for (let seat = 0; seat < players; seat++) seats.push(renderSeat(st, seat));
    $("table").innerHTML = `${seats.join("")}<div id="centre">${renderCentre(st, current)}</div>`;
  }

  function renderControls() {
    $("slider").value = String(current);
    const step = steps[current];
    const when = (step[T.tMs] / 1000).toFixed(2);
    $("position").textContent = `step ${current} of ${steps.length - 1} \u00B7 round ` +
      `${step[T.round] + 1} \u00B7 ${when} s`;
    for (const button of document.querySelectorAll("#views button")) {
      const seat = button.dataset.view === "all" ? null : Number(button.dataset.view);
      button.setAttribute("aria-pressed", String(seat === view));
    }
  }

  function render() {
    renderControls();
    renderTable();
    renderEvents();
    renderTricks();
    renderScores();
    renderTiming();
    const hash = `#step=${current}${view === null ? "" : `&seat=${view}`}`;
    if (location.hash !== hash) history.replaceState(null, "", hash);
  }

  function go(index) {
    const next = Math.max(0, Math.min(steps.length - 1, index));
    if (next === current && ready) return;
    current = next;
    render();
  }

  function setView(seat) {
    view = seat !== null && seat >= 0 && seat < players ? seat : null;
    render();
  }

  function roundStart(index) {
    const round = data.rounds[index];
    return round ? round.start : null;
  }

  function goRound(delta) {
    const round = steps[current][T.round];
    if (delta < 0) {
      const start = roundStart(round);
      // Up first goes back to the start of this round, then to the round before.
      go(start !== null && current > start ? start : roundStart(Math.max(0, round - 1)) ?? 0);
    } else {
      const start = roundStart(round + 1);
      go(start === null ? steps.length - 1 : start);
    }
  }

  function readHash() {
    const params = new URLSearchParams(location.hash.slice(1));
    const seat = params.get("seat");
    view = seat === null || seat === "" || seat === "all" ? null : Number(seat);
    if (view !== null && !(Number.isInteger(view) && view >= 0 && view < players)) view = null;
    const step = Number(params.get("step"));
    current = Number.isInteger(step) ? Math.max(0, Math.min(steps.length - 1, step)) : 0;
    render();
  }

  const KEYS = {
    ArrowRight: () => go(current + 1), ArrowLeft: () => go(current - 1),
    ArrowUp: () => goRound(-1), PageUp: () => goRound(-1),
    ArrowDown: () => goRound(1), PageDown: () => goRound(1),
    Home: () => go(0), End: () => go(steps.length - 1),
    a: () => setView(null), A: () => setView(null),
  };

  document.addEventListener("keydown", (event) => {
    if (event.ctrlKey || event.altKey || event.metaKey) return;
    let action = KEYS[event.key];
    if (!action && /^[0-5]$/.test(event.key) && Number(event.key) < players) {
      action = () => setView(Number(event.key));
    }
    if (!action) return;
    // The slider would move on its own too: one key press is one step.
    event.preventDefault();
    action();
  }, true);

  function init() {
    $("title").textContent = `Tichu replay ${match.id}`;
    const names = match.names.map((name, seat) => `${seat}: ${name} (${"AB"[seat % 2]})`).join(", ");
    const result = match.result ? ` \u00B7 ${match.result}` : " \u00B7 unfinished";
    $("meta").textContent = `${match.created_at} \u00B7 ${names}${result}` +
      `${match.truncated ? " \u00B7 last line cut off" : ""}`;
    const slider = $("slider");
    slider.max = String(steps.length - 1);
    slider.addEventListener("input", () => go(Number(slider.value)));
    const views = ['<button data-view="all" title="every hand (a)">all</button>'];
    for (let seat = 0; seat < players; seat++) {
      views.push(`<button data-view="${seat}" title="what seat ${seat} sees (${seat})">${seat}</button>`);
    }
    $("views").innerHTML = ` view: ${views.join("")}`;
    $("views").addEventListener("click", (event) => {
      const button = event.target.closest("button");
      if (button) setView(button.dataset.view === "all" ? null : Number(button.dataset.view));
    });
    const moves = {home: () => go(0), end: () => go(steps.length - 1), prev: () => go(current - 1),
      next: () => go(current + 1), "prev-round": () => goRound(-1), "next-round": () => goRound(1)};
    for (const button of document.querySelectorAll("nav button[data-go]")) {
      button.addEventListener("click", () => moves[button.dataset.go]());
    }
    renderThinkOnce();
    timings.drawn = performance.now();
    readHash();
    window.addEventListener("hashchange", readHash);
    ready = true;
    readyMs = performance.now();
    timings.ready = readyMs;
    document.documentElement.dataset.ready = "true";
  }

  // A read-only view of the viewer for tests and for the console.
  window.tichuViewer = Object.freeze({
    get step() { return current; },
    get stepCount() { return steps.length; },
    get seat() { return view; },
    get version() { return steps[current][T.version]; },
    get round() { return stateAt(current)[S.round]; },
    get ready() { return ready; },
    get readyMs() { return readyMs; },
    get timings() { return {...timings}; },
    hands(seat) { return canSee(seat) ? cardsOf(stateAt(current)[S.hands][seat]) : null; },
    handSize(seat) { return cardsOf(stateAt(current)[S.hands][seat]).length; },
  });

  init();
})();
"""
