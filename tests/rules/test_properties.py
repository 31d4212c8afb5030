"""Property tests of the rules engine: random playouts checked against RULES.md invariants.

Every playout example draws a random config (every §1 flag value can occur, 4 or 6 players), a
random deal seed and a random seed for the choices, then plays a bounded number of rounds with
random legal choices: Grand Tichu and pre-step answers, exchanges, spontaneous Tichu calls
(alone, or as the call flag of a play, R-CALL-7), plays with every wish, Phoenix plays sent with
no rank named, passes, window bombs (one seat at a time, or batched with answer_window and
compared with the same answers applied one by one in a random order) and Dragon gifts. The
properties:

1. R-DECK-1: the 56 cards are all somewhere, once (hands, unseen, piles, table, Dog aside).
2. R-DECK-4 / R-SCORE-1: a round counted normally has card points summing to 100; round and game
   totals add up; calls score ±100/±200 (R-SCORE-3) and each seat calls at most once (R-CALL-2).
3. legal_actions is exactly what apply accepts, both ways: sampled listed actions are accepted
   (as listed and as fresh copies, with the same result), and random actions are accepted iff
   listed (see `expected_acceptance` for the comparison).
4. Every seat in to_act has a legal decision, every other seat none; to_act is empty only once
   the game is over; a round ends within MAX_STEPS_PER_ROUND steps.
5. Replaying the recorded actions from the same start gives the same events (equal, and equal
   JSON in the fully checked tests) and state.
6. The state JSON round-trips exactly, and the restored state answers the next move exactly as
   the original; every listed action round-trips through its canonical string and its JSON; so
   does every event's JSON.
7. R-INFO-1 / R-DEAL-2 / R-EXCH-3: no observation shows a card its seat has not legitimately seen
   (its own dealt and received cards, its own exchange gifts, played cards), nor the seed; public
   events only mention played cards.
8. R-INFO-2: a rejected action changes nothing (compared with a deep copy); apply never changes
   the state it is given.

The fully checked tests check all of them on every step (a few dozen games, one or two rounds
each, some from bomb-rich positions); the many-games tests play about a thousand more single
rounds with the cheap properties (1, 2, 4, 5, 8 and one random action of 3) on every step and
all of them on a random sample of steps. Besides the playouts: classify against the enumeration
of plays, pending window bombs through the state JSON, and every listed exchange's strings.

A failing playout is reproduced by the example Hypothesis prints (config, seed, choices): the
playout is a pure function of them. $TICHU_PROPERTY_SCALE multiplies the number of examples.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import operator
import os
import random
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import Phase as Stage
from hypothesis import strategies as st

from referee.rules import (
    Action,
    CallTichu,
    Card,
    Combo,
    ComboKind,
    Decline,
    DeclineTichu,
    Event,
    Exchange,
    GiftDragon,
    GrandTichu,
    Pass,
    Phase,
    Play,
    RulesConfig,
    RulesError,
    State,
    action_from_json,
    action_to_json,
    answer_window,
    apply,
    cards_of,
    classify,
    event_from_json,
    legal_actions,
    legal_decisions,
    mask_of,
    new_game,
    observe,
    parse_action,
    parse_card,
    state_from_json,
    state_to_json,
    team_of,
    to_act,
)
from referee.rules.combos import COMBOS, plays
from referee.rules.events import (
    Called,
    CardsDealt,
    CardsReceived,
    ExchangeSubmitted,
    GameOver,
    Played,
    RoundEnded,
    RoundScored,
    RoundStarted,
)
from referee.rules.state import PUBLIC_FIELDS

# ----------------------------------------------------------------------------- cards

FULL_DECK = (1 << 56) - 1
NAME_TO_CARD: dict[str, int] = {str(Card(i)): i for i in range(56)}
DOG = parse_card("DOG").mask
PHX = parse_card("PHX").mask
RANK_NAMES = ("2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A")
SUITS = "jspt"
PASS = Pass()
DECLINE = Decline()
CALL_TICHU = CallTichu()
DECLINE_TICHU = DeclineTichu()
# A card name as a whole word of JSON text: "7j", "10s", "Kp", "MJ", "DOG", "PHX", "DRG".
_CARD_WORD = re.compile(r"\b(?:10|[2-9JQKA])[jspt]\b|\b(?:MJ|DOG|PHX|DRG)\b")


def card_mask_in(value: object) -> int:
    """Every card named anywhere in a JSON value (keys, strings, and words inside strings)."""
    text = value if isinstance(value, str) else json.dumps(value)
    mask = 0
    for word in _CARD_WORD.findall(text):
        mask |= 1 << NAME_TO_CARD[word]
    return mask


def names(mask: int) -> str:
    """Cards of a mask in notation, for messages."""
    return " ".join(str(c) for c in cards_of(mask))


def submasks(mask: int) -> Iterator[int]:
    """Every non-empty subset of a card set."""
    sub = mask
    while sub:
        yield sub
        sub = (sub - 1) & mask


# ----------------------------------------------------------------------------- configs

# Every flag of RULES.md §1 with every value it may take (test_config_strategy_covers_every_flag
# fails when RulesConfig gains a flag that is missing here).
FLAG_VALUES: dict[str, tuple[object, ...]] = {
    "target_score": (1000, 400, 150),
    "match_mode": ("to_target", "fixed_rounds:1", "fixed_rounds:2"),
    "tie_at_target": ("play_on", "draw"),
    "grand_tichu_enabled": (True, False),
    "gt_decision_mode": ("simultaneous", "sequential"),
    "tichu_call_exchange_mode": ("pre_step", "open", "after_exchange_only"),
    "allow_hopeless_calls": (True, False),
    "wish_mandatory": (False, True),
    "wish_fulfilled_by_own_mj_play": (False, True),
    "bomb_timing": ("windows", "turn_only"),
    "wish_bomb_exemption": ("window_only", "any_nonlead_bomb", "none"),
    "wish_bomb_exemption_on_lead": (False, True),
    "allow_overtake_own_trick": (False, True),
    "dragon_gift_recipients": ("any_opponent", "active_opponents_only"),
    "dragon_gift_on_final_trick": (True, False),
    "double_victory_points": (200, 100),
    "failed_call_mode": ("deduct", "award_opponents"),
    "phoenix_ambiguity_default": ("highest", "reject_if_undeclared"),
    "dog_card_pile": ("dog_player", "receiver", "next_trick_winner"),
    "v6_deal": ("all_cards",),
    "v6_triple_victory_mode": ("replace", "bonus"),
    "v6_dog_fallback": ("next_active_after_dog_player",),
}


@st.composite
def configs(draw: st.DrawFn, players: int) -> RulesConfig:
    """A config with every flag drawn from all its values."""
    flags = {name: draw(st.sampled_from(values)) for name, values in FLAG_VALUES.items()}
    return RulesConfig(players=players, **flags)  # type: ignore[arg-type]


# Large or wordy seeds, so that finding the seed's text in an observation means it leaked.
SEEDS = st.one_of(
    st.integers(10**9, 10**12),
    st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=10, max_size=10).map(lambda s: "seed-" + s),
)


def test_config_strategy_covers_every_flag() -> None:
    fields = {f.name for f in dataclasses.fields(RulesConfig)}
    assert fields == set(FLAG_VALUES) | {"players"}
    for name, values in FLAG_VALUES.items():
        for value in values:
            for players in (4, 6):
                RulesConfig(players=players, **{name: value})  # type: ignore[arg-type]


# ----------------------------------------------------------------------------- the oracle


def fresh(action: Action) -> Action:
    """An equal action built anew, so that apply validates it rather than trusting the listing."""
    if isinstance(action, Play):
        return Play(action.cards_mask, action.phoenix, action.wish, action.partner, action.tichu)
    return action


def expected_acceptance(state: State, seat: int, action: Action) -> bool:
    """Whether apply must accept `action` from `seat`, judged only from legal_actions.

    legal_actions lists each play once per reading, with the Phoenix's rank named, and never
    with the call flag. So:
    - a Play naming no Phoenix rank (phoenix=0) for a multi-card set with the Phoenix stands for
      its highest reading (R-PHX-5): it is accepted iff the listed play with that reading's rank
      is. With phoenix_ambiguity_default = reject_if_undeclared it is rejected when the cards
      have more than one reading;
    - a Play with tichu=True is accepted iff the call (CallTichu) and the play without the flag
      are both listed (R-CALL-7);
    - any other action is accepted iff it is literally listed.
    """
    if not 0 <= seat < state.players:
        return False
    listed = legal_actions(state, seat)
    if not isinstance(action, Play):
        return action in listed
    if action.tichu and CALL_TICHU not in listed:
        return False
    phoenix = action.phoenix
    cards = action.cards_mask
    if cards & PHX and cards != PHX and phoenix == 0:
        readings = classify(cards, state.top)
        if readings:
            if len(readings) > 1 and state.config.phoenix_ambiguity_default == "reject_if_undeclared":
                return False
            phoenix = max(readings, key=lambda r: (r.kind.is_bomb, r.key)).phoenix
    return Play(cards, phoenix, action.wish, action.partner) in listed


SLOT_NAMES: tuple[str, ...] = PUBLIC_FIELDS


_GET_FIELDS = operator.attrgetter(*SLOT_NAMES)


def state_fields(state: State) -> tuple[Any, ...]:
    """Everything a state holds (its caches aside)."""
    fields: tuple[Any, ...] = _GET_FIELDS(state)
    return fields


def json_round_trip(value: Any) -> Any:
    """A JSON value as a client would get it back from the wire."""
    return json.loads(json.dumps(value))


def check_action_strings(action: Action) -> None:
    """Property 6: the canonical string and the JSON form of an action give it back."""
    text = str(action)
    assert parse_action(text) == action, f"parse_action({text!r}) != {action!r}"
    assert action_from_json(text) == action, f"action_from_json({text!r}) != {action!r}"
    data = json_round_trip(action_to_json(action))
    assert action_from_json(data) == action, f"action JSON {data} != {action!r}"


def event_cards(event: Event) -> int:
    """The cards an event names (its `cards` and its exchange gifts)."""
    mask = 0
    cards = getattr(event, "cards", 0)
    if isinstance(cards, int):
        mask |= cards
    for name in ("gifts", "received"):
        for _, card in getattr(event, name, ()):
            mask |= 1 << card
    return mask


@dataclass(frozen=True)
class EventWhere:
    """Where an event came from, for failure messages."""

    seed: int | str
    step: int
    event: Event

    def __str__(self) -> str:
        return f"[seed={self.seed!r} step={self.step}] {self.event.to_json()}"


# ----------------------------------------------------------------------------- playouts


@dataclass(frozen=True)
class Move:
    """One step: a (seat, action), or bomb-window answers applied at once with answer_window."""

    answers: tuple[tuple[int, Action], ...]
    batched: bool = False

    def apply_to(self, state: State) -> tuple[State, list[Event]]:
        if self.batched:
            return answer_window(state, dict(self.answers))
        ((seat, action),) = self.answers
        return apply(state, seat, action)

    def __str__(self) -> str:
        text = ", ".join(f"{seat}: {action}" for seat, action in self.answers)
        return f"window {{{text}}}" if self.batched else text


LISTED_PROBES = 1  # listed actions tried per seat that owes a decision, per checked state
RANDOM_PROBES = 5  # random actions tried per checked state
LISTING_SAMPLE = 48  # an exchange listing (2,184 in 4p) is checked on this many entries
MAX_STEPS_PER_ROUND = 4000  # a round that takes longer is a liveness failure


class Playout:
    """One random game of at most `rounds` rounds, checking the properties as it goes.

    With `heavy_rate` 1 every property is checked on every step. Below 1, the cheap ones (cards,
    to_act, events, scores, replay, apply leaving its input alone, one random action probed) are
    still checked on every step, and the rest (state JSON, listed-action strings, observations,
    listed and random probes) on that fraction of the steps, drawn at random.
    """

    def __init__(
        self,
        config: RulesConfig,
        seed: int | str,
        choices: int,
        rounds: int,
        heavy_rate: float = 1.0,
        position: dict[str, Any] | None = None,
    ) -> None:
        self.config = config
        self.position = position  # a state JSON to start from instead of new_game
        self.seed = seed
        self.n = config.players
        self.rng = random.Random(choices)
        self.rounds = rounds
        self.heavy_rate = heavy_rate
        # Bomb windows answered at once with answer_window (else seat by seat): often when
        # only the cheap checks run, which makes the rounds take fewer steps.
        self.batch_rate = 0.3 if heavy_rate >= 1 else 0.7
        # How often a seat that can bomb in a window does (more often from bomb-rich positions).
        self.bomb_rate = 0.35 if position is None else 0.7
        self.moves: list[Move] = []
        self.log: list[Event] = []
        self.step = 0
        self.strings_checked: set[Action] = set()
        # Per round: what each seat has legitimately seen, its exchange gifts, the public cards.
        self.known = [0] * self.n
        self.gave: list[dict[int, int]] = [{} for _ in range(self.n)]
        self.public = 0
        self.calls: dict[int, str] = {}
        self.round_end: RoundEnded | None = None
        self.totals: tuple[int, ...] = (0, 0)
        self.seed_text = str(seed)

    # ------------------------------------------------------------------ driver

    def start(self) -> tuple[State, list[Event]]:
        if self.position is None:
            return new_game(self.config, self.seed)
        return state_from_json(self.position), []

    def run(self) -> None:
        state, events = self.start()
        self.record_events(events)
        if self.position is not None:
            self.known = list(state.hands)  # each seat was "dealt" the hand it holds
        round_steps = 0
        current_round = state.round
        while True:
            heavy = self.heavy_rate >= 1 or self.rng.random() < self.heavy_rate
            self.check_cards(state)
            self.check_to_act(state)
            restored = None
            if heavy:
                restored = self.check_state_json(state)
                self.check_listings(state)
                self.check_observations(state)
            if state.phase is Phase.GAME_OVER or state.round >= self.rounds:
                break
            if state.round != current_round:
                current_round, round_steps = state.round, 0
            round_steps += 1
            assert round_steps <= MAX_STEPS_PER_ROUND, self.where(state, "the round does not end")
            if heavy:
                before = copy.deepcopy(state_fields(state), {id(state.config): state.config})
                self.probe(state, before, LISTED_PROBES, RANDOM_PROBES)
            else:
                before = state_fields(state)
                self.probe(state, before, 0, 1)
            state = self.advance(state, self.choose(state), before, restored, heavy)
            self.step += 1
        self.check_replay(state)

    def where(self, state: State, message: str) -> str:
        last = "; ".join(str(m) for m in self.moves[-4:])
        return (
            f"{message} [seed={self.seed!r} round={state.round} step={self.step} "
            f"phase={state.phase.value} last moves: {last}]"
        )

    def listing_indices(self, listed: Sequence[Action]) -> Sequence[int]:
        """All of a listing, or a sample of an exchange listing."""
        count = len(listed)
        if count <= LISTING_SAMPLE or not isinstance(listed[-1], Exchange):
            return range(count)
        return [0, count - 1, *self.rng.sample(range(count), LISTING_SAMPLE)]

    # ------------------------------------------------------------------ per-state checks

    def check_cards(self, state: State) -> None:
        """Property 1 (R-DECK-1)."""
        seen = 0
        zones = [*state.hands, *state.unseen, *state.piles, state.table, state.dog_aside]
        for zone in zones:
            assert not seen & zone, self.where(state, f"cards in two places: {names(seen & zone)}")
            seen |= zone
        assert seen == FULL_DECK, self.where(state, f"cards lost: {names(FULL_DECK & ~seen)}")
        trick = 0
        for _, cards, _ in state.trick:
            trick |= cards
        assert trick == state.table, self.where(state, "the table is not the trick's cards")
        assert state.dog_aside in (0, DOG), self.where(state, "only the Dog lies aside")

    def check_to_act(self, state: State) -> None:
        """Property 4."""
        seats = to_act(state)
        assert len(set(seats)) == len(seats), self.where(state, f"to_act names a seat twice: {seats}")
        if state.phase is Phase.GAME_OVER:
            assert seats == (), self.where(state, "a seat must act after the game is over")
        else:
            assert seats, self.where(state, "nobody is to act but the game is not over")
        for seat in range(self.n):
            count = len(legal_decisions(state, seat))
            if seat in seats:
                assert count > 0, self.where(state, f"seat {seat} must act but has no legal decision")
            else:
                assert count == 0, self.where(state, f"seat {seat} owes nothing but has decisions")
            if state.phase is Phase.GAME_OVER:
                assert len(legal_actions(state, seat)) == 0, self.where(state, "actions after the game")

    def check_state_json(self, state: State) -> State:
        """Property 6 for states: an exact round trip."""
        data = state_to_json(state)
        restored = state_from_json(json_round_trip(data))
        if restored != state:
            differ = [
                name
                for name, a, b in zip(SLOT_NAMES, state_fields(state), state_fields(restored), strict=True)
                if a != b
            ]
            raise AssertionError(
                self.where(state, f"state JSON does not round-trip; fields differ: {differ}")
            )
        return restored

    def check_listings(self, state: State) -> None:
        """Property 6 for actions: each listed action's string and JSON give it back (each
        distinct action once per playout), and it uses only cards of the seat's own hand."""
        for seat in range(self.n):
            listed = legal_actions(state, seat)
            hand = state.hands[seat]
            for i in self.listing_indices(listed):
                action = listed[i]
                cards = action.cards_mask if isinstance(action, Play) else 0
                if isinstance(action, Exchange):
                    cards = action.mask
                assert not cards & ~hand, self.where(
                    state, f"seat {seat} is offered {action}, not in its hand"
                )
                if action in self.strings_checked:
                    continue
                try:
                    check_action_strings(action)
                except (AssertionError, RulesError) as error:
                    raise AssertionError(self.where(state, f"seat {seat}: {error}")) from error
                self.strings_checked.add(action)

    def check_observations(self, state: State) -> None:
        """Property 7 (R-INFO-1, R-DEAL-2, R-EXCH-3); an exchange listing is sampled."""
        for seat in range(self.n):
            obs = observe(state, seat)
            listed = obs.legal_actions
            indices = self.listing_indices(listed)
            if len(indices) < len(listed):
                obs = dataclasses.replace(obs, legal_actions=[listed[i] for i in indices])
            data = obs.to_json()
            text = json.dumps(data)
            assert self.seed_text not in text, self.where(state, f"seat {seat}'s observation shows the seed")
            assert "seed" not in data and "hands" not in data, self.where(state, "observation keys")
            shown = card_mask_in(text)
            unknown = shown & ~self.known[seat]
            assert not unknown, self.where(
                state, f"seat {seat} is shown cards it never saw: {names(unknown)}"
            )
            assert not shown & state.unseen[seat], self.where(state, f"seat {seat} sees its undealt cards")
            for other in range(self.n):
                if other == seat:
                    continue
                gift = self.gave[seat].get(other)
                leaked = shown & state.hands[other] & ~(0 if gift is None else 1 << gift)
                assert not leaked, self.where(state, f"seat {seat} sees seat {other}'s {names(leaked)}")
            assert card_mask_in(data["hand"]) == state.hands[seat], self.where(state, "observed hand")
            # Calls are public once accepted (R-CALL-4), Grand Tichu answers once revealed (R-GT-1).
            calls = [self.calls.get(other, "none") for other in range(self.n)]
            assert data["calls"] == calls, self.where(state, f"seat {seat} sees calls {data['calls']}")

    # ------------------------------------------------------------------ probing (3 and 8)

    def probe(self, state: State, before: tuple[Any, ...], listed_probes: int, random_probes: int) -> None:
        if listed_probes:
            for seat in to_act(state):
                listed = legal_actions(state, seat)
                for i in self.rng.sample(range(len(listed)), min(listed_probes, len(listed))):
                    self.probe_listed(state, seat, listed[i])
        for _ in range(random_probes):
            seat = self.random_seat(state)
            self.probe_random(state, seat, self.random_action(state, seat), before)
        assert state_fields(state) == before, self.where(state, "apply changed the state it was given")

    def probe_listed(self, state: State, seat: int, action: Action) -> None:
        """Property 3, one way: a listed action is accepted, validated afresh or not alike."""
        try:
            trusted = apply(state, seat, action)
            checked = apply(state, seat, fresh(action))
        except RulesError as error:
            raise AssertionError(
                self.where(state, f"listed action {action} of seat {seat} rejected: {error}")
            ) from error
        assert trusted[0] == checked[0], self.where(state, f"{action}: listed and fresh copies differ")
        assert trusted[1] == checked[1], self.where(
            state, f"{action}: listed and fresh copies give different events"
        )

    def probe_random(self, state: State, seat: int, action: Action, before: tuple[Any, ...]) -> None:
        """Property 3, the other way, and property 8."""
        expected = expected_acceptance(state, seat, action)
        try:
            apply(state, seat, action)
        except RulesError as error:
            assert state_fields(state) == before, self.where(state, f"rejected {action} changed the state")
            assert not expected, self.where(state, f"seat {seat}: {action} is listed but rejected: {error}")
            return
        assert expected, self.where(state, f"seat {seat}: {action} is accepted but not listed")

    def random_seat(self, state: State) -> int:
        roll = self.rng.random()
        seats = to_act(state)
        if roll < 0.02:
            return self.rng.choice((-1, self.n))
        if roll < 0.8 and seats:
            return self.rng.choice(seats)
        return self.rng.randrange(self.n)

    def random_action(self, state: State, seat: int) -> Action:
        """Any kind of action, well formed, often near a legal one."""
        rng = self.rng
        hand = state.hands[seat] if 0 <= seat < self.n else 0
        kinds = ["variant", "subset", "pass", "decline", "tichu", "no_tichu", "grand", "gift", "exchange"]
        weights = [30, 25, 6, 6, 6, 3, 4, 6, 14]
        # Favour the kind of decision the state asks for, so that each is often right.
        if state.phase is Phase.GRAND_TICHU:
            weights[kinds.index("grand")] += 40
        elif state.phase is Phase.TICHU_STEP:
            weights[kinds.index("tichu")] += 20
            weights[kinds.index("no_tichu")] += 20
        elif state.gift >= 0:
            weights[kinds.index("gift")] += 40
        elif state.window:
            weights[kinds.index("decline")] += 10
        kind = rng.choices(kinds, weights)[0]
        if kind == "pass":
            return PASS
        if kind == "decline":
            return DECLINE
        if kind == "tichu":
            return CALL_TICHU
        if kind == "no_tichu":
            return DECLINE_TICHU
        if kind == "grand":
            return GrandTichu(rng.random() < 0.5)
        if kind == "gift":
            return GiftDragon(rng.randrange(-1, self.n + 1))
        if kind == "exchange":
            return self.random_exchange(seat, hand)
        if kind == "variant" and 0 <= seat < self.n:
            listed = legal_actions(state, seat)
            for _ in range(4 if listed else 0):
                action = listed[rng.randrange(len(listed))]
                if isinstance(action, Play):
                    return self.mutate(action, hand)
        return self.random_play(hand)

    def random_options(self, scale: float) -> tuple[int, int, int, bool]:
        """Random phoenix=, wish=, partner= and call flag, each present with some chance."""
        rng = self.rng
        phoenix = rng.randrange(1, 16) if rng.random() < 0.3 * scale else 0
        wish = rng.randrange(1, 16) if rng.random() < 0.3 * scale else 0
        partner = rng.randrange(-1, self.n + 1) if rng.random() < 0.3 * scale else -1
        return phoenix, wish, partner, rng.random() < 0.2 * scale

    def random_play(self, hand: int) -> Play:
        rng = self.rng
        cards = list(cards_of(hand))
        size = min(len(cards), rng.choice((1, 1, 2, 2, 3, 4, 5, 5, 6, 7, 8)))
        mask = 0
        for card in rng.sample(cards, size):
            mask |= card.mask
        if not mask or rng.random() < 0.05:
            mask |= 1 << rng.randrange(56)
        phoenix, wish, partner, tichu = self.random_options(1.0)
        return Play(mask, phoenix, wish, partner, tichu)

    def mutate(self, play: Play, hand: int) -> Play:
        rng = self.rng
        mask, phoenix, wish, partner, tichu = (
            play.cards_mask,
            play.phoenix,
            play.wish,
            play.partner,
            play.tichu,
        )
        roll = rng.random()
        if roll < 0.25:
            tichu = True
        elif roll < 0.45:
            phoenix = 0
        elif roll < 0.6:
            phoenix, wish, partner, tichu = self.random_options(1.5)
        else:
            spare = cards_of(hand & ~mask)
            inside = cards_of(mask)
            if spare and (roll < 0.8 or len(inside) == 1):
                mask |= rng.choice(spare).mask
            if roll >= 0.7 and len(inside) > 1:
                mask &= ~rng.choice(inside).mask
        return Play(mask, phoenix, wish, partner, tichu)

    def random_exchange(self, seat: int, hand: int) -> Exchange:
        rng = self.rng
        n = self.n
        if rng.random() < 0.8 and 0 <= seat < n:
            recipients = [(seat + i) % n for i in range(1, n)] if n == 4 else [(seat + 2) % n, (seat + 4) % n]
        else:
            recipients = rng.sample(range(-1, n + 1), rng.randrange(0, 4))
        if rng.random() < 0.5:
            recipients.sort()  # the canonical order; else turn order from the giver (never listed)
        pool = list(cards_of(hand)) if hand and rng.random() < 0.9 else [Card(i) for i in range(56)]
        if len(pool) < len(recipients):
            pool = [Card(i) for i in range(56)]
        cards = rng.sample(pool, len(recipients))
        if len(cards) > 1 and rng.random() < 0.05:
            cards[1] = cards[0]
        return Exchange(tuple((to, int(card)) for to, card in zip(recipients, cards, strict=True)))

    # ------------------------------------------------------------------ choices

    def choose(self, state: State) -> Move:
        rng = self.rng
        seats = to_act(state)
        if state.phase in (Phase.PLAY, Phase.EXCHANGE) and rng.random() < 0.04:
            callers = [s for s in range(self.n) if CALL_TICHU in legal_actions(state, s)]
            if callers:
                return Move(((rng.choice(callers), CALL_TICHU),))
        if state.window and len(seats) > 1 and rng.random() < self.batch_rate:
            return Move(tuple((s, self.pick(state, s)) for s in seats), batched=True)
        seat = rng.choice(seats)
        return Move(((seat, self.pick(state, seat)),))

    def pick(self, state: State, seat: int) -> Action:
        rng = self.rng
        decisions = legal_decisions(state, seat)
        phase = state.phase
        if phase is Phase.GRAND_TICHU:
            return GrandTichu(rng.random() < 0.1)
        if phase is Phase.TICHU_STEP:
            return CALL_TICHU if rng.random() < 0.15 else DECLINE_TICHU
        if phase is not Phase.PLAY or state.gift >= 0:
            return decisions[rng.randrange(len(decisions))]
        found = [a for a in decisions if isinstance(a, Play)]
        if state.window and not (found and rng.random() < self.bomb_rate):
            return DECLINE
        if PASS in decisions and (not found or rng.random() < 0.25):
            return PASS
        play = rng.choice(found)
        if rng.random() < 0.3:  # an unlisted copy, which apply validates in full
            play = Play(play.cards_mask, play.phoenix, play.wish, play.partner)
        cards = play.cards_mask
        if cards & PHX and cards != PHX and rng.random() < 0.4:
            unnamed = Play(cards, 0, play.wish, play.partner)
            if expected_acceptance(state, seat, unnamed):
                play = unnamed
        if rng.random() < 0.1 and CALL_TICHU in legal_actions(state, seat):  # R-CALL-7
            play = Play(cards, play.phoenix, play.wish, play.partner, True)
        return play

    # ------------------------------------------------------------------ applying a move

    def advance(
        self, state: State, move: Move, before: tuple[Any, ...], restored: State | None, heavy: bool
    ) -> State:
        try:
            after, events = move.apply_to(state)
        except RulesError as error:
            raise AssertionError(
                self.where(state, f"the chosen move {move} was rejected: {error}")
            ) from error
        assert state_fields(state) == before, self.where(state, f"{move} changed the state it was applied to")
        fresh_move = Move(tuple((s, fresh(a)) for s, a in move.answers), move.batched)
        if restored is not None:
            # Property 6: the restored state behaves exactly as the original (fresh actions, so
            # the engine validates them instead of trusting its own listing).
            try:
                again, again_events = fresh_move.apply_to(restored)
            except RulesError as error:
                raise AssertionError(self.where(state, f"the JSON-restored state rejects {move}")) from error
            assert again == after, self.where(state, f"{move} gives another state from the restored state")
            assert again_events == events, self.where(state, f"{move}: events differ from the restored state")
        if move.batched:
            self.check_answer_order(state, move, after, events)
        self.moves.append(fresh_move)
        self.record_events(events, heavy)
        return after

    def check_answer_order(self, state: State, move: Move, after: State, logged: list[Event]) -> None:
        """answer_window equals applying the answers with apply() as they arrive, in any order."""
        window = state.window
        order = list(move.answers)
        self.rng.shuffle(order)
        current = state
        events: list[Event] = []
        for seat, action in order:
            if current.window is not window:
                break  # the window has resolved; later answers are discarded (R-BOMB-9)
            current, new = apply(current, seat, action)
            events.extend(new)
        assert current == after, self.where(
            state, f"{move}: answer_window differs from arrival order {order}"
        )
        assert events == logged, self.where(state, f"{move}: answer_window events differ from {order}")

    # ------------------------------------------------------------------ events

    def record_events(self, events: list[Event], wire: bool = True) -> None:
        """Check and log events; `wire`: also round-trip their JSON through text."""
        for event in events:
            if wire:
                data = event.to_json()
                assert event_from_json(json_round_trip(data)) == event, (
                    f"event JSON does not round-trip: {data}"
                )
                assert card_mask_in(data) == event_cards(event), f"the event's JSON names other cards: {data}"
            self.log.append(event)
            self.check_event(event)

    def check_event(self, event: Event) -> None:
        where = EventWhere(self.seed, self.step, event)  # formatted only if an assertion fails
        if isinstance(event, RoundStarted):
            self.known = [0] * self.n
            self.gave = [{} for _ in range(self.n)]
            self.public = 0
            self.calls = {}
            self.round_end = None
        cards = event_cards(event)
        if isinstance(event, CardsDealt | ExchangeSubmitted | CardsReceived):
            assert event.private_to == event.seat, f"private event shown to others: {where}"
        if isinstance(event, ExchangeSubmitted):
            for to, card in event.gifts:
                self.gave[event.seat][to] = card
        if isinstance(event, Played):
            self.public |= event.cards
        if event.private_to is None:
            assert not cards & ~self.public, (
                f"public event names unplayed cards {names(cards & ~self.public)}: {where}"
            )
        for seat in range(self.n):
            if event.visible_to(seat):
                self.known[seat] |= cards
        if isinstance(event, Called):
            assert event.seat not in self.calls, f"second call by one seat (R-CALL-2): {where}"
            self.calls[event.seat] = event.call
        if isinstance(event, RoundEnded):
            self.round_end = event
        if isinstance(event, RoundScored):
            self.check_score(event, where)
        if isinstance(event, GameOver):
            a, b = event.totals
            assert event.winner == (None if a == b else (0 if a > b else 1)), f"wrong winner: {where}"

    def check_score(self, event: RoundScored, where: EventWhere) -> None:
        """Property 2, plus R-SCORE-2..4."""
        end = self.round_end
        assert end is not None, f"a round scored without ending: {where}"
        if end.reason == "normal":
            assert sum(event.card_points) == 100, f"card points do not add up to 100 (R-DECK-4): {where}"
        elif end.reason == "double_victory":
            expected = [0, 0]
            expected[team_of(end.out[0])] = self.config.double_victory_points
            assert list(event.card_points) == expected, f"R-SCORE-2: {where}"
        else:
            assert end.reason == "triple_victory" and self.n == 6, f"unknown round end: {where}"
            assert list(event.card_points) == [0, 0], f"R-V6-10: {where}"
        bonus = [0, 0]
        triple = self.n == 6 and len(end.out) >= 3 and len({team_of(s) for s in end.out[:3]}) == 1
        if triple and (end.reason == "triple_victory" or self.config.v6_triple_victory_mode == "bonus"):
            bonus[team_of(end.out[0])] = 300
        assert list(event.bonus_points) == bonus, f"R-V6-10 bonus: {where}"
        calls = [0, 0]
        for seat, call in self.calls.items():
            value = 200 if call == "grand_tichu" else 100
            if seat == end.out[0]:
                calls[team_of(seat)] += value
            elif self.config.failed_call_mode == "award_opponents":
                calls[1 - team_of(seat)] += value
            else:
                calls[team_of(seat)] -= value
        assert list(event.call_points) == calls, f"R-SCORE-3: calls {self.calls}: {where}"
        parts = zip(event.card_points, event.call_points, event.bonus_points, strict=True)
        assert event.round_points == tuple(sum(p) for p in parts), f"R-SCORE-4: {where}"
        totals = tuple(t + r for t, r in zip(self.totals, event.round_points, strict=True))
        assert event.totals == totals, f"R-SCORE-4 totals: {where}"
        self.totals = totals

    # ------------------------------------------------------------------ replay (5)

    def check_replay(self, final: State) -> None:
        state, log = self.start()
        for move in self.moves:
            state, events = move.apply_to(state)
            log.extend(events)
        assert log == self.log, f"replaying seed {self.seed!r} gives other events"
        if self.heavy_rate >= 1:
            assert [e.to_json() for e in log] == [e.to_json() for e in self.log], "other event JSON"
        assert state == final, f"replaying seed {self.seed!r} gives another state"


