"""observe(state, seat): exactly what one seat may know (R-INFO-1), nothing more.

An Observation never holds another seat's hand, the cards not yet seen during Grand Tichu,
another seat's exchange, unrevealed Grand Tichu or pre-step answers, other seats' answers to an
open bomb window, or the seed (from which the deal could be recomputed).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from referee.rules.actions import Action, parse_action
from referee.rules.cards import (
    CARD_NAMES,
    Card,
    cards_of,
    mask_of,
    parse_card,
    parse_cards,
    parse_rank,
    rank_name,
)
from referee.rules.combos import Combo
from referee.rules.config import RulesConfig
from referee.rules.events import combo_from_json
from referee.rules.legal import ExchangeChoices, can_call_tichu, legal_actions, legal_decisions, to_act
from referee.rules.state import CALL_NAMES, Phase, State, team_of


@dataclass(frozen=True, slots=True)
class TrickPlay:
    """One play of the current trick: who, which cards, and the reading."""

    seat: int
    cards: tuple[Card, ...]
    combo: Combo


@dataclass(frozen=True, slots=True)
class Observation:
    """One seat's view of the game; `legal_actions` is exactly what the referee accepts now."""

    seat: int
    team: int
    config: RulesConfig
    phase: Phase
    round: int
    dealer: int
    scores: tuple[int, int]
    history: tuple[tuple[int, int], ...]
    hand: tuple[Card, ...]
    hand_sizes: tuple[int, ...]
    calls: tuple[str, ...]
    my_grand_tichu: bool | None  # own answer while the others' are still hidden
    my_tichu_step: bool | None
    exchange_given: tuple[tuple[int, Card], ...] | None
    exchange_received: tuple[tuple[int, Card], ...]
    played: tuple[bool, ...]
    won_cards: tuple[tuple[Card, ...], ...]
    out: tuple[int, ...]
    trick: tuple[TrickPlay, ...]
    top: Combo | None
    top_seat: int | None
    passed: tuple[int, ...]
    turn: int | None
    window_open: bool
    window_order: tuple[int, ...]
    must_answer_window: bool
    wish: int
    gift_pending: int | None
    to_act: tuple[int, ...]
    legal_actions: Sequence[Action]
    legal_decisions: Sequence[Action]
    can_call_tichu: bool
    winner: int | None

    @property
    def is_my_turn(self) -> bool:
        """True when this seat owes a decision."""
        return self.seat in self.to_act

    @property
    def is_lead(self) -> bool:
        """True when this seat is to lead (an empty table on its regular turn)."""
        return self.turn == self.seat and self.top is None and not self.window_open

    def to_json(self) -> dict[str, Any]:
        """The JSON form; observation_from_json(obs.to_json()) == obs."""
        return {
            "seat": self.seat,
            "team": self.team,
            "config": self.config.to_json(),
            "phase": self.phase.value,
            "round": self.round,
            "dealer": self.dealer,
            "scores": list(self.scores),
            "history": [list(h) for h in self.history],
            "hand": " ".join(CARD_NAMES[c] for c in self.hand),
            "hand_sizes": list(self.hand_sizes),
            "calls": list(self.calls),
            "my_grand_tichu": self.my_grand_tichu,
            "my_tichu_step": self.my_tichu_step,
            "exchange_given": None
            if self.exchange_given is None
            else {str(s): CARD_NAMES[c] for s, c in self.exchange_given},
            "exchange_received": {str(s): CARD_NAMES[c] for s, c in self.exchange_received},
            "played": list(self.played),
            "won_cards": [" ".join(CARD_NAMES[c] for c in pile) for pile in self.won_cards],
            "out": list(self.out),
            "trick": [
                {
                    "seat": p.seat,
                    "cards": " ".join(CARD_NAMES[c] for c in p.cards),
                    "combo": p.combo.to_json(),
                }
                for p in self.trick
            ],
            "top": None if self.top is None else self.top.to_json(),
            "top_seat": self.top_seat,
            "turn": self.turn,
            "passed": list(self.passed),
            "window_open": self.window_open,
            "window_order": list(self.window_order),
            "must_answer_window": self.must_answer_window,
            "wish": rank_name(self.wish) if self.wish else None,
            "gift_pending": self.gift_pending,
            "to_act": list(self.to_act),
            "legal_actions": _actions_json(self.legal_actions),
            "legal_decisions": _actions_json(self.legal_decisions),
            "can_call_tichu": self.can_call_tichu,
            "winner": self.winner,
        }


