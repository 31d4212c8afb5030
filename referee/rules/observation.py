"""observe(state, seat): exactly what one seat may know (R-INFO-1), and advance(obs, event): the
only fold of events into that knowledge.

An Observation never holds another seat's hand, the cards not yet seen during Grand Tichu,
another seat's exchange, unrevealed Grand Tichu or pre-step answers, other seats' answers to an
open bomb window, or the seed (from which the deal could be recomputed).

A bot over the network gets its whole observation only in a snapshot, then events and requests:
advance() folds each event it may see into its observation, for_request() adds what a request
says is owed and legal, answered() its own answers; the SDK and the referee thus share one fold.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, fields, replace
from typing import Any, Final, overload

from referee.rules.actions import CALL_TICHU, Action, CallTichu, DeclineTichu, GrandTichu, parse_action
from referee.rules.cards import (
    CARD_NAMES,
    DOG,
    Card,
    cards_of,
    format_cards,
    mask_of,
    parse_card,
    parse_cards,
    parse_rank,
    rank_name,
)
from referee.rules.combos import DOG_KIND, Combo
from referee.rules.config import RulesConfig
from referee.rules.events import (
    CallDeclined,
    Called,
    CardsDealt,
    CardsReceived,
    DragonGiftPending,
    DragonGiven,
    Event,
    ExchangeCompleted,
    ExchangeSubmitted,
    GameOver,
    Passed,
    Played,
    RoundEnded,
    RoundScored,
    RoundStarted,
    TrickWon,
    WentOut,
    WishFulfilled,
    combo_from_json,
)
from referee.rules.game import _dog_pile, _dog_receiver
from referee.rules.legal import (
    _PHASE_KINDS,
    DecisionKind,
    ExchangeChoices,
    can_call_tichu,
    legal_actions,
    legal_decisions,
    to_act,
)
from referee.rules.round import _phase_after_full_deal
from referee.rules.state import CALL_NAMES, Phase, State, first_cards, full_hand_size, team_of
from referee.rules.values import field_values


@dataclass(frozen=True, slots=True)
class TrickPlay:
    """One play of the current trick: who, which cards, and the reading."""

    seat: int
    cards: tuple[Card, ...]
    combo: Combo

    def __reduce__(self) -> tuple[type[TrickPlay], tuple[Any, ...]]:
        return (TrickPlay, field_values(self))


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
    dog_aside: int | None  # the seat whose Dog lies aside until a trick is won (R-DOG-4)
    to_act: tuple[int, ...]
    legal_actions: Sequence[Action]
    legal_decisions: Sequence[Action]
    can_call_tichu: bool
    winner: int | None

    def __reduce__(self) -> tuple[type[Observation], tuple[Any, ...]]:
        return (Observation, field_values(self))

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
            "dog_aside": self.dog_aside,
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
        dog_aside=data.get("dog_aside"),  # absent from the snapshots of older referees
        to_act=tuple(data["to_act"]),
        legal_actions=_actions_from_json(data["legal_actions"], hand),
        legal_decisions=_actions_from_json(data["legal_decisions"], hand),
        can_call_tichu=data["can_call_tichu"],
        winner=data["winner"],
    )


def _to_act_seen(state: State, seat: int) -> tuple[int, ...]:
    """The seats that owe a decision, as `seat` may know them: in the simultaneous phases another
    seat's answer is hidden until all are revealed (R-GT-1, R-CALL-6, R-EXCH-3), so every other
    seat that was asked still owes (R-INFO-1)."""
    pending = to_act(state)
    phase = state.phase
    all_at_once = phase is Phase.GRAND_TICHU and state.config.gt_decision_mode == "simultaneous"
    if phase is Phase.EXCHANGE or all_at_once:
        asked: Sequence[int] = range(state.players)
    elif phase is Phase.TICHU_STEP:
        asked = [s for s, answer in enumerate(state.tichu_step) if answer != 2]  # 2: a Grand Tichu caller
    else:
        return pending
    return tuple([s for s in asked if s != seat or s in pending])


def observe(state: State, seat: int) -> Observation:
    """What `seat` may know now (R-INFO-1)."""
    n = state.players
    pending = _to_act_seen(state, seat)
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
        dog_aside=state.dog_owner if state.dog_aside else None,
        to_act=pending,
        legal_actions=legal_actions(state, seat),
        legal_decisions=legal_decisions(state, seat),
        can_call_tichu=can_call_tichu(state, seat),
        winner=state.winner if state.phase is Phase.GAME_OVER else None,
    )


_format_mask: Final = functools.lru_cache(maxsize=4096)(
    format_cards
)  # won piles repeat request after request
_combo_json: Final = functools.lru_cache(maxsize=1024)(Combo.to_json)  # read only: dumped at once
_config_json: Final = functools.lru_cache(maxsize=16)(RulesConfig.to_json)


def observation_json(state: State, seat: int, decisions: list[str] | None = None) -> str:
    """json.dumps(observe(state, seat).to_json()), compact, made straight from the state.

    observation_data's object, encoded; its docstring says why it skips observe().
    """
    return json.dumps(observation_data(state, seat, decisions), separators=(",", ":"))


def observation_data(state: State, seat: int, decisions: list[str] | None = None) -> dict[str, Any]:
    """observe(state, seat).to_json(), made straight from the state.

    The referee sends one with every request (about 80 a hand): this skips the Observation's
    tuples of cards, and the strings of its listings when the caller has them (`decisions`,
    legal_decisions' canonical strings: the texts the wire forms carry). tests/test_wire.py
    holds it to observe() on every request of played games.
    """
    n = state.players
    pending = _to_act_seen(state, seat)
    if decisions is None:
        decisions_json = _actions_json(legal_decisions(state, seat))
        actions_json = _actions_json(legal_actions(state, seat))
    else:
        decisions_json = actions_json = decisions
        listed = legal_actions(state, seat)
        if len(listed) > len(decisions):  # legal_decisions, then a spontaneous Tichu call
            actions_json = decisions + [str(a) for a in listed[len(decisions) :]]
    given = state.exchange[seat]
    top_seat, turn, gift = state.top_seat, state.turn, state.gift
    return {
        "seat": seat,
        "team": team_of(seat),
        "config": _config_json(state.config),
        "phase": state.phase.value,
        "round": state.round,
        "dealer": state.dealer,
        "scores": list(state.scores),
        "history": [list(h) for h in state.history],
        "hand": _format_mask(state.hands[seat]),
        "hand_sizes": [h.bit_count() for h in state.hands],
        "calls": [CALL_NAMES[c] for c in state.calls],
        "my_grand_tichu": None if state.gt[seat] < 0 else bool(state.gt[seat]),
        "my_tichu_step": None if state.tichu_step[seat] not in (0, 1) else bool(state.tichu_step[seat]),
        "exchange_given": None if given is None else {str(s): CARD_NAMES[c] for s, c in given},
        "exchange_received": {str(s): CARD_NAMES[c] for s, c in state.received[seat]},
        "played": [bool(state.played >> s & 1) for s in range(n)],
        "won_cards": [_format_mask(pile) for pile in state.piles],
        "out": list(state.out),
        "trick": [
            {"seat": s, "cards": _format_mask(cards), "combo": _combo_json(combo)}
            for s, cards, combo in state.trick
        ],
        "top": None if state.top is None else _combo_json(state.top),
        "top_seat": None if top_seat < 0 else top_seat,
        "turn": None if turn < 0 else turn,
        "passed": [s for s in range(n) if state.passed >> s & 1],
        "window_open": bool(state.window),
        "window_order": list(state.window),
        "must_answer_window": bool(state.window) and seat in pending,
        "wish": rank_name(state.wish) if state.wish else None,
        "gift_pending": None if gift < 0 else gift,
        "dog_aside": state.dog_owner if state.dog_aside else None,
        "to_act": list(pending),
        "legal_actions": actions_json,
        "legal_decisions": decisions_json,
        "can_call_tichu": can_call_tichu(state, seat),
        "winner": state.winner if state.phase is Phase.GAME_OVER else None,
    }


# ----------------------------------------------------------------------------- the fold of events

# Fields that only the referee can fill in (whose turn, the window's order, what is legal), as
# "nothing owed": a seat's own fold of events shows them so until a request says otherwise.
_IDLE: Final[dict[str, Any]] = {
    "turn": None,
    "window_open": False,
    "window_order": (),
    "must_answer_window": False,
    "to_act": (),
    "legal_actions": (),
    "legal_decisions": (),
    "can_call_tichu": False,
}
REFEREE_ONLY: Final = tuple(_IDLE)
# The phase each kind of request implies; a Dragon gift keeps the phase: PLAY, or ROUND_END
# after the last trick (R-DRG-5).
_REQUEST_PHASES: Final = {kind: phase for phase, kind in _PHASE_KINDS.items()} | {
    DecisionKind.PLAY: Phase.PLAY,
    DecisionKind.BOMB_WINDOW: Phase.PLAY,
}


def _make_evolve() -> Callable[[Observation, dict[str, Any]], Observation]:
    """`dataclasses.replace` for Observation, made as dataclasses makes an __init__ (one line per
    field, no loop). advance() runs for every event a bot hears (about 160 a hand per seat), and
    replace was three quarters of its cost: 2.9 us here against 8.7 us (a typical fold)."""
    try:
        object.__new__(Observation)
    except TypeError:  # the compiled build: a native class, whose own replace is fast
        return lambda obs, changes: replace(obs, **changes)
    namespace: dict[str, Any] = {"new": object.__new__, "Observation": Observation}
    lines = ["def evolve(obs, changes):", "    made = new(Observation)"]
    for field in fields(Observation):
        name = field.name
        # The slot's own setter: a frozen dataclass refuses setattr, as it should for callers.
        namespace[f"set_{name}"] = getattr(Observation, name).__set__
        lines.append(f"    set_{name}(made, changes[{name!r}] if {name!r} in changes else obs.{name})")
    lines.append("    return made")
    exec("\n".join(lines), namespace)  # the source is made here, from the field names alone
    evolve: Callable[[Observation, dict[str, Any]], Observation] = namespace["evolve"]
    return evolve


_evolve: Final = _make_evolve()


def idle(obs: Observation) -> Observation:
    """`obs` with what only the referee knows (REFEREE_ONLY) set to "nothing owed"."""
    return replace(obs, **_IDLE)


def before_first_deal(seat: int, config: RulesConfig) -> Observation:
    """What `seat` knows before the first deal: the rules; advance() folds the game in from here."""
    n = config.players
    return Observation(
        seat=seat,
        team=team_of(seat),
        config=config,
        phase=Phase.GRAND_TICHU,
        round=0,
        dealer=0,
        scores=(0, 0),
        history=(),
        hand=(),
        hand_sizes=(0,) * n,
        calls=("none",) * n,
        my_grand_tichu=None,
        my_tichu_step=None,
        exchange_given=None,
        exchange_received=(),
        played=(False,) * n,
        won_cards=((),) * n,
        out=(),
        trick=(),
        top=None,
        top_seat=None,
        passed=(),
        wish=0,
        gift_pending=None,
        dog_aside=None,
        winner=None,
        **_IDLE,
    )


def advance(obs: Observation, event: Event) -> Observation:
    """The observation after `event`, one that this seat may see: the only fold of events.

    Folding the events of a move into the observation before it gives observe() after it on
    every field but REFEREE_ONLY, which come out "nothing owed". A seat's own answers that no
    event shows yet (Grand Tichu and pre-step answers while the others' are hidden) come from
    answered(). An event the seat may not see changes nothing.
    """
    if not event.visible_to(obs.seat):
        return obs
    fold = _FOLDS.get(type(event))
    if fold is None:
        # An event that changes nothing a seat sees (a bomb window closing unbombed, four in ten
        # of a game's events): nothing to make if nothing is owed already.
        return obs if _is_idle(obs) else _evolve(obs, dict(_IDLE))
    return _evolve(obs, {**_IDLE, **fold(obs, event)})


def _is_idle(obs: Observation) -> bool:
    """Whether every REFEREE_ONLY field of `obs` says "nothing owed" (is as _IDLE has it)."""
    return (
        obs.turn is None
        and obs.window_open is False
        and obs.window_order == ()
        and obs.must_answer_window is False
        and obs.to_act == ()
        and obs.legal_actions == ()
        and obs.legal_decisions == ()
        and obs.can_call_tichu is False
    )


class _WithCall(Sequence[Action]):
    """A listing and then a spontaneous Tichu call, without reading the listing before it is read."""

    __slots__ = ("_listed",)

    def __init__(self, listed: Sequence[Action]) -> None:
        self._listed = listed

    def __len__(self) -> int:
        return len(self._listed) + 1

    @overload
    def __getitem__(self, index: int) -> Action: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[Action]: ...

    def __getitem__(self, index: int | slice) -> Action | Sequence[Action]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        size = len(self)
        if index < 0:
            index += size
        if not 0 <= index < size:
            raise IndexError(index)
        return CALL_TICHU if index == size - 1 else self._listed[index]

    def __iter__(self) -> Iterator[Action]:
        yield from self._listed
        yield CALL_TICHU

    def __contains__(self, action: object) -> bool:
        return action == CALL_TICHU or action in self._listed

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence) and not isinstance(other, str):
            return len(self) == len(other) and tuple(self) == tuple(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"({self._listed!r}, {CALL_TICHU!r})"


def for_request(
    obs: Observation, kind: DecisionKind, legal: Sequence[Action], can_call_tichu: bool
) -> Observation:
    """The observation to decide on: `obs` plus what a request says is owed and legal.

    A request tells the seat that it owes a decision of `kind`, its legal answers and whether
    a Tichu call is accepted; legal_actions is then legal_decisions and, when a call is
    accepted in PLAY or EXCHANGE, a spontaneous call (as observe() lists them).
    """
    phase = _REQUEST_PHASES.get(kind, obs.phase)
    with_call: Sequence[Action] = legal
    if can_call_tichu and phase in (Phase.PLAY, Phase.EXCHANGE):
        # A listing that makes its actions on access is left unread (an exchange's 2,184).
        with_call = (*legal, CALL_TICHU) if isinstance(legal, tuple) else _WithCall(legal)
    window = kind is DecisionKind.BOMB_WINDOW
    changes = {
        "phase": phase,
        "turn": obs.seat if kind is DecisionKind.PLAY else None,
        "window_open": window,
        "must_answer_window": window,
        "to_act": (obs.seat,),
        "legal_actions": with_call,
        "legal_decisions": legal,
        "can_call_tichu": can_call_tichu,
    }
    return _evolve(obs, changes)


def answered(obs: Observation, action: Action) -> Observation:
    """`obs` after this seat's own answer, which its events show only later (or never)."""
    if isinstance(action, GrandTichu):
        return replace(obs, my_grand_tichu=action.call)
    if isinstance(action, DeclineTichu):
        return replace(obs, my_tichu_step=False)
    if isinstance(action, CallTichu) and obs.phase is Phase.TICHU_STEP:
        return replace(obs, my_tichu_step=True)
    if isinstance(action, CallTichu):
        # A spontaneous call is public at once (R-CALL-4): the seat decides knowing it.
        return replace(obs, calls=_with(obs.calls, obs.seat, "tichu"))
    return obs


# Each fold returns the fields that an event changes; advance() applies them.
_Fold = Callable[[Observation, Any], dict[str, Any]]


def _with(values: tuple[Any, ...], index: int, value: Any) -> tuple[Any, ...]:
    return values[:index] + (value,) + values[index + 1 :]


def _won(piles: tuple[tuple[Card, ...], ...], seat: int, cards: int) -> tuple[tuple[Card, ...], ...]:
    """The piles with `cards` added to `seat`'s."""
    return _with(piles, seat, cards_of(mask_of(piles[seat]) | cards))


_NO_TRICK: Final[dict[str, Any]] = {"trick": (), "top": None, "top_seat": None, "passed": ()}


def _round_started(obs: Observation, event: RoundStarted) -> dict[str, Any]:
    config = obs.config
    n = config.players
    blank = before_first_deal(obs.seat, config)
    if config.grand_tichu_enabled:
        # The first 8 cards each (6 in §16), the rest after the Grand Tichu decisions (R-DEAL-2).
        phase, sizes, my_gt = Phase.GRAND_TICHU, (first_cards(n),) * n, None
    else:
        phase = _phase_after_full_deal(config, True)  # no Grand Tichu: nobody has called yet
        sizes, my_gt = _full_sizes(config, event.dealer), False
    fields = {name: getattr(blank, name) for name in _ROUND_FIELDS}
    return fields | {
        "round": event.round,
        "dealer": event.dealer,
        "phase": phase,
        "hand_sizes": sizes,
        "my_grand_tichu": my_gt,
    }


# What a new round starts afresh (everything but the seat, the rules, the scores and history).
_ROUND_FIELDS: Final = tuple(
    f.name
    for f in fields(Observation)
    if f.name not in {"seat", "team", "config", "scores", "history", *REFEREE_ONLY}
)


def _full_sizes(config: RulesConfig, dealer: int) -> tuple[int, ...]:
    return tuple(full_hand_size(config, dealer, s) for s in range(config.players))


def _cards_dealt(obs: Observation, event: CardsDealt) -> dict[str, Any]:
    changes: dict[str, Any] = {"hand": cards_of(mask_of(obs.hand) | event.cards)}
    if event.stage == "rest":
        # Every seat holds its full hand: the pre-exchange step, or the exchange (R-CALL-6).
        changes["phase"] = _phase_after_full_deal(obs.config, "none" in obs.calls)
        changes["hand_sizes"] = _full_sizes(obs.config, obs.dealer)
    return changes


def _is_step_answer(obs: Observation, event: Called | CallDeclined) -> bool:
    """Whether a Tichu call or refusal is a pre-exchange step answer, revealed with the others
    as the step ends (R-CALL-6); with pre_step no other call is accepted before the play."""
    return (
        event.call == "tichu"
        and obs.config.tichu_call_exchange_mode == "pre_step"
        and obs.phase in (Phase.TICHU_STEP, Phase.EXCHANGE)
    )


def _called(obs: Observation, event: Called) -> dict[str, Any]:
    changes: dict[str, Any] = {"calls": _with(obs.calls, event.seat, event.call)}
    return changes | _own_answer(obs, event, True)


def _call_declined(obs: Observation, event: CallDeclined) -> dict[str, Any]:
    return _own_answer(obs, event, False)


def _own_answer(obs: Observation, event: Called | CallDeclined, called: bool) -> dict[str, Any]:
    changes: dict[str, Any] = {}
    if event.call == "grand_tichu":
        if event.seat == obs.seat:
            changes["my_grand_tichu"] = called
    elif _is_step_answer(obs, event):
        changes["phase"] = Phase.EXCHANGE
        if event.seat == obs.seat:
            changes["my_tichu_step"] = called
    return changes


def _exchange_submitted(obs: Observation, event: ExchangeSubmitted) -> dict[str, Any]:
    return {"exchange_given": tuple((s, Card(c)) for s, c in event.gifts)}


def _cards_received(obs: Observation, event: CardsReceived) -> dict[str, Any]:
    gone = mask_of(c for _, c in obs.exchange_given or ())
    got = mask_of(c for _, c in event.received)
    return {
        "hand": cards_of(mask_of(obs.hand) & ~gone | got),
        "exchange_received": tuple((s, Card(c)) for s, c in event.received),
        "exchange_given": None,
    }


def _exchange_completed(obs: Observation, event: ExchangeCompleted) -> dict[str, Any]:
    return {"phase": Phase.PLAY}


def _played(obs: Observation, event: Played) -> dict[str, Any]:
    seat, cards = event.seat, event.cards
    sizes = _with(obs.hand_sizes, seat, obs.hand_sizes[seat] - cards.bit_count())
    changes: dict[str, Any] = {"hand_sizes": sizes, "played": _with(obs.played, seat, True)}
    if seat == obs.seat:
        changes["hand"] = cards_of(mask_of(obs.hand) & ~cards)
    if event.combo.kind is DOG_KIND:
        # The Dog makes no trick (R-DOG-2); where the card goes depends on dog_card_pile.
        active = sum(1 << s for s, size in enumerate(sizes) if size)
        receiver = _dog_receiver(obs.config.players, seat, event.partner, active)
        owner = _dog_pile(obs.config.dog_card_pile, seat, receiver)
        if owner < 0:
            changes["dog_aside"] = seat
        else:
            changes["won_cards"] = _won(obs.won_cards, owner, DOG)
        return changes
    play = TrickPlay(seat, cards_of(cards), event.combo)
    return changes | {
        "trick": (*obs.trick, play),
        "top": event.combo,
        "top_seat": seat,
        "passed": (),
        "wish": event.wish or obs.wish,
    }


def _passed(obs: Observation, event: Passed) -> dict[str, Any]:
    return {"passed": tuple(sorted({*obs.passed, event.seat}))}


def _wish_fulfilled(obs: Observation, event: WishFulfilled) -> dict[str, Any]:
    return {"wish": 0}


def _trick_won(obs: Observation, event: TrickWon) -> dict[str, Any]:
    # The trick's cards include a Dog that lay aside (R-DOG-4 next_trick_winner).
    return _NO_TRICK | {"won_cards": _won(obs.won_cards, event.seat, event.cards), "dog_aside": None}


def _dragon_gift_pending(obs: Observation, event: DragonGiftPending) -> dict[str, Any]:
    return {"gift_pending": event.seat}


def _dragon_given(obs: Observation, event: DragonGiven) -> dict[str, Any]:
    won = _won(obs.won_cards, event.to, event.cards)  # a Dog lying aside included
    return _NO_TRICK | {"won_cards": won, "dog_aside": None, "gift_pending": None}


def _went_out(obs: Observation, event: WentOut) -> dict[str, Any]:
    return {"out": (*obs.out, event.seat)}


def _round_ended(obs: Observation, event: RoundEnded) -> dict[str, Any]:
    changes: dict[str, Any] = {"phase": Phase.ROUND_END, "wish": 0, "out": event.out}  # R-WISH-9
    piles = obs.won_cards
    if obs.dog_aside is not None:
        # No trick was won since the Dog: it goes to its player's pile (R-DOG-4).
        piles = _won(piles, obs.dog_aside, DOG)
        changes["dog_aside"] = None
    if event.reason != "normal" and obs.top_seat is not None:
        # A 1-2 (or a triple victory) counts no cards (R-END-3); they still lie somewhere: the
        # engine keeps them in the top player's pile. A normal end shows its last trick's fate
        # in the events that follow (R-END-4, R-DRG-5).
        piles = _won(piles, obs.top_seat, mask_of(c for play in obs.trick for c in play.cards))
        changes |= _NO_TRICK
    return changes | {"won_cards": piles}


def _round_scored(obs: Observation, event: RoundScored) -> dict[str, Any]:
    points = (event.round_points[0], event.round_points[1])
    return {"scores": (event.totals[0], event.totals[1]), "history": (*obs.history, points)}


def _game_over(obs: Observation, event: GameOver) -> dict[str, Any]:
    return {"phase": Phase.GAME_OVER, "winner": event.winner, "scores": (event.totals[0], event.totals[1])}


_FOLDS: Final[dict[type[Event], _Fold]] = {
    RoundStarted: _round_started,
    CardsDealt: _cards_dealt,
    Called: _called,
    CallDeclined: _call_declined,
    ExchangeSubmitted: _exchange_submitted,
    CardsReceived: _cards_received,
    ExchangeCompleted: _exchange_completed,
    Played: _played,
    Passed: _passed,
    WishFulfilled: _wish_fulfilled,
    TrickWon: _trick_won,
    DragonGiftPending: _dragon_gift_pending,
    DragonGiven: _dragon_given,
    WentOut: _went_out,
    RoundEnded: _round_ended,
    RoundScored: _round_scored,
    GameOver: _game_over,
}  # WindowClosed and LeadPassed change nothing a seat's view holds besides REFEREE_ONLY
