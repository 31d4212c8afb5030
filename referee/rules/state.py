"""State: one game at one moment, immutable, with a documented JSON form from which play continues.

The JSON form (`state_to_json` / `state_from_json`, format `tichu-state/1`) is to Tichu what FEN
is to chess; the README documents every field. Only `hands` (and `turn` during play) are needed
to write a position by hand: every other field has a default.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum
from typing import Any, Final

from referee.rules.actions import Action, Play, parse_action
from referee.rules.cards import (
    CARD_NAMES,
    FULL_DECK,
    format_cards,
    parse_card,
    parse_mask,
    parse_rank,
    rank_name,
)
from referee.rules.combos import Combo, beats, classify
from referee.rules.config import RulesConfig
from referee.rules.errors import InvalidActionError

STATE_FORMAT: Final = "tichu-state/1"
CALL_NAMES: Final = ("none", "tichu", "grand_tichu")
NO_SEAT: Final = -1


class Phase(StrEnum):
    """Where a round stands (R-FLOW-1)."""

    GRAND_TICHU = "grand_tichu"  # 8 (or 6) cards seen; Grand Tichu decisions open
    TICHU_STEP = "tichu_step"  # the pre-exchange Tichu question (R-CALL-6 pre_step)
    EXCHANGE = "exchange"
    PLAY = "play"
    ROUND_END = "round_end"  # the round is over but for the final Dragon gift (R-DRG-5)
    GAME_OVER = "game_over"


# The phases as module globals, for the engine's hot paths: an enum member read through its
# class costs several times as much.
_GRAND_TICHU: Final = Phase.GRAND_TICHU
_TICHU_STEP: Final = Phase.TICHU_STEP
_EXCHANGE: Final = Phase.EXCHANGE
_PLAY: Final = Phase.PLAY
_ROUND_END: Final = Phase.ROUND_END
_GAME_OVER: Final = Phase.GAME_OVER


TrickEntry = tuple[int, int, Combo]  # (seat, cards, reading)


# What a State's equality and hashing compare: every field but the caches. A compiled State has
# no __slots__ to read at run time, so they are listed here, and the slots are made from them.
PUBLIC_FIELDS: Final = (
    "active",
    "calls",
    "config",
    "dealer",
    "dog_aside",
    "dog_owner",
    "exchange",
    "gift",
    "gt",
    "hands",
    "history",
    "out",
    "passed",
    "phase",
    "piles",
    "played",
    "received",
    "round",
    "scores",
    "seed",
    "table",
    "tichu_step",
    "top",
    "top_seat",
    "trick",
    "turn",
    "unseen",
    "window",
    "window_bombs",
    "window_declined",
    "winner",
    "wish",
)


class State:
    """A whole game at one moment; never mutated once returned by the engine.

    A slotted class rather than a frozen dataclass: `apply` copies it once per action and a
    dataclass copy costs several times more. Seats are ints; card sets are card masks.
    """

    # The caches, then the fields of the value (PUBLIC_FIELDS).
    __slots__ = ("_leads", "_legal", "_stamp", "_stop_before_deal", *PUBLIC_FIELDS)

    config: RulesConfig
    seed: int | str
    round: int
    dealer: int
    scores: tuple[int, int]
    history: tuple[tuple[int, int], ...]
    winner: int | None  # with phase GAME_OVER: 0 = team A, 1 = team B, None = draw
    phase: Phase
    hands: tuple[int, ...]
    unseen: tuple[int, ...]  # dealt but not yet seen: the last 6 (or 3-4) during Grand Tichu
    calls: tuple[int, ...]  # 0 none, 1 Tichu, 2 Grand Tichu (public once accepted)
    gt: tuple[int, ...]  # Grand Tichu answers: -1 undecided, 0 no, 1 yes (hidden until revealed)
    tichu_step: tuple[int, ...]  # pre-step answers: -1 undecided, 0 no, 1 yes, 2 not asked
    exchange: tuple[tuple[tuple[int, int], ...] | None, ...]  # submitted gifts, until delivery
    received: tuple[tuple[tuple[int, int], ...], ...]  # (giver, card) per seat after delivery
    played: int  # seat bits: has played a card this round (closes the Tichu window)
    piles: tuple[int, ...]  # cards won per seat
    out: tuple[int, ...]  # seats in the order they went out
    trick: tuple[TrickEntry, ...]  # the plays of the current trick
    table: int  # cards of the current trick
    top: Combo | None
    top_seat: int
    passed: int  # seat bits: passed since the last play
    turn: int  # whose regular turn it is, or comes next once the bomb window closes
    window: tuple[int, ...]  # open bomb window: seats in window order, () if none
    window_declined: int  # seat bits
    window_bombs: tuple[tuple[int, Play], ...]  # bombs submitted but not yet resolved
    wish: int  # the active wished rank, 0 if none
    gift: int  # the seat that must give the Dragon trick, -1 if none
    dog_aside: int  # the Dog lying aside with dog_card_pile = next_trick_winner
    dog_owner: int
    active: int  # seat bits of the seats that still hold cards (derived from hands)
    # Private memos, never part of the value: legal answers per seat, and each seat's leads.
    _legal: dict[int, Sequence[Action]] | None
    # The token the Plays listed for this state carry, so that apply knows them without
    # validating them again (see game._stamp_of); None until some are listed.
    _stamp: object | None
    _leads: tuple[tuple[int, list[Any]] | None, ...] | None
    # Set by round.without_next_deal: scoring a round does not deal the next one. Not part of
    # the value either: it says where play stops, not where the game stands.
    _stop_before_deal: bool

    def copy(self) -> State:
        """A shallow copy for the engine to build the next state in."""
        new = State.__new__(State)
        new.config = self.config
        new.seed = self.seed
        new.round = self.round
        new.dealer = self.dealer
        new.scores = self.scores
        new.history = self.history
        new.winner = self.winner
        new.phase = self.phase
        new.hands = self.hands
        new.unseen = self.unseen
        new.calls = self.calls
        new.gt = self.gt
        new.tichu_step = self.tichu_step
        new.exchange = self.exchange
        new.received = self.received
        new.played = self.played
        new.piles = self.piles
        new.out = self.out
        new.trick = self.trick
        new.table = self.table
        new.top = self.top
        new.top_seat = self.top_seat
        new.passed = self.passed
        new.turn = self.turn
        new.window = self.window
        new.window_declined = self.window_declined
        new.window_bombs = self.window_bombs
        new.wish = self.wish
        new.gift = self.gift
        new.dog_aside = self.dog_aside
        new.dog_owner = self.dog_owner
        new.active = self.active
        new._legal = None
        new._stamp = None
        new._leads = self._leads
        new._stop_before_deal = self._stop_before_deal
        return new

    @property
    def players(self) -> int:
        """The number of seats."""
        return self.config.players

    @property
    def is_over(self) -> bool:
        """True once the game has ended."""
        return self.phase is Phase.GAME_OVER

    def _fields(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in PUBLIC_FIELDS)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, State) and self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())

    def __repr__(self) -> str:
        return f"<State round={self.round} phase={self.phase.value} turn={self.turn}>"


def team_of(seat: int) -> int:
    """0 for team A (even seats), 1 for team B (odd seats) (R-SEAT-1, R-V6-1)."""
    return seat & 1


def partners_of(players: int, seat: int) -> tuple[int, ...]:
    """The seat's partners in turn order: opposite with 4 players, the seats +-2 with 6 (R-V6-1)."""
    return ((seat + 2) % players,) if players == 4 else ((seat + 2) % players, (seat + 4) % players)