def _actions_json(actions: Sequence[Action]) -> list[str] | dict[str, Any]:
    # The 2,184 possible exchanges are described, not listed.
    if isinstance(actions, ExchangeChoices):
        return {"exchange_to": list(actions._recipients), "also": [str(a) for a in actions._extra]}
    return [str(a) for a in actions]


def _actions_from_json(data: Any, hand: tuple[Card, ...]) -> Sequence[Action]:
    if isinstance(data, dict):
        also = tuple(parse_action(a) for a in data.get("also", []))
        return ExchangeChoices(mask_of(hand), tuple(data["exchange_to"]), also)
    return tuple(parse_action(a) for a in data)


def _gifts(data: dict[str, str]) -> tuple[tuple[int, Card], ...]:
    return tuple(sorted((int(s), parse_card(c)) for s, c in data.items()))


def observation_from_json(data: dict[str, Any]) -> Observation:
    """Rebuild an Observation from its JSON form (what a remote bot receives)."""
    hand = parse_cards(data["hand"])
    top = data.get("top")
    return Observation(
        seat=data["seat"],
        team=data["team"],
        config=RulesConfig.from_json(data["config"]),
        phase=Phase(data["phase"]),
        round=data["round"],
        dealer=data["dealer"],
        scores=(data["scores"][0], data["scores"][1]),
        history=tuple((a, b) for a, b in data["history"]),
        hand=hand,
        hand_sizes=tuple(data["hand_sizes"]),
        calls=tuple(data["calls"]),
        my_grand_tichu=data["my_grand_tichu"],
        my_tichu_step=data["my_tichu_step"],
        exchange_given=None if data["exchange_given"] is None else _gifts(data["exchange_given"]),
        exchange_received=_gifts(data["exchange_received"]),
        played=tuple(data["played"]),
        won_cards=tuple(parse_cards(p) for p in data["won_cards"]),
        out=tuple(data["out"]),
        trick=tuple(
            TrickPlay(p["seat"], parse_cards(p["cards"]), combo_from_json(p["combo"])) for p in data["trick"]
        ),
        top=None if top is None else combo_from_json(top),
        top_seat=data["top_seat"],
        passed=tuple(data["passed"]),
        turn=data["turn"],
        window_open=data["window_open"],
        window_order=tuple(data["window_order"]),
        must_answer_window=data["must_answer_window"],
        wish=parse_rank(data["wish"]) if data["wish"] else 0,
        gift_pending=data["gift_pending"],
        to_act=tuple(data["to_act"]),
        legal_actions=_actions_from_json(data["legal_actions"], hand),
        legal_decisions=_actions_from_json(data["legal_decisions"], hand),
        can_call_tichu=data["can_call_tichu"],
        winner=data["winner"],
    )


def observe(state: State, seat: int) -> Observation:
    """What `seat` may know now (R-INFO-1)."""
    n = state.players
    pending = to_act(state)
    gift_given = state.exchange[seat]
    return Observation(
        seat=seat,
        team=team_of(seat),
        config=state.config,
        phase=state.phase,
        round=state.round,
        dealer=state.dealer,
        scores=state.scores,
        history=state.history,
        hand=cards_of(state.hands[seat]),
        hand_sizes=tuple(h.bit_count() for h in state.hands),
        calls=tuple(CALL_NAMES[c] for c in state.calls),
        my_grand_tichu=None if state.gt[seat] < 0 else bool(state.gt[seat]),
        my_tichu_step=None if state.tichu_step[seat] not in (0, 1) else bool(state.tichu_step[seat]),
        exchange_given=None if gift_given is None else tuple((s, Card(c)) for s, c in gift_given),
        exchange_received=tuple((s, Card(c)) for s, c in state.received[seat]),
        played=tuple(bool(state.played >> s & 1) for s in range(n)),
        won_cards=tuple(cards_of(p) for p in state.piles),
        out=state.out,
        trick=tuple(TrickPlay(s, cards_of(c), combo) for s, c, combo in state.trick),
        top=state.top,
        top_seat=None if state.top_seat < 0 else state.top_seat,
        passed=tuple(s for s in range(n) if state.passed >> s & 1),
        turn=None if state.turn < 0 else state.turn,
        window_open=bool(state.window),
        window_order=state.window,
        must_answer_window=bool(state.window) and seat in pending,
        wish=state.wish,
        gift_pending=None if state.gift < 0 else state.gift,
        to_act=pending,
        legal_actions=legal_actions(state, seat),
        legal_decisions=legal_decisions(state, seat),
        can_call_tichu=can_call_tichu(state, seat),
        winner=state.winner if state.phase is Phase.GAME_OVER else None,
    )
