"""`tichu replay show`: a replay in the terminal, round by round and trick by trick.

A Renderer turns records into lines as they come, so the same code prints a finished file and
follows one that a running referee is still writing. The full view shows every hand, each bomb
window's answers and each decision's think time; a seat's view shows only what that seat was
told (R-INFO-1): its own cards and the public events.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TextIO

from referee.replay.describe import describe_event
from referee.replay.format import FORMAT, Record, ReplayFormatError, check_header, parse_record
from referee.replay.tally import summary_table
from referee.rules.cards import format_cards, parse_mask

FOLLOW_POLL_S = 0.25
# Events a reader needs no line for: a declined call, a bomb window closing without a bomb.
SILENT = frozenset({"call_declined", "window_closed"})
# Events shown inside a trick, indented under it.
TRICK_LEVEL = frozenset(
    {"played", "passed", "wish_fulfilled", "lead_passed", "trick_won", "dragon_gift_pending", "dragon_given"}
)


def _team(seat: int) -> str:
    return "AB"[seat % 2]


class Renderer:
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

    def feed(self, record: Record) -> list[str]:
        """The lines one record adds (none for what this view does not show)."""
        kind = record["kind"]
        handler: Callable[[Record], list[str]] | None = getattr(self, f"_on_{kind}", None)
        lines = handler(record) if handler is not None else []
        return lines if self.showing or kind in ("header", "result") else []

    def _sees(self, owner: int | None) -> bool:
        return owner is None or self.seat is None or owner == self.seat

    def _name(self, seat: int) -> str:
        name = self.names[seat] if seat < len(self.names) else ""
        return f"seat {seat} ({name})" if name else f"seat {seat}"

    # ------------------------------------------------------------------ records

    def _on_header(self, record: Record) -> list[str]:
        self.names = [str(s.get("bot_name", "")) for s in record["seats"]]
        self.players = len(self.names)
        self.hands = [0] * self.players
        config = record.get("config", {})
        view = "full view" if self.seat is None else f"as seen by seat {self.seat}"
        lines = [
            f"Match {record['match_id']} ({record.get('format', FORMAT)}), seed {record['seed']}, "
            f"created {record.get('created_at', '?')}; {view}",
            f"Rules: {config.get('players', 4)} players, {config.get('match_mode', 'to_target')}, "
            f"target {config.get('target_score', 1000)}",
        ]
        lines += [f"  {self._name(s)}: team {_team(s)}" for s in range(self.players)]
        return lines

    def _on_start(self, record: Record) -> list[str]:
        seats = record.get("seats", [])
        versions = ", ".join(f"{s['bot_name']} {s.get('bot_version', '')}".strip() for s in seats)
        return [f"Started {record.get('started_at', '?')}: {versions}"]

    def _on_connection(self, record: Record) -> list[str]:
        seat = int(record["seat"])
        if record.get("connected"):
            if record.get("reconnect"):
                return [f"  ~ {self._name(seat)} reconnected"]
            return []
        why = "abandoned its seat" if record.get("abandoned") else f"disconnected ({record.get('why', '?')})"
        return [f"  ~ {self._name(seat)} {why}"]

    def _on_resume(self, record: Record) -> list[str]:
        return [f"  ~ the referee restarted and resumed the match at state {record['version']}"]

    def _on_decision(self, record: Record) -> list[str]:
        if self.seat is None or record["seat"] == self.seat:
            self._think[int(record["seat"])] = float(record["time_used_ms"])
        return []

    def _on_violation(self, record: Record) -> list[str]:
        seat = int(record["seat"])
        if not self._sees(seat):
            return []
        return [f"  ! {self._name(seat)} timed out ({record.get('decision')}): default {record['default']}"]

    def _on_rejection(self, record: Record) -> list[str]:
        seat = int(record["seat"])
        if not self._sees(seat):
            return []
        rule = f" [{record['rule']}]" if record.get("rule") else ""
        return [f"  ! {self._name(seat)}'s message rejected ({record['reason']}){rule}: {record['message']}"]

    def _on_window(self, record: Record) -> list[str]:
        bombs = {s: a for s, a in record["answers"].items() if a != "decline"}
        if self.seat is not None or not bombs:
            return []
        parts = [f"seat {s} {a}" for s, a in bombs.items()]
        discarded = record.get("discarded") or []
        note = f"; discarded: seats {discarded}" if discarded else ""
        return [f"      window at state {record['version']}: {', '.join(parts)}{note}"]

    def _on_event(self, record: Record) -> list[str]:
        if not self._sees(record.get("private_to")):
            return []
        event: dict[str, Any] = record["event"]
        kind = event["type"]
        if kind in SILENT:
            return []
        # The handlers keep this view's bookkeeping (hands, tricks, think times) and add what
        # only a terminal shows; the line for the event itself is describe_event's.
        handler: Callable[[dict[str, Any]], list[str]] | None = getattr(self, f"_ev_{kind}", None)
        if handler is not None:
            return handler(event)
        return [self._say(event)]

    def _say(self, event: dict[str, Any], suffix: str = "") -> str:
        kind = event["type"]
        indent = "    " if kind in TRICK_LEVEL else "" if kind == "game_over" else "  "
        return indent + describe_event(event, self._name) + suffix

    def _on_result(self, record: Record) -> list[str]:
        scores = record.get("scores", [])
        winner = record.get("winner", -1)
        who = f"team {_team(winner)} wins" if winner in (0, 1) else "no winner"
        lines = [
            "",
            f"Result: {who}, A {scores[0] if scores else '?'} - B {scores[1] if len(scores) > 1 else '?'}",
        ]
        lines.append(f"  {record.get('reason', '')}")
        summary = record.get("summary")
        if summary:
            lines += ["", *summary_table(summary)]
        return lines

    # ------------------------------------------------------------------ events

    def _ev_round_started(self, event: dict[str, Any]) -> list[str]:
        self.round = int(event["round"]) + 1
        self.trick = 0
        self.trick_open = False
        self.hands = [0] * self.players
        if self.from_round is not None and self.round >= self.from_round:
            self.showing = True
        return ["", f"== Round {self.round} (dealer: {self._name(int(event['dealer']))}) =="]

    def _ev_cards_dealt(self, event: dict[str, Any]) -> list[str]:
        self.hands[int(event["seat"])] |= parse_mask(event["cards"])
        return [self._say(event)]

    def _ev_exchange_submitted(self, event: dict[str, Any]) -> list[str]:
        for _, card in event["gifts"]:
            self.hands[int(event["seat"])] &= ~parse_mask(card)
        return [self._say(event)]

    def _ev_cards_received(self, event: dict[str, Any]) -> list[str]:
        for _, card in event["received"]:
            self.hands[int(event["seat"])] |= parse_mask(card)
        return [self._say(event)]

    def _ev_exchange_completed(self, event: dict[str, Any]) -> list[str]:
        lines = ["  Hands after the exchange:"]
        for seat in range(self.players):
            if self.seat is None or seat == self.seat:
                lines.append(f"    {self._name(seat)}: {format_cards(self.hands[seat])}")
        return lines

    def _ev_played(self, event: dict[str, Any]) -> list[str]:
        seat = int(event["seat"])
        lines = self._open_trick()
        self.hands[seat] &= ~parse_mask(event["cards"])
        think = self._think.pop(seat, None)
        return [*lines, self._say(event, "" if think is None else f" ({think:.0f} ms)")]

    def _ev_passed(self, event: dict[str, Any]) -> list[str]:
        self._think.pop(int(event["seat"]), None)
        return [self._say(event)]

    def _ev_trick_won(self, event: dict[str, Any]) -> list[str]:
        self.trick_open = False
        return [self._say(event)]

    def _ev_dragon_given(self, event: dict[str, Any]) -> list[str]:
        self.trick_open = False
        return [self._say(event)]

    def _ev_round_scored(self, event: dict[str, Any]) -> list[str]:
        def pair(values: list[int]) -> str:
            return f"A {values[0]:+d}, B {values[1]:+d}"

        return [
            f"  Score: cards {pair(event['card_points'])}; calls {pair(event['call_points'])}; "
            f"bonus {pair(event['bonus_points'])}; round {pair(event['round_points'])}",
            f"  Totals: A {event['totals'][0]}, B {event['totals'][1]}",
        ]

    def _open_trick(self) -> list[str]:
        if self.trick_open:
            return []
        self.trick_open = True
        self.trick += 1
        return [f"  -- trick {self.trick} --"]


def _lines_of(path: Path, follow: bool, poll_s: float) -> Iterator[bytes]:
    """The file's complete lines; with `follow`, wait for more until the result is written."""
    with path.open("rb") as file:
        pending = b""
        while True:
            chunk = file.readline()
            if chunk:
                pending += chunk
                if pending.endswith(b"\n"):
                    yield pending
                    pending = b""
                continue
            if not follow:
                return
            time.sleep(poll_s)


def show(
    path: Path,
    *,
    seat: int | None = None,
    round_number: int | None = None,
    follow: bool = False,
    out: TextIO | None = None,
    poll_s: float = FOLLOW_POLL_S,
) -> int:
    """Print a replay (following it while it grows, with `follow`); the exit code."""
    out = out or sys.stdout
    renderer = Renderer(seat, round_number)
    number = 0
    try:
        for raw in _lines_of(path, follow, poll_s):
            number += 1
            record = parse_record(raw, str(path), number)
            if number == 1:
                check_header(record, str(path))
                players = len(record["seats"])
                if seat is not None and not 0 <= seat < players:
                    print(f"tichu replay show: --seat must be 0..{players - 1}", file=sys.stderr)
                    return 2
            for line in renderer.feed(record):
                print(line, file=out, flush=follow)
            if record["kind"] == "result":
                return 0
    except OSError as error:
        print(f"tichu replay show: {error}", file=sys.stderr)
        return 1
    except ReplayFormatError as error:
        print(f"tichu replay show: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # The reader went away (e.g. `| head`): stop quietly, as other command-line tools do.
        sys.stderr.close()
        return 0
    if number == 0:
        print(f"tichu replay show: {path} is empty", file=sys.stderr)
        return 1
    return 0