def opponents_of(players: int, seat: int) -> tuple[int, ...]:
    """The seats of the other team, in turn order after `seat`."""
    return tuple((seat + i) % players for i in range(1, players) if (seat + i) % 2 != seat % 2)


def _cards_json(masks: tuple[int, ...]) -> list[str]:
    return [format_cards(m) for m in masks]


def state_to_json(state: State) -> dict[str, Any]:
    """The complete JSON form of a state (format `tichu-state/1`)."""
    n = state.players
    return {
        "format": STATE_FORMAT,
        "config": state.config.to_json(),
        "seed": state.seed,
        "round": state.round,
        "dealer": state.dealer,
        "scores": list(state.scores),
        "history": [list(h) for h in state.history],
        "winner": state.winner,
        "phase": state.phase.value,
        "hands": _cards_json(state.hands),
        "unseen": _cards_json(state.unseen),
        "calls": [CALL_NAMES[c] for c in state.calls],
        "grand_tichu": [None if d < 0 else bool(d) for d in state.gt],
        "tichu_step": [None if d < 0 else ("not_asked" if d == 2 else bool(d)) for d in state.tichu_step],
        "exchange": [
            None if gifts is None else {str(to): CARD_NAMES[c] for to, c in gifts} for gifts in state.exchange
        ],
        "received": [{str(giver): CARD_NAMES[c] for giver, c in got} for got in state.received],
        "played": [bool(state.played >> s & 1) for s in range(n)],
        "piles": _cards_json(state.piles),
        "out": list(state.out),
        "trick": [
            {
                "seat": seat,
                "cards": format_cards(cards),
                "phoenix": rank_name(combo.phoenix) if combo.phoenix else None,
            }
            for seat, cards, combo in state.trick
        ],
        "passed": [s for s in range(n) if state.passed >> s & 1],
        "turn": None if state.turn < 0 else state.turn,
        "window": None
        if not state.window
        else {
            "order": list(state.window),
            "declined": [s for s in state.window if state.window_declined >> s & 1],
            "bombs": {str(seat): str(play) for seat, play in state.window_bombs},
        },
        "wish": rank_name(state.wish) if state.wish else None,
        "gift": None if state.gift < 0 else state.gift,
        "dog_aside": state.dog_owner if state.dog_aside else None,
    }


