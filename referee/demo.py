"""`tichu demo`: one complete game between four sample random players, played in-process and printed.

It stands in for a match on the gRPC referee until that exists: the same engine calls, no network.
"""

from __future__ import annotations

import os
import random
import sys
from collections.abc import Sequence
from typing import TextIO

from referee.rules import (
    OFFICIAL,
    Action,
    CallTichu,
    ComboKind,
    Event,
    GrandTichu,
    Observation,
    Phase,
    RulesConfig,
    State,
    apply,
    format_cards,
    new_game,
    observe,
    to_act,
)
from referee.rules.cards import rank_name
from referee.rules.events import (
    CallDeclined,
    Called,
    DragonGiven,
    GameOver,
    LeadPassed,
    Passed,
    Played,
    RoundEnded,
    RoundScored,
    RoundStarted,
    TrickWon,
    WentOut,
    WishFulfilled,
)

DEFAULT_SEED = 2024
SEED_ENV = "TICHU_DEMO_SEED"
MAX_ROUNDS = 200
# A round of Tichu takes a few hundred decisions; far more means the engine is stuck in a loop.
MAX_ACTIONS_PER_ROUND = 20_000
CALL_PROBABILITY = 0.05
TEAMS = "AB"
PLACES = {1: "1st", 2: "2nd", 3: "3rd"}


class RandomPlayer:
    """A sample bot: a uniform choice among the decisions it owes, and a rare call when asked."""

    def __init__(self, seed: str) -> None:
        self.rng = random.Random(seed)

    def decide(self, obs: Observation) -> Action:
        """Pick an action from `obs.legal_decisions` (never a spontaneous Tichu call)."""
        options: Sequence[Action] = obs.legal_decisions
        if obs.phase is Phase.GRAND_TICHU or obs.phase is Phase.TICHU_STEP:
            # A uniform choice would call half the time, and the failed calls would keep both
            # teams far from the target; so the yes/no questions are answered yes rarely.
            call = self.rng.random() < CALL_PROBABILITY
            return next(a for a in options if _is_call(a) == call)
        return self.rng.choice(options)


def _is_call(action: Action) -> bool:
    return isinstance(action, CallTichu) or (isinstance(action, GrandTichu) and action.call)


def _seat(seat: int) -> str:
    return f"P{seat}"


