"""A person's seat, sans I/O: what the referee sends a seat, as small JSON messages for the page,
and what the page sends, as the BotMessages of the ordinary Play stream.

The relay (referee/web/relay.py) carries bytes; this module decides what they mean. The page
never learns a rule: it is told the request's legal actions, as the referee listed them, each
with its cards and a label, and it answers with one of their canonical strings (or any string a
person typed, which the referee then judges, as it judges a bot's). Everything the seat may see
comes through the engine's one fold of events (referee.rules.observation.advance).

Page -> relay (JSON objects, at most MAX_PAGE_MESSAGE_BYTES):
    {"type": "hello", "token": "..."}                  first, and only then
    {"type": "act", "request": 12, "action": "play 7s 7j"}  answer request 12; with no open
                                                        request of that id: out of turn (a bomb)
    {"type": "tichu"}                                  call Tichu now (out of turn)

Relay -> page:
    {"type": "view", ...}       the whole seat as the page draws it (see `SeatView.view`)
    {"type": "log", "lines": [...]}  what happened, in words (replay.text's renderer)
    {"type": "rejection", "reason": "illegal", "rule": "R-WISH-4", "message": "..."}
    {"type": "result", "text": "...", ...}  the match is over
    {"type": "error", "message": "..."}     the relay or the referee ended the seat's stream
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from referee.match import PROTOCOL_VERSION
from referee.replay.text import describe
from referee.rules import Action, Observation, Phase, Play, advance, classify
from referee.rules.cards import CARD_NAMES, Card, cards_of, rank_name
from referee.rules.legal import DecisionKind
from referee.rules.observation import before_first_deal, idle, observation_from_json
from referee.server.codec import (
    KIND_FROM_PROTO,
    REASON_FROM_PROTO,
    action_from_proto,
    config_from_proto,
    event_from_proto,
    unbundle,
)
from referee.wire.tichu.v1 import referee_pb2 as pb

# A page's message is a few dozen bytes; an exchange or a typed action a few hundred.
MAX_PAGE_MESSAGE_BYTES = 2048
# An action a person types is at most this long (the longest play, 14 cards with options, is ~80).
MAX_ACTION_CHARS = 200
# The page's event log keeps this many lines (a reloaded page gets them again).
LOG_LINES = 200
# A decision limit of this much or more is shown as "no limit" (tichu play --no-limit sets a week).
NO_LIMIT_MS = 24 * 3600 * 1000
PERSON_BOT_NAME = "person"

SUITS = {"j": "Jade", "s": "Sword", "p": "Pagoda", "t": "Star"}
SPECIAL_CARDS = {"MJ": "Mah Jong", "DOG": "Dog", "PHX": "Phoenix", "DRG": "Dragon"}
KIND_NAMES = {
    DecisionKind.GRAND_TICHU: "grand_tichu",
    DecisionKind.TICHU_STEP: "tichu_step",
    DecisionKind.EXCHANGE: "exchange",
    DecisionKind.PLAY: "play",
    DecisionKind.BOMB_WINDOW: "bomb_window",
    DecisionKind.DRAGON_GIFT: "dragon_gift",
}


class PageMessageError(ValueError):
    """A page's message that the relay does not forward (malformed, oversized, out of order)."""


def card_json(card: Card) -> dict[str, str]:
    """A card for the page: its notation, and its name in words (rank and suit, never colour only)."""
    name = CARD_NAMES[card]
    if name in SPECIAL_CARDS:
        return {"card": name, "rank": SPECIAL_CARDS[name], "suit": "", "label": SPECIAL_CARDS[name]}
    rank, suit = name[:-1], name[-1]
    return {"card": name, "rank": rank, "suit": SUITS[suit], "label": f"{rank} of {SUITS[suit]}"}