# ----------------------------------------------------------------------------- playout tests

# Runtime budget: about 65 s of CPU for this whole file on the 2-core development machine.
# Each test's example count is multiplied by $TICHU_PROPERTY_SCALE (default 1) for deeper runs,
# e.g. TICHU_PROPERTY_SCALE=10 plays about 10,000 games.
SCALE = float(os.environ.get("TICHU_PROPERTY_SCALE", "1"))
SAMPLED_RATE = 0.015  # the share of steps that get every check in the many-games tests


def playout_settings(examples: int) -> settings:
    """A playout is a pure function of its seeds, which shrinking cannot usefully simplify: it
    is skipped, and a failure is reported with the example that found it (derandomized, so a
    run is reproducible)."""
    return settings(
        max_examples=max(1, round(examples * SCALE)),
        deadline=None,
        derandomize=True,
        database=None,
        phases=(Stage.explicit, Stage.generate),
        suppress_health_check=[HealthCheck.too_slow],
    )


SEEDS_OF_CHOICES = st.integers(0, 2**32 - 1)


@playout_settings(14)
@given(config=configs(4), seed=SEEDS, choices=SEEDS_OF_CHOICES, rounds=st.integers(1, 2))
def test_fully_checked_playouts_4p(config: RulesConfig, seed: int | str, choices: int, rounds: int) -> None:
    """Every property on every step, over one or two rounds."""
    Playout(config, seed, choices, rounds).run()