def _seat_value(value: Any, n: int, what: str, allow_none: bool = True) -> int:
    if value is None and allow_none:
        return NO_SEAT
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < n:
        raise InvalidActionError(f"{what} must be a seat 0..{n - 1}, not {value!r}")
    return value


def _per_seat(data: dict[str, Any], key: str, n: int, default: Any) -> list[Any]:
    value = data.get(key)
    if value is None:
        return [default] * n
    if not isinstance(value, list) or len(value) != n:
        raise InvalidActionError(f"'{key}' must be a list with one entry per seat ({n})")
    return value


def _mask_list(data: dict[str, Any], key: str, n: int) -> tuple[int, ...]:
    items = _per_seat(data, key, n, "")
    out = []
    for raw in items:
        item = " ".join(str(c) for c in raw) if isinstance(raw, list) else raw
        if not isinstance(item, str):
            raise InvalidActionError(f"'{key}' entries are cards as a string, e.g. \"7s 7j PHX\"")
        out.append(parse_mask(item))
    return tuple(out)


def _tri(value: Any, key: str) -> int:
    if value is None:
        return -1
    if value == "not_asked":
        return 2
    if isinstance(value, bool):
        return int(value)
    raise InvalidActionError(f"'{key}' entries are null, true or false")


def _gift_map(value: Any, key: str, n: int) -> tuple[tuple[int, int], ...]:
    if not isinstance(value, dict) or not all(isinstance(c, str) for c in value.values()):
        raise InvalidActionError(f'\'{key}\' entries map a seat to a card, e.g. {{"1": "7s"}}')
    return tuple(
        sorted(
            (_seat_value(int(seat) if str(seat).isdigit() else seat, n, key, False), int(parse_card(card)))
            for seat, card in value.items()
        )
    )


def state_from_json(data: dict[str, Any]) -> State:
    """Rebuild a state from its JSON form; missing fields take the defaults the README lists.

    Anything malformed raises InvalidActionError naming the problem; nothing else escapes.
    """
    try:
        return _state_from_json(data)
    except InvalidActionError:
        raise
    except (TypeError, ValueError, AttributeError, KeyError, IndexError) as error:
        raise InvalidActionError(f"malformed state: {type(error).__name__}: {error}") from None


