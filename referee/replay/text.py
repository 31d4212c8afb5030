"""Matches in words: the one event-to-text renderer, shared by `tichu replay show`, the demos and
the HTML viewer's captions.

`describe` gives one line for one event. A Renderer turns replay records into lines as they come,
so the same code prints a finished file, follows one that a running referee is still writing, and
narrates a match played in-process. The full view shows every hand, each bomb window's answers
and each decision's think time; a seat's view shows only what that seat was told (R-INFO-1): its
own cards and the public events.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence

from referee.match.records import (
    Abandoned,
    Connected,
    DecisionRecord,
    Disconnected,
    EventRecord,
    Header,
    Record,
    RejectionRecord,
    ResultRecord,
    ResumeRecord,
    Start,
    ViolationRecord,
    WindowRecord,
)
from referee.match.summary import SeatSummary
from referee.match.visitor import RecordVisitor, visit
from referee.rules import Decline, Event, format_cards
from referee.rules.cards import CARD_NAMES, rank_name
from referee.rules.events import (
    CallDeclined,
    Called,
    CardsDealt,
    CardsReceived,
    DragonGiftPending,
    DragonGiven,
    ExchangeCompleted,
    ExchangeSubmitted,
    GameOver,
    LeadPassed,
    Passed,
    Played,
    RoundEnded,
    RoundScored,
    RoundStarted,
    TrickWon,
    WentOut,
    WindowClosed,
    WishFulfilled,
)
from referee.visible import visible

PLACES = {1: "1st", 2: "2nd", 3: "3rd"}
# Events a reader needs no line for: a declined call, a bomb window closing without a bomb.
SILENT = (CallDeclined, WindowClosed)
# Events shown inside a trick, indented under it.
TRICK_LEVEL = (Played, Passed, WishFulfilled, LeadPassed, TrickWon, DragonGiftPending, DragonGiven)


def seat_label(seat: int) -> str:
    """`seat N`: how a seat is named when no bot name is at hand."""
    return f"seat {seat}"


def _seed(header: Header) -> str:
    if header.chained:
        return f"seed committed to ({header.seed_commitment[:12]}...)"
    return f"seed {header.seed}"


def _team(seat: int) -> str:
    return "AB"[seat % 2]


def describe(event: Event, name: Callable[[int], str] = seat_label) -> str:
    """One line for an event, e.g. `seat 1 plays 3j 3s 3t 5s 5t  [full house]`.

    `name` names a seat (e.g. with its bot's name).
    """
    if isinstance(event, RoundStarted):
        return f"round {event.round + 1} starts, dealer {name(event.dealer)}"
    if isinstance(event, CardsDealt):
        verb = "is dealt the rest" if event.stage == "rest" else "is dealt"
        return f"{name(event.seat)} {verb}: {format_cards(event.cards)}"
    if isinstance(event, Called | CallDeclined):
        call = "GRAND TICHU" if event.call == "grand_tichu" else "TICHU"
        if isinstance(event, Called):
            return f"{name(event.seat)} calls {call}"
        return f"{name(event.seat)} does not call {call.title()}"
    if isinstance(event, ExchangeSubmitted):
        return f"{name(event.seat)} gives " + ", ".join(
            f"{CARD_NAMES[c]} to seat {to}" for to, c in event.gifts
        )
    if isinstance(event, CardsReceived):
        received = ", ".join(f"{CARD_NAMES[c]} from seat {giver}" for giver, c in event.received)
        return f"{name(event.seat)} receives {received}"
    if isinstance(event, ExchangeCompleted):
        return "the exchange is complete"
    if isinstance(event, Played):
        return _played(event, name(event.seat))
    if isinstance(event, Passed):
        return f"{name(event.seat)} passes"
    if isinstance(event, WindowClosed):
        return "the bomb window closes"
    if isinstance(event, WishFulfilled):
        return f"the wish for {rank_name(event.rank)} is fulfilled by {name(event.seat)}"
    if isinstance(event, LeadPassed):
        return f"the lead passes from seat {event.seat} to seat {event.to}"
    if isinstance(event, TrickWon):
        return f"-> {name(event.seat)} takes the trick ({event.points} points)"
    if isinstance(event, DragonGiftPending):
        return f"{name(event.seat)} must give the Dragon trick away"
    if isinstance(event, DragonGiven):
        return f"-> the Dragon trick ({event.points} points) goes to {name(event.to)}"
    if isinstance(event, WentOut):
        return f"{name(event.seat)} is out, {PLACES.get(event.place, f'{event.place}th')}"
    if isinstance(event, RoundEnded):
        return f"Round over ({event.reason.replace('_', ' ')}); out in order: {list(event.out)}"
    if isinstance(event, RoundScored):
        points, totals = event.round_points, event.totals
        scored = f"A {points[0]:+d}, B {points[1]:+d}"
        return f"round {event.round + 1} scored: {scored}; totals A {totals[0]}, B {totals[1]}"
    if isinstance(event, GameOver):
        who = "a draw" if event.winner is None else f"team {'AB'[event.winner]} wins"
        return f"Game over: {who} (A {event.totals[0]}, B {event.totals[1]})"
    return json.dumps(event.to_json(), separators=(",", ":"))


def _played(event: Played, seat: str) -> str:
    combo = event.combo
    what = (combo.kind.name.lower() if combo.is_bomb else combo.kind.label).replace("_", " ")
    extras = []
    if combo.phoenix:
        extras.append(f"phoenix as {rank_name(combo.phoenix)}")
    if event.wish:
        extras.append(f"wishes for {rank_name(event.wish)}")
    if event.partner >= 0:
        extras.append(f"the Dog passes the lead to seat {event.partner}")
    verb = "BOMBS out of turn with" if event.out_of_turn else "BOMBS with" if combo.is_bomb else "plays"
    tail = f" ({'; '.join(extras)})" if extras else ""
    return f"{seat} {verb} {format_cards(event.cards)}  [{what}]{tail}"


def summary_table(seats: Sequence[SeatSummary]) -> list[str]:
    """The per-seat summary as aligned text lines (a heading, then one line per seat)."""
    lines = [
        f"{'seat':<5}{'bot':<16}{'decisions':>10}{'p50 ms':>8}{'p99 ms':>8}{'timeouts':>9}{'rejected':>9}"
        f"{'T calls/won':>12}{'GT calls/won':>13}{'bombs':>6}{'points':>7}"
    ]
    for seat in seats:
        name = visible(seat.bot_name or "-")[:15]
        lines.append(
            f"{seat.seat:<5}{name:<16}{seat.decisions:>10}{seat.think_ms_p50:>8.1f}"
            f"{seat.think_ms_p99:>8.1f}{seat.timeouts:>9}{seat.rejections:>9}"
            f"{seat.tichu_calls:>8}/{seat.tichu_won:<3}{seat.grand_tichu_calls:>9}/"
            f"{seat.grand_tichu_won:<3}{seat.bombs_played:>6}{seat.points_won:>7}"
        )
    return lines


class Renderer(RecordVisitor):
    """Turns replay records into readable lines; `seat` limits the view to what it saw."""

    def __init__(self, seat: int | None = None, from_round: int | None = None) -> None:
        self.seat = seat
        self.from_round = from_round  # 1-based; lines before it are not shown
        self.players = 4
        self.names: list[str] = []
        self.hands: list[int] = []
        self.round = 0
        self.trick = 0
        self.trick_open = False
        self.showing = from_round is None
        self._think: dict[int, float] = {}  # the latest decision's think time, by seat
        self._lines: list[str] = []  # what the record being fed adds

    def feed(self, record: Header | Record) -> list[str]:
        """The lines one record adds (none for what this view does not show), every non-printing
        character in them (a bot's name, a rejected message) escaped for the terminal."""
        self._lines = []
        visit(self, record)  # even when not shown: it follows the hands and names
        if not (self.showing or isinstance(record, Header | ResultRecord)):
            return []
        return [visible(line) for line in self._lines]

    def visit_header(self, header: Header) -> None:
        self._lines = self._header(header)

    def visit_event(self, record: EventRecord) -> None:
        self._lines = self._event(record)

    def visit_decision(self, record: DecisionRecord) -> None:
        if self.seat is None or record.seat == self.seat:
            self._think[record.seat] = float(record.time_used_ms)

    def visit_window(self, record: WindowRecord) -> None:
        self._lines = self._window(record)

    def visit_start(self, record: Start) -> None:
        versions = ", ".join(f"{s.bot_name} {s.bot_version}".strip() for s in record.seats)
        self._lines = [f"Started {record.started_at or '?'}: {versions}"]

    def visit_connected(self, record: Connected) -> None:
        if record.reconnect:
            self._lines = [f"  ~ {self._name(record.seat)} reconnected"]

    def visit_disconnected(self, record: Disconnected) -> None:
        self._lines = [f"  ~ {self._name(record.seat)} disconnected ({record.why or '?'})"]

    def visit_abandoned(self, record: Abandoned) -> None:
        self._lines = [f"  ~ {self._name(record.seat)} abandoned its seat"]

    def visit_resume(self, record: ResumeRecord) -> None:
        self._lines = [f"  ~ the referee restarted and resumed the match at state {record.version}"]

    def visit_violation(self, record: ViolationRecord) -> None:
        if self._sees(record.seat):
            what = f"timed out ({record.decision.value}): default {record.default}"
            self._lines = [f"  ! {self._name(record.seat)} {what}"]

    def visit_rejection(self, record: RejectionRecord) -> None:
        if self._sees(record.seat):
            rule = f" [{record.rule}]" if record.rule else ""
            self._lines = [
                f"  ! {self._name(record.seat)}'s message rejected ({record.reason}){rule}: {record.message}"
            ]

    def visit_result(self, record: ResultRecord) -> None:
        self._lines = self._result(record)

    def _sees(self, owner: int | None) -> bool:
        return owner is None or self.seat is None or owner == self.seat

    def _name(self, seat: int) -> str:
        name = self.names[seat] if seat < len(self.names) else ""
        return f"seat {seat} ({name})" if name else f"seat {seat}"

    def _header(self, header: Header) -> list[str]:
        self.names = [s.bot_name for s in header.seats]
        self.players = len(self.names)
        self.hands = [0] * self.players
        config = header.config
        view = "full view" if self.seat is None else f"as seen by seat {self.seat}"
        lines = [
            f"Match {header.match_id} ({header.format}), {_seed(header)}, "
            f"created {header.created_at or '?'}; {view}",
            f"Rules: {config.players} players, {config.match_mode}, target {config.target_score}",
        ]
        lines += [f"  {self._name(s)}: team {_team(s)}" for s in range(self.players)]
        return lines

    def _window(self, record: WindowRecord) -> list[str]:
        bombs = [(s, a) for s, a in record.answers if not isinstance(a, Decline)]
        if self.seat is not None or not bombs:
            return []
        parts = [f"seat {s} {a}" for s, a in bombs]
        note = f"; discarded: seats {list(record.discarded)}" if record.discarded else ""
        return [f"      window at state {record.version}: {', '.join(parts)}{note}"]

    def _result(self, record: ResultRecord) -> list[str]:
        who = f"team {_team(record.winner)} wins" if record.winner in (0, 1) else "no winner"
        lines = ["", f"Result: {who}, A {record.scores[0]} - B {record.scores[1]}", f"  {record.reason}"]
        if record.summary:
            lines += ["", *summary_table(record.summary)]
        return lines

    def _say(self, event: Event, suffix: str = "") -> str:
        indent = "    " if isinstance(event, TRICK_LEVEL) else "" if isinstance(event, GameOver) else "  "
        return indent + describe(event, self._name) + suffix

    def _event(self, record: EventRecord) -> list[str]:
        if not self._sees(record.private_to):
            return []
        event = record.event
        if isinstance(event, SILENT):
            return []
        # This view's bookkeeping (hands, tricks, think times) and what only a terminal shows;
        # the line for the event itself is describe's.
        if isinstance(event, RoundStarted):
            self.round = event.round + 1
            self.trick = 0
            self.trick_open = False
            self.hands = [0] * self.players
            if self.from_round is not None and self.round >= self.from_round:
                self.showing = True
            return ["", f"== Round {self.round} (dealer: {self._name(event.dealer)}) =="]
        if isinstance(event, CardsDealt):
            self.hands[event.seat] |= event.cards
        elif isinstance(event, ExchangeSubmitted):
            for _, card in event.gifts:
                self.hands[event.seat] &= ~(1 << card)
        elif isinstance(event, CardsReceived):
            for _, card in event.received:
                self.hands[event.seat] |= 1 << card
        elif isinstance(event, ExchangeCompleted):
            lines = ["  Hands after the exchange:"]
            for seat in range(self.players):
                if self.seat is None or seat == self.seat:
                    lines.append(f"    {self._name(seat)}: {format_cards(self.hands[seat])}")
            return lines
        elif isinstance(event, Played):
            lines = self._open_trick()
            self.hands[event.seat] &= ~event.cards
            think = self._think.pop(event.seat, None)
            return [*lines, self._say(event, "" if think is None else f" ({think:.0f} ms)")]
        elif isinstance(event, Passed):
            self._think.pop(event.seat, None)
        elif isinstance(event, TrickWon | DragonGiven):
            self.trick_open = False
        elif isinstance(event, RoundScored):
            return [
                f"  Score: cards {_pair(event.card_points)}; calls {_pair(event.call_points)}; "
                f"bonus {_pair(event.bonus_points)}; round {_pair(event.round_points)}",
                f"  Totals: A {event.totals[0]}, B {event.totals[1]}",
            ]
        return [self._say(event)]

    def _open_trick(self) -> list[str]:
        if self.trick_open:
            return []
        self.trick_open = True
        self.trick += 1
        return [f"  -- trick {self.trick} --"]


def _pair(values: Sequence[int]) -> str:
    return f"A {values[0]:+d}, B {values[1]:+d}"