@playout_settings(7)
@given(config=configs(6), seed=SEEDS, choices=SEEDS_OF_CHOICES, rounds=st.integers(1, 2))
def test_fully_checked_playouts_6p(config: RulesConfig, seed: int | str, choices: int, rounds: int) -> None:
    """Every property on every step, over one or two rounds."""
    Playout(config, seed, choices, rounds).run()


@playout_settings(650)
@given(config=configs(4), seed=SEEDS, choices=SEEDS_OF_CHOICES)
def test_many_playouts_4p(config: RulesConfig, seed: int | str, choices: int) -> None:
    """One round each; the cheap properties on every step, all of them on sampled steps."""
    Playout(config, seed, choices, 1, heavy_rate=SAMPLED_RATE).run()


@playout_settings(320)
@given(config=configs(6), seed=SEEDS, choices=SEEDS_OF_CHOICES)
def test_many_playouts_6p(config: RulesConfig, seed: int | str, choices: int) -> None:
    """One round each; the cheap properties on every step, all of them on sampled steps."""
    Playout(config, seed, choices, 1, heavy_rate=SAMPLED_RATE).run()


def bomb_rich_position(config: RulesConfig, seed: int | str, rng: random.Random) -> dict[str, Any]:
    """A position at the first lead of a round where two to four seats hold a bomb.

    In random deals a bomb is played in roughly one round in ten, so the windows' rarer paths
    (several bombs pending in one window, bombs on bombs, a bomb ending the round) get their own
    playouts from such positions.
    """
    players = config.players
    sizes = [14] * 4 if players == 4 else [10, 10, 9, 9, 9, 9]  # the dealer is seat 0 (R-V6-2)
    hands: list[list[Card]] = [[] for _ in range(players)]
    used: set[Card] = set()
    for seat in rng.sample(range(players), rng.randint(2, 4)):
        if rng.random() < 0.6:
            rank = rng.randrange(2, 15)
            bomb = [parse_card(RANK_NAMES[rank - 2] + suit) for suit in SUITS]
        else:
            length, suit = rng.randint(5, 6), rng.choice(SUITS)
            low = rng.randrange(2, 16 - length)
            bomb = [parse_card(RANK_NAMES[rank - 2] + suit) for rank in range(low, low + length)]
        if not used.intersection(bomb):
            hands[seat].extend(bomb)
            used.update(bomb)
    rest = [Card(i) for i in range(56) if Card(i) not in used]
    rng.shuffle(rest)
    for seat in range(players):
        while len(hands[seat]) < sizes[seat]:
            hands[seat].append(rest.pop())
    texts = [" ".join(str(card) for card in sorted(hand)) for hand in hands]
    mahjong = next(seat for seat, text in enumerate(texts) if "MJ" in text.split())
    return {
        "config": config.to_json(),
        "seed": seed,
        "phase": "play",
        "dealer": 0,
        "hands": texts,
        "turn": mahjong,
    }