def action_json(action: Action) -> dict[str, Any]:
    """One legal action for the page: its canonical string, its cards and what it is, in words.

    The label is the engine's reading of the cards (classify), so the page knows nothing of
    combinations; where the Phoenix or the Mah Jong's wish makes several actions of one set of
    cards, each says which."""
    text = str(action)
    out: dict[str, Any] = {"action": text, "cards": [], "label": text, "bomb": False}
    if not isinstance(action, Play):
        return out
    cards = cards_of(action.cards_mask)
    out["cards"] = [CARD_NAMES[c] for c in cards]
    readings = classify(action.cards_mask)
    reading = next((r for r in readings if not action.phoenix or r.phoenix == action.phoenix), None)
    words = ("dog" if reading is not None and reading.kind.label == "dog" else None) or (
        reading.describe() if reading is not None else "play"
    )
    if reading is not None and reading.is_bomb:
        out["bomb"] = True
        words = f"BOMB: {words}"
    if action.phoenix:
        words += f", the Phoenix as {rank_name(action.phoenix)}"
        out["phoenix"] = rank_name(action.phoenix)
    if action.wish:
        words += f", wishing for {rank_name(action.wish)}"
        out["wish"] = rank_name(action.wish)
    elif CARD_NAMES[cards[0]] == "MJ":
        words += ", no wish"
        out["wish"] = ""
    out["label"] = words
    return out


@dataclass
class OpenRequest:
    """A decision the seat owes, as the referee asked it, and when that was (for the clock)."""

    request_id: int
    kind: DecisionKind
    state_version: int
    deadline_ms: int
    bank_left_ms: int
    legal: list[dict[str, Any]]
    exchange_to: list[int]
    exchange_give: int
    can_call_tichu: bool
    received_at: float

    def to_json(self, now: float) -> dict[str, Any]:
        """The request for the page: its deadline counted from now."""
        spent_ms = int((now - self.received_at) * 1000)
        return {
            "id": self.request_id,
            "kind": KIND_NAMES[self.kind],
            "deadline_ms": max(0, self.deadline_ms - spent_ms),
            "no_limit": self.deadline_ms >= NO_LIMIT_MS,
            "bank_left_ms": self.bank_left_ms,
            "legal": self.legal,
            "exchange_to": self.exchange_to,
            "exchange_give": self.exchange_give,
            "can_call_tichu": self.can_call_tichu,
        }


@dataclass
class Step:
    """What one message made: JSON messages for the page, and messages for the referee."""

    page: list[dict[str, Any]] = field(default_factory=list)
    referee: list[pb.BotMessage] = field(default_factory=list)
    finished: bool = False