class Printer:
    """Turns the engine's events into a readable account: calls, one line per trick, scores."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.calls: list[str] = []
        self.calls_shown = False
        self.trick: list[str] = []
        self.tricks = 0
        self.ended: RoundEnded | None = None
        self.dog = False  # the current line is a Dog lead, not a trick

    def _line(self, text: str) -> None:
        self.out.write(text + "\n")

    def _flush_calls(self) -> None:
        if not self.calls_shown:
            self._line("  Calls: " + (", ".join(self.calls) if self.calls else "none"))
            self.calls_shown = True

    def _end_trick(self, text: str) -> None:
        if self.dog:
            # The Dog makes no trick (R-DOG-2): its own line, outside the trick count.
            self._line(f"  Dog:      {', '.join(self.trick)} -> {text}")
        else:
            self.tricks += 1
            self._line(f"  Trick {self.tricks:>2}: " + ", ".join(self.trick) + f" -> {text}")
        self.trick = []
        self.dog = False

    def event(self, event: Event) -> None:
        """Print what one event adds to the account (private events are left out)."""
        if event.private_to is not None:
            return
        if isinstance(event, RoundStarted):
            self.calls, self.calls_shown, self.trick, self.tricks, self.ended = [], False, [], 0, None
            self._line(f"\nRound {event.round + 1} (dealer {_seat(event.dealer)})")
        elif isinstance(event, Called):
            what = "Grand Tichu" if event.call == "grand_tichu" else "Tichu"
            if self.calls_shown:
                self.trick.append(f"{_seat(event.seat)} calls {what}")
            else:
                self.calls.append(f"{_seat(event.seat)} {what}")
        elif isinstance(event, CallDeclined):
            pass  # a "no" is the usual answer; only calls are news
        elif isinstance(event, Played):
            self._flush_calls()
            self._played(event)
        elif isinstance(event, Passed):
            self.trick.append(f"{_seat(event.seat)} pass")
        elif isinstance(event, WishFulfilled):
            self.trick[-1] += " (wish fulfilled)"
        elif isinstance(event, LeadPassed):
            self._end_trick(f"lead to {_seat(event.to)}")
        elif isinstance(event, WentOut):
            self.trick[-1] += f" [out {PLACES.get(event.place, str(event.place))}]"
        elif isinstance(event, TrickWon):
            self._end_trick(f"{_seat(event.seat)} wins {event.points} pts")
        elif isinstance(event, DragonGiven):
            self._end_trick(
                f"{_seat(event.seat)} wins with the Dragon, gives {event.points} pts to {_seat(event.to)}"
            )
        elif isinstance(event, RoundEnded):
            self._round_ended(event)
        elif isinstance(event, RoundScored):
            self._round_scored(event)
        elif isinstance(event, GameOver):
            self._game_over(event)

    def _played(self, event: Played) -> None:
        text = f"{_seat(event.seat)} "
        if event.combo.is_bomb:
            text += "BOMB " if event.out_of_turn else "bomb "
        text += format_cards(event.cards)
        self.dog = event.combo.kind is ComboKind.DOG
        if event.cards.bit_count() == 1 and event.combo.phoenix == 0 and event.combo.key % 2:
            text += f" ({event.combo.rank})"  # a Phoenix single's value, e.g. 8.5
        if event.wish:
            text += f" wish={rank_name(event.wish)}"
        self.trick.append(text)

    def _round_ended(self, event: RoundEnded) -> None:
        self.ended = event
        if event.reason == "double_victory" and self.trick:
            self._end_trick("round over, cards not counted")
        # Otherwise the last trick's collection (or Dragon gift) follows this event.

    def _round_scored(self, event: RoundScored) -> None:
        if self.trick:
            self._end_trick("round over")
        double = self.ended is not None and self.ended.reason == "double_victory"
        if self.ended is not None:
            order = ", ".join(_seat(s) for s in self.ended.out)
            winner = f": double victory for team {TEAMS[self.ended.out[0] % 2]}" if double else ""
            self._line(f"  Out: {order}{winner}")
        parts = []
        for team in (0, 1):
            detail = f"{event.card_points[team]} {'for the 1-2' if double else 'cards'}"
            if event.call_points[team]:
                detail += f" {event.call_points[team]:+d} calls"
            if event.bonus_points[team]:
                detail += f" {event.bonus_points[team]:+d} bonus"
            parts.append(f"{TEAMS[team]} {event.round_points[team]:+d} ({detail})")
        totals = f"A {event.totals[0]}, B {event.totals[1]}"
        self._line(f"  Score: {', '.join(parts)}; totals {totals}")

    def _game_over(self, event: GameOver) -> None:
        a, b = event.totals
        if event.winner is None:
            self._line(f"\nGame over: a draw at {a} all.")
        else:
            won, lost = (a, b) if event.winner == 0 else (b, a)
            self._line(f"\nGame over: team {TEAMS[event.winner]} wins {won} to {lost}.")


def play_game(seed: int | str, out: TextIO, config: RulesConfig = OFFICIAL) -> State | None:
    """Play and print one game; the final state, or None if a safety bound was hit."""
    players = [RandomPlayer(f"tichu-demo-player/{seed}/{seat}") for seat in range(config.players)]
    printer = Printer(out)
    state, events = new_game(config, seed)
    actions = 0
    while True:
        for event in events:
            printer.event(event)
        if state.is_over:
            return state
        if state.round >= MAX_ROUNDS or actions > MAX_ACTIONS_PER_ROUND * (state.round + 1):
            return None
        # Several seats may owe a decision at once (Grand Tichu, exchange, bomb window); to_act
        # lists a window's seats in window order, so taking the first asks them seat by seat.
        seat = to_act(state)[0]
        state, events = apply(state, seat, players[seat].decide(observe(state, seat)))
        actions += 1


def run_demo(seed: int | str | None = None, out: TextIO | None = None) -> int:
    """Play one game to the target between four random players and print it; 0 once it ends."""
    stream = sys.stdout if out is None else out
    if seed is None:
        text = os.environ.get(SEED_ENV, "").strip()
        # The engine takes any int or string seed; digits are read as the int they spell.
        seed = DEFAULT_SEED if not text else int(text) if text.isdigit() else text
    try:
        stream.write(f"Tichu demo: four random players, official rules, target {OFFICIAL.target_score}\n")
        stream.write(f"Seed {seed} (set {SEED_ENV} for another game). Team A: P0 P2, team B: P1 P3.\n")
        final = play_game(seed, stream)
    except BrokenPipeError:
        # The reader has gone (`tichu demo | head`): stop quietly, and keep the interpreter's
        # final flush of the dead pipe from printing a second error.
        if stream is sys.stdout:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    if final is None:
        sys.stderr.write(f"demo stopped: no winner after {MAX_ROUNDS} rounds (safety bound)\n")
        return 1
    stream.write(f"{len(final.history)} rounds played.\n")
    return 0