@playout_settings(12)
@given(config=st.sampled_from((4, 6)).flatmap(configs), seed=SEEDS, choices=SEEDS_OF_CHOICES)
def test_fully_checked_playouts_from_bomb_rich_positions(
    config: RulesConfig, seed: int | str, choices: int
) -> None:
    """Every property on every step, from the first lead of a round to its end."""
    position = bomb_rich_position(config, seed, random.Random(f"position/{choices}"))
    Playout(config, seed, choices, 1, position=position).run()


def window_position(players: int, bomb_ranks: Sequence[int]) -> tuple[State, list[list[Card]]]:
    """Seat 0 has led a single and the bomb window opens; every other seat holds a 4-of-a-kind
    (of bomb_ranks, in seat order) and one more card, and has not played yet."""
    bombs = [[parse_card(RANK_NAMES[rank - 2] + suit) for suit in SUITS] for rank in bomb_ranks]
    spare = [Card(i) for i in range(56) if all(Card(i) not in bomb for bomb in bombs)]
    top, *fillers = spare[2 : 3 + players]  # naturals: the first two spare cards are DOG and MJ
    hands = [[fillers[0]]] + [[*bomb, fillers[seat]] for seat, bomb in enumerate(bombs, start=1)]
    held = {card for hand in hands for card in hand} | {top}
    state = state_from_json(
        {
            "phase": "play",
            "config": {"players": players},
            "hands": [" ".join(map(str, hand)) for hand in hands],
            "piles": [" ".join(str(Card(i)) for i in range(56) if Card(i) not in held)]
            + [""] * (players - 1),
            "played": [True] + [False] * (players - 1),
            "trick": [{"seat": 0, "cards": str(top)}],
            "turn": 1,
            "window": {"order": [*range(1, players), 0], "declined": [], "bombs": {}},
        }
    )
    return state, bombs