class SeatView:
    """The person's seat: the referee's messages folded into what the page shows, and the
    page's answers turned into BotMessages.

    Two answers are given on the person's behalf, as the SDK gives them on a bot's: a bomb
    window whose only legal answer is to decline (R-BOMB-5 lets a client do so), and nothing else.
    """

    def __init__(self, now: Callable[[], float] = time.monotonic) -> None:
        self._now = now
        self.match_id = ""
        self.seat: int | None = None
        self.names: list[str] = []
        self.connected: list[bool] = []
        self.decision_ms = 0
        self.obs: Observation | None = None
        self.snapshot_version = -1
        self.state_version = 0
        self.last_seq = 0
        self.pending: dict[int, OpenRequest] = {}
        self.sent: dict[int, OpenRequest] = {}  # answered, until the referee accepts or refuses
        self.cancelled: set[int] = set()
        self.log: list[str] = []
        self.result: dict[str, Any] | None = None
        self.welcomed = False
        # Whether a Tichu call would be accepted, as the referee's last request said, until the
        # seat's next move (the engine decides; the page only shows or hides its button).
        self.may_call = False

    # ---------------------------------------------------------------------------- to the referee

    @staticmethod
    def hello(token: str) -> pb.BotMessage:
        """The stream's Hello: the person's seat token, with the options a person's client wants."""
        return pb.BotMessage(
            hello=pb.Hello(
                token=token,
                bot_name=PERSON_BOT_NAME,
                bot_version="browser",
                protocol_version=PROTOCOL_VERSION,
                accept_bundles=True,
                # Windows without a bomb to play and turns where passing is all there is are not
                # asked: a person would only click them away.
                referee_declines=True,
                referee_passes=True,
            )
        )

    def from_page(self, text: str) -> Step:
        """A page's message (not the hello) as BotMessages; PageMessageError if it is not one."""
        if len(text.encode()) > MAX_PAGE_MESSAGE_BYTES:
            raise PageMessageError(f"a message is at most {MAX_PAGE_MESSAGE_BYTES} bytes")
        try:
            data = json.loads(text)
        except ValueError:
            raise PageMessageError("a message is a JSON object") from None
        if not isinstance(data, dict):
            raise PageMessageError("a message is a JSON object")
        kind = data.get("type")
        if kind == "tichu":
            return Step(referee=[self._out_of_turn("tichu")])
        if kind != "act":
            raise PageMessageError(f"unknown message type {str(kind)[:20]!r}")
        action = data.get("action")
        if not isinstance(action, str) or not action.strip() or len(action) > MAX_ACTION_CHARS:
            raise PageMessageError(f"an action is a string of 1-{MAX_ACTION_CHARS} characters")
        request_id = data.get("request")
        request = self.pending.get(request_id) if isinstance(request_id, int) else None
        if request is None:
            # No open request: an action the rules allow at any moment (a bomb in a window).
            return Step(referee=[self._out_of_turn(action.strip())])
        del self.pending[request.request_id]
        self.sent[request.request_id] = request
        decision = pb.Decision(
            request_id=request.request_id,
            action=pb.Action(text=action.strip()),
            state_version=request.state_version,
        )
        return Step(page=[self.view()], referee=[pb.BotMessage(decision=decision)])

    def _out_of_turn(self, action: str) -> pb.BotMessage:
        out = pb.OutOfTurn(action=pb.Action(text=action), state_version=self.state_version)
        return pb.BotMessage(out_of_turn=out)

    # ---------------------------------------------------------------------------- from the referee

    def from_referee(self, envelope: pb.RefereeMessage) -> Step:
        """What the referee sent (a Bundle's messages in order): the page's messages (one view
        at the end, if anything it shows changed) and the answers given for the person."""
        step = Step()
        changed = False
        lines: list[str] = []
        for message in unbundle(envelope):
            kind = message.WhichOneof("kind")
            if kind == "ping":
                step.referee.append(pb.BotMessage(pong=pb.Pong(nonce=message.ping.nonce)))
            elif kind == "welcome":
                self._welcome(message.welcome)
                changed = True
            elif kind == "snapshot":
                self._snapshot(message.snapshot, step)
                changed = True
            elif kind == "event":
                line = self._event(message.event)
                if line is not None:
                    lines.append(line)
                    changed = True
            elif kind == "request":
                changed |= self._request(message.request, step)
            elif kind == "cancelled":
                rid = message.cancelled.request_id
                self.cancelled.add(rid)
                changed |= self.pending.pop(rid, None) is not None
                self.sent.pop(rid, None)
            elif kind == "rejection":
                changed |= self._rejection(message.rejection, step)
            elif kind == "seat_status":
                status = message.seat_status
                if 0 <= status.seat < len(self.connected):
                    self.connected[status.seat] = status.connected
                    changed = True
            elif kind == "result":
                self.result = result_json(message.result, self.seat)
                self.pending.clear()
                step.finished = True
                changed = True
        if lines:
            self.log = (self.log + lines)[-LOG_LINES:]
            step.page.insert(0, {"type": "log", "lines": lines})
        if changed:
            step.page.append(self.view())
        if self.result is not None and step.finished:
            step.page.append({"type": "result", **self.result})
        return step

    def _welcome(self, welcome: pb.Welcome) -> None:
        self.welcomed = True
        self.match_id = welcome.match_id
        self.decision_ms = welcome.clock.decision_ms
        if self.obs is None or self.seat != welcome.seat:
            self.obs = before_first_deal(welcome.seat, config_from_proto(welcome.rules))
            self.snapshot_version = -1
        self.seat = welcome.seat
        count = len(welcome.seats)
        self.names = [""] * count
        self.connected = [False] * count
        for info in welcome.seats:
            if 0 <= info.seat < count:
                self.names[info.seat] = info.bot_name
                self.connected[info.seat] = info.connected
        # A new stream: the Snapshot lists every request still open, answered or not.
        self.pending.clear()
        self.sent.clear()

    def _snapshot(self, snapshot: pb.Snapshot, step: Step) -> None:
        full = observation_from_json(json.loads(snapshot.observation_json))
        self.may_call = full.can_call_tichu
        self.obs = idle(full)
        self.snapshot_version = snapshot.state_version
        self.state_version = max(self.state_version, snapshot.state_version)
        for request in snapshot.pending:
            self._request(request, step)

    def _event(self, message: pb.GameEvent) -> str | None:
        old = message.state_version <= self.snapshot_version
        if message.seq <= self.last_seq and (old or message.state_version <= self.state_version):
            return None  # heard before a reconnection (and in the snapshot), or a repeated copy
        self.last_seq = max(self.last_seq, message.seq)
        self.state_version = max(self.state_version, message.state_version)
        event = event_from_proto(message)
        if self.obs is not None and not old:
            self.obs = advance(self.obs, event)
        # An accepted answer shows as events: whatever was sent is taken by now.
        self.sent.clear()
        if getattr(event, "seat", None) == self.seat:
            self.may_call = False
        return describe(event, self._logged_name)

    def _request(self, request: pb.DecisionRequest, step: Step) -> bool:
        rid = request.request_id
        kind = KIND_FROM_PROTO.get(request.kind)
        if rid in self.cancelled or rid in self.pending or kind is None:
            return False
        self.state_version = max(self.state_version, request.state_version)
        if request.observation_json:
            self.obs = idle(observation_from_json(json.loads(request.observation_json)))
        self.may_call = request.can_call_tichu
        actions = [action_from_proto(a) for a in request.legal_actions]
        if kind is DecisionKind.BOMB_WINDOW and all(str(a) == "decline" for a in actions):
            # No bomb to play: decline at once, as a client library may (R-BOMB-5). A Tichu
            # call stays open to the person at any moment through the Tichu button.
            decline = pb.Decision(
                request_id=rid, action=pb.Action(text="decline"), state_version=request.state_version
            )
            step.referee.append(pb.BotMessage(decision=decline))
            return False
        self.pending[rid] = OpenRequest(
            request_id=rid,
            kind=kind,
            state_version=request.state_version,
            deadline_ms=request.deadline_ms,
            bank_left_ms=request.bank_left_ms,
            legal=[action_json(a) for a in actions],
            exchange_to=list(request.exchange_to),
            exchange_give=request.exchange_give,
            can_call_tichu=request.can_call_tichu,
            received_at=self._now(),
        )
        return True

    def _rejection(self, rejection: pb.Rejection, step: Step) -> bool:
        reason = REASON_FROM_PROTO.get(rejection.reason)
        step.page.append(
            {
                "type": "rejection",
                "reason": str(rejection.reason) if reason is None else reason.value,
                "rule": rejection.rule,
                "message": rejection.message,
                "request": rejection.request_id,
            }
        )
        # A refused answer changes nothing: its request is open again, if it still is.
        request = self.sent.pop(rejection.request_id, None)
        if request is not None and request.request_id not in self.cancelled:
            self.pending[request.request_id] = request
            return True
        return False

    # ---------------------------------------------------------------------------- for the page

    def seat_name(self, seat: int) -> str:
        """How the page names a seat: "you", or the player's name and seat."""
        if seat == self.seat:
            return "you"
        name = self.names[seat] if 0 <= seat < len(self.names) else ""
        return f"{name} (seat {seat})" if name else f"seat {seat}"

    def _logged_name(self, seat: int) -> str:
        return f"seat {seat} (you)" if seat == self.seat else self.seat_name(seat)

    def view(self) -> dict[str, Any]:
        """The whole seat as the page draws it."""
        now = self._now()
        obs = self.obs
        seat = self.seat if self.seat is not None else 0
        view: dict[str, Any] = {
            "type": "view",
            "match_id": self.match_id,
            "seat": self.seat,
            "names": self.names,
            "connected": self.connected,
            "no_limit": self.decision_ms >= NO_LIMIT_MS,
            "requests": [r.to_json(now) for r in self.pending.values()],
            "log": self.log,
            "result": self.result,
        }
        if obs is None:
            return view
        players = obs.config.players
        view.update(
            {
                "team": obs.team,
                "phase": obs.phase.value,
                "round": obs.round + 1,
                "dealer": obs.dealer,
                "scores": list(obs.scores),
                "history": [list(h) for h in obs.history],
                "hand": [card_json(c) for c in obs.hand],
                "seats": [
                    {
                        "seat": s,
                        "name": self.seat_name(s),
                        "team": s % 2,
                        "cards": obs.hand_sizes[s],
                        "call": obs.calls[s],
                        "out": s in obs.out,
                        "passed": s in obs.passed,
                        "turn": obs.turn == s,
                        "connected": self.connected[s] if s < len(self.connected) else False,
                        "place": ("you", "right", "partner", "left")[(s - seat) % players]
                        if players == 4
                        else str((s - seat) % players),
                    }
                    for s in range(players)
                ],
                "trick": [
                    {"seat": p.seat, "name": self.seat_name(p.seat), "cards": [card_json(c) for c in p.cards]}
                    for p in obs.trick
                ],
                "top_seat": obs.top_seat,
                "wish": rank_name(obs.wish) if obs.wish else None,
                "gift_pending": obs.gift_pending,
                "exchange_given": None
                if obs.exchange_given is None
                else [{"to": to, **card_json(c)} for to, c in obs.exchange_given],
                "exchange_received": [{"from": giver, **card_json(c)} for giver, c in obs.exchange_received],
                "can_call_tichu": self.may_call or any(r.can_call_tichu for r in self.pending.values()),
                "game_over": obs.phase is Phase.GAME_OVER,
            }
        )
        return view