def _int(value: Any, what: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise InvalidActionError(f"'{what}' must be an integer, not {value!r}")
    return value


def _list(value: Any, what: str) -> list[Any]:
    if not isinstance(value, list):
        raise InvalidActionError(f"'{what}' must be a list, not {value!r}")
    return value


def _state_from_json(data: dict[str, Any]) -> State:
    if not isinstance(data, dict):
        raise InvalidActionError("a state is a JSON object")
    if data.get("format", STATE_FORMAT) != STATE_FORMAT:
        raise InvalidActionError(f"unsupported state format {data.get('format')!r}; expected {STATE_FORMAT}")
    config = RulesConfig.from_json(data.get("config"))
    n = config.players
    if "players" in data and data["players"] != n:
        config = RulesConfig.from_json({**config.to_json(), "players": data["players"]})
        n = config.players
    st = State.__new__(State)
    st._legal = None
    st._stamp = None
    st._leads = None
    st._stop_before_deal = False
    st.config = config
    seed = data.get("seed", 0)
    if not isinstance(seed, (int, str)) or isinstance(seed, bool):
        raise InvalidActionError("'seed' must be an integer or a string")
    st.seed = seed
    st.round = _int(data.get("round", 0), "round")
    st.dealer = _seat_value(data.get("dealer", 0), n, "dealer", False)
    scores = data.get("scores", [0, 0])
    if not isinstance(scores, list) or len(scores) != 2:
        raise InvalidActionError("'scores' must be [team A, team B] integers")
    st.scores = (_int(scores[0], "scores"), _int(scores[1], "scores"))
    history = []
    for item in _list(data.get("history", []), "history"):
        if not isinstance(item, list) or len(item) != 2:
            raise InvalidActionError("'history' entries are [team A, team B] round scores")
        history.append((_int(item[0], "history"), _int(item[1], "history")))
    st.history = tuple(history)
    winner = data.get("winner")
    if winner not in (None, 0, 1):
        raise InvalidActionError("'winner' must be null, 0 (team A) or 1 (team B)")
    st.winner = winner
    try:
        st.phase = Phase(data.get("phase", "play"))
    except ValueError:
        raise InvalidActionError(
            f"unknown phase {data.get('phase')!r}: one of {', '.join(p.value for p in Phase)}"
        ) from None
    if "hands" not in data:
        raise InvalidActionError("a state needs 'hands': one string of cards per seat")
    st.hands = _mask_list(data, "hands", n)
    st.unseen = _mask_list(data, "unseen", n)
    calls = _per_seat(data, "calls", n, "none")
    if any(c not in CALL_NAMES for c in calls):
        raise InvalidActionError(f"'calls' entries are one of {', '.join(CALL_NAMES)}")
    st.calls = tuple(CALL_NAMES.index(c) for c in calls)
    st.gt = tuple(_tri(v, "grand_tichu") for v in _per_seat(data, "grand_tichu", n, None))
    st.tichu_step = tuple(_tri(v, "tichu_step") for v in _per_seat(data, "tichu_step", n, None))
    st.exchange = tuple(
        None if v is None else _gift_map(v, "exchange", n) for v in _per_seat(data, "exchange", n, None)
    )
    st.received = tuple(_gift_map(v, "received", n) for v in _per_seat(data, "received", n, {}))
    st.piles = _mask_list(data, "piles", n)
    out = _list(data.get("out", []), "out")
    st.out = tuple(_seat_value(s, n, "out", False) for s in out)
    if len(set(st.out)) != len(st.out):
        raise InvalidActionError("'out' names a seat twice")
    trick: list[TrickEntry] = []
    top: Combo | None = None
    for entry in _list(data.get("trick", []), "trick"):
        if not isinstance(entry, dict) or not isinstance(entry.get("cards"), str):
            raise InvalidActionError('\'trick\' entries are {"seat": N, "cards": "...", "phoenix": null}')
        seat = _seat_value(entry.get("seat"), n, "trick seat", False)
        cards = parse_mask(entry["cards"])
        readings = classify(cards, top)
        if entry.get("phoenix"):
            wanted = parse_rank(entry["phoenix"])
            readings = tuple(r for r in readings if r.phoenix == wanted)
        if not readings:
            raise InvalidActionError(f"trick entry {format_cards(cards)!r} is not a valid combination")
        trick.append((seat, cards, readings[0]))
        top = readings[0]
    st.trick = tuple(trick)
    st.table = 0
    for _, cards, _ in trick:
        st.table |= cards
    st.top = trick[-1][2] if trick else None
    st.top_seat = trick[-1][0] if trick else NO_SEAT
    passed = _list(data.get("passed", []), "passed")
    st.passed = 0
    for s in passed:
        st.passed |= 1 << _seat_value(s, n, "passed", False)
    st.turn = _seat_value(data.get("turn"), n, "turn")
    window = data.get("window")
    st.window, st.window_declined, st.window_bombs = (), 0, ()
    if window:
        if not isinstance(window, dict):
            raise InvalidActionError(
                '\'window\' is null or {"order": [...], "declined": [...], "bombs": {...}}'
            )
        st.window = tuple(
            _seat_value(s, n, "window order", False) for s in _list(window.get("order", []), "order")
        )
        for s in _list(window.get("declined", []), "declined"):
            st.window_declined |= 1 << _seat_value(s, n, "window declined", False)
        bombs = []
        pending = window.get("bombs", {})
        if not isinstance(pending, dict):
            raise InvalidActionError("window 'bombs' maps a seat to the bomb it submitted")
        for seat_text, text in pending.items():
            if not str(seat_text).isdigit():
                raise InvalidActionError(f"window bomb seat {seat_text!r} is not a seat number")
            play = parse_action(str(text))
            readings = classify(play.cards_mask, st.top) if isinstance(play, Play) else ()
            bomb = next((r for r in readings if r.is_bomb), None)
            if not isinstance(play, Play) or bomb is None or st.top is None or not beats(bomb, st.top):
                raise InvalidActionError(f"window bomb {text!r} is not a bomb that beats the top")
            play._combo = bomb
            bombs.append((_seat_value(int(seat_text), n, "window bomb seat", False), play))
        st.window_bombs = tuple(
            sorted(bombs, key=lambda b: st.window.index(b[0]) if b[0] in st.window else 0)
        )
    st.wish = parse_rank(data["wish"]) if data.get("wish") else 0
    st.gift = _seat_value(data.get("gift"), n, "gift")
    dog = data.get("dog_aside")
    st.dog_aside = 1 if dog is not None else 0
    st.dog_owner = _seat_value(dog, n, "dog_aside") if dog is not None else NO_SEAT
    played = data.get("played")
    if played is None:
        st.played = 0
        if st.phase is Phase.PLAY or st.phase is Phase.ROUND_END:
            for s in range(n):
                if st.hands[s].bit_count() < full_hand_size(config, st.dealer, s):
                    st.played |= 1 << s
    else:
        st.played = sum(1 << s for s, v in enumerate(_per_seat(data, "played", n, False)) if v)
    st.active = sum(1 << s for s in range(n) if st.hands[s])
    _check_cards(st)
    _check_position(st)
    return st


def first_cards(players: int) -> int:
    """Cards each seat is dealt and sees before the Grand Tichu decisions: 8, or 6 in §16 (R-DEAL-2)."""
    return 8 if players == 4 else 6


def full_hand_size(config: RulesConfig, dealer: int, seat: int) -> int:
    """Cards a seat holds after the deal: 14, or 10/9 in §16 (R-V6-2)."""
    if config.players == 4:
        return 14
    return 10 if (seat - dealer) % config.players < 2 else 9


def _check_position(st: State) -> None:
    """Refuse a position of the play that cannot occur: a round that is already decided, or a seat
    to act that is out (no cards, no gift to make)."""
    if st.phase is not Phase.PLAY:
        return
    out, players = st.out, st.config.players
    decided: tuple[str, str] | None = None
    if players == 4 and len(out) >= 2 and team_of(out[0]) == team_of(out[1]):
        decided = (f"seats {out[0]} and {out[1]}, partners, went out first and second", "R-END-3")
    elif players == 4 and len(out) >= 3:
        decided = ("three seats are out: the round ended when the third went out", "R-END-4")
    elif players == 6 and len(out) >= 5:
        decided = ("five seats are out: the round ended when the fifth went out", "R-V6-8")
    elif (
        players == 6
        and len(out) >= 3
        and st.config.v6_triple_victory_mode == "replace"
        and team_of(out[0]) == team_of(out[1]) == team_of(out[2])
    ):
        decided = (f"seats {out[0]}, {out[1]} and {out[2]}, one team, went out first to third", "R-V6-8")
    if decided is not None:
        raise InvalidActionError(
            f"this round is already decided, so the play cannot go on: {decided[0]}", decided[1]
        )
    if st.gift < 0 and not st.window and st.turn >= 0 and not st.hands[st.turn]:
        raise InvalidActionError(
            f"seat {st.turn} is to act but holds no cards: a seat that is out takes no turn", "R-END-2"
        )


def _check_cards(st: State) -> None:
    seen = 0
    zones = list(st.hands) + list(st.unseen) + list(st.piles) + [st.table]
    if st.dog_aside:
        zones.append(1)  # the Dog
    for zone in zones:
        if seen & zone:
            raise InvalidActionError(f"card(s) in two places: {format_cards(seen & zone)}")
        seen |= zone
    if seen & ~FULL_DECK:
        raise InvalidActionError("unknown cards in the state")