@settings(max_examples=80, deadline=None, derandomize=True, database=None)
@given(players=st.sampled_from((4, 6)), data=st.data())
def test_pending_window_bombs_survive_the_state_json(players: int, data: st.DataObject) -> None:
    """Property 6 where the playouts seldom go: bombs submitted in a window while an earlier seat
    has not answered yet wait in the state (R-BOMB-9). The JSON must keep them exactly, and the
    restored state must resolve them as the original does."""
    state, bombs = window_position(players, data.draw(st.permutations(range(3, 15)))[: players - 1])
    submitters = data.draw(st.lists(st.sampled_from(range(2, players)), min_size=1, unique=True))
    for seat in submitters:  # in arrival order, which need not be window order
        state, waiting = apply(state, seat, Play(mask_of(bombs[seat - 1])))
        assert waiting == [], "a bomb waits until every seat before it has declined"
        restored = state_from_json(json_round_trip(state_to_json(state)))
        assert restored == state, (
            f"pending bombs {[(s, str(p)) for s, p in state.window_bombs]} come back as "
            f"{[(s, str(p)) for s, p in restored.window_bombs]}"
        )
    # Seat 1 (first in window order) bombs, or it and the seats up to the first submitter decline.
    if data.draw(st.booleans()):
        answers: list[tuple[int, Action]] = [(1, Play(mask_of(bombs[0])))]
        bomber = 1
    else:
        bomber = min(submitters)
        answers = [(seat, DECLINE) for seat in range(1, bomber)]
    events: list[Event] = []
    for seat, action in answers:
        state, new = apply(state, seat, action)
        restored, again = apply(restored, seat, fresh(action))
        assert restored == state
        assert [e.to_json() for e in again] == [e.to_json() for e in new]
        events += new
    played = [e.seat for e in events if isinstance(e, Played)]
    assert played == [bomber], "the first bomb in window order applies, the others are dropped (R-BOMB-9)"