def result_json(result: pb.MatchResult, seat: int | None) -> dict[str, Any]:
    """The match's result for the page, in words too."""
    scores = list(result.scores)
    if result.winner in (0, 1):
        mine = seat is not None and result.winner == seat % 2
        text = f"{'Your team' if mine else 'The other team'} wins, {scores[0]} to {scores[1]}"
        if seat is not None and seat % 2 == 1 and len(scores) == 2:
            text = f"{'Your team' if mine else 'The other team'} wins, {scores[1]} to {scores[0]}"
    else:
        text = (
            f"A draw, {scores[0]} to {scores[1]}" if len(scores) == 2 else "The match ended without a winner"
        )
    if result.forfeit:
        text += f" (forfeit: {result.reason})"
    return {
        "match_id": result.match_id,
        "winner": result.winner,
        "scores": scores,
        "forfeit": result.forfeit,
        "reason": result.reason,
        "text": text,
    }


def parse_hello(text: str) -> str:
    """The seat token of the page's first message; PageMessageError if it is not a hello."""
    if len(text.encode()) > MAX_PAGE_MESSAGE_BYTES:
        raise PageMessageError(f"a message is at most {MAX_PAGE_MESSAGE_BYTES} bytes")
    try:
        data = json.loads(text)
    except ValueError:
        raise PageMessageError("a message is a JSON object") from None
    if not isinstance(data, dict) or data.get("type") != "hello":
        raise PageMessageError("the first message is a hello with the seat token")
    token = data.get("token")
    if not isinstance(token, str) or not token or len(token) > 200:
        raise PageMessageError("the hello carries the seat token from the link (the part after '#')")
    return token


__all__ = [
    "MAX_PAGE_MESSAGE_BYTES",
    "NO_LIMIT_MS",
    "PageMessageError",
    "SeatView",
    "Step",
    "action_json",
    "card_json",
    "parse_hello",
    "result_json",
]