@settings(max_examples=150, deadline=None, derandomize=True, database=None)
@given(players=st.sampled_from((4, 6)), data=st.data())
def test_answer_window_equals_answers_in_any_arrival_order(players: int, data: st.DataObject) -> None:
    """answer_window's contract: the same as applying each answer with apply() as it arrives, in
    any order, the answers that arrive after the window has resolved being discarded (R-BOMB-9).
    Answers: decline, bomb, or bomb with the call flag (R-CALL-7)."""
    state, bombs = window_position(players, data.draw(st.permutations(range(3, 15)))[: players - 1])
    answers: dict[int, Action] = {}
    for seat in range(1, players):
        kind = data.draw(st.sampled_from(("decline", "bomb", "bomb+tichu", "none")))
        if kind == "decline":
            answers[seat] = DECLINE
        elif kind != "none":
            answers[seat] = Play(mask_of(bombs[seat - 1]), tichu=kind == "bomb+tichu")
    batched, batched_events = answer_window(state, answers)
    arrival = data.draw(st.permutations(sorted(answers)))
    current, events = state, []
    for seat in arrival:
        if current.window is not state.window:
            break  # resolved: the remaining answers are discarded
        current, new = apply(current, seat, answers[seat])
        events += new
    shown = {seat: str(action) for seat, action in answers.items()}
    assert [e.to_json() for e in batched_events] == [e.to_json() for e in events], (
        f"answers {shown} arriving as {arrival}: answer_window gives other events"
    )
    assert batched == current, f"answers {shown} arriving as {arrival}: answer_window gives another state"


def test_every_listed_exchange_round_trips() -> None:
    """Property 6 for all 2,184 (4p) and 90/72 (6p) exchanges of every seat, in one deal each."""
    for players in (4, 6):
        state, _ = new_game(RulesConfig(players=players, grand_tichu_enabled=False), 7)
        while state.phase is not Phase.EXCHANGE:
            seat = to_act(state)[0]
            state, _ = apply(state, seat, DECLINE_TICHU)
        for seat in range(players):
            failures = []
            for action in legal_actions(state, seat):
                try:
                    check_action_strings(action)
                except (AssertionError, RulesError) as error:
                    failures.append(str(error))
            assert not failures, f"{players}p seat {seat}: {len(failures)} failures, e.g. {failures[0]}"


# ----------------------------------------------------------------------------- combinations


@st.composite
def dense_hands(draw: st.DrawFn, size: int = 8) -> int:
    """Up to `size` cards drawn from five consecutive ranks and the specials, so that pairs,
    stairs, full houses, straights, bombs and Phoenix readings are all common."""
    low = draw(st.integers(2, 10))
    pool = [parse_card(f"{RANK_NAMES[r - 2]}{s}") for r in range(low, low + 5) for s in SUITS]
    pool += [parse_card(name) for name in ("MJ", "DOG", "PHX", "DRG")]
    if draw(st.booleans()):
        pool = [Card(i) for i in range(56)]
    cards = draw(st.lists(st.sampled_from(pool), min_size=1, max_size=size, unique=True))
    mask = 0
    for card in cards:
        mask |= card.mask
    return mask


def readings_of_subsets(hand: int, top: Combo | None) -> set[tuple[int, Combo]]:
    """(cards, reading) for every subset of the hand that classify reads, the Dog left out."""
    return {
        (sub, reading)
        for sub in submasks(hand)
        for reading in classify(sub, top)
        if reading.kind is not ComboKind.DOG
    }


def beats_oracle(play: Combo, top: Combo) -> bool:
    """R-BEAT-1..4 written out independently."""
    if play.is_bomb:
        if not top.is_bomb:
            return True
        play_class = 1 if play.kind is ComboKind.STRAIGHT_FLUSH else 0
        top_class = 1 if top.kind is ComboKind.STRAIGHT_FLUSH else 0
        return (play_class, play.length, play.key) > (top_class, top.length, top.key)
    return play.kind is top.kind and play.length == top.length and play.key > top.key


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(hand=dense_hands())
def test_classify_matches_enumerated_leads(hand: int) -> None:
    """Every reading classify gives to a subset of the hand is a lead plays() lists, and back."""
    found = [(cards, COMBOS[code]) for cards, code in plays(hand, None)]
    assert len(found) == len(set(found)), f"plays() lists a play twice for {names(hand)}"
    expected = readings_of_subsets(hand, None)
    assert set(found) == expected, (
        f"hand {names(hand)}: only classify: "
        f"{sorted((names(m), c) for m, c in expected - set(found))}; "
        f"only plays: {sorted((names(m), c) for m, c in set(found) - expected)}"
    )


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(hand=dense_hands(), other=dense_hands(6), choice=st.integers(0, 100))
def test_plays_on_a_top_are_the_beating_readings(hand: int, other: int, choice: int) -> None:
    """plays(hand, top) is exactly the subsets' readings that beat the top (R-BEAT, R-PHX-2)."""
    top_cards = other & ~hand
    tops = [
        reading
        for sub in submasks(top_cards)
        for reading in classify(sub)
        if reading.kind is not ComboKind.DOG
    ]
    if not tops:
        return
    top = tops[choice % len(tops)]
    dragon = top.kind is ComboKind.SINGLE and top.key == 30
    expected = {
        (sub, reading)
        for sub, reading in readings_of_subsets(hand, top)
        if beats_oracle(reading, top) and not (sub == PHX and dragon)
    }
    found = [(cards, COMBOS[code]) for cards, code in plays(hand, top)]
    assert len(found) == len(set(found)), f"plays() lists a play twice for {names(hand)} on {top}"
    assert set(found) == expected, (
        f"hand {names(hand)} on {top}: missing {sorted((names(m), c) for m, c in expected - set(found))}; "
        f"extra {sorted((names(m), c) for m, c in set(found) - expected)}"
    )
